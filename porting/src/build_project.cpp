// The kernels tree's own CMake project does the configuring and linking, so the harness
// the driver links is the one developers build; the driver only adds what it needs
// (one target, ptxas verbose, ccache, an exclude list, the joined catalog).
#include <boost/json.hpp>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "build_steps.h"
#include "kport/common/crypto.h"
#include "kport/common/process.h"

namespace kport::porting::detail {
namespace fs = std::filesystem;

std::string tail(const std::string& text, std::size_t n) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

Project legacy_project(const BuildRequest& r) {
  Project p;
  p.source_dir = r.kernels_dir;
  p.options = {"-DKPORT_CUDA_TARGETS=" + r.target};
  p.harness_target = "kport-harness-" + r.target;
  p.harness = r.build_dir / "bin" / p.harness_target;
  return p;
}

Status configure_project(const BuildRequest& r, const Project& project, const fs::path& catalog_file,
                         const std::vector<std::string>& excluded, std::string& log) {
  std::string exclude_list;
  for (const auto& e : excluded) exclude_list += (exclude_list.empty() ? "" : ";") + e;
  std::vector<std::string> argv = {r.cmake, "-S",    project.source_dir.string(), "-B", r.build_dir.string(),
                                   "-G",    "Ninja", "-DCMAKE_BUILD_TYPE=Release"};
  argv.insert(argv.end(), project.options.begin(), project.options.end());
  if (project.kport_helper)
    argv.insert(argv.end(), {"-DKPORT_PTXAS_VERBOSE=ON", "-DKPORT_CATALOG_FILE=" + catalog_file.string(),
                             "-DKPORT_EXCLUDE_VARIANTS=" + exclude_list});
  argv.insert(argv.end(), {"-DCMAKE_CUDA_COMPILER=" + r.nvcc, "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"});
  if (!find_program(r.ccache).empty()) {
    argv.push_back("-DCMAKE_CUDA_COMPILER_LAUNCHER=" + r.ccache);
    argv.push_back("-DCMAKE_CXX_COMPILER_LAUNCHER=" + r.ccache);
  }
  ProcessOptions o;
  o.timeout = r.step_timeout;
  // Configured before with the same arguments: ninja re-runs CMake itself when a
  // CMakeLists.txt or a globbed variant folder changed, and is a no-op otherwise,
  // which keeps a warm rebuild free of a full configure.
  std::string args_text;
  for (const auto& a : argv) args_text += a + "\n";
  fs::path stamp = r.build_dir / "kport-driver" / "configure.args";
  std::string previous;
  if (std::ifstream in(stamp); in) {
    std::ostringstream s;
    s << in.rdbuf();
    previous = s.str();
  }
  const bool reuse = previous == args_text && fs::exists(r.build_dir / "build.ninja");
  std::vector<std::string> regen = {r.ninja, "-C", r.build_dir.string(), "build.ninja"};
  auto out = env_of(r).run_process(reuse ? regen : argv, o);
  if (!out.ok()) return out.error();
  log += out->output;
  if (out->timed_out)
    return make_error(Errc::internal, "cmake configure of " + project.source_dir.string() + " timed out");
  if (out->exit_code == 0 && !reuse) {
    std::error_code ec;
    fs::create_directories(stamp.parent_path(), ec);
    std::ofstream(stamp) << args_text;
  }
  if (out->exit_code != 0)
    return make_error(Errc::internal, "cmake configure of " + project.source_dir.string() + " for " + r.target +
                                          " failed (exit " + std::to_string(out->exit_code) + "):\n" +
                                          tail(out->output));
  return {};
}

Result<std::map<fs::path, std::string>> object_files(const fs::path& build_dir) {
  std::ifstream in(build_dir / "compile_commands.json");
  if (!in)
    return make_error(Errc::internal, "the configured project has no compile_commands.json in " + build_dir.string());
  std::ostringstream s;
  s << in.rdbuf();
  boost::system::error_code ec;
  auto doc = boost::json::parse(s.str(), ec);
  if (ec || !doc.is_array())
    return make_error(Errc::internal, "compile_commands.json in " + build_dir.string() + " is not a JSON array");
  std::map<fs::path, std::string> out;
  for (const auto& e : doc.as_array()) {
    if (!e.is_object()) continue;
    const auto* file = e.as_object().if_contains("file");
    const auto* cmd = e.as_object().if_contains("command");
    if (!file || !cmd || !file->is_string() || !cmd->is_string()) continue;
    std::string command(cmd->as_string());
    auto o = command.rfind(" -o ");
    if (o == std::string::npos) continue;
    std::string obj = command.substr(o + 4);
    if (auto sp = obj.find(' '); sp != std::string::npos) obj.resize(sp);
    std::error_code fec;
    fs::path canonical = fs::weakly_canonical(std::string(file->as_string()), fec);
    out[canonical] = obj;
  }
  return out;
}

Result<std::string> ninja_command(const BuildRequest& r, const std::string& object) {
  ProcessOptions o;
  o.timeout = std::chrono::seconds(60);
  auto out = env_of(r).run_process({r.ninja, "-C", r.build_dir.string(), "-t", "commands", object}, o);
  if (!out.ok()) return out.error();
  if (out->exit_code != 0)
    return make_error(Errc::internal, "ninja -t commands " + object + " failed: " + tail(out->output));
  std::string text = out->output;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

Result<std::vector<std::string>> ninja_prerequisites(const BuildRequest& r, const std::string& object) {
  ProcessOptions o;
  o.timeout = std::chrono::seconds(60);
  auto out = env_of(r).run_process({r.ninja, "-C", r.build_dir.string(), "-t", "commands", object}, o);
  if (!out.ok()) return out.error();
  if (out->exit_code != 0)
    return make_error(Errc::internal, "ninja -t commands " + object + " failed: " + tail(out->output));
  std::vector<std::string> lines;
  std::size_t start = 0;
  const std::string& text = out->output;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    if (nl > start) lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (!lines.empty()) lines.pop_back();  // the compile itself
  return lines;
}

Status run_prerequisites(const BuildRequest& r, const std::map<fs::path, std::string>& objects) {
  std::vector<std::string> steps;
  for (const auto& [source, object] : objects) {
    auto before = ninja_prerequisites(r, object);
    if (!before.ok()) return before.error();
    for (auto& step : *before)
      if (std::find(steps.begin(), steps.end(), step) == steps.end()) steps.push_back(std::move(step));
  }
  for (const auto& step : steps) {
    ProcessOptions o;
    o.cwd = r.build_dir;
    o.timeout = r.step_timeout;
    o.cancel = r.cancel;
    auto out = env_of(r).run_process({"/bin/sh", "-c", step}, o);
    if (!out.ok()) return out.error();
    if (out->exit_code != 0 || out->timed_out)
      return make_error(Errc::internal,
                        "generating what the kernels include failed (" + step + "):\n" + tail(out->output));
  }
  return {};
}

namespace {

// `ninja -t query NAME`: the rule of the edge that makes NAME, its explicit inputs and its
// implicit (`| `) ones; order-only inputs (`|| `) are left out: they order, they are not read.
struct Query {
  std::string rule;
  std::vector<std::string> explicit_inputs, implicit_inputs;
};

std::optional<Query> ninja_query(const BuildRequest& r, const std::string& name) {
  ProcessOptions o;
  o.timeout = std::chrono::seconds(60);
  auto out = env_of(r).run_process({r.ninja, "-C", r.build_dir.string(), "-t", "query", name}, o);
  if (!out.ok() || out->exit_code != 0 || out->timed_out) return std::nullopt;
  Query q;
  bool inputs = false;
  std::istringstream lines(out->output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  input: ", 0) == 0) {
      q.rule = line.substr(9);
      inputs = true;
    } else if (line.rfind("  outputs:", 0) == 0) {
      inputs = false;
    } else if (inputs && line.rfind("    || ", 0) == 0) {
      continue;
    } else if (inputs && line.rfind("    | ", 0) == 0) {
      q.implicit_inputs.push_back(line.substr(6));
    } else if (inputs && line.rfind("    ", 0) == 0) {
      q.explicit_inputs.push_back(line.substr(4));
    }
  }
  if (q.rule.empty()) return std::nullopt;
  return q;
}

}  // namespace

HarnessLink harness_link(const BuildRequest& r, const Project& project, const std::set<std::string>& variant_objects) {
  HarnessLink link;
  // The target is usually a phony name for the program (kport-harness-sm_90a for
  // bin/kport-harness-sm_90a): the link is the edge behind it.
  std::string output = project.harness_target;
  auto q = ninja_query(r, output);
  if (q && q->rule == "phony" && q->explicit_inputs.size() == 1 && q->implicit_inputs.empty()) {
    output = q->explicit_inputs.front();
    q = ninja_query(r, output);
  }
  if (!q || q->rule == "phony") return {};
  for (const auto& in : q->explicit_inputs)
    if (!variant_objects.count(in)) link.before.push_back(in);
  for (const auto& in : q->implicit_inputs) link.before.push_back(in);
  // What ninja runs for the output; its last command is the link.
  auto command = ninja_command(r, output);
  if (!command.ok() || command->empty()) return {};
  link.output = output;
  link.command = *command;
  return link;
}

std::string build_before_link(const BuildRequest& r, const std::vector<std::string>& targets) {
  if (targets.empty()) return {};
  std::vector<std::string> argv{r.ninja, "-C", r.build_dir.string()};
  argv.insert(argv.end(), targets.begin(), targets.end());
  ProcessOptions o;
  o.timeout = r.step_timeout;
  o.cancel = r.cancel;
  auto out = env_of(r).run_process(argv, o);
  if (!out.ok()) return out.error().message;
  if (out->cancelled) return "the build was cancelled";
  if (out->timed_out) return "timed out after " + std::to_string(r.step_timeout.count()) + " s";
  if (out->exit_code != 0) return tail(out->output);
  return {};
}

Result<fs::path> run_link(const BuildRequest& r, const Project& project, const HarnessLink& link) {
  ProcessOptions o;
  o.cwd = r.build_dir;
  o.timeout = r.step_timeout;
  o.cancel = r.cancel;
  const std::string& target = project.harness_target;
  auto out = env_of(r).run_process({"/bin/sh", "-c", link.command}, o);
  if (!out.ok()) return out.error();
  if (out->cancelled) return make_error(Errc::internal, "the build was cancelled");
  if (out->timed_out) return make_error(Errc::internal, "linking " + target + " timed out");
  if (out->exit_code != 0) return make_error(Errc::internal, "linking " + target + " failed:\n" + tail(out->output));
  fs::path bin = project.harness.empty() ? r.build_dir / link.output : project.harness;
  if (!fs::exists(bin)) return make_error(Errc::internal, "the link finished but " + bin.string() + " does not exist");
  return bin;
}

Result<fs::path> link_harness(const BuildRequest& r, const Project& project, std::string& log) {
  ProcessOptions o;
  o.timeout = r.step_timeout;
  o.cancel = r.cancel;
  const std::string& target = project.harness_target;
  auto out = env_of(r).run_process({r.ninja, "-C", r.build_dir.string(), target}, o);
  if (!out.ok()) return out.error();
  log += out->output;
  if (out->cancelled) return make_error(Errc::internal, "the build was cancelled");
  if (out->timed_out) return make_error(Errc::internal, "linking " + target + " timed out");
  if (out->exit_code != 0) return make_error(Errc::internal, "linking " + target + " failed:\n" + tail(out->output));
  fs::path bin = project.harness.empty() ? find_built_program(r.build_dir, target) : project.harness;
  if (bin.empty())
    return make_error(Errc::internal, "the build of " + target + " finished but left no program named " + target +
                                          " in " + r.build_dir.string() + " (name it in build.cmake.harness)");
  if (!fs::exists(bin)) return make_error(Errc::internal, "the build finished but " + bin.string() + " does not exist");
  return bin;
}

fs::path find_built_program(const fs::path& build_dir, const std::string& name) {
  std::error_code ec;
  auto runnable = [&](const fs::path& p) {
    return fs::is_regular_file(p, ec) && (fs::status(p, ec).permissions() & fs::perms::owner_exec) != fs::perms::none;
  };
  for (const auto& p : {build_dir / name, build_dir / "bin" / name})
    if (runnable(p)) return p;
  for (auto it = fs::recursive_directory_iterator(build_dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->path().filename() == name && runnable(it->path())) return it->path();
  return {};
}

std::string file_sha256(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  crypto::Sha256 h;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    h.update(buf, static_cast<std::size_t>(in.gcount()));
  }
  return crypto::to_hex(h.finish());
}

}  // namespace kport::porting::detail
