// One variant: each of its sources compiled with the command ninja would run (so the
// harness link afterwards is answered by ccache), all at once and each with the PTX pass of
// the instruction audit beside it, then their PTX audited. ccache does not
// cache `nvcc -ptx`, so the PTX is cached here, keyed by the command and the content of
// every file the compile read (the depfile), outside the toolkit's own headers.
#include <chrono>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <thread>

#include "build_steps.h"
#include "kport/common/crypto.h"
#include "kport/common/process.h"

namespace kport::porting::detail {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `<launcher> nvcc ... -MD -MT obj -MF dep -x cu -c src -o obj` -> `nvcc ... -x cu -ptx src -o ptx`.
std::string ptx_command(const std::string& compile, const std::string& ptx_out) {
  auto words = split_words(compile);
  std::size_t first = 0;
  for (std::size_t i = 0; i < words.size(); ++i)
    if (words[i].size() >= 4 && words[i].compare(words[i].size() - 4, 4, "nvcc") == 0) {
      first = i;
      break;
    }
  std::string out;
  for (std::size_t i = first; i < words.size(); ++i) {
    const auto& w = words[i];
    if (w == "-MD") continue;
    if (w == "-MT" || w == "-MF") {
      ++i;
      continue;
    }
    if (w.rfind("-Xptxas", 0) == 0) continue;
    std::string word = w == "-c" ? "-ptx" : w;
    if (w == "-o" && i + 1 < words.size()) {
      out += " -o " + ptx_out;
      ++i;
      continue;
    }
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

// Files named by a make-style depfile, toolkit and system headers left out.
std::vector<std::string> depfile_inputs(const fs::path& depfile, const std::string& toolkit_root) {
  std::string text = read_file(depfile);
  for (auto p = text.find("\\\n"); p != std::string::npos; p = text.find("\\\n", p)) text.replace(p, 2, " ");
  std::vector<std::string> out;
  bool after_colon = false;
  for (auto& w : split_words(text)) {
    if (!after_colon) {
      after_colon = !w.empty() && w.back() == ':';
      continue;
    }
    if (w.rfind(toolkit_root, 0) == 0 || w.rfind("/usr/include", 0) == 0 || w.rfind("/usr/lib", 0) == 0) continue;
    out.push_back(w);
  }
  return out;
}

std::string ccache_verdict(const fs::path& stats_log) {
  std::string text = read_file(stats_log);
  if (text.find("cache_miss\n") != std::string::npos && text.find("direct_cache_hit") == std::string::npos &&
      text.find("preprocessed_cache_hit") == std::string::npos)
    return "miss";
  if (text.find("cache_hit") != std::string::npos) return "hit";
  return "";
}

// One source of a variant: its object compiled (or its earlier compile reused) and its PTX
// for the audit. What compile_variant needs of it; `status` other than ok ends the variant.
struct UnitResult {
  VariantStatus status = VariantStatus::ok;
  std::string message;
  bool cancelled = false;
  bool hit = false, miss = false;
  std::string output, ptx;
};

UnitResult compile_unit(const BuildRequest& r, const VariantSpec& v, std::size_t i,
                        const std::map<fs::path, std::string>& objects, const fs::path& work,
                        const std::string& toolkit_root) {
  UnitResult u;
  auto fail = [&](VariantStatus s, std::string message) {
    u.status = s;
    u.message = std::move(message);
    return u;
  };
  std::error_code fec;
  fs::path src = fs::weakly_canonical(v.dir / v.sources[i], fec);
  auto it = objects.find(src);
  if (it == objects.end())
    return fail(VariantStatus::compile_error, "the configured project has no compile command for " + src.string());
  auto cmd = ninja_command(r, it->second);
  if (!cmd.ok()) return fail(VariantStatus::compile_error, cmd.error().message);
  // What the compile read, as the depfile of its last run names it (toolkit and system
  // headers left out). A compile whose command and every file it read are unchanged is
  // reused, not run again: the driver, not ninja, keeps these objects.
  const fs::path depfile = r.build_dir / (it->second + ".d");
  auto inputs = [&] {
    if (!fs::exists(depfile)) return read_file(src) + crypto::random_token();  // never reused
    std::string text;
    for (const auto& dep : depfile_inputs(depfile, toolkit_root)) text += "\n" + dep + "\n" + read_file(dep);
    return text;
  };
  fs::path saved_out = work / ("unit-" + std::to_string(i) + ".out");
  fs::path saved_key = work / ("unit-" + std::to_string(i) + ".key");
  // The audit's PTX pass: `nvcc -ptx` of the same source, into the unit's work folder.
  fs::path ptx_file = work / ("unit-" + std::to_string(i) + ".ptx");
  const std::string pcmd = ptx_command(*cmd, ptx_file.string());
  ProcessOptions po;
  po.cwd = r.build_dir;
  po.timeout = r.compile_timeout;
  po.cancel = r.cancel;
  auto ptx_pass = [&] { return env_of(r).run_process({"/bin/sh", "-c", pcmd}, po); };
  std::optional<std::future<Result<ProcessOutput>>> ptx_beside;
  // The files are read only where a compile was saved to compare with.
  const std::string saved = read_file(saved_key);
  std::string read = saved.empty() ? std::string() : inputs();
  if (!saved.empty() && saved == crypto::sha256_hex(*cmd + read) && fs::exists(saved_out) &&
      fs::exists(r.build_dir / it->second)) {
    u.output = read_file(saved_out);
    u.hit = true;
  } else {
    // A compile that runs has its PTX pass beside it rather than after it: the two read the
    // same files, and one after the other they made the longest unit the cold build's long
    // pole. Only a source changed back to an earlier text finds that PTX cached already.
    ptx_beside = std::async(std::launch::async, ptx_pass);
    fs::remove(saved_key, fec);
    fs::path stats = work / ("ccache-" + std::to_string(i) + ".log");
    fs::remove(stats, fec);
    ProcessOptions o;
    o.cwd = r.build_dir;
    o.timeout = r.compile_timeout;
    o.env = {"CCACHE_STATSLOG=" + stats.string()};
    o.cancel = r.cancel;
    auto out = env_of(r).run_process({"/bin/sh", "-c", *cmd}, o);
    if (!out.ok()) return fail(VariantStatus::compile_error, out.error().message);
    if (out->cancelled) {
      u.cancelled = true;
      return fail(VariantStatus::compile_error, "cancelled while compiling " + v.sources[i]);
    }
    u.output = out->output;
    std::string verdict = ccache_verdict(stats);
    u.miss = verdict == "miss" || verdict.empty();
    u.hit = verdict == "hit";
    if (out->timed_out)
      return fail(VariantStatus::timeout, "the compiler did not finish " + v.sources[i] + " within " +
                                              std::to_string(r.compile_timeout.count()) + " s and was killed");
    if (out->exit_code != 0)
      return fail(VariantStatus::compile_error, "nvcc exited with " + std::to_string(out->exit_code) + " on " +
                                                    v.sources[i] + ":\n" + compiler_diagnostics(out->output));
    read = inputs();
    std::ofstream(saved_out, std::ios::binary) << out->output;
    std::ofstream(saved_key, std::ios::binary) << crypto::sha256_hex(*cmd + read);
  }
  // The audit's PTX, from the cache when nothing the compile read has changed.
  fs::path cached =
      r.build_dir / "kport-driver" / "ptx-cache" / (crypto::sha256_hex(ptx_command(*cmd, "PTX") + read) + ".ptx");
  if (ptx_beside || !fs::exists(cached)) {
    auto pout = ptx_beside ? ptx_beside->get() : ptx_pass();
    if (!pout.ok()) return fail(VariantStatus::compile_error, pout.error().message);
    if (pout->cancelled) {
      u.cancelled = true;
      return fail(VariantStatus::compile_error, "cancelled during the PTX pass");
    }
    if (pout->timed_out)
      return fail(VariantStatus::timeout, "the PTX pass for the instruction audit did not finish within " +
                                              std::to_string(r.compile_timeout.count()) + " s");
    if (pout->exit_code != 0)
      return fail(VariantStatus::compile_error,
                  "nvcc -ptx (instruction audit) failed:\n" + compiler_diagnostics(pout->output));
    fs::copy_file(ptx_file, cached, fs::copy_options::overwrite_existing, fec);
  }
  u.ptx = read_file(cached);
  return u;
}

}  // namespace

VariantRecord compile_variant(const BuildRequest& r, const VariantSpec& v,
                              const std::map<fs::path, std::string>& objects, const Disassembler& tool) {
  auto started = std::chrono::steady_clock::now();
  VariantRecord rec;
  rec.family = v.family;
  rec.variant = v.variant;
  rec.target = r.target;
  fs::path work = r.build_dir / "kport-driver" / v.id();
  std::error_code ec;
  fs::create_directories(work, ec);
  fs::create_directories(r.build_dir / "kport-driver" / "ptx-cache", ec);
  std::string toolkit_root = fs::path(r.nvcc).parent_path().parent_path().string();
  std::string all_output, all_ptx;
  std::vector<fs::path> object_paths;
  bool any_miss = false, any_hit = false;
  auto finish = [&](VariantStatus s, std::string message) {
    rec.status = s;
    rec.message = std::move(message);
    rec.cache = any_miss ? "miss" : any_hit ? "hit" : "";
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return rec;
  };
  // A variant's sources compile at once, each in its own thread: a variant split into
  // several units (gemm_fp8.wgmma_tma's tile groups) is otherwise the build's long pole,
  // compiled one unit after another while the pool's other workers sit idle.
  std::vector<UnitResult> units(v.sources.size());
  {
    std::vector<std::thread> threads;
    for (std::size_t i = 1; i < v.sources.size(); ++i)
      threads.emplace_back([&, i] { units[i] = compile_unit(r, v, i, objects, work, toolkit_root); });
    if (!v.sources.empty()) units[0] = compile_unit(r, v, 0, objects, work, toolkit_root);
    for (auto& t : threads) t.join();
  }
  for (std::size_t i = 0; i < units.size(); ++i) {
    UnitResult& u = units[i];
    any_miss |= u.miss;
    any_hit |= u.hit;
    if (u.status != VariantStatus::ok) {
      rec.cancelled = rec.cancelled || u.cancelled;
      return finish(u.status, std::move(u.message));
    }
    all_output += u.output;
    all_ptx += u.ptx;
    std::error_code fec;
    auto it = objects.find(fs::weakly_canonical(v.dir / v.sources[i], fec));
    object_paths.push_back(r.build_dir / it->second);
  }
  rec.resources = parse_ptxas_verbose(all_output);
  auto audit = audit_ptx(all_ptx, v.features);
  rec.sass = audit_objects(r, tool, v, object_paths);
  if (r.cancel && r.cancel->load()) {
    rec.cancelled = true;
    return finish(VariantStatus::compile_error, "cancelled during the SASS audit");
  }
  rec.audit_json = "{\"ptx\":" + audit.to_json("ptx") + ",\"sass\":" + rec.sass.to_json() + "}";
  rec.audit_passed = audit.passed() && (!rec.sass.audited || rec.sass.passed());
  std::string failures;
  if (!audit.passed()) failures = audit.message();
  if (rec.sass.audited && !rec.sass.passed()) failures += (failures.empty() ? "" : "; ") + rec.sass.message(r.target);
  if (!failures.empty()) return finish(VariantStatus::compile_error, "instruction audit failed: " + failures);
  std::string warnings = compiler_diagnostics(all_output, 4096);
  return finish(VariantStatus::ok, warnings);
}

}  // namespace kport::porting::detail

namespace kport::porting {

std::string compiler_diagnostics(const std::string& output, std::size_t limit) {
  std::string out;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("ptxas info", 0) == 0) continue;
    if (line.find("bytes stack frame") != std::string::npos && line.find("spill") != std::string::npos) continue;
    out += line + "\n";
  }
  if (out.size() > limit)
    out = out.substr(0, limit) + "\n[... " + std::to_string(out.size() - limit) + " more bytes]\n";
  return out;
}

}  // namespace kport::porting
