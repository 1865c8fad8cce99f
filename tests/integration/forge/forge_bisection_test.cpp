// A bisection's end told where the push came from, and a bisection that cannot go on
// ending with a clear state: a real three-commit repository whose middle commit breaks
// one case's numerics, pushed through the webhook, its builds and checks played through
// the real runner API. Found: the commit's completed check run is PATCHed again with the
// first bad commit and the cause, and a signed `bisection.finished` webhook goes out. A
// probe cancelled: the bisection ends cancelled, naming it, and the commit status says
// so. A probe failing on the machine: probed again once, then the bisection ends failed.
// Two GPU runners of one model on two drivers: a slowdown seen only across them is the
// driver's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "forge_fixture.h"
#include "kport/common/crypto.h"

namespace kport::testing {
namespace {

using boost::json::array;
using boost::json::object;

class ForgeBisection : public ForgeTest {
 protected:
  void SetUp() override {
    ForgeTest::SetUp();
    const std::string src = (dir.path() / "bisect-src").string(), bare = (dir.path() / "bisect.git").string();
    sh("git init -q --bare " + bare + " && mkdir -p " + src + " && cd " + src + " && git init -q -b main");
    for (int i = 0; i < 3; ++i)
      c.push_back(sh("cd " + src + " && echo " + std::to_string(i) + " > f && git add f && git commit -q -m c" +
                     std::to_string(i) + " && git rev-parse HEAD"));
    sh("cd " + src + " && git push -q " + bare + " main");
    ASSERT_EQ(post("/api/v1/repositories", object{{"name", "org/bisect"}, {"url", bare}}, k_admin).status, 201);
    for (int i = 0; i < 3; ++i) {
      object commit{{"sha", c[i]}, {"repo", "org/bisect"}};
      if (i > 0) commit["parent"] = c[i - 1];
      ASSERT_EQ(post("/api/v1/commits", commit, k_admin).status, 201);
    }
    builder = register_runner("builder", "build");
    gpu = register_runner("h200", "gpu", "9.0", "NVIDIA H200");
  }

  std::string sh(const std::string& cmd) {
    const std::string out = (dir.path() / "git.out").string();
    const std::string full =
        "GIT_AUTHOR_NAME=Dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=Dev "
        "GIT_COMMITTER_EMAIL=dev@example.com sh -c '" +
        cmd + "' > " + out + " 2>&1";
    EXPECT_EQ(std::system(full.c_str()), 0) << cmd;
    std::ifstream in(out);
    std::string line;
    std::getline(in, line);
    return line;
  }

  JsonReply connect_bisect(const std::string& kind, const std::string& mode) {
    return put("/api/v1/repositories/org%2Fbisect/forge",
               object{{"kind", kind},
                      {"api_url", forge.url(kind == "github" ? "" : "/api/v1")},
                      {"project", "org/bisect"},
                      {"token_file", (dir.path() / "forge-token").string()},
                      {"mode", mode}},
               k_admin);
  }

  void push_commit(int i) {
    auto r = github(push_body("org/bisect", "refs/heads/main", i == 0 ? std::string(40, '0') : c[0], c[i], false,
                              i == 0 ? "" : c[i - 1]),
                    "delivery-bisect-" + std::to_string(i));
    ASSERT_EQ(r.status, 201) << r.raw;
  }

  // The case at `commit`: it passes at the first commit, its numerics fail after; each
  // commit's harness is its own (the same harness passing and failing would be a flake).
  array result_at(const std::string& commit) {
    array rows = passing_result();
    auto& r = rows[0].as_object();
    if (commit != c[0]) {
      r["status"] = "failed";
      r["max_rel_err"] = 0.5;
      r.erase("median_us");
      r.erase("stddev_us");
      r.erase("samples");
    }
    r["env"] = object{{"reproduce", object{{"harness_sha256", crypto::sha256_hex(commit)}}}};
    return rows;
  }

