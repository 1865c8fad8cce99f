// Every reason a pipeline exists for, through the real coordinator: which jobs each one
// creates (push, manual, new_target, new GPU, new driver, re-measure) and which checks
// a finished build spawns.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "hook_fixture.h"

namespace kport::testing {
namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;

// (kind, target, arch or "-", gpu_model or "-") of a job, for comparing job lists.
std::string describe(const value& j) {
  auto text = [&](const char* key) {
    const value& v = j.at(key);
    return v.is_string() ? std::string(v.as_string()) : std::string("-");
  };
  return text("kind") + " " + text("target") + " " + text("arch") + " " + text("gpu_model");
}

class PipelineReasons : public HookTest {
 protected:
  void SetUp() override {
    HookTest::SetUp();
    add_target("sm_90a", "9.0");
    ASSERT_EQ(
        post("/api/v1/repositories", object{{"name", "org/kernels"}, {"url", "/srv/git/kernels.git"}}, k_admin).status,
        201);
    object caps{{"toolkit", "13.0"}, {"targets", array{"sm_80", "sm_90a", "sm_100a"}}, {"cores", 2}};
    auto b = post("/api/v1/runners/register", object{{"name", "builder"}, {"role", "build"}, {"capabilities", caps}},
                  k_registration);
    ASSERT_EQ(b.status, 201) << b.raw;
    builder = std::string(b.body.at("token").as_string());
    gpu = register_runner("h200", "gpu", "9.0", "NVIDIA H200");
  }

  // sm_80 code is registered to be checked on 8.6 and 9.0 GPUs as well as its own 8.0.
  void add_sm80() {
    auto r =
        put("/api/v1/targets/sm_80",
            object{{"arch", "8.0"}, {"features", array{"mma_sync"}}, {"check_arches", array{"8.6", "9.0"}}}, k_admin);
    ASSERT_EQ(r.status, 201) << r.raw;
  }

  JsonReply push(const std::string& sha, const std::string& parent, const std::string& delivery) {
    return github(
        push_body("org/kernels", "refs/heads/main", parent.empty() ? std::string(40, '0') : parent, sha, false, parent),
        delivery);
  }

  JsonReply trigger(object body) {
    body["repo"] = "org/kernels";
    return post("/api/v1/pipelines", body, k_admin);
  }

  array jobs_of(std::int64_t pipeline) {
    auto r = get("/api/v1/pipelines/" + std::to_string(pipeline));
    EXPECT_EQ(r.status, 200) << r.raw;
    array jobs = r.body.at("jobs").as_array();
    std::reverse(jobs.begin(), jobs.end());  // oldest first
    return jobs;
  }
  std::vector<std::string> described(const array& jobs) {
    std::vector<std::string> out;
    for (const auto& j : jobs) out.push_back(describe(j));
    std::sort(out.begin(), out.end());
    return out;
  }

  // Claims the next job as `token`, uploads `items` under `key` (none when empty), completes it.
  value run_job(const std::string& token, const std::string& key = "", array items = {}) {
    auto job = claim(token);
    EXPECT_TRUE(job.is_object()) << "nothing to claim";
    if (!job.is_object()) return job;
    const std::string base = "/api/v1/jobs/" + std::to_string(job.at("id").to_number<std::int64_t>());
    const std::int64_t attempt = job.at("attempt").to_number<std::int64_t>();
    if (!key.empty()) {
      auto up = post(base + (key == "records" ? "/builds" : "/results"),
                     object{{"attempt", attempt}, {key, std::move(items)}}, token);
      EXPECT_EQ(up.status, 200) << up.raw;
    }
    auto done = post(base + "/complete", object{{"attempt", attempt}, {"status", "succeeded"}}, token);
    EXPECT_EQ(done.status, 200) << done.raw;
    return job;
  }

  static std::int64_t id_of(const value& v) { return v.at("id").to_number<std::int64_t>(); }

