// kport-dispatch: the library's answers from the command line.
//   kport-dispatch check  --snapshot FILE [--max-age S] [--commit SHA] [--gpu MODEL] [--json]
//   kport-dispatch lookup --snapshot FILE --op OP --dtype DTYPE --shape K=V,... [same checks] [--json]
// Exit status: 0 answered (lookup: an instance), 1 the snapshot was refused, 2 usage or
// a malformed shape, 3 no answer (lookup: unknown or no_best; kport does not know).
#include <boost/json.hpp>

#include <charconv>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "kport/common/build_info.h"
#include "kport/dispatch/dispatch.h"

namespace {

namespace json = boost::json;
using kport::dispatch::Answer;
using kport::dispatch::LoadOptions;
using kport::dispatch::Snapshot;
using kport::dispatch::Status;

constexpr int k_ok = 0, k_refused = 1, k_usage = 2, k_no_answer = 3;

const char* k_usage_text =
    "usage: kport-dispatch check  --snapshot FILE [--max-age SECONDS] [--commit SHA] [--gpu MODEL] [--json]\n"
    "       kport-dispatch lookup --snapshot FILE --op OP --dtype DTYPE --shape K=V,... [check options] [--json]\n"
    "       kport-dispatch --version\n"
    "A snapshot comes from the coordinator: curl -fsS -o snap.json "
    "\"$KPORT_SERVER/api/v1/dispatch/snapshot?gpu=NVIDIA%20H200\"\n"
    "exit status: 0 answered, 1 snapshot refused (corrupt, stale, wrong commit or GPU), 2 usage, 3 kport does not "
    "know\n";

int usage(const std::string& why) {
  std::cerr << "kport-dispatch: " << why << "\n" << k_usage_text;
  return k_usage;
}

std::string iso(std::int64_t ms) {
  std::time_t s = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json::array strings(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

int check(const Snapshot& snap, bool as_json) {
  auto tables = snap.tables();
  if (as_json) {
    json::array t;
    for (const auto& i : tables)
      t.push_back(json::object{{"op", i.op},
                               {"dtype", i.dtype},
                               {"figures", i.figures},
                               {"shapes", i.shapes},
                               {"timed_shapes", i.timed_shapes},
                               {"instances", strings(i.instances)}});
    std::cout << json::serialize(json::object{{"ok", true},
                                              {"gpu_model", snap.gpu_model()},
                                              {"arch", snap.arch()},
                                              {"generated_at", iso(snap.generated_at_ms())},
                                              {"generated_at_ms", snap.generated_at_ms()},
                                              {"commits", strings(snap.commits())},
                                              {"drivers", strings(snap.drivers())},
                                              {"tables", std::move(t)}})
              << "\n";
    return k_ok;
  }
  std::cout << "snapshot of " << snap.gpu_model() << " (arch " << snap.arch() << "), generated "
            << iso(snap.generated_at_ms()) << "\n";
  std::cout << "commits: " << (snap.commits().empty() ? std::string("none") : snap.commits().front())
            << (snap.commits().size() > 1 ? " (+" + std::to_string(snap.commits().size() - 1) + " older)" : "") << "\n";
  std::string drivers;
  for (const auto& d : snap.drivers()) drivers += (drivers.empty() ? "" : ", ") + d;
  std::cout << "drivers: " << (drivers.empty() ? "none" : drivers) << "\n";
  for (const auto& i : tables)
    std::cout << "  " << i.op << " " << i.dtype << ": " << i.timed_shapes << " timed shapes of " << i.shapes << ", "
              << i.figures << " figures, " << i.instances.size() << " winning instances\n";
  return k_ok;
}

int lookup(const Snapshot& snap, const std::string& op, const std::string& dtype, const std::string& shape,
           bool as_json) {
  Answer a = snap.lookup(op, dtype, shape);
  std::string why;
  switch (a.status) {
    case Status::exact:
    case Status::nearest: break;
    case Status::no_best:
      why =
          "every instance measured on " + snap.gpu_model() + " at " + std::string(a.matched_shape) +
          " (the nearest measured shape) failed or was not timed on its newest commit; no instance can be recommended";
      break;
    case Status::unknown:
      why = "kport has no measured evidence for " + op + " " + dtype + " comparable to " + shape + " on " +
            snap.gpu_model() + " in this snapshot; GET /api/v1/best would answer provisional or unranked";
      break;
    case Status::ruled_out:
      why = "no " + op + " instance runs " + shape +
            ": the family's requirements in this snapshot rule it out (a dimension that must be a multiple of "
            "another); GET /api/v1/best refuses it with 422 and says which";
      break;
    case Status::bad_query:
      why = "shape '" + shape +
            "' is not key=value,... with non-negative integers and unique lowercase keys, e.g. m=4096,n=4096,k=4096";
      break;
  }
  if (as_json) {
    json::object o{{"status", kport::dispatch::status_name(a.status)},
                   {"op", op},
                   {"dtype", dtype},
                   {"shape", shape},
                   {"gpu_model", snap.gpu_model()}};
    o["instance"] = a.found() ? json::value(std::string(a.instance)) : json::value(nullptr);
    o["variant"] = a.found() ? json::value(std::string(a.variant)) : json::value(nullptr);
    o["matched_shape"] = a.matched_shape.empty() ? json::value(nullptr) : json::value(std::string(a.matched_shape));
    if (a.found()) {
      o["distance"] = a.distance;
      o["median_us"] = a.median_us;
      o["stddev_us"] = a.stddev_us;
      o["tie"] = a.tie;
      o["unstable"] = a.unstable;
      o["result_id"] = a.result_id;
      if (a.estimated) o["estimate_us"] = a.estimate_us;
    }
    if (!why.empty()) o["reason"] = why;
    std::cout << json::serialize(o) << "\n";
  } else if (a.found()) {
    std::cout << a.instance << "\n";
    std::cerr << kport::dispatch::status_name(a.status) << " at " << a.matched_shape << ": " << a.median_us << " us";
    if (a.estimated) std::cerr << ", estimated " << a.estimate_us << " us at " << shape;
    std::cerr << (a.tie ? ", tied within noise" : "") << (a.unstable ? ", unstable figure" : "") << " (result "
              << a.result_id << ")\n";
  } else {
    std::cerr << "kport-dispatch: " << kport::dispatch::status_name(a.status) << ": " << why << "\n";
  }
  if (a.status == Status::bad_query) return k_usage;
  return a.found() ? k_ok : k_no_answer;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("a command is needed");
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << k_usage_text;
    return k_ok;
  }
  if (cmd == "--version") {
    std::cout << kport::version_text("kport-dispatch");
    return k_ok;
  }
  if (cmd != "check" && cmd != "lookup") return usage("unknown command '" + cmd + "'");
  std::map<std::string, std::string> opt;
  bool as_json = false;
  const std::vector<std::string> known = {"--snapshot", "--max-age", "--commit", "--gpu", "--op", "--dtype", "--shape"};
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") {
      as_json = true;
      continue;
    }
    if (std::find(known.begin(), known.end(), a) == known.end()) return usage("unknown option '" + a + "'");
    if (i + 1 >= argc) return usage(a + " needs a value");
    if (opt.count(a)) return usage(a + " given twice");
    opt[a] = argv[++i];
  }
  if (!opt.count("--snapshot")) return usage("--snapshot FILE is required");
  LoadOptions lo;
  if (opt.count("--max-age")) {
    const std::string& s = opt["--max-age"];
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < 0)
      return usage("--max-age '" + s + "' is not a whole number of seconds");
    lo.max_age_s = v;
  }
  if (opt.count("--commit")) lo.expect_commit = opt["--commit"];
  if (opt.count("--gpu")) lo.expect_gpu = opt["--gpu"];
  if (cmd == "lookup")
    for (const char* need : {"--op", "--dtype", "--shape"})
      if (!opt.count(need)) return usage(std::string("lookup needs ") + need);
  if (cmd == "check")
    for (const char* extra : {"--op", "--dtype", "--shape"})
      if (opt.count(extra)) return usage(std::string("check takes no ") + extra);

  auto snap = Snapshot::load_file(opt["--snapshot"], lo);
  if (!snap.ok()) {
    if (as_json)
      std::cout << json::serialize(json::object{{"ok", false},
                                                {"error", kport::dispatch::error_code_name(snap.error().code)},
                                                {"message", snap.error().message}})
                << "\n";
    std::cerr << "kport-dispatch: snapshot refused (" << kport::dispatch::error_code_name(snap.error().code)
              << "): " << snap.error().message << "\n";
    return k_refused;
  }
  if (cmd == "check") return check(*snap, as_json);
  return lookup(*snap, opt["--op"], opt["--dtype"], opt["--shape"], as_json);
}
