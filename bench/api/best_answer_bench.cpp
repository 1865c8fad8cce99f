// The coordinator's own CPU per /api/v1/best answer, without the network: the question
// parsed from its query, the key's current index entry, the answer written and the
// unmeasured ask counted, as the I/O thread does them, over seeded random questions like
// bench/api/best_random.lua's (one in five at a seeded shape), on a seeded database
// (bench/api/run.sh's). What HTTP and the kernel add is left out, so a change to the
// answer's code shows here without the noise of a shared machine's scheduler.
//   kport-bench-best-answer --db var/bench/api/best-1000000.db [--families kernels/kport.json]
//                           [--questions 20000] [--rounds 5]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <ctime>
#include <string>
#include <vector>

#include "best_answer.h"
#include "best_asks.h"
#include "best_index.h"
#include "families.h"
#include "kport/db/store.h"
#include "kport/http/uri.h"

namespace {

using namespace kport;

struct Family {
  const char* op;
  std::vector<const char*> dtypes, seeded;
};

// best_random.lua's value between lo and hi, log-uniform; half rounded to a multiple of 128.
std::int64_t extent(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(0, 1);
  auto v = static_cast<std::int64_t>(std::exp(std::log(lo) + u(rng) * (std::log(hi) - std::log(lo))));
  if (u(rng) < 0.5) v = std::max<std::int64_t>(128, v - v % 128);
  return v;
}

// This thread's CPU time: on a shared machine the wall clock counts other processes' turns.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::string random_shape(std::mt19937_64& rng, const std::string& op) {
  auto s = [](std::int64_t v) { return std::to_string(v); };
  if (op == "gemm")
    return "m=" + s(extent(rng, 128, 8192)) + ",n=" + s(extent(rng, 1000, 8192)) + ",k=" + s(extent(rng, 512, 8192));
  if (op == "attention")
    return "b=" + s(1 + static_cast<std::int64_t>(rng() % 8)) + ",h=" + s(8 << (rng() % 3)) +
           ",l=" + s(extent(rng, 1000, 4096)) + ",d=" + s(rng() % 2 ? 64 : 128) + ",causal=" + s(rng() % 2);
  return "rows=" + s(extent(rng, 1024, 32768)) + ",cols=" + s(extent(rng, 1000, 4097));
}

}  // namespace

int main(int argc, char** argv) {
  std::string db_path, families_path = "kernels/kport.json";
  int questions = 20000, rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--db") db_path = argv[i + 1];
    if (a == "--families") families_path = argv[i + 1];
    if (a == "--questions") questions = std::stoi(argv[i + 1]);
    if (a == "--rounds") rounds = std::stoi(argv[i + 1]);
  }
  if (db_path.empty()) {
    std::fprintf(stderr, "usage: %s --db FILE [--families FILE] [--questions N] [--rounds N]\n", argv[0]);
    return 2;
  }
  db::Options o;
  o.path = db_path;
  auto store = db::Store::open(o);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.error().message.c_str());
    return 1;
  }
  auto builtin = coordinator::Families::load_builtin(families_path);
  if (!builtin.ok()) {
    std::fprintf(stderr, "%s\n", builtin.error().message.c_str());
    return 1;
  }
  auto families = std::make_shared<const porting::FamilySet>(*builtin);
  coordinator::BestIndex index(**store);
  coordinator::BestAsks asks;

  const char* gpus[] = {"NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"};
  const std::vector<Family> fams = {
      {"gemm",
       {"bf16", "fp16", "fp32"},
       {"m=2048,n=2048,k=2048", "m=4096,n=4096,k=4096", "m=8192,n=8192,k=8192", "m=4096,n=4096,k=512",
        "m=128,n=8192,k=8192", "m=1000,n=1000,k=1000"}},
      {"attention",
       {"bf16", "fp16"},
       {"b=4,h=16,l=4096,d=128,causal=0", "b=4,h=16,l=4096,d=128,causal=1", "b=4,h=32,l=4096,d=64,causal=0",
        "b=1,h=8,l=1000,d=64,causal=1"}},
      {"rmsnorm", {"bf16", "fp16", "fp32"}, {"rows=32768,cols=4096", "rows=4096,cols=1000", "rows=1024,cols=4097"}},
      {"softmax", {"bf16", "fp16", "fp32"}, {"rows=32768,cols=4096", "rows=4096,cols=1000", "rows=1024,cols=4097"}}};
  std::mt19937_64 rng(42);
  std::vector<http::Request> reqs;
  for (int i = 0; i < questions; ++i) {
    const Family& f = fams[rng() % fams.size()];
    http::Request r;
    r.query["gpu"] = gpus[rng() % 3];
    r.query["op"] = f.op;
    r.query["dtype"] = f.dtypes[rng() % f.dtypes.size()];
    r.query["shape"] = rng() % 5 == 0 ? std::string(f.seeded[rng() % f.seeded.size()]) : random_shape(rng, f.op);
    reqs.push_back(std::move(r));
  }
  // Every key's entry loaded, as the warm-up of bench/api/run.sh does.
  for (const auto& r : reqs) {
    auto q = coordinator::parse_best_question(r, families);
    if (q.ok()) (void)index.load(q->gpu, q->op, q->dtype, *q->families);
  }
  std::size_t bytes = 0, answered = 0;
  for (int round = 0; round < rounds; ++round) {
    const double start = cpu_seconds();
    for (const auto& r : reqs) {
      auto q = coordinator::parse_best_question(r, families);
      if (!q.ok()) continue;
      auto entry = index.current(q->gpu, q->op, q->dtype, *q->families);
      if (!entry) continue;
      std::optional<coordinator::AskView> ask;
      auto body = coordinator::measured_answer(*entry, *q, ask);
      if (!body) continue;
      if (ask) asks.record(*ask, 1);
      bytes += body->size();
      ++answered;
    }
    const double s = cpu_seconds() - start;
    std::printf("round %d: %.2f us of CPU per question (%zu answered of %d, %.0f bytes on average)\n", round + 1,
                s * 1e6 / static_cast<double>(reqs.size()), answered / static_cast<std::size_t>(round + 1), questions,
                static_cast<double>(bytes) / static_cast<double>(answered));
  }
  return 0;
}