  std::string builder, gpu;
};

TEST_F(PipelineReasons, APushBuildsEveryTargetAndEachBuildSpawnsTheChecksOfItsArches) {
  add_sm80();
  // The API shows the arches that do check the target, as the checks below are spawned.
  EXPECT_EQ(get("/api/v1/targets/sm_80").body.at("check_arches"), (array{"8.0", "8.6", "9.0"}));
  const std::string a = commit_sha(1);
  auto r = push(a, "", "delivery-1");
  ASSERT_EQ(r.status, 201) << r.raw;
  const std::int64_t pipeline = id_of(r.body.at("pipeline"));
  EXPECT_EQ(r.body.at("pipeline").at("reason"), "push");
  EXPECT_EQ(described(jobs_of(pipeline)), (std::vector<std::string>{"build sm_80 - -", "build sm_90a - -"}));

  auto first = run_job(builder);
  auto second = run_job(builder);
  ASSERT_TRUE(first.is_object() && second.is_object());
  // sm_80 is checked on its own arch as well as the registered 8.6 and 9.0.
  auto jobs = jobs_of(pipeline);
  EXPECT_EQ(described(jobs),
            (std::vector<std::string>{"build sm_80 - -", "build sm_90a - -", "check sm_80 8.0 -", "check sm_80 8.6 -",
                                      "check sm_80 9.0 -", "check sm_90a 9.0 -"}));
  for (const auto& j : jobs) {
    if (j.at("kind") != "check") continue;
    const std::int64_t build = j.at("target") == first.at("target") ? id_of(first) : id_of(second);
    EXPECT_EQ(j.at("depends_on").to_number<std::int64_t>(), build) << j;
    EXPECT_EQ(j.at("commit"), value(a));
  }

  // Another delivery of the same commit (the post-receive hook, say) validates nothing twice.
  auto again = push(a, "", "delivery-2");
  EXPECT_EQ(again.status, 202) << again.raw;
  EXPECT_TRUE(again.body.at("pipeline").is_null());
  EXPECT_NE(again.raw.find("already validated by pipeline " + std::to_string(pipeline)), std::string::npos)
      << again.raw;
}

TEST_F(PipelineReasons, ManualNewTargetAndPushTriggersBuildWhatTheyName) {
  add_sm80();
  const std::string a = commit_sha(1);
  auto manual = trigger(object{{"commit", a}, {"reason", "manual"}});
  ASSERT_EQ(manual.status, 201) << manual.raw;
  EXPECT_EQ(manual.body.at("reason"), "manual");
  EXPECT_EQ(described(manual.body.at("jobs").as_array()),
            (std::vector<std::string>{"build sm_80 - -", "build sm_90a - -"}))
      << "no targets named: every known target";

  ASSERT_EQ(put("/api/v1/targets/sm_100a", object{{"arch", "10.0"}, {"features", array{"tcgen05"}}}, k_admin).status,
            201);
  auto bringup = trigger(object{{"commit", a}, {"reason", "new_target"}, {"targets", array{"sm_100a"}}});
  ASSERT_EQ(bringup.status, 201) << bringup.raw;
  EXPECT_EQ(bringup.body.at("reason"), "new_target");
  EXPECT_EQ(described(bringup.body.at("jobs").as_array()), std::vector<std::string>{"build sm_100a - -"});

  // A commit is validated once, whichever way its push arrived: webhook or git watch.
  auto pushed = trigger(object{{"commit", a}, {"reason", "push"}});
  EXPECT_EQ(pushed.status, 200) << pushed.raw;
  EXPECT_EQ(id_of(pushed.body), id_of(bringup.body)) << "the commit's newest pipeline";
  EXPECT_NE(pushed.raw.find("already validated"), std::string::npos) << pushed.raw;
  const std::string b = commit_sha(2);
  auto fresh = trigger(object{{"commit", b}, {"reason", "push"}, {"targets", array{"sm_90a"}}});
  ASSERT_EQ(fresh.status, 201) << fresh.raw;
  EXPECT_EQ(described(fresh.body.at("jobs").as_array()), std::vector<std::string>{"build sm_90a - -"});

  // Revalidations are checks of existing builds, opened by POST /api/v1/revalidations.
  for (const char* reason : {"new_gpu", "new_driver"}) {
    auto refused = trigger(object{{"commit", a}, {"reason", reason}});
    EXPECT_EQ(refused.status, 422) << refused.raw;
    EXPECT_NE(refused.raw.find("/api/v1/revalidations"), std::string::npos) << refused.raw;
  }
  auto unknown = trigger(object{{"commit", a}, {"targets", array{"sm_120a"}}});
  EXPECT_EQ(unknown.status, 404) << unknown.raw;
  EXPECT_EQ(get("/api/v1/pipelines?limit=100").body.at("items").as_array().size(), 3u) << "refusals queue nothing";
}

TEST_F(PipelineReasons, ANewGpuAndANewDriverCheckEachTargetsLatestBuildPinnedToTheModel) {
  add_sm80();
  // Before anything was built there is nothing to check: recorded, no pipeline.
  auto early = post("/api/v1/revalidations", object{{"gpu_model", "NVIDIA H200"}, {"driver", "580.1"}}, k_admin);
  ASSERT_EQ(early.status, 201) << early.raw;
  EXPECT_EQ(early.body.at("jobs").to_number<std::int64_t>(), 0);
  EXPECT_TRUE(early.body.at("pipeline").is_null());

  const std::string a = commit_sha(1);
  auto manual = trigger(object{{"commit", a}, {"targets", array{"sm_80", "sm_90a"}}});
  ASSERT_EQ(manual.status, 201) << manual.raw;
  std::map<std::string, std::int64_t> build_of;
  for (int i = 0; i < 2; ++i) {
    auto b = run_job(builder);
    ASSERT_TRUE(b.is_object());
    build_of[std::string(b.at("target").as_string())] = id_of(b);
  }

  // A second driver on the model: every target 9.0 checks (sm_90a by its own arch, sm_80
  // by registration), pinned to the model, on the build that succeeded.
  object caps{{"arch", "9.0"}, {"gpu_model", "NVIDIA H200"}, {"driver", "600.1"}, {"gpu_uuid", "GPU-2"}};
  ASSERT_EQ(post("/api/v1/runners/register", object{{"name", "h200-b"}, {"role", "gpu"}, {"capabilities", caps}},
                 k_registration)
                .status,
            201);
  auto opened = post("/api/v1/revalidations", object{{"gpu_model", "NVIDIA H200"}, {"driver", "600.1"}}, k_admin);
  ASSERT_EQ(opened.status, 201) << opened.raw;
  EXPECT_EQ(opened.body.at("jobs").to_number<std::int64_t>(), 2);
  EXPECT_EQ(opened.body.at("previous_driver"), "580.1");
  const std::int64_t pipeline = opened.body.at("pipeline").to_number<std::int64_t>();
  auto p = get("/api/v1/pipelines/" + std::to_string(pipeline));
  EXPECT_EQ(p.body.at("reason"), "new_driver");
  auto jobs = jobs_of(pipeline);
  EXPECT_EQ(described(jobs), (std::vector<std::string>{"check sm_80 9.0 NVIDIA H200", "check sm_90a 9.0 NVIDIA H200"}));
  for (const auto& j : jobs) {
    EXPECT_EQ(j.at("depends_on").to_number<std::int64_t>(), build_of[std::string(j.at("target").as_string())]) << j;
    EXPECT_NE(boost::json::serialize(j.at("payload")).find("\"previous_driver\":\"580.1\""), std::string::npos) << j;
  }
  // The same pair again opens nothing.
  auto twice = post("/api/v1/revalidations", object{{"gpu_model", "NVIDIA H200"}, {"driver", "600.1"}}, k_admin);
  EXPECT_EQ(twice.status, 200) << twice.raw;
  EXPECT_EQ(twice.body.at("opened"), false);

  // A GPU model never seen: reason new_gpu, everything checked (no instance list).
  object other{{"arch", "9.0"}, {"gpu_model", "NVIDIA H100"}, {"driver", "580.1"}, {"gpu_uuid", "GPU-3"}};
  ASSERT_EQ(post("/api/v1/runners/register", object{{"name", "h100"}, {"role", "gpu"}, {"capabilities", other}},
                 k_registration)
                .status,
            201);
  auto h100 = post("/api/v1/revalidations", object{{"gpu_model", "NVIDIA H100"}, {"driver", "580.1"}}, k_admin);
  ASSERT_EQ(h100.status, 201) << h100.raw;
  const std::int64_t h100_pipeline = h100.body.at("pipeline").to_number<std::int64_t>();
  EXPECT_EQ(get("/api/v1/pipelines/" + std::to_string(h100_pipeline)).body.at("reason"), "new_gpu");
  auto h100_jobs = jobs_of(h100_pipeline);
  EXPECT_EQ(described(h100_jobs),
            (std::vector<std::string>{"check sm_80 9.0 NVIDIA H100", "check sm_90a 9.0 NVIDIA H100"}));
  for (const auto& j : h100_jobs) EXPECT_FALSE(j.at("payload").as_object().contains("instances")) << j;
}

TEST_F(PipelineReasons, ACommitPushedByEveryPathAtOnceIsValidatedOnce) {
  // Webhooks with their own delivery ids and git-watch triggers, all for one commit.
  const std::string sha = commit_sha(5);
  const std::string body = push_body("org/kernels", "refs/heads/main", std::string(40, '0'), sha);
  const std::string trigger_body = boost::json::serialize(
      object{{"commit", sha}, {"repo", "org/kernels"}, {"ref", "refs/heads/main"}, {"reason", "push"}});
  std::vector<int> statuses(12, 0);
  std::vector<std::thread> senders;
  for (std::size_t i = 0; i < statuses.size(); ++i)
    senders.emplace_back([&, i] {
      http::HeaderList h = {{"Content-Type", "application/json"}};
      std::string path = "/api/v1/pipelines", text = trigger_body;
      if (i % 2 == 0) {
        path = "/api/v1/hooks/push";
        text = body;
        h.emplace_back("X-GitHub-Event", "push");
        h.emplace_back("X-GitHub-Delivery", "every-path-" + std::to_string(i));
        h.emplace_back("X-Hub-Signature-256", "sha256=" + hmac_hex(k_hook_secret, body));
      } else {
        h.emplace_back("Authorization", "Bearer " + k_admin);
      }
      auto r = http::fetch("POST", url(path), text, h);
      statuses[i] = r.ok() ? r->status : -1;
    });
  for (auto& t : senders) t.join();
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 201), 1) << "one of them created the pipeline";
  for (int s : statuses) EXPECT_TRUE(s == 201 || s == 202 || s == 200) << s;
  EXPECT_EQ(pipeline_count(), 1);
  EXPECT_EQ(job_count(), 1);
}

