// The production ToolkitProbe: asks nvcc itself. Each listing is one line per name.
#include <sstream>

#include "kport/porting/catalog.h"
#include "kport/common/env.h"

namespace kport::porting {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

class NvccProbe final : public ToolkitProbe {
 public:
  NvccProbe(std::string nvcc, Env& env) : m_nvcc(std::move(nvcc)), m_env(env) {}

  Result<ToolkitListing> probe() override {
    ToolkitListing l;
    auto run = [&](const char* flag) -> Result<std::string> {
      ProcessOptions o;
      o.timeout = std::chrono::seconds(60);
      auto r = m_env.run_process({m_nvcc, flag}, o);
      if (!r.ok()) return make_error(Errc::unavailable, "cannot run the CUDA compiler: " + r.error().message);
      if (r->exit_code != 0) return make_error(Errc::unavailable, m_nvcc + " " + flag + " failed: " + r->output);
      return r->output;
    };
    auto version = run("--version");
    if (!version.ok()) return std::move(version).error();
    l.version = parse_nvcc_version(*version);
    auto codes = run("--list-gpu-code");
    if (!codes.ok()) return std::move(codes).error();
    l.gpu_codes = lines_of(*codes);
    auto archs = run("--list-gpu-arch");
    if (!archs.ok()) return std::move(archs).error();
    l.gpu_archs = lines_of(*archs);
    return l;
  }

 private:
  std::string m_nvcc;
  Env& m_env;
};

}  // namespace

std::unique_ptr<ToolkitProbe> make_nvcc_probe(std::string nvcc, Env& env) {
  return std::make_unique<NvccProbe>(std::move(nvcc), env);
}

std::string parse_nvcc_version(std::string_view text) {
  auto pos = text.find("release ");
  if (pos == std::string_view::npos) return {};
  pos += 8;
  auto end = text.find_first_of(", \n", pos);
  return std::string(text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
}

}  // namespace kport::porting