  // Plays the next build and its check; returns the commit built, "" when nothing was
  // queued. `check_failure`: the check job fails with that reason instead.
  std::string serve(const std::string& check_failure = "") {
    auto job = claim(builder, 1);
    if (!job.is_object()) return "";
    const std::string commit(job.at("commit").as_string());
    finish({std::to_string(job.at("id").to_number<std::int64_t>()), job.at("attempt").to_number<std::int64_t>()},
           builder, "records", ok_build());
    auto check = claim(gpu, 1);
    EXPECT_TRUE(check.is_object()) << "the build of " << commit << " spawned no check";
    if (!check.is_object()) return commit;
    const std::pair<std::string, std::int64_t> cj{std::to_string(check.at("id").to_number<std::int64_t>()),
                                                  check.at("attempt").to_number<std::int64_t>()};
    if (check_failure.empty()) {
      finish(cj, gpu, "results", result_at(commit));
    } else {
      auto r = post("/api/v1/jobs/" + cj.first + "/complete",
                    object{{"attempt", cj.second}, {"status", "failed"}, {"reason", check_failure}}, gpu);
      EXPECT_EQ(r.status, 200) << r.raw;
    }
    return commit;
  }

  // The one bisection of the bad commit, as GET /api/v1/bisections/{id} answers it.
  object bisection() {
    auto list = get("/api/v1/bisections?commit=" + c[2]);
    EXPECT_EQ(list.status, 200) << list.raw;
    if (list.status != 200 || list.body.at("items").as_array().empty()) return {};
    auto one = get("/api/v1/bisections/" + std::to_string(list.body.at("items").at(0).at("id").as_int64()));
    EXPECT_EQ(one.status, 200) << one.raw;
    return one.status == 200 ? one.body.as_object() : object{};
  }

  std::vector<ForgeRequest> hooks_of(const std::string& event) const {
    std::vector<ForgeRequest> out;
    for (auto& r : to("/hooks/kport"))
      if (r.header("X-Kport-Event") == event) out.push_back(r);
    return out;
  }
  std::vector<ForgeRequest> wait_hook(const std::string& event) {
    for (int i = 0; i < 200 && hooks_of(event).empty(); ++i)
      forge.wait_for(forge.requests().size() + 1, std::chrono::milliseconds(100));
    return hooks_of(event);
  }

  // Waits until `done` holds of the forge's requests (20 s at most); returns them.
  std::vector<ForgeRequest> wait_until(const std::function<bool(const std::vector<ForgeRequest>&)>& done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      auto all = forge.requests();
      if (done(all) || std::chrono::steady_clock::now() >= end) return all;
      forge.wait_for(all.size() + 1, std::chrono::milliseconds(100));
    }
  }
  // The forge calls about `commit`'s report that conclude it (a check run with a
  // conclusion, a status that is not pending), in order.
  std::vector<ForgeRequest> concluded(const std::vector<ForgeRequest>& all, const std::string& commit) const {
    std::vector<ForgeRequest> out;
    for (const auto& r : all) {
      const auto body = r.json();
      auto text = [&](const char* key) {
        const auto* v = body.if_contains(key);
        return v && v->is_string() ? std::string(v->as_string()) : std::string();
      };
      const bool run = r.target.find("/check-runs") != std::string::npos && body.contains("conclusion") &&
                       (r.method == "PATCH" || text("head_sha") == commit);
      const bool status = r.target.find("/statuses/" + commit) != std::string::npos && !text("state").empty() &&
                          text("state") != "pending";
      if (run || status) out.push_back(r);
    }
    return out;
  }