object build_record(const std::string& variant) {
  return object{{"family", "gemm"}, {"variant", variant},       {"status", "ok"},          {"message", ""},
                {"registers", 96},  {"shared_mem_bytes", 1024}, {"spill_stores_bytes", 0}, {"spill_loads_bytes", 0}};
}

object result(const std::string& variant, double median_us) {
  return object{{"family", "gemm"},
                {"variant", variant},
                {"instance", "gemm." + variant + ".default"},
                {"dtype", "bf16"},
                {"shape", "m=4096,n=4096,k=4096"},
                {"toolkit", "13.0"},
                {"gpu_model", "NVIDIA H200"},
                {"gpu_uuid", "GPU-1"},
                {"arch", "9.0"},
                {"driver", "580.1"},
                {"status", "passed"},
                {"max_rel_err", 1e-3},
                {"tolerance", 1e-2},
                {"median_us", median_us},
                {"stddev_us", 0.5},
                {"samples", 100}};
}

TEST_F(PipelineReasons, ASlowdownIsReMeasuredOnceOnTheSameBuildPinnedToTheGpuThatSawIt) {
  const std::string a = commit_sha(1), b = commit_sha(2);
  ASSERT_EQ(push(a, "", "delivery-a").status, 201);
  run_job(builder, "records", array{build_record("tiny_mma")});
  run_job(gpu, "results", array{result("tiny_mma", 100.0)});

  auto pb = push(b, a, "delivery-b");
  ASSERT_EQ(pb.status, 201) << pb.raw;
  const std::int64_t pipeline = id_of(pb.body.at("pipeline"));
  auto build = run_job(builder, "records", array{build_record("tiny_mma")});
  run_job(gpu, "results", array{result("tiny_mma", 150.0)});

  auto jobs = jobs_of(pipeline);
  EXPECT_EQ(described(jobs),
            (std::vector<std::string>{"build sm_90a - -", "check sm_90a 9.0 -", "check sm_90a 9.0 NVIDIA H200"}))
      << "the slowdown asked for one pinned re-measure in the commit's pipeline";
  const value& rm = jobs.back();
  EXPECT_EQ(rm.at("depends_on").to_number<std::int64_t>(), id_of(build)) << "the build the first measurement used";
  EXPECT_EQ(rm.at("payload"), (object{{"remeasure", true}, {"instances", array{"gemm.tiny_mma.default"}}})) << rm;

  // The re-measure confirms it; its completion asks for nothing more.
  auto again = run_job(gpu, "results", array{result("tiny_mma", 151.0)});
  ASSERT_TRUE(again.is_object());
  EXPECT_EQ(id_of(again), id_of(rm));
  EXPECT_EQ(jobs_of(pipeline).size(), 3u) << "one re-measure per commit, target and GPU model";
  EXPECT_TRUE(claim(gpu).is_null());
}

