// Two libraries side by side on one coordinator: two real git repositories, each with its
// kport.json (a command-protocol library, a python3 harness), built by the real
// kport-runner --role build, both running kport's rmsnorm family and naming one instance
// alike. Their instances, bring-up and best answers stay apart: a question about an op
// both run names the libraries and asks for one, an instance named alike keeps its own
// config and figures per library; a broken manifest in one fails that library's build
// and nothing of the other.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "foreign_library.h"
#include "runner_fixture.h"

namespace kport::testing {
namespace {

using boost::json::object;

// A command-protocol library named `name` whose harness lists `instances` of rmsnorm:
// (variant, instance, width) each.
// With `mode`, the manifest's env sets NORM_MODE to "{target}-<mode>", and the harness
// lists nothing unless it runs with exactly that.
void write_norm_library(const std::filesystem::path& root, const std::string& name,
                        const std::vector<std::tuple<std::string, std::string, int>>& instances,
                        const std::string& mode = "") {
  std::string variants, declared;
  std::set<std::string> seen;
  for (const auto& [variant, instance, width] : instances) {
    if (seen.insert(variant).second) {
      if (!variants.empty()) variants += ", ";
      variants +=
          "{\"variant\": \"rmsnorm." + variant + "\", \"features\": \"simt\", \"status\": \"built\", \"instances\": [" +
          "{\"name\": \"" + instance + "\", \"family\": \"rmsnorm\", \"variant\": \"" + variant +
          "\", \"features\": [\"simt\"], \"dtypes\": [\"bf16\"], \"config\": {\"width\": " + std::to_string(width) +
          "}}]}";
      declared += std::string(declared.empty() ? "" : ",\n    ") + "{\"name\": \"" + variant +
                  "\", \"family\": \"rmsnorm\", \"features\": [\"simt\"]}";
    }
  }
  write_file(root / "harness" / "kport_harness.py", R"(#!/usr/bin/env python3
# The library's harness: speaks the protocol's list; GPU commands answer no_device here.
import json
import os
import sys

MODE = ")" + (mode.empty() ? std::string() : "sm_90a-" + mode) +
                                                        R"("
if MODE and os.environ.get("NORM_MODE") != MODE:
    print(json.dumps({"error": {"code": "bad_environment", "message": "NORM_MODE is not " + MODE}}))
    sys.exit(2)
if len(sys.argv) > 1 and sys.argv[1] == "list":
    print(json.dumps({"target": "sm_90a", "variants": [)" +
                                                        variants + R"(], "instance_count": )" +
                                                        std::to_string(instances.size()) + R"(}))
    sys.exit(0)
print(json.dumps({"error": {"code": "no_device", "message": "no GPU here"}}))
sys.exit(3)
)");
  write_file(root / "kport.json", R"({
  "manifest_version": 1,
  "name": ")" + name + R"(",
  "build": {
    "command": ["sh", "-c", "mkdir -p {build_dir} && cp harness/kport_harness.py {build_dir}/kport-harness && chmod +x {build_dir}/kport-harness"],
    "harness": "{build_dir}/kport-harness"
  },
  "targets": ["sm_90a"],
  "variants": [
    )" + declared + R"(
  ])" + (mode.empty() ? std::string() : ",\n  \"env\": {\"NORM_MODE\": \"{target}-" + mode + "\"}") +
                                      R"(
}
)");
}

class Libraries : public BuildRunnerTest {
 protected:
  Libraries() {
    max_attempts = 3;    // a broken manifest must fail on its first attempt all the same
    retry_base_ms = 50;  // a retry, were there one, would come back at once
  }
  void SetUp() override {
    if (std::system("git --version > /dev/null 2>&1") != 0)
      GTEST_SKIP() << "the git CLI is needed to create the test repositories";
    if (std::system("python3 --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 runs the libraries' harnesses";
    BuildRunnerTest::SetUp();
  }
  // <name>.git holding what `write` puts in <name>/; registered as repository `name`.
  std::string make_library(const std::string& name, const std::function<void(const std::filesystem::path&)>& write) {
    const std::filesystem::path src = dir.path() / name;
    write(src);
    const std::string bare = (dir.path() / (name + ".git")).string();
    git("git init -q --bare " + bare);
    git("cd " + src.string() + " && git init -q -b main && git add -A && git commit -q -m library && git push -q " +
        bare + " main");
    auto reg = post("/api/v1/repositories", object{{"name", name}, {"url", bare}}, k_admin);
    EXPECT_EQ(reg.status, 201) << reg.raw;
    return shell_out("cd " + src.string() + " && git rev-parse HEAD");
  }
  std::string change(const std::string& name, const std::string& shell_edit) {
    const std::string src = (dir.path() / name).string();
    git("cd " + src + " && " + shell_edit + " && git add -A && git commit -q -m change && git push -q " +
        (dir.path() / (name + ".git")).string() + " main");
    return shell_out("cd " + src + " && git rev-parse HEAD");
  }
  std::int64_t queue_build(const std::string& sha, const std::string& repo) {
    auto p = post("/api/v1/pipelines",
                  object{{"commit", sha}, {"repo", repo}, {"targets", boost::json::array{"sm_90a"}}}, k_admin);
    EXPECT_EQ(p.status, 201) << p.raw;
    if (p.status != 201) return 0;
    return p.body.at("jobs").as_array().at(0).at("id").to_number<std::int64_t>();
  }
  object wait_job(std::int64_t job, std::chrono::seconds limit = std::chrono::seconds(120)) {
    object j;
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      j = get("/api/v1/jobs/" + std::to_string(job)).body.as_object();
      const auto& s = j.at("status").as_string();
      if (s == "succeeded" || s == "failed" || s == "cancelled") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return j;
  }
  // Claims the check job of `build` as `gpu`, uploads `results` into it and completes it;
  // returns the stored result ids.
  std::vector<std::int64_t> check(const std::string& gpu, std::int64_t build, boost::json::array results) {
    auto job = claim(gpu, 5);
    EXPECT_TRUE(job.is_object()) << runner_output();
    if (!job.is_object()) return {};
    EXPECT_EQ(job.at("depends_on").to_number<std::int64_t>(), build);
    const std::string id = std::to_string(job.at("id").to_number<std::int64_t>());
    auto up = post("/api/v1/jobs/" + id + "/results", object{{"attempt", 1}, {"results", std::move(results)}}, gpu);
    EXPECT_EQ(up.status, 200) << up.raw;
    EXPECT_EQ(post("/api/v1/jobs/" + id + "/complete", object{{"attempt", 1}}, gpu).status, 200);
    std::vector<std::int64_t> ids;
    if (up.status == 200)
      for (const auto& x : up.body.at("ids").as_array()) ids.push_back(x.to_number<std::int64_t>());
    return ids;
  }
  static std::vector<std::string> variants_of(const boost::json::value& bringup) {
    std::vector<std::string> out;
    for (const auto& v : bringup.at("variants").as_array())
      out.push_back(std::string(v.at("family").as_string()) + "." + std::string(v.at("variant").as_string()));
    return out;
  }
};

const std::string k_best = "/api/v1/best?gpu=NVIDIA%20H200&op=rmsnorm&dtype=bf16&shape=rows=4096,cols=8192";

TEST_F(Libraries, TwoLibrariesKeepTheirInstancesBringUpAndBestAnswersApart) {
  add_target("sm_90a", "9.0");
  const std::string a = make_library("norm-a", [](const std::filesystem::path& root) {
    write_norm_library(root, "norm-a", {{"rows", "rmsnorm.rows.w128", 128}}, "fast");
  });
  const std::string b = make_library("norm-b", [](const std::filesystem::path& root) {
    write_norm_library(root, "norm-b", {{"rows", "rmsnorm.rows.w128", 512}, {"tiled", "rmsnorm.tiled.t4", 4}});
  });
  start_runner();
  const std::int64_t build_a = queue_build(a, "norm-a");
  ASSERT_EQ(wait_job(build_a).at("status"), "succeeded") << runner_output();
  const std::int64_t build_b = queue_build(b, "norm-b");
  ASSERT_EQ(wait_job(build_b).at("status"), "succeeded") << runner_output();

  // norm-a's env reached its harness's list (it lists nothing without it), and its build
  // records carry it for the GPU runner; norm-b declares none.
  auto records_a = get("/api/v1/builds?job=" + std::to_string(build_a));
  ASSERT_EQ(records_a.status, 200) << records_a.raw;
  ASSERT_FALSE(records_a.body.at("items").as_array().empty()) << records_a.raw;
  for (const auto& r : records_a.body.at("items").as_array())
    EXPECT_EQ(r.at("harness_env"), (object{{"NORM_MODE", "{target}-fast"}})) << records_a.raw;
  auto records_b = get("/api/v1/builds?job=" + std::to_string(build_b));
  ASSERT_EQ(records_b.status, 200) << records_b.raw;
  for (const auto& r : records_b.body.at("items").as_array()) EXPECT_TRUE(r.at("harness_env").as_object().empty());

  // One instance name, two libraries: two instances, each with its own config.
  auto kernels = get("/api/v1/kernels?family=rmsnorm");
  ASSERT_EQ(kernels.status, 200) << kernels.raw;
  std::map<std::string, std::int64_t> width;
  for (const auto& k : kernels.body.at("items").as_array())
    if (k.at("name") == "rmsnorm.rows.w128")
      width[std::string(k.at("repo").as_string())] = k.at("config").at("width").to_number<std::int64_t>();
  EXPECT_EQ(width, (std::map<std::string, std::int64_t>{{"norm-a", 128}, {"norm-b", 512}})) << kernels.raw;

  // Each library's check: the same instance name at the same shape, other figures.
  const std::string gpu = register_runner("gpu-1", "gpu");
  const auto ids_a = check(
      gpu, build_a, boost::json::array{testing::row_result("rmsnorm", "rows", "rmsnorm.rows.w128", "bf16", 40.0)});
  const auto ids_b =
      check(gpu, build_b,
            boost::json::array{testing::row_result("rmsnorm", "rows", "rmsnorm.rows.w128", "bf16", 25.0),
                               testing::row_result("rmsnorm", "tiled", "rmsnorm.tiled.t4", "bf16", 30.0)});
  ASSERT_EQ(ids_a.size(), 1u);
  ASSERT_EQ(ids_b.size(), 2u);

  // Asked without a library, kport does not rank the two together: it names them.
  auto mixed = get(k_best);
  ASSERT_EQ(mixed.status, 400) << mixed.raw;
  EXPECT_EQ(mixed.body.at("error").at("message").as_string(),
            "op rmsnorm on NVIDIA H200 has instances of 2 libraries (repositories 'norm-a', 'norm-b'), which kport "
            "does not rank together; ask about one with repo=NAME")
      << mixed.raw;
  // Asked about one, only its evidence counts: norm-a's instance keeps its own figure.
  auto of_a = get(k_best + "&repo=norm-a");
  ASSERT_EQ(of_a.status, 200) << of_a.raw;
  EXPECT_EQ(of_a.body.at("kind"), "measured") << of_a.raw;
  EXPECT_EQ(of_a.body.at("best"), "rmsnorm.rows.w128") << of_a.raw;
  EXPECT_EQ(of_a.body.at("query").at("repo"), "norm-a") << of_a.raw;
  ASSERT_EQ(of_a.body.at("ranking").as_array().size(), 1u) << of_a.raw;
  EXPECT_EQ(of_a.body.at("ranking").at(0).at("evidence").at("result").to_number<std::int64_t>(), ids_a[0]) << of_a.raw;
  EXPECT_DOUBLE_EQ(of_a.body.at("ranking").at(0).at("evidence").at("median_us").to_number<double>(), 40.0);
  auto of_b = get(k_best + "&repo=norm-b");
  ASSERT_EQ(of_b.status, 200) << of_b.raw;
  EXPECT_EQ(of_b.body.at("best"), "rmsnorm.rows.w128") << of_b.raw;
  EXPECT_EQ(of_b.body.at("query").at("repo"), "norm-b") << of_b.raw;
  ASSERT_EQ(of_b.body.at("ranking").as_array().size(), 2u) << of_b.raw;
  EXPECT_EQ(of_b.body.at("ranking").at(0).at("evidence").at("result").to_number<std::int64_t>(), ids_b[0]) << of_b.raw;
  // The same with a token (the worker pool's path rather than the I/O thread's).
  auto tokened = get(k_best + "&repo=norm-a", k_admin);
  ASSERT_EQ(tokened.status, 200) << tokened.raw;
  EXPECT_EQ(tokened.body.at("ranking").as_array().size(), 1u) << tokened.raw;
  auto unknown = get(k_best + "&repo=norm-c");
  EXPECT_EQ(unknown.status, 404) << unknown.raw;
  EXPECT_NE(unknown.raw.find("repository 'norm-c' is not known to kport (known: norm-a, norm-b;"), std::string::npos)
      << unknown.raw;

  // A dispatch snapshot hands out one library's instances per op and dtype.
  auto snap_mixed = get("/api/v1/dispatch/snapshot?gpu=NVIDIA%20H200");
  ASSERT_EQ(snap_mixed.status, 400) << snap_mixed.raw;
  EXPECT_NE(snap_mixed.raw.find("op rmsnorm bf16 on NVIDIA H200 has instances of several libraries (repositories "
                                "'norm-a', 'norm-b')"),
            std::string::npos)
      << snap_mixed.raw;
  auto snap_b = get("/api/v1/dispatch/snapshot?gpu=NVIDIA%20H200&repo=norm-b");
  ASSERT_EQ(snap_b.status, 200) << snap_b.raw;
  std::vector<std::int64_t> handed;
  for (const auto& t : snap_b.body.at("tables").as_array())
    for (const auto& f : t.at("figures").as_array()) handed.push_back(f.at("result_id").to_number<std::int64_t>());
  std::sort(handed.begin(), handed.end());
  EXPECT_EQ(handed, ids_b) << snap_b.raw;

  // Bring-up per library: each board holds its own variants and figures only.
  auto up_a = get("/api/v1/targets/sm_90a/bringup?repo=norm-a");
  ASSERT_EQ(up_a.status, 200) << up_a.raw;
  EXPECT_EQ(up_a.body.at("repo"), "norm-a") << up_a.raw;
  EXPECT_EQ(up_a.body.at("commit"), boost::json::value(a)) << up_a.raw;
  EXPECT_EQ(up_a.body.at("repositories"), (boost::json::array{"norm-a", "norm-b"})) << up_a.raw;
  EXPECT_EQ(variants_of(up_a.body), (std::vector<std::string>{"rmsnorm.rows"})) << up_a.raw;
  EXPECT_EQ(up_a.body.at("variants").at(0).at("results_passed").to_number<std::int64_t>(), 1) << up_a.raw;
  // Selected among its own instances: norm-b's faster figure of the same name does not count.
  EXPECT_EQ(up_a.body.at("variants").at(0).at("selected_best"), true) << up_a.raw;
  auto up_b = get("/api/v1/targets/sm_90a/bringup?repo=norm-b");
  ASSERT_EQ(up_b.status, 200) << up_b.raw;
  EXPECT_EQ(up_b.body.at("commit"), boost::json::value(b)) << up_b.raw;
  EXPECT_EQ(variants_of(up_b.body), (std::vector<std::string>{"rmsnorm.rows", "rmsnorm.tiled"})) << up_b.raw;
  // Without ?repo=, the library built last, which names the others.
  auto latest = get("/api/v1/targets/sm_90a/bringup");
  ASSERT_EQ(latest.status, 200) << latest.raw;
  EXPECT_EQ(latest.body.at("repo"), "norm-b") << latest.raw;
  auto by_commit = get("/api/v1/targets/sm_90a/bringup?commit=" + a);
  ASSERT_EQ(by_commit.status, 200) << by_commit.raw;
  EXPECT_EQ(by_commit.body.at("repo"), "norm-a") << by_commit.raw;
  EXPECT_EQ(variants_of(by_commit.body), (std::vector<std::string>{"rmsnorm.rows"})) << by_commit.raw;
  EXPECT_EQ(get("/api/v1/targets/sm_90a/bringup?repo=norm-c").status, 404);
  auto overview = get("/api/v1/dashboard/overview");
  ASSERT_EQ(overview.status, 200) << overview.raw;
  std::vector<std::string> rows;
  for (const auto& t : overview.body.at("targets").as_array())
    rows.push_back(std::string(t.at("name").as_string()) + "/" + std::string(t.at("repo").as_string()));
  EXPECT_EQ(rows, (std::vector<std::string>{"sm_90a/norm-b", "sm_90a/norm-a"}))
      << "a row per library, the one built last first: " << overview.raw;
  auto page = get("/api/v1/dashboard/targets/sm_90a?repo=norm-a");
  ASSERT_EQ(page.status, 200) << page.raw;
  EXPECT_EQ(page.body.at("repo"), "norm-a") << page.raw;
  EXPECT_EQ(page.body.at("variants").as_array().size(), 1u) << page.raw;

  // The CLI asks the same questions.
  std::string out;
  ASSERT_EQ(cli({"bringup", "sm_90a", "--repo", "norm-a"}, out), 0) << out;
  EXPECT_NE(out.find("bring-up of sm_90a (arch 9.0) for library norm-a at " + a.substr(0, 12)), std::string::npos)
      << out;
  EXPECT_NE(out.find("other libraries built for sm_90a: norm-b (kport bringup sm_90a --repo NAME)"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("rmsnorm.tiled"), std::string::npos) << out;
  ASSERT_EQ(cli({"best", "--gpu", "NVIDIA H200", "--op", "rmsnorm", "--dtype", "bf16", "--shape", "rows=4096,cols=8192",
                 "--repo", "norm-b"},
                out),
            0)
      << out;
  EXPECT_NE(out.find("library: norm-b"), std::string::npos) << out;
  EXPECT_NE(
      cli({"best", "--gpu", "NVIDIA H200", "--op", "rmsnorm", "--dtype", "bf16", "--shape", "rows=4096,cols=8192"},
          out),
      0);
  EXPECT_NE(out.find("ask about one with repo=NAME"), std::string::npos) << out;

  // norm-b breaks its manifest: its build fails once, saying where; norm-a's next push
  // builds, and its board is norm-a's as before.
  const std::string broken = change("norm-b", "sed -i 's/\"targets\"/\"targetz\"/' kport.json");
  const std::int64_t failed = queue_build(broken, "norm-b");
  auto f = wait_job(failed);
  ASSERT_EQ(f.at("status"), "failed") << boost::json::serialize(f) << runner_output();
  EXPECT_EQ(f.at("attempt").to_number<std::int64_t>(), 1) << "a broken manifest is not worth a retry";
  EXPECT_NE(std::string(f.at("failure_reason").as_string()).find("kport.json:8: unknown key 'targetz'"),
            std::string::npos)
      << boost::json::serialize(f);
  const std::string next_a = change("norm-a", "echo '# tuned' >> harness/kport_harness.py");
  const std::int64_t build_a2 = queue_build(next_a, "norm-a");
  ASSERT_EQ(wait_job(build_a2).at("status"), "succeeded") << runner_output();
  auto after = get("/api/v1/targets/sm_90a/bringup?repo=norm-a");
  ASSERT_EQ(after.status, 200) << after.raw;
  EXPECT_EQ(after.body.at("commit"), boost::json::value(next_a)) << after.raw;
  EXPECT_EQ(variants_of(after.body), (std::vector<std::string>{"rmsnorm.rows"})) << after.raw;
  // norm-b's board is still its last good build's; its kernels are untouched.
  auto b_after = get("/api/v1/targets/sm_90a/bringup?repo=norm-b");
  ASSERT_EQ(b_after.status, 200) << b_after.raw;
  EXPECT_EQ(b_after.body.at("commit"), boost::json::value(b)) << b_after.raw;
  EXPECT_EQ(get(k_best + "&repo=norm-b").body.at("ranking").as_array().size(), 2u);
  EXPECT_EQ(stop_runner(), 0) << runner_output();
}

// A measure request is of one library: on two libraries running rmsnorm, the request
// names one, and its check job runs on that library's build (the harness that holds its
// instances), not on the one built last.
TEST_F(Libraries, AMeasureRequestRunsOnItsOwnLibrarysBuild) {
  add_target("sm_90a", "9.0");
  const std::string a = make_library("norm-a", [](const std::filesystem::path& root) {
    write_norm_library(root, "norm-a", {{"rows", "rmsnorm.rows.w128", 128}});
  });
  const std::string b = make_library("norm-b", [](const std::filesystem::path& root) {
    write_norm_library(root, "norm-b", {{"rows", "rmsnorm.rows.w128", 512}});
  });
  start_runner();
  const std::int64_t build_a = queue_build(a, "norm-a");
  ASSERT_EQ(wait_job(build_a).at("status"), "succeeded") << runner_output();
  const std::int64_t build_b = queue_build(b, "norm-b");
  ASSERT_EQ(wait_job(build_b).at("status"), "succeeded") << runner_output();
  register_runner("gpu-1", "gpu");

  const object ask{{"gpu", "NVIDIA H200"}, {"op", "rmsnorm"}, {"dtype", "bf16"}, {"shape", "rows=64,cols=8192"}};
  auto mixed = post("/api/v1/best/requests", ask, k_admin);
  ASSERT_EQ(mixed.status, 400) << mixed.raw;
  EXPECT_EQ(mixed.body.at("error").at("message").as_string(),
            "op rmsnorm has instances of 2 libraries (repositories 'norm-a', 'norm-b'), which kport does not rank "
            "together; name one in the request's field 'repo' (\"repo\": \"NAME\")")
      << mixed.raw;
  for (const auto& [repo, build, sha] :
       {std::make_tuple("norm-a", build_a, a), std::make_tuple("norm-b", build_b, b)}) {
    object of = ask;
    of["repo"] = repo;
    auto r = post("/api/v1/best/requests", of, k_admin);
    ASSERT_EQ(r.status, 201) << r.raw;
    EXPECT_EQ(r.body.at("repo"), repo) << r.raw;
    auto job = get("/api/v1/jobs/" + std::to_string(r.body.at("job").to_number<std::int64_t>()));
    ASSERT_EQ(job.status, 200) << job.raw;
    EXPECT_EQ(job.body.at("depends_on").to_number<std::int64_t>(), build) << repo << ": " << job.raw;
    EXPECT_EQ(job.body.at("commit"), boost::json::value(sha)) << job.raw;
  }
  auto listed = get("/api/v1/best/requests?repo=norm-a");
  ASSERT_EQ(listed.status, 200) << listed.raw;
  ASSERT_EQ(listed.body.at("items").as_array().size(), 1u) << listed.raw;

  // The CLI asks the same: norm-a's open request answers it.
  std::string out;
  ASSERT_EQ(cli({"best-request", "--gpu", "NVIDIA H200", "--op", "rmsnorm", "--dtype", "bf16", "--shape",
                 "rows=64,cols=8192", "--repo", "norm-a"},
                out),
            0)
      << out;
  EXPECT_NE(out.find("already requested; measure request"), std::string::npos) << out;
  EXPECT_NE(out.find(", library norm-a,"), std::string::npos) << out;
  EXPECT_NE(cli({"best-request", "--gpu", "NVIDIA H200", "--op", "rmsnorm", "--dtype", "bf16", "--shape",
                 "rows=64,cols=8192"},
                out),
            0);
  EXPECT_NE(out.find("name one in the request's field 'repo'"), std::string::npos) << out;
  EXPECT_EQ(stop_runner(), 0) << runner_output();
}

}  // namespace
}  // namespace kport::testing