  std::vector<std::string> c;
  std::string builder, gpu;
};

TEST_F(ForgeBisection, AFoundCommitIsSentAgainOnTheCheckRunAndToTheWebhooks) {
  ASSERT_EQ(connect_bisect("github", "check").status, 200);
  push_commit(0);
  EXPECT_EQ(serve(), c[0]);
  ASSERT_EQ(concluded(wait_until([&](const auto& all) { return concluded(all, c[0]).size() == 1; }), c[0]).size(), 1u);
  // The bad commit's run is created, then updated by id while its build runs.
  const std::size_t before = to("/check-runs").size();
  push_commit(2);
  ASSERT_EQ(wait_to("/repos/org/bisect/check-runs", before + 1).size(), before + 1);
  auto build = take(builder);
  auto started = wait_to("/repos/org/bisect/check-runs", before + 2);
  ASSERT_EQ(started.size(), before + 2);
  ASSERT_EQ(started.back().method, "PATCH");
  const std::string run_url = started.back().target;
  finish(build, builder, "records", ok_build());
  finish(take(gpu), gpu, "results", result_at(c[2]));
  // The bad commit's report completes (a new failure) before any probe runs.
  auto runs = wait_to("/repos/org/bisect/check-runs", before + 3);
  ASSERT_EQ(runs.size(), before + 3);
  ASSERT_EQ(runs.back().json().at("conclusion").as_string(), "failure") << runs.back().body;
  EXPECT_EQ(runs.back().target, run_url);

  // The verdict started the bisection by itself: both ends, then the middle commit.
  std::vector<std::string> probed;
  for (std::string built; !(built = serve()).empty();) probed.push_back(built);
  EXPECT_EQ(probed.size(), 3u);
  const object b = bisection();
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b.at("state").as_string(), "done") << b;
  EXPECT_EQ(b.at("origin").as_string(), "auto") << b;
  ASSERT_TRUE(b.at("first_bad").is_string()) << b;
  EXPECT_EQ(b.at("first_bad").as_string(), c[1]) << b;
  EXPECT_EQ(b.at("cause").as_string(), "code") << b;

  // The same check run, PATCHed again with the bisection's end in its summary.
  auto again = wait_to("/repos/org/bisect/check-runs", before + 4);
  ASSERT_EQ(again.size(), before + 4);
  const auto& sent = again.back();
  EXPECT_EQ(sent.method, "PATCH");
  EXPECT_EQ(sent.target, run_url);
  EXPECT_EQ(sent.header("Authorization"), "Bearer " + k_forge_token);
  const object body = sent.json();
  EXPECT_EQ(body.at("status").as_string(), "completed");
  EXPECT_EQ(body.at("conclusion").as_string(), "failure");
  EXPECT_FALSE(body.contains("head_sha"));
  const auto& output = body.at("output").as_object();
  EXPECT_FALSE(output.contains("annotations")) << "GitHub would add them a second time";
  const std::string summary(output.at("summary").as_string());
  EXPECT_NE(summary.find("### Bisections"), std::string::npos) << summary;
  EXPECT_NE(summary.find(": done, first bad commit `" + c[1].substr(0, 12) + "`"), std::string::npos) << summary;
  EXPECT_NE(summary.find("cause code"), std::string::npos) << summary;
  EXPECT_NE(summary.find("numerics_failure"), std::string::npos) << "the verdict's own table stays" << summary;

  // The webhook, signed over its exact body like every other.
  auto hooks = wait_hook("bisection.finished");
  ASSERT_EQ(hooks.size(), 1u);
  const auto& hook = hooks[0];
  EXPECT_EQ(hook.header("X-Kport-Signature-256"),
            "sha256=" + crypto::to_hex(crypto::hmac_sha256(k_notify_secret, hook.body)));
  const object payload = hook.json();
  EXPECT_EQ(payload.at("event").as_string(), "bisection.finished");
  EXPECT_EQ(payload.at("commit").as_string(), c[2]);
  EXPECT_EQ(payload.at("url").as_string(), k_public_url + "/#/commit/" + c[2]);
  EXPECT_EQ(payload.at("bisection").at("first_bad").as_string(), c[1]) << hook.body;
  EXPECT_EQ(payload.at("bisection").at("state").as_string(), "done");
  EXPECT_EQ(payload.at("pipeline").at("commit").as_string(), c[2]) << hook.body;

  // Both through the delivery queue.
  auto items = wait_deliveries("limit=100", [](const array& all) {
    return std::count_if(all.begin(), all.end(), [](const auto& d) {
             return d.at("event") == "bisection.finished" && d.at("state") == "delivered";
           }) == 2;
  });
  EXPECT_EQ(
      std::count_if(items.begin(), items.end(), [](const auto& d) { return d.at("event") == "bisection.finished"; }), 2)
      << boost::json::serialize(items);
}