// Two libraries name an instance alike on one GPU model, one ten times faster than the
// other. A new driver slows the fast one down: its revalidation compares each library's
// figure with that library's own under the previous driver, and fails naming it. Were
// the libraries mixed, the fast library's 30 us would stand against the slow one's
// 100 us ("faster") or the slow one's against the fast one's (a slowdown of the wrong
// library), and one of the two figures would not be compared at all.
TEST_F(PipelineReasons, ANewDriverIsComparedWithinEachLibrary) {
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "org/other"}, {"url", "/srv/git/other.git"}}, k_admin).status,
            201);
  const std::string fast = commit_sha(1), slow = commit_sha(2);
  const std::map<std::string, double> before{{fast, 10.0}, {slow, 100.0}};
  const std::map<std::string, double> after{{fast, 30.0}, {slow, 100.0}};
  ASSERT_EQ(trigger(object{{"commit", fast}, {"targets", array{"sm_90a"}}}).status, 201);
  auto other =
      post("/api/v1/pipelines", object{{"commit", slow}, {"targets", array{"sm_90a"}}, {"repo", "org/other"}}, k_admin);
  ASSERT_EQ(other.status, 201) << other.raw;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(run_job(builder, "records", array{build_record("tiny_mma")}).is_object());

  // Claims a check as `token` and uploads its library's figure with `driver`: answers the
  // library's commit.
  auto check = [&](const std::string& token, const std::map<std::string, double>& medians, const char* driver) {
    auto job = claim(token);
    EXPECT_TRUE(job.is_object()) << "nothing to claim";
    if (!job.is_object()) return std::string();
    const std::string commit(job.at("commit").as_string());
    object r = result("tiny_mma", medians.at(commit));
    r["driver"] = driver;
    const std::string base = "/api/v1/jobs/" + std::to_string(id_of(job));
    const std::int64_t attempt = job.at("attempt").to_number<std::int64_t>();
    EXPECT_EQ(post(base + "/results", object{{"attempt", attempt}, {"results", array{r}}}, token).status, 200);
    EXPECT_EQ(post(base + "/complete", object{{"attempt", attempt}, {"status", "succeeded"}}, token).status, 200);
    return commit;
  };
  std::set<std::string> checked;
  for (int i = 0; i < 2; ++i) checked.insert(check(gpu, before, "580.1"));
  EXPECT_EQ(checked, (std::set<std::string>{fast, slow}));

  object caps{{"arch", "9.0"}, {"gpu_model", "NVIDIA H200"}, {"driver", "600.1"}, {"gpu_uuid", "GPU-2"}};
  auto b = post("/api/v1/runners/register", object{{"name", "h200-b"}, {"role", "gpu"}, {"capabilities", caps}},
                k_registration);
  ASSERT_EQ(b.status, 201) << b.raw;
  const std::string newer(b.body.at("token").as_string());
  auto opened = post("/api/v1/revalidations", object{{"gpu_model", "NVIDIA H200"}, {"driver", "600.1"}}, k_admin);
  ASSERT_EQ(opened.status, 201) << opened.raw;
  EXPECT_EQ(opened.body.at("jobs").to_number<std::int64_t>(), 2) << "one check per library's build";
  checked.clear();
  for (int i = 0; i < 2; ++i) checked.insert(check(newer, after, "600.1"));
  EXPECT_EQ(checked, (std::set<std::string>{fast, slow}));

  auto rv = get("/api/v1/revalidations");
  const value* item = nullptr;
  for (const auto& i : rv.body.at("items").as_array())
    if (i.at("driver") == "600.1") item = &i;
  ASSERT_NE(item, nullptr) << rv.raw;
  EXPECT_EQ(item->at("status"), "fail") << rv.raw;
  EXPECT_EQ(item->at("compared"), (object{{"results", 2}, {"previous_results", 2}})) << "each library's figures";
  const auto& reasons = item->at("reasons").as_array();
  ASSERT_EQ(reasons.size(), 1u) << rv.raw;
  const auto& figures = reasons[0].at("figures");
  EXPECT_EQ(figures.at("library"), "org/kernels") << rv.raw;
  EXPECT_EQ(figures.at("baseline_median_us").to_number<double>(), 10.0) << rv.raw;
  EXPECT_EQ(figures.at("median_us").to_number<double>(), 30.0) << rv.raw;
  EXPECT_NE(reasons[0].at("message").as_string().find("(library org/kernels, driver 600.1)"), std::string::npos)
      << rv.raw;
}

}  // namespace
}  // namespace kport::testing
