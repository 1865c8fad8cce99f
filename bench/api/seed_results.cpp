// Seeds a kport database with a large, realistic history for load benchmarks and the
// dashboard's big-history test: commits, targets, GPU models, kernel instances, build
// records and N results spread over them (default 1,000,000).
//
//   kport-bench-seed --db var/bench.db --results 1000000
#include <chrono>
#include <cstdio>
#include <random>

#include "kport/common/log.h"
#include "kport/common/options.h"
#include "kport/db/store.h"

using namespace kport;

namespace {

struct Family {
  const char* name;
  std::vector<const char*> variants;
  std::vector<std::string> shapes;
  std::vector<const char*> dtypes;
};

std::vector<Family> families() {
  return {
      {"gemm",
       {"simt", "mma_sync", "wgmma_tma", "tcgen05"},
       {"m=2048,n=2048,k=2048", "m=4096,n=4096,k=4096", "m=8192,n=8192,k=8192", "m=4096,n=4096,k=512",
        "m=128,n=8192,k=8192", "m=1000,n=1000,k=1000"},
       {"bf16", "fp16", "fp32"}},
      {"attention",
       {"simt", "mma_sync", "wgmma_tma"},
       {"b=4,h=16,l=4096,d=128,causal=0", "b=4,h=16,l=4096,d=128,causal=1", "b=4,h=32,l=4096,d=64,causal=0",
        "b=1,h=8,l=1000,d=64,causal=1"},
       {"bf16", "fp16"}},
      {"rmsnorm",
       {"simt", "vec16"},
       {"rows=32768,cols=4096", "rows=4096,cols=1000", "rows=1024,cols=4097"},
       {"bf16", "fp16", "fp32"}},
      {"softmax",
       {"simt", "vec16"},
       {"rows=32768,cols=4096", "rows=4096,cols=1000", "rows=1024,cols=4097"},
       {"bf16", "fp16", "fp32"}},
  };
}

struct Gpu {
  const char* model;
  const char* arch;
  const char* target;
};

}  // namespace

int main(int argc, char** argv) {
  Options o("kport-bench-seed", "Seed a kport database with a large result history.");
  o.add("db", "", "var/bench.db", "database file")
      .add("results", "", "1000000", "results to write")
      .add("commits", "", "200", "commits in the history");
  if (auto st = o.parse(argc, argv); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.error().message.c_str());
    return 2;
  }
  if (o.help_requested()) {
    std::fputs(o.help_text().c_str(), stdout);
    return 0;
  }
  auto total = o.integer("results", 1, 100'000'000);
  auto n_commits = o.integer("commits", 1, 100'000);
  if (!total.ok() || !n_commits.ok()) {
    std::fprintf(stderr, "bad --results or --commits\n");
    return 2;
  }
  log::init("kport-bench-seed", log::Level::warn);

  db::Options opts;
  opts.path = o.get("db");
  auto store = db::Store::open(opts);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.error().message.c_str());
    return 1;
  }
  auto& s = **store;

  const std::vector<Gpu> gpus = {{"NVIDIA H200", "9.0", "sm_90a"},
                                 {"NVIDIA H100 80GB HBM3", "9.0", "sm_90a"},
                                 {"NVIDIA A100-SXM4-80GB", "8.0", "sm_80"}};
  for (auto [name, arch] : {std::pair{"sm_80", "8.0"}, {"sm_90a", "9.0"}, {"sm_100a", "10.0"}, {"sm_120", "12.0"}})
    (void)s.upsert_target(db::Target{name, arch, "{}", "13.0", 0, false});
  for (const auto& g : gpus) (void)s.record_gpu_model(g.model, g.arch, "580.159.04");
  (void)s.upsert_repository("kernels", "/srv/git/kernels.git");

  std::vector<db::KernelInstance> instances;
  for (const auto& f : families())
    for (const char* v : f.variants)
      for (const char* cfg : {"a", "b"})
        instances.push_back({std::string(f.name) + "." + v + "." + cfg, f.name, v, "[]", "{}"});
  (void)s.upsert_kernel_instances(instances);

  std::vector<std::string> shas;
  std::optional<std::string> parent;
  for (std::int64_t c = 0; c < *n_commits; ++c) {
    char sha[41];
    std::snprintf(sha, sizeof sha, "%040llx", static_cast<unsigned long long>(0xc0ffee0000ULL + c));
    (void)s.put_commit(
        db::Commit{sha, "kernels", parent, "change " + std::to_string(c), "dev", 1700000000000 + c * 60000});
    shas.emplace_back(sha);
    parent = sha;
  }

  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> noise(0.97, 1.03);
  auto fams = families();
  std::vector<db::ResultRecord> batch;
  auto t0 = std::chrono::steady_clock::now();
  std::int64_t written = 0;
  while (written < *total) {
    const auto& f = fams[rng() % fams.size()];
    const auto& g = gpus[rng() % gpus.size()];
    const char* variant = f.variants[rng() % f.variants.size()];
    db::ResultRecord r;
    r.commit_sha = shas[static_cast<std::size_t>(written * static_cast<std::int64_t>(shas.size()) / *total)];
    r.target = g.target;
    r.family = f.name;
    r.variant = variant;
    r.instance = std::string(f.name) + "." + variant + "." + ((rng() & 1) ? "a" : "b");
    r.dtype = f.dtypes[rng() % f.dtypes.size()];
    r.shape = f.shapes[rng() % f.shapes.size()];
    r.toolkit = "13.0";
    r.gpu_model = g.model;
    r.gpu_uuid = "GPU-" + std::to_string(rng() % 8);
    r.arch = g.arch;
    r.driver = "580.159.04";
    r.status = (rng() % 50 == 0) ? db::ResultStatus::failed : db::ResultStatus::passed;
    double base = 100.0 + static_cast<double>(std::hash<std::string>{}(r.instance + r.shape) % 1000);
    r.median_us = base * noise(rng);
    r.stddev_us = *r.median_us * 0.004;
    r.samples = 50;
    r.normwise_rel_err = 1e-3;
    r.tolerance = 1e-2;
    r.nan_inf_count = 0;
    r.seed = static_cast<std::int64_t>(rng() >> 1);
    r.baseline_name = "cublas";
    r.baseline_median_us = base;
    r.ratio = base / *r.median_us;
    batch.push_back(std::move(r));
    ++written;
    if (batch.size() == 5000 || written == *total) {
      auto out = s.put_results(batch);
      if (!out.ok()) {
        std::fprintf(stderr, "put_results: %s\n", out.error().message.c_str());
        return 1;
      }
      batch.clear();
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("seeded %lld results over %lld commits in %.1f s (%.0f results/s)\n", static_cast<long long>(written),
              static_cast<long long>(*n_commits), secs, static_cast<double>(written) / secs);
  return 0;
}