TEST_F(ForgeBisection, ACancelledProbeEndsTheBisectionCancelledAndTheStatusSaysSo) {
  ASSERT_EQ(connect_bisect("gitea", "status").status, 200);
  push_commit(0);
  EXPECT_EQ(serve(), c[0]);
  push_commit(2);
  EXPECT_EQ(serve(), c[2]);
  auto statuses = concluded(wait_until([&](const auto& all) { return concluded(all, c[2]).size() == 1; }), c[2]);
  ASSERT_EQ(statuses.size(), 1u);
  ASSERT_EQ(statuses[0].json().at("state").as_string(), "failure");

  object b = bisection();
  ASSERT_FALSE(b.empty());
  ASSERT_EQ(b.at("state").as_string(), "running") << b;
  ASSERT_EQ(b.at("probes").as_array().size(), 2u) << b;
  const std::int64_t probe = b.at("probes").at(0).at("pipeline").as_int64();
  auto cancelled = post("/api/v1/pipelines/" + std::to_string(probe) + "/cancel", object{}, k_admin);
  ASSERT_EQ(cancelled.status, 200) << cancelled.raw;

  b = bisection();
  EXPECT_EQ(b.at("state").as_string(), "cancelled") << b;
  const std::string summary(b.at("summary").as_string());
  EXPECT_NE(summary.find("pipeline " + std::to_string(probe)), std::string::npos) << summary;
  EXPECT_NE(summary.find("cancelled"), std::string::npos) << summary;
  EXPECT_TRUE(b.at("finished").is_string()) << b;
  EXPECT_TRUE(b.at("cause").is_null()) << b;
  for (const auto& p : b.at("probes").as_array())  // the other end's probe is cancelled with it
    EXPECT_EQ(p.at("status").as_string(), "cancelled") << b;
  EXPECT_EQ(serve(), "") << "nothing left to probe";
  auto listed = get("/api/v1/bisections?state=cancelled");
  ASSERT_EQ(listed.status, 200);
  EXPECT_EQ(listed.body.at("items").as_array().size(), 1u) << listed.raw;

  // The commit status, posted again with the same state and the bisection's end first.
  statuses = concluded(wait_until([&](const auto& all) { return concluded(all, c[2]).size() == 2; }), c[2]);
  ASSERT_EQ(statuses.size(), 2u);
  const object again = statuses[1].json();
  EXPECT_EQ(statuses[1].target, "/api/v1/repos/org/bisect/statuses/" + c[2]);
  EXPECT_EQ(again.at("state").as_string(), "failure");
  const std::string description(again.at("description").as_string());
  EXPECT_EQ(description.rfind("kport: bisection cancelled; fail", 0), 0u) << description;
  EXPECT_LE(description.size(), 140u);
  auto hooks = wait_hook("bisection.finished");
  ASSERT_EQ(hooks.size(), 1u);
  EXPECT_EQ(hooks[0].json().at("bisection").at("state").as_string(), "cancelled") << hooks[0].body;
}

