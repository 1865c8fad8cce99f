#include "kport/runner/local_build.h"

#include <chrono>
#include <iomanip>
#include <mutex>
#include <ostream>

#include "kport/porting/build_driver.h"

namespace kport::runner {

int build_locally(const LocalBuild& l, std::ostream& out, std::ostream& err) {
  auto started = std::chrono::steady_clock::now();
  auto listing = porting::make_nvcc_probe(l.nvcc)->probe();
  if (!listing.ok()) {
    err << "kport-runner: no usable CUDA toolkit: " << listing.error().message << "\n";
    return 2;
  }
  auto catalog = porting::Catalog::from_file(l.catalog_file);
  if (!catalog.ok()) {
    err << "kport-runner: " << catalog.error().message << "\n";
    return 2;
  }
  catalog->join(*listing);
  std::mutex mu;
  porting::BuildRequest req;
  req.kernels_dir = l.kernels_dir;
  req.target = l.target;
  req.build_dir = l.build_dir;
  req.catalog = &*catalog;
  req.jobs = l.jobs;
  req.compile_timeout = l.compile_timeout;
  req.nvcc = l.nvcc;
  req.cuobjdump = l.cuobjdump;
  req.log = [&](const std::string& line) {
    std::lock_guard lock(mu);
    err << line << "\n";
  };
  auto report = porting::build_target(req);
  if (!report.ok()) {
    err << "kport-runner: cannot build " << l.target << ": " << report.error().message << "\n";
    return 2;
  }
  int failed = 0;
  for (const auto& r : report->records) {
    failed += r.status == porting::VariantStatus::compile_error || r.status == porting::VariantStatus::timeout;
    out << std::left << std::setw(24) << r.id() << std::setw(16) << porting::to_string(r.status);
    if (r.resources)
      out << "regs " << std::setw(4) << r.resources->registers << " spills " << r.resources->spill_stores_bytes << "/"
          << r.resources->spill_loads_bytes << " smem " << r.resources->shared_mem_bytes << " ccache " << r.cache;
    else if (r.status != porting::VariantStatus::ok)
      out << r.message.substr(0, r.message.find('\n'));
    if (r.sass.audited) {
      out << " sass";
      for (const auto& k : r.sass.required) out << " " << k << " " << r.sass.count(k);
      if (r.sass.count("local_load") + r.sass.count("local_store") > 0)
        out << " LDL " << r.sass.count("local_load") << " STL " << r.sass.count("local_store");
      if (!r.sass.missing.empty()) out << " FAILED";
    } else if (r.status == porting::VariantStatus::ok) {
      out << " sass not audited (" << r.sass.reason << ")";
    }
    out << "\n";
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  out << "{\"target\":\"" << l.target << "\",\"seconds\":" << std::fixed << std::setprecision(1) << secs
      << ",\"compiles\":" << report->compiles << ",\"variants\":" << report->records.size() << ",\"failed\":" << failed
      << ",\"harness\":\"" << report->harness_sha256 << "\"}\n";
  return report->all_ok() ? 0 : 1;
}

}  // namespace kport::runner
