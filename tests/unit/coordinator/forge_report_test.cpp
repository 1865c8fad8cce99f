// What a pipeline's report says to each forge and webhook, and what each answer means
// for its delivery (forge_report.h).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "forge_report.h"
#include "app/bisections.h"
#include "kport/common/crypto.h"

namespace kport::coordinator {
namespace {

namespace json = boost::json;

db::Pipeline pipeline(db::PipelineStatus status) {
  db::Pipeline p;
  p.id = 12;
  p.repo = "org/kernels";
  p.ref = "refs/heads/main";
  p.commit_sha = std::string(40, 'b');
  p.status = status;
  p.jobs_total = 3;
  p.jobs_done = status == db::PipelineStatus::running ? 1 : 3;
  return p;
}

db::ForgeConnection connection(const std::string& kind, const std::string& mode) {
  db::ForgeConnection c;
  c.repo = "org/kernels";
  c.kind = kind;
  c.api_url = "https://forge.example/api/";
  c.project = kind == "gitlab" ? "group/sub project" : "org/kernels";
  c.token_file = "/etc/kport/token";
  c.mode = mode;
  return c;
}

porting::Verdict failing() {
  porting::Verdict v;
  v.commit = std::string(40, 'b');
  v.baseline = std::string(40, 'a');
  v.status = "fail";
  v.builds = 4;
  v.results = 9;
  porting::VerdictReason slow;
  slow.kind = "perf_regression";
  slow.variant = "gemm.wgmma_tma";
  slow.target = "sm_90a";
  slow.gpu_model = "NVIDIA H200";
  slow.message = "gemm.wgmma_tma.128x256 bf16 m=4096: median 110.0 us vs 100.0 us (+10.0%, noise 1.4 us)";
  porting::VerdictReason broke;
  broke.kind = "numerics_failure";
  broke.variant = "gemm.simt";
  broke.target = "sm_100a";
  broke.gpu_model = "NVIDIA B200";
  broke.message = "gemm.simt max_rel_err 0.5 | tolerance 0.01";
  v.reasons = {slow, broke};
  v.waiting = {};
  v.notes = {"gemm.mma_sync figure unstable"};
  return v;
}

ReportInputs inputs(db::PipelineStatus status, const std::string& state, std::optional<db::ForgeConnection> c,
                    const porting::Verdict* v = nullptr) {
  ReportInputs in;
  in.pipeline = pipeline(status);
  in.connection = std::move(c);
  in.state = state;
  in.verdict = v;
  in.public_url = "https://kport.example";
  in.max_attempts = 5;
  in.now_ms = 1'764'000'000'000;
  return in;
}

TEST(ForgeReport, ConclusionNamesCancelledFailureSuccessAndInsufficientData) {
  porting::Verdict pass;
  pass.status = "pass";
  pass.builds = 1;
  porting::Verdict empty;
  empty.status = "pass";
  porting::Verdict pending;
  pending.status = "pending";
  auto fail = failing();
  EXPECT_EQ(conclusion_of(db::PipelineStatus::cancelled, &fail), "cancelled");
  EXPECT_EQ(conclusion_of(db::PipelineStatus::succeeded, &fail), "failure");
  EXPECT_EQ(conclusion_of(db::PipelineStatus::failed, &pass), "failure");
  EXPECT_EQ(conclusion_of(db::PipelineStatus::succeeded, &pass), "success");
  EXPECT_EQ(conclusion_of(db::PipelineStatus::succeeded, &empty), "neutral");
  EXPECT_EQ(conclusion_of(db::PipelineStatus::succeeded, &pending), "neutral");
  EXPECT_EQ(report_state(db::PipelineStatus::queued), "queued");
  EXPECT_EQ(report_state(db::PipelineStatus::running), "in_progress");
  EXPECT_EQ(report_state(db::PipelineStatus::failed), "completed");
}

TEST(ForgeReport, CompletedCheckRunCarriesConclusionTitleAndSummaryPerTargetAndGpu) {
  auto v = failing();
  auto out = plan_report(inputs(db::PipelineStatus::succeeded, "completed", connection("github", "check"), &v));
  ASSERT_EQ(out.size(), 1u);  // no webhooks configured
  const auto& d = out[0];
  EXPECT_EQ(d.kind, "check_run");
  EXPECT_EQ(d.url, "/repos/org/kernels/check-runs");
  EXPECT_EQ(d.subject, "forge org/kernels pipeline 12");
  EXPECT_EQ(d.event, "pipeline.completed");
  EXPECT_EQ(d.max_attempts, 5);
  auto body = json::parse(d.body).as_object();
  EXPECT_EQ(body.at("status").as_string(), "completed");
  EXPECT_EQ(body.at("conclusion").as_string(), "failure");
  EXPECT_EQ(body.at("completed_at").as_string(), "2025-11-24T16:00:00.000Z");
  EXPECT_EQ(body.at("details_url").as_string(), "https://kport.example/#/pipeline/12");
  const auto& output = body.at("output").as_object();
  EXPECT_EQ(output.at("title").as_string(), "kport: fail (1 numerics_failure, 1 perf_regression)");
  const std::string summary(output.at("summary").as_string());
  EXPECT_NE(summary.find("### sm_90a on NVIDIA H200"), std::string::npos) << summary;
  EXPECT_NE(summary.find("### sm_100a on NVIDIA B200"), std::string::npos) << summary;
  EXPECT_NE(summary.find("median 110.0 us vs 100.0 us (+10.0%, noise 1.4 us)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("max_rel_err 0.5 / tolerance 0.01"), std::string::npos)
      << "a | would break the table: " << summary;
  EXPECT_NE(summary.find("against `aaaaaaaaaaaa`"), std::string::npos) << summary;
  EXPECT_NE(summary.find("`kport status " + std::string(40, 'b') + "`"), std::string::npos) << summary;
  EXPECT_NE(summary.find("gemm.mma_sync figure unstable"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("Reproduce the"), std::string::npos) << "no command was given: " << summary;
}

// A neutral report says which series it could not judge and why, and a failure it left
// out (flaky, the machine's) is listed, not hidden.
TEST(ForgeReport, ANeutralSummaryListsUnjudgedSeriesFlakesAndMachineFailures) {
  porting::Verdict v;
  v.status = "insufficient_data";
  v.results = 3;
  porting::UnjudgedSeries u;
  u.target = "sm_90a";
  u.model.series = {"NVIDIA H200", "580.1", "gemm.mma_sync.a", "bf16", "m=4096,n=4096,k=4096"};
  u.model.degrees = 1;
  u.model.needed = 2;
  u.rel = 0.052;
  v.insufficient_data.push_back(u);
  porting::FlakyFailure f;
  f.target = "sm_90a";
  f.gpu_model = "NVIDIA H200";
  f.instance = "softmax.vec16.regs_v4";
  f.dtype = "fp16";
  f.shape = "rows=128,cols=8192";
  f.result = 41;
  f.seed = 77;
  f.runs = 6;
  f.failures = 2;
  f.to_release = 5;
  v.flaky.push_back(f);
  v.infrastructure.push_back(
      {"sm_90a", "NVIDIA H200", 9, std::nullopt, "lease expired: runner gpu-1 stopped heartbeating"});
  EXPECT_EQ(conclusion_of(db::PipelineStatus::succeeded, &v), "neutral");
  auto out = plan_report(inputs(db::PipelineStatus::succeeded, "completed", connection("github", "check"), &v));
  ASSERT_EQ(out.size(), 1u);
  const auto output = json::parse(out[0].body).at("output").as_object();
  EXPECT_EQ(output.at("title").as_string(), "kport: insufficient data");
  const std::string summary(output.at("summary").as_string());
  EXPECT_NE(summary.find(
                "| gemm.mma_sync.a bf16 m=4096,n=4096,k=4096 on NVIDIA H200 (driver 580.1) | +5.2% | 1 of 3 needed |"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("- softmax.vec16.regs_v4 fp16 rows=128,cols=8192 on NVIDIA H200: failed (result 41, seed 77); "
                         "2 of 6 runs failed, released after 5 more clean runs"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("- sm_90a on NVIDIA H200, job 9: lease expired: runner gpu-1 stopped heartbeating"),
            std::string::npos)
      << summary;
}

TEST(ForgeReport, SummaryCarriesTheReproCommandOfEachNamedResult) {
  auto v = failing();
  v.reasons[1].figures["result"] = std::int64_t{42};
  auto p = pipeline(db::PipelineStatus::succeeded);
  const std::string md =
      report_summary(p, "failure", &v, "https://kport.example", {{42, "kport-harness-sm_100a --check x"}});
  EXPECT_NE(
      md.find(
          "Reproduce the numerics_failure of `gemm.simt` (result 42):\n\n```sh\nkport-harness-sm_100a --check x\n```"),
      std::string::npos)
      << md;
}

TEST(ForgeReport, SummaryListsTheCommitsBisections) {
  auto v = failing();
  auto p = pipeline(db::PipelineStatus::succeeded);
  db::Bisection b;
  b.id = 7;
  b.kind = "perf_regression";
  b.target = "sm_90a";
  b.gpu_model = "NVIDIA H200";
  b.good_sha = std::string(40, 'a');
  b.bad_sha = std::string(40, 'b');
  b.state = "done";
  b.first_bad_sha = std::string(40, 'c');
  b.effect = 0.031;
  b.uncertainty = 0.004;
  b.cause = "code";
  const std::string md =
      report_summary(p, "failure", &v, "https://kport.example", {}, {app::bisection_line(b, "https://kport.example")});
  EXPECT_NE(md.find("### Bisections\n\n- perf_regression on sm_90a / NVIDIA H200 between `aaaaaaaaaaaa` and "
                    "`bbbbbbbbbbbb`: done, first bad commit `cccccccccccc`, effect +3.10% +- 0.40%, cause code "
                    "(https://kport.example/#/bisection/7)"),
            std::string::npos)
      << md;
  EXPECT_EQ(report_summary(p, "failure", &v, "https://kport.example").find("### Bisections"), std::string::npos);
}

TEST(ForgeReport, ABisectionsEndIsSentAgainToCompletedReportsAndToTheWebhooks) {
  auto v = failing();
  BisectionEndInputs in;
  in.commit = std::string(40, 'b');
  in.bisection_json = R"({"id":7,"state":"done","first_bad":"cc"})";
  in.public_url = "https://kport.example";
  in.notify_urls = {"https://hooks.example/a"};
  in.max_attempts = 4;
  auto check = inputs(db::PipelineStatus::succeeded, "completed", connection("github", "check"), &v);
  check.bisections = {"perf_regression on sm_90a: done, first bad commit `cccccccccccc`, cause code"};
  check.annotations = {Annotation{"kernels/gemm.cu", 10, "Resource regression", "spills"}};
  check.status_note = "first bad cccccccccccc (code)";
  auto status = inputs(db::PipelineStatus::succeeded, "completed", connection("gitea", "status"), &v);
  status.pipeline.id = 13;
  status.status_note = check.status_note;
  auto open = inputs(db::PipelineStatus::running, "in_progress", connection("gitea", "status"), &v);
  in.reports = {check, status, open};
  const auto out = plan_bisection_end(in);
  ASSERT_EQ(out.size(), 3u);  // the two completed reports and one webhook; the open report lists it when it completes
  EXPECT_EQ(out[0].kind, "check_run");
  EXPECT_EQ(out[0].event, "bisection.finished");
  EXPECT_EQ(out[0].subject, "forge org/kernels pipeline 12") << "after that pipeline's own reports";
  EXPECT_EQ(out[0].pipeline_id, 12);
  auto body = json::parse(out[0].body).as_object();
  EXPECT_EQ(body.at("status").as_string(), "completed");
  EXPECT_EQ(body.at("conclusion").as_string(), "failure");
  EXPECT_FALSE(body.at("output").as_object().contains("annotations"));
  EXPECT_NE(std::string(body.at("output").at("summary").as_string()).find("first bad commit `cccccccccccc`"),
            std::string::npos);
  EXPECT_EQ(out[1].kind, "commit_status");
  auto st = json::parse(out[1].body).as_object();
  EXPECT_EQ(st.at("state").as_string(), "failure");
  const std::string description(st.at("description").as_string());
  EXPECT_EQ(description.rfind("kport: first bad cccccccccccc (code); fail", 0), 0u) << description;
  EXPECT_LE(description.size(), 140u);
  EXPECT_EQ(out[2].kind, "webhook");
  EXPECT_EQ(out[2].event, "bisection.finished");
  EXPECT_EQ(out[2].subject, "webhook https://hooks.example/a");
  EXPECT_EQ(out[2].max_attempts, 4);
  auto hook = json::parse(out[2].body).as_object();
  EXPECT_EQ(hook.at("event").as_string(), "bisection.finished");
  EXPECT_EQ(hook.at("bisection").at("first_bad").as_string(), "cc");
  EXPECT_EQ(hook.at("url").as_string(), "https://kport.example/#/commit/" + std::string(40, 'b'));
  EXPECT_EQ(hook.at("pipeline").at("id").as_int64(), 12);
  // Nothing reported and no webhook: nothing to send.
  in.reports.clear();
  in.notify_urls.clear();
  EXPECT_TRUE(plan_bisection_end(in).empty());
}

TEST(ForgeReport, SummaryIsBoundedToWhatGitHubTakes) {
  auto v = failing();
  v.reasons.resize(2000, v.reasons[0]);
  for (auto& r : v.reasons) r.message = std::string(200, 'z');
  auto p = pipeline(db::PipelineStatus::succeeded);
  EXPECT_LE(report_summary(p, "failure", &v, "https://kport.example").size(), 65'535u);
}

TEST(ForgeReport, StatusWordsFollowEachForge) {
  auto v = failing();
  auto state_of = [&](const std::string& kind, db::PipelineStatus st, const std::string& state,
                      const porting::Verdict* verdict) {
    auto out = plan_report(inputs(st, state, connection(kind, "status"), verdict));
    return std::string(json::parse(out.at(0).body).at("state").as_string());
  };
  EXPECT_EQ(state_of("github", db::PipelineStatus::queued, "queued", nullptr), "pending");
  EXPECT_EQ(state_of("gitea", db::PipelineStatus::running, "in_progress", nullptr), "pending");
  EXPECT_EQ(state_of("gitea", db::PipelineStatus::succeeded, "completed", &v), "failure");
  EXPECT_EQ(state_of("github", db::PipelineStatus::cancelled, "completed", &v), "error");
  EXPECT_EQ(state_of("gitlab", db::PipelineStatus::queued, "queued", nullptr), "pending");
  EXPECT_EQ(state_of("gitlab", db::PipelineStatus::running, "in_progress", nullptr), "running");
  EXPECT_EQ(state_of("gitlab", db::PipelineStatus::succeeded, "completed", &v), "failed");
  EXPECT_EQ(state_of("gitlab", db::PipelineStatus::cancelled, "completed", &v), "canceled");
  porting::Verdict none;
  none.status = "pass";
  EXPECT_EQ(state_of("gitlab", db::PipelineStatus::succeeded, "completed", &none), "skipped");
  EXPECT_EQ(state_of("gitea", db::PipelineStatus::succeeded, "completed", &none), "error");
}

TEST(ForgeReport, GitLabProjectPathIsOneSegment) {
  auto out = plan_report(inputs(db::PipelineStatus::queued, "queued", connection("gitlab", "status")));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].url, "/projects/group%2Fsub%20project/statuses/" + std::string(40, 'b'));
  auto body = json::parse(out[0].body).as_object();
  EXPECT_EQ(body.at("name").as_string(), "kport");
  EXPECT_FALSE(body.contains("context"));
}

TEST(ForgeReport, WebhooksOnCompletionOnlyWithARegressionEventWhenTheVerdictHasOne) {
  auto v = failing();
  auto in = inputs(db::PipelineStatus::succeeded, "completed", std::nullopt, &v);
  in.notify_urls = {"https://hooks.example/a", "https://hooks.example/b"};
  auto out = plan_report(in);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].event, "verdict");
  EXPECT_EQ(out[0].url, "https://hooks.example/a");
  EXPECT_EQ(out[0].subject, "webhook https://hooks.example/a");
  EXPECT_EQ(out[1].event, "regression");
  EXPECT_EQ(json::parse(out[1].body).at("regressions").as_array().size(), 2u);
  EXPECT_EQ(out[3].url, "https://hooks.example/b");
  in.state = "in_progress";
  EXPECT_TRUE(plan_report(in).empty());
}

TEST(ForgeReport, RequestsCarryEachForgesHeadersAndTheCheckRunIdWhenKnown) {
  db::Delivery d;
  d.id = 3;
  d.kind = "check_run";
  d.repo = "org/kernels";
  d.commit_sha = std::string(40, 'b');
  d.url = "/repos/org/kernels/check-runs";
  d.body = R"({"name":"kport","status":"queued"})";
  auto create = forge_request(d, connection("github", "check"), "tok", std::nullopt);
  ASSERT_TRUE(create.ok());
  EXPECT_EQ(create->method, "POST");
  EXPECT_EQ(create->url, "https://forge.example/api/repos/org/kernels/check-runs");
  EXPECT_EQ(json::parse(create->body).at("head_sha").as_string(), d.commit_sha);
  auto update = forge_request(d, connection("github", "check"), "tok", 99);
  ASSERT_TRUE(update.ok());
  EXPECT_EQ(update->method, "PATCH");
  EXPECT_EQ(update->url, "https://forge.example/api/repos/org/kernels/check-runs/99");
  EXPECT_EQ(update->body, d.body);
  auto has = [](const OutgoingRequest& r, const std::string& k, const std::string& v) {
    for (const auto& [name, value] : r.headers)
      if (name == k) return value == v;
    return false;
  };
  EXPECT_TRUE(has(*update, "Authorization", "Bearer tok"));
  EXPECT_TRUE(has(*update, "X-GitHub-Api-Version", "2022-11-28"));
  d.kind = "commit_status";
  EXPECT_TRUE(has(*forge_request(d, connection("gitea", "status"), "tok", std::nullopt), "Authorization", "token tok"));
  EXPECT_TRUE(has(*forge_request(d, connection("gitlab", "status"), "tok", std::nullopt), "PRIVATE-TOKEN", "tok"));

  d.kind = "webhook";
  d.event = "verdict";
  d.url = "https://hooks.example/a";
  auto hook = webhook_request(d, "s3cret");
  EXPECT_TRUE(has(hook, "X-Kport-Signature-256", "sha256=" + crypto::to_hex(crypto::hmac_sha256("s3cret", d.body))));
  EXPECT_TRUE(has(hook, "X-Kport-Delivery", "3"));
  EXPECT_TRUE(has(hook, "X-Kport-Event", "verdict"));
}

TEST(ForgeReport, AnswersAreClassifiedWithoutTrustingTheirBodies) {
  db::Delivery d;
  d.id = 5;
  d.kind = "check_run";
  d.repo = "org/kernels";
  OutgoingRequest post{"POST", "https://forge.example/repos/org/kernels/check-runs", "{}", {}};
  using O = db::DeliveryAttempt::Outcome;
  auto with = [&](int status, std::string body, std::string retry_after = "", std::string remaining = "") {
    return classify_answer(d, post, ClientAnswer{status, std::move(body), std::move(retry_after), std::move(remaining)},
                           77);
  };
  auto created = with(201, R"({"id": 123456789012})");
  EXPECT_EQ(created.outcome, O::delivered);
  EXPECT_EQ(created.check_run_id.value_or(0), 123456789012);
  auto garbage = with(201, "\xff\xfe{{{");
  EXPECT_EQ(garbage.outcome, O::delivered);
  EXPECT_FALSE(garbage.check_run_id);
  EXPECT_EQ(with(201, R"({"id":"7"})").check_run_id, std::nullopt);
  EXPECT_EQ(with(503, "").outcome, O::retry);
  EXPECT_EQ(with(503, "").next_attempt_ms, 77);
  EXPECT_EQ(with(429, "").outcome, O::retry);
  EXPECT_EQ(with(403, "", "", "0").outcome, O::retry);  // GitHub's rate limit, not a refused token
  auto refused = with(401, R"({"message":"Bad credentials"})");
  EXPECT_EQ(refused.outcome, O::refused);
  EXPECT_NE(refused.error.find("Bad credentials"), std::string::npos) << refused.error;
  EXPECT_EQ(with(403, "forbidden").outcome, O::refused);
  auto gone = with(422, std::string(5000, 'q'));
  EXPECT_EQ(gone.outcome, O::failed);
  EXPECT_LE(gone.error.size(), 1000u);
  auto down = classify_answer(d, post, Result<ClientAnswer>(make_error(Errc::unavailable, "connection refused")), 77);
  EXPECT_EQ(down.outcome, O::retry);
  EXPECT_EQ(down.error, "POST https://forge.example/repos/org/kernels/check-runs: connection refused");
  d.kind = "webhook";
  EXPECT_EQ(classify_answer(d, post, ClientAnswer{401, "", "", ""}, 0).outcome, O::failed);  // no connection to break
}

TEST(ForgeReport, WebhookUrlsAreShownWithoutTheirPath) {
  EXPECT_EQ(redact_url("https://hooks.example.com/services/T0/B0/secret"), "https://hooks.example.com/…");
  EXPECT_EQ(redact_url("http://127.0.0.1:9000?token=x"), "http://127.0.0.1:9000/…");
  EXPECT_EQ(redact_url("https://hooks.example.com/"), "https://hooks.example.com/");
  EXPECT_EQ(redact_url("not a url"), "…");
  db::Delivery d;
  d.id = 1;
  d.kind = "webhook";
  OutgoingRequest post{"POST", "https://hooks.example.com/services/secret", "{}", {}};
  auto a = classify_answer(d, post, ClientAnswer{500, "", "", ""}, 0);
  EXPECT_EQ(a.error.find("secret"), std::string::npos) << a.error;
  EXPECT_EQ(a.error, "POST https://hooks.example.com/… answered 500");
}

TEST(ForgeReport, BackoffDoublesUpToItsBoundAndHonoursRetryAfter) {
  EXPECT_EQ(delivery_backoff_ms(1, 100, 1000), 100);
  EXPECT_EQ(delivery_backoff_ms(2, 100, 1000), 200);
  EXPECT_EQ(delivery_backoff_ms(4, 100, 1000), 800);
  EXPECT_EQ(delivery_backoff_ms(30, 100, 1000), 1000);
  EXPECT_EQ(delivery_backoff_ms(1, 100, 10'000, "3"), 3000);
  EXPECT_EQ(delivery_backoff_ms(1, 100, 10'000, "999999"), 10'000);
  EXPECT_EQ(delivery_backoff_ms(1, 100, 10'000, "soon"), 100);
}

TEST(ForgeReport, ACompletedCheckRunCarriesAtMostFiftyAnnotations) {
  auto v = failing();
  auto in = inputs(db::PipelineStatus::succeeded, "completed", connection("github", "check"), &v);
  for (int i = 0; i < 60; ++i)
    in.annotations.push_back(Annotation{"kernels/gemm/v" + std::to_string(i) + "/k.cu", 10 + i, "Resource regression",
                                        "spills 0 -> 64 bytes"});
  auto out = plan_report(in);
  ASSERT_EQ(out.size(), 1u);
  auto body = json::parse(out[0].body).as_object();
  const auto& notes = body.at("output").at("annotations").as_array();
  ASSERT_EQ(notes.size(), 50u) << "GitHub takes 50 per request";
  EXPECT_EQ(notes[0].at("path").as_string(), "kernels/gemm/v0/k.cu");
  EXPECT_EQ(notes[0].at("start_line").as_int64(), 10);
  EXPECT_EQ(notes[0].at("end_line").as_int64(), 10);
  EXPECT_EQ(notes[0].at("annotation_level").as_string(), "failure");
  // Statuses and earlier states carry none.
  in.state = "in_progress";
  EXPECT_FALSE(json::parse(plan_report(in)[0].body).as_object().contains("output"));
}

}  // namespace
}  // namespace kport::coordinator