TEST_F(ForgeBisection, AProbeFailingOnTheMachineIsProbedAgainOnceThenTheBisectionStops) {
  push_commit(0);
  EXPECT_EQ(serve(), c[0]);
  push_commit(2);
  EXPECT_EQ(serve(), c[2]);
  object b = bisection();
  ASSERT_FALSE(b.empty());
  ASSERT_EQ(b.at("probes").as_array().size(), 2u) << b;
  const std::string health = "GPU-1 failed its health check (Xid 79)";
  // The first end's check fails on the machine; the other end's probe measures.
  EXPECT_EQ(serve(health), c[0]);
  EXPECT_EQ(serve(), c[2]);
  b = bisection();
  EXPECT_EQ(b.at("state").as_string(), "running") << b;
  ASSERT_EQ(b.at("probes").as_array().size(), 3u) << b;
  EXPECT_EQ(b.at("probes").at(2).at("commit").as_string(), c[0]) << b;
  EXPECT_NE(std::string(b.at("summary").as_string()).find("failed on the machine"), std::string::npos) << b;
  // Probed again, it fails on the machine again: the bisection stops, naming the probe.
  EXPECT_EQ(serve(health), c[0]);
  b = bisection();
  EXPECT_EQ(b.at("state").as_string(), "failed") << b;
  const std::string summary(b.at("summary").as_string());
  const std::string last = std::to_string(b.at("probes").at(2).at("pipeline").as_int64());
  EXPECT_NE(summary.find("pipeline " + last), std::string::npos) << summary;
  EXPECT_NE(summary.find("2 times in a row"), std::string::npos) << summary;
  EXPECT_NE(summary.find("health check"), std::string::npos) << summary;
  EXPECT_EQ(serve(), "");
  // The webhooks hear of it; there is no forge connection to tell.
  auto hooks = wait_hook("bisection.finished");
  ASSERT_EQ(hooks.size(), 1u);
  EXPECT_EQ(hooks[0].json().at("bisection").at("state").as_string(), "failed");
}

TEST_F(ForgeBisection, CancellingByHandCancelsTheOpenProbesAndBadInputGetsJsonErrors) {
  push_commit(0);
  EXPECT_EQ(serve(), c[0]);
  push_commit(2);
  EXPECT_EQ(serve(), c[2]);
  object b = bisection();
  ASSERT_FALSE(b.empty());
  const std::string path = "/api/v1/bisections/" + std::to_string(b.at("id").as_int64()) + "/cancel";
  EXPECT_EQ(post(path, object{}, "").status, 401);
  auto bad = call_raw(client, "POST", url(path), "{not json", k_admin);
  EXPECT_EQ(bad.status, 400) << bad.raw;
  auto wrong = post(path, object{{"reason", 7}}, k_admin);
  EXPECT_EQ(wrong.status, 400) << wrong.raw;
  EXPECT_EQ(wrong.body.at("error").at("code").as_string(), "invalid_argument") << wrong.raw;
  auto missing = post("/api/v1/bisections/999/cancel", object{}, k_admin);
  EXPECT_EQ(missing.status, 404) << missing.raw;
  EXPECT_EQ(missing.body.at("error").at("code").as_string(), "not_found");
  auto done = post(path, object{{"reason", "the runner pool is being drained"}}, k_admin);
  ASSERT_EQ(done.status, 200) << done.raw;
  EXPECT_EQ(done.body.at("state").as_string(), "cancelled");
  EXPECT_NE(std::string(done.body.at("summary").as_string()).find("the runner pool is being drained"),
            std::string::npos)
      << done.raw;
  for (const auto& p : done.body.at("probes").as_array()) EXPECT_EQ(p.at("status").as_string(), "cancelled");
  EXPECT_EQ(serve(), "");
  auto twice = post(path, object{}, k_admin);
  EXPECT_EQ(twice.status, 409) << twice.raw;
  EXPECT_EQ(twice.body.at("error").at("code").as_string(), "conflict");
  EXPECT_EQ(get("/healthz").status, 200);
}

