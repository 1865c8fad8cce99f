// The SASS audit step of a variant's build: disassemble the objects the compile wrote
// and count what the variant's path must show. The disassembler is the toolkit's own
// (beside the nvcc that compiled), so its opcodes match the compiler's; PATH is the
// fallback for toolkits installed split across prefixes.
#include "build_steps.h"
#include "kport/common/process.h"

namespace kport::porting::detail {
namespace fs = std::filesystem;

constexpr std::size_t k_sass_limit = std::size_t{512} << 20;

Disassembler find_disassembler(const BuildRequest& r) {
  if (!r.cuobjdump.empty()) {
    fs::path p = find_program(r.cuobjdump);
    if (p.empty()) return {{}, "the configured disassembler " + r.cuobjdump + " does not exist"};
    return {p, ""};
  }
  fs::path nvcc = find_program(r.nvcc);
  if (!nvcc.empty()) {
    std::error_code ec;
    fs::path beside = fs::weakly_canonical(nvcc, ec).parent_path() / "cuobjdump";
    if (fs::exists(beside, ec)) return {beside, ""};
    beside = nvcc.parent_path() / "cuobjdump";
    if (fs::exists(beside, ec)) return {beside, ""};
  }
  if (fs::path p = find_program("cuobjdump"); !p.empty()) return {p, ""};
  return {{},
          "no cuobjdump next to " + (nvcc.empty() ? r.nvcc : nvcc.string()) +
              " or on PATH (install the toolkit's cuobjdump to audit the machine code)"};
}

SassAudit audit_objects(const BuildRequest& r, const Disassembler& tool, const VariantSpec& v,
                        const std::vector<fs::path>& objects) {
  if (tool.cuobjdump.empty()) return sass_not_audited(tool.missing);
  std::string text;
  for (const auto& obj : objects) {
    ProcessOptions o;
    o.cwd = r.build_dir;
    o.timeout = r.compile_timeout;
    o.cancel = r.cancel;
    // A variant with many template instances disassembles to tens of megabytes; a
    // truncated listing would undercount, so it is kept whole or not audited. The listing
    // is stdout alone: a warning on stderr is not code.
    o.output_limit = k_sass_limit;
    o.split_streams = true;
    auto out = env_of(r).run_process({tool.cuobjdump.string(), "-sass", obj.string()}, o);
    if (!out.ok()) return sass_not_audited("cannot run " + tool.cuobjdump.string() + ": " + out.error().message);
    if (out->cancelled) return sass_not_audited("cancelled");
    if (out->timed_out)
      return sass_not_audited(tool.cuobjdump.string() + " -sass " + obj.filename().string() + " timed out");
    if (out->exit_code != 0)
      return sass_not_audited(tool.cuobjdump.string() + " -sass " + obj.filename().string() + " exited with " +
                              std::to_string(out->exit_code) + ": " + out->output.substr(0, 2000));
    if (out->truncated)
      return sass_not_audited(tool.cuobjdump.string() + " -sass " + obj.filename().string() + " printed more than " +
                              std::to_string(k_sass_limit >> 20) + " MiB");
    text += out->stdout_text;
    text += "\n";
  }
  return audit_sass(text, r.target, v.features, "cuobjdump -sass");
}

}  // namespace kport::porting::detail