TEST_F(ForgeBisection, ASlowdownSeenOnlyAcrossTwoDriversIsTheDriver) {
  // A second H200 on a newer driver.
  object caps{{"toolkit", "13.0"},          {"targets", array{"sm_90a"}}, {"cores", 2},         {"arch", "9.0"},
              {"gpu_model", "NVIDIA H200"}, {"driver", "590.2"},          {"gpu_uuid", "GPU-2"}};
  auto reg = post("/api/v1/runners/register", object{{"name", "h200-new"}, {"role", "gpu"}, {"capabilities", caps}},
                  k_registration);
  ASSERT_EQ(reg.status, 201) << reg.raw;
  const std::string newer(reg.body.at("token").as_string());
  // One commit's build and its check on `runner`, timed at `us` on `driver`.
  auto measure = [&](const std::string& runner, const std::string& driver, const std::string& uuid, double us) {
    auto job = claim(builder, 1);
    ASSERT_TRUE(job.is_object());
    const std::string commit(job.at("commit").as_string());
    finish({std::to_string(job.at("id").to_number<std::int64_t>()), job.at("attempt").to_number<std::int64_t>()},
           builder, "records", ok_build());
    auto check = claim(runner, 1);
    ASSERT_TRUE(check.is_object()) << commit;
    array rows = passing_result(us);
    rows[0].as_object()["driver"] = driver;
    rows[0].as_object()["gpu_uuid"] = uuid;
    rows[0].as_object()["env"] = object{{"reproduce", object{{"harness_sha256", crypto::sha256_hex(commit)}}}};
    finish({std::to_string(check.at("id").to_number<std::int64_t>()), check.at("attempt").to_number<std::int64_t>()},
           runner, "results", rows);
  };
  push_commit(0);
  measure(gpu, "580.1", "GPU-1", 100.0);
  push_commit(2);
  measure(newer, "590.2", "GPU-2", 102.5);  // 2.5 % slower, on the other driver
  // A re-measure the verdict may ask for runs on the newer driver too.
  for (auto job = claim(newer, 1); job.is_object(); job = claim(newer, 1)) {
    array rows = passing_result(102.6);
    rows[0].as_object()["driver"] = "590.2";
    rows[0].as_object()["gpu_uuid"] = "GPU-2";
    rows[0].as_object()["env"] = object{{"reproduce", object{{"harness_sha256", crypto::sha256_hex(c[2])}}}};
    finish({std::to_string(job.at("id").to_number<std::int64_t>()), job.at("attempt").to_number<std::int64_t>()}, newer,
           "results", rows);
  }

  const std::string key = "gemm.simt.default bf16 m=4096,n=4096,k=4096";
  auto opened = post("/api/v1/bisections",
                     object{{"kind", "perf_regression"},
                            {"target", "sm_90a"},
                            {"gpu_model", "NVIDIA H200"},
                            {"good", c[0]},
                            {"bad", c[2]},
                            {"cases", array{key}}},
                     k_admin);
  // 201, or 200 when the verdict counted the slowdown and bisects it already.
  ASSERT_TRUE(opened.status == 201 || opened.status == 200) << opened.raw;
  ASSERT_EQ(opened.body.at("probes").as_array().size(), 2u) << opened.raw;
  // Every probe is pinned to the bad end's driver: the old driver's runner takes none, and
  // both ends probed again on the newer driver give the same figure.
  EXPECT_EQ(opened.body.at("driver"), "590.2") << opened.raw;
  auto build = claim(builder, 1);
  ASSERT_TRUE(build.is_object());
  finish({std::to_string(build.at("id").to_number<std::int64_t>()), build.at("attempt").to_number<std::int64_t>()},
         builder, "records", ok_build());
  EXPECT_FALSE(claim(gpu, 1).is_object()) << "a probe is not timed on another driver than the bad end's";
  auto check = claim(newer, 1);
  ASSERT_TRUE(check.is_object());
  EXPECT_EQ(check.at("driver"), "590.2");
  {
    array rows = passing_result(102.5);
    rows[0].as_object()["driver"] = "590.2";
    rows[0].as_object()["gpu_uuid"] = "GPU-2";
    const std::string commit(check.at("commit").as_string());
    rows[0].as_object()["env"] = object{{"reproduce", object{{"harness_sha256", crypto::sha256_hex(commit)}}}};
    finish({std::to_string(check.at("id").to_number<std::int64_t>()), check.at("attempt").to_number<std::int64_t>()},
           newer, "results", rows);
  }
  measure(newer, "590.2", "GPU-2", 102.6);
  const object b = bisection();
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b.at("state").as_string(), "done") << b;
  EXPECT_EQ(b.at("cause"), "driver") << b;
  EXPECT_TRUE(b.at("first_bad").is_null()) << b;
  const std::string summary(b.at("summary").as_string());
  EXPECT_NE(summary.find("580.1 -> 590.2"), std::string::npos) << summary;
  EXPECT_EQ(serve(), "") << "no commit is searched for a driver's slowdown";
}

}  // namespace
}  // namespace kport::testing
