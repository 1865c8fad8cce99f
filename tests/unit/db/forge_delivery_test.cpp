// Forge connections, pipeline reports and the delivery queue (migration 0012): the order
// deliveries of a subject go out in, retries, giving up, a refused token, restarts.
#include "test_support.h"

namespace kport::db::test {
namespace {

class ForgeDeliveryTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ok(m_store->upsert_repository("kernels", "/tmp/kernels.git"));
  }

  ForgeConnection github() {
    ForgeConnection c;
    c.repo = "kernels";
    c.kind = "github";
    c.api_url = "https://api.github.com";
    c.project = "acme/kernels";
    c.token_file = "/etc/kport/github-token";
    c.mode = "check";
    return c;
  }

  NewDelivery delivery(const std::string& subject, const std::string& event, std::int64_t pipeline_id,
                       int max_attempts = 3) {
    NewDelivery d;
    d.kind = "commit_status";
    d.subject = subject;
    d.repo = "kernels";
    d.pipeline_id = pipeline_id;
    d.event = event;
    d.commit_sha = std::string(40, 'a');
    d.url = "/repos/acme/kernels/statuses/" + d.commit_sha;
    d.body = R"({"state":"pending"})";
    d.max_attempts = max_attempts;
    return d;
  }

  static DeliveryAttempt attempt(std::int64_t id, DeliveryAttempt::Outcome outcome, int status, std::string error,
                                 std::int64_t next_ms) {
    DeliveryAttempt a;
    a.id = id;
    a.outcome = outcome;
    a.status = status;
    a.error = std::move(error);
    a.next_attempt_ms = next_ms;
    return a;
  }

  std::vector<std::int64_t> due_ids() {
    std::vector<std::int64_t> ids;
    for (const auto& [d, run] : ok(m_store->due_deliveries(m_now->load()))) ids.push_back(d.id);
    return ids;
  }
};

TEST_F(ForgeDeliveryTest, GitHubAppConnectionKeepsItsCredentialsAndSwitchesBackToAToken) {
  auto app = github();
  app.token_file.clear();
  app.app_id = 42;
  app.installation_id = 4242;
  app.private_key_file = "/etc/kport/app.pem";
  auto put = ok(m_store->put_forge_connection(app));
  EXPECT_TRUE(put.github_app());
  EXPECT_EQ(std::string(put.auth()), "github_app");
  auto got = ok(m_store->get_forge_connection("kernels"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->app_id, 42);
  EXPECT_EQ(got->installation_id, 4242);
  EXPECT_EQ(got->private_key_file, "/etc/kport/app.pem");
  EXPECT_EQ(got->token_file, "");
  // Exactly one of a token and an app, the app only on GitHub and whole.
  auto both = app;
  both.token_file = "/etc/kport/github-token";
  EXPECT_NE(m_store->put_forge_connection(both).error().message.find("not both"), std::string::npos);
  auto half = app;
  half.installation_id.reset();
  EXPECT_NE(m_store->put_forge_connection(half).error().message.find("'installation_id'"), std::string::npos);
  auto gitea = app;
  gitea.kind = "gitea";
  gitea.mode = "status";
  EXPECT_EQ(m_store->put_forge_connection(gitea).error().code, Errc::invalid_argument);
  // Put again with a token: the app's credentials are gone.
  auto token = ok(m_store->put_forge_connection(github()));
  EXPECT_FALSE(token.github_app());
  EXPECT_FALSE(token.installation_id);
  EXPECT_EQ(token.private_key_file, "");
  EXPECT_EQ(token.token_file, "/etc/kport/github-token");
}

TEST_F(ForgeDeliveryTest, ConnectionIsValidatedAndKeptPerRepository) {
  auto bad = github();
  bad.kind = "bitbucket";
  auto r = m_store->put_forge_connection(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'kind'"), std::string::npos) << r.error().message;
  auto gitea_checks = github();
  gitea_checks.kind = "gitea";
  EXPECT_EQ(m_store->put_forge_connection(gitea_checks).error().code, Errc::invalid_argument);
  auto unknown = github();
  unknown.repo = "nope";
  EXPECT_EQ(m_store->put_forge_connection(unknown).error().code, Errc::not_found);

  ok(m_store->put_forge_connection(github()));
  ok(m_store->mark_forge_broken("kernels", "the forge refused the token"));
  auto got = ok(m_store->get_forge_connection("kernels"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->broken_reason.value_or(""), "the forge refused the token");
  // Putting it again repairs it.
  auto again = ok(m_store->put_forge_connection(github()));
  EXPECT_FALSE(again.broken_reason);
  EXPECT_EQ(ok(m_store->list_forge_connections()).size(), 1u);
}

TEST_F(ForgeDeliveryTest, PushPipelineStartsAnOpenReportAndAdvancesOncePerState) {
  auto p = pipeline_with_builds({"sm_90a"});
  auto open = ok(m_store->pending_reports());
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].pipeline.id, p.id);
  EXPECT_FALSE(open[0].reported);
  EXPECT_TRUE(open[0].connection.kind.empty());  // no connection yet

  EXPECT_TRUE(ok(m_store->advance_report(p.id, "queued", {delivery("s", "pipeline.queued", p.id)})));
  EXPECT_FALSE(ok(m_store->advance_report(p.id, "queued", {delivery("s", "pipeline.queued", p.id)})));
  EXPECT_EQ(ok(m_store->list_deliveries({})).items.size(), 1u);
  EXPECT_TRUE(ok(m_store->advance_report(p.id, "completed", {delivery("s", "pipeline.completed", p.id)})));
  EXPECT_TRUE(ok(m_store->pending_reports()).empty());
  // A completed report never moves again.
  EXPECT_FALSE(ok(m_store->advance_report(p.id, "in_progress", {delivery("s", "pipeline.in_progress", p.id)})));
  EXPECT_EQ(ok(m_store->list_deliveries({})).items.size(), 2u);
}

TEST_F(ForgeDeliveryTest, OneSubjectGoesOutInOrderAndRetriesBackOff) {
  auto p = pipeline_with_builds({"sm_90a"});
  ok(m_store->advance_report(p.id, "queued", {delivery("a", "pipeline.queued", p.id), delivery("b", "x", p.id)}));
  ok(m_store->advance_report(p.id, "in_progress", {delivery("a", "pipeline.in_progress", p.id)}));
  auto due = due_ids();
  ASSERT_EQ(due.size(), 2u);  // the first of subject a and the one of b
  const std::int64_t first = due[0];
  auto retry = attempt(first, DeliveryAttempt::Outcome::retry, 502, "502 Bad Gateway", m_now->load() + 1000);
  ok(m_store->record_delivery_attempt(retry));
  // Subject a waits for its first delivery's backoff; the second never overtakes it.
  EXPECT_EQ(due_ids(), std::vector<std::int64_t>{due[1]});
  *m_now += 1000;
  EXPECT_EQ(due_ids(), (std::vector<std::int64_t>{due[1], first}));  // by when each is due
  ok(m_store->record_delivery_attempt(attempt(first, DeliveryAttempt::Outcome::delivered, 201, "", 0)));
  auto d = ok(m_store->get_delivery(first));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->state, "delivered");
  EXPECT_EQ(d->attempts, 2);
  EXPECT_EQ(d->last_status.value_or(0), 201);
}

TEST_F(ForgeDeliveryTest, GivesUpAtTheLastAttemptWithTheReason) {
  auto p = pipeline_with_builds({"sm_90a"});
  ok(m_store->advance_report(p.id, "queued", {delivery("a", "pipeline.queued", p.id, 2)}));
  const auto id = due_ids().at(0);
  ok(m_store->record_delivery_attempt(attempt(id, DeliveryAttempt::Outcome::retry, 500, "500 oops", m_now->load())));
  ok(m_store->record_delivery_attempt(attempt(id, DeliveryAttempt::Outcome::retry, 500, "500 oops", m_now->load())));
  auto d = ok(m_store->get_delivery(id));
  EXPECT_EQ(d->state, "failed");
  EXPECT_EQ(d->last_error, "gave up after 2 attempts: 500 oops");
  EXPECT_TRUE(due_ids().empty());
  auto stats = ok(m_store->delivery_stats());
  EXPECT_EQ(stats.by_state.at("failed"), 1);
  EXPECT_EQ(stats.by_state.at("pending"), 0);
  EXPECT_EQ(stats.attempts, 2);
  // A finished delivery takes no more attempts.
  EXPECT_EQ(m_store->record_delivery_attempt(attempt(id, DeliveryAttempt::Outcome::delivered, 200, "", 0)).error().code,
            Errc::conflict);
}

TEST_F(ForgeDeliveryTest, RefusedTokenBreaksTheConnectionAndItsDeliveriesWaitUntilRepaired) {
  ok(m_store->put_forge_connection(github()));
  auto p = pipeline_with_builds({"sm_90a"});
  ok(m_store->advance_report(p.id, "queued", {delivery("a", "pipeline.queued", p.id)}));
  const auto id = due_ids().at(0);
  ok(m_store->record_delivery_attempt(
      attempt(id, DeliveryAttempt::Outcome::refused, 401, "the forge refused the token", 0)));
  EXPECT_EQ(ok(m_store->get_forge_connection("kernels"))->broken_reason.value_or(""), "the forge refused the token");
  EXPECT_TRUE(due_ids().empty());
  EXPECT_EQ(ok(m_store->delivery_stats()).broken_connections, 1);
  ok(m_store->put_forge_connection(github()));
  EXPECT_EQ(due_ids(), std::vector<std::int64_t>{id});
  EXPECT_EQ(ok(m_store->get_delivery(id))->state, "pending");
}

TEST_F(ForgeDeliveryTest, CheckRunIdIsKeptForTheNextStatesAndSurvivesReopening) {
  ok(m_store->put_forge_connection(github()));
  auto p = pipeline_with_builds({"sm_90a"});
  auto d = delivery("a", "pipeline.queued", p.id);
  d.kind = "check_run";
  ok(m_store->advance_report(p.id, "queued", {d}));
  d.event = "pipeline.in_progress";
  ok(m_store->advance_report(p.id, "in_progress", {d}));
  auto due = ok(m_store->due_deliveries(m_now->load()));
  ASSERT_EQ(due.size(), 1u);
  EXPECT_FALSE(due[0].second);
  auto created = attempt(due[0].first.id, DeliveryAttempt::Outcome::delivered, 201, "", 0);
  created.check_run_id = 4242;
  ok(m_store->record_delivery_attempt(created));
  m_store.reset();
  m_store = open_store();
  due = ok(m_store->due_deliveries(m_now->load()));
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].first.event, "pipeline.in_progress");
  EXPECT_EQ(due[0].second.value_or(0), 4242);
}

TEST_F(ForgeDeliveryTest, ListFiltersByStateAndPipeline) {
  auto p = pipeline_with_builds({"sm_90a"});
  ok(m_store->advance_report(p.id, "queued", {delivery("a", "pipeline.queued", p.id), delivery("b", "x", p.id)}));
  ok(m_store->record_delivery_attempt(attempt(due_ids().at(0), DeliveryAttempt::Outcome::delivered, 200, "", 0)));
  DeliveryFilter f;
  f.state = "pending";
  EXPECT_EQ(ok(m_store->list_deliveries(f)).items.size(), 1u);
  f = {};
  f.pipeline_id = p.id + 1;
  EXPECT_TRUE(ok(m_store->list_deliveries(f)).items.empty());
  f = {};
  f.limit = 1;
  auto page = ok(m_store->list_deliveries(f));
  ASSERT_EQ(page.items.size(), 1u);
  ASSERT_TRUE(page.next_cursor);
}

NewDelivery webhook(const std::string& event) {
  NewDelivery d;
  d.kind = "webhook";
  d.subject = "webhook https://hooks.example/kport";
  d.event = event;
  d.url = "https://hooks.example/kport";
  d.body = R"({"event":")" + event + R"("})";
  return d;
}

TEST_F(ForgeDeliveryTest, ABringupMarkIsKeptPerTargetWithItsDeliveries) {
  auto none = ok(m_store->bringup_mark("sm_100a"));
  EXPECT_TRUE(none.counts_json.empty());
  EXPECT_TRUE(none.milestones.empty());
  BringupMark m;
  m.target = "sm_100a";
  m.commit_sha = std::string(40, 'e');
  m.counts_json = R"({"builds":2})";
  m.milestones = {"builds/first", "builds/all"};
  ok(m_store->put_bringup_mark(m, {webhook("bringup.milestone")}));
  auto got = ok(m_store->bringup_mark("sm_100a"));
  EXPECT_EQ(got.counts_json, m.counts_json);
  EXPECT_EQ(got.commit_sha, m.commit_sha);
  EXPECT_EQ(got.milestones, m.milestones);
  auto page = ok(m_store->list_deliveries(DeliveryFilter{}));
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(page.items[0].event, "bringup.milestone");
  EXPECT_FALSE(page.items[0].pipeline_id.has_value());
  m.milestones.push_back("numerics_passed/first");
  m.counts_json = R"({"builds":1})";
  ok(m_store->put_bringup_mark(m, {}));
  EXPECT_EQ(ok(m_store->bringup_mark("sm_100a")).milestones.size(), 3u) << "replaced, not appended twice";
  // Another library's mark of the same target is its own.
  BringupMark other = m;
  other.repo = "other-lib";
  other.counts_json = R"({"builds":7})";
  other.milestones = {"builds/first"};
  ok(m_store->put_bringup_mark(other, {}));
  EXPECT_EQ(ok(m_store->bringup_mark("sm_100a", "other-lib")).counts_json, R"({"builds":7})");
  EXPECT_EQ(ok(m_store->bringup_mark("sm_100a", "other-lib")).milestones.size(), 1u);
  EXPECT_EQ(ok(m_store->bringup_mark("sm_100a")).counts_json, R"({"builds":1})") << "untouched by the other library";
  BringupMark bad;
  bad.target = "sm_90a";
  EXPECT_EQ(m_store->put_bringup_mark(bad, {}).error().code, Errc::invalid_argument);
}

TEST_F(ForgeDeliveryTest, DeliveredRowsArePrunedByAgeAndCountAndTheAttemptsStayCounted) {
  BringupMark m;
  m.target = "sm_90a";
  m.counts_json = "{}";
  std::vector<NewDelivery> five(5, webhook("bringup.milestone"));
  ok(m_store->put_bringup_mark(m, five));
  auto ids = due_ids();
  ASSERT_EQ(ids.size(), 1u) << "one subject: one at a time";
  // Deliver all five, a second apart; the fourth after two attempts, the fifth fails.
  for (int i = 0; i < 5; ++i) {
    auto due = due_ids();
    ASSERT_EQ(due.size(), 1u);
    if (i == 3) {
      ok(m_store->record_delivery_attempt(attempt(due[0], DeliveryAttempt::Outcome::retry, 503, "busy", *m_now)));
    }
    ok(m_store->record_delivery_attempt(
        attempt(due[0], i == 4 ? DeliveryAttempt::Outcome::failed : DeliveryAttempt::Outcome::delivered,
                i == 4 ? 422 : 200, i == 4 ? "unprocessable" : "", *m_now)));
    *m_now += 1000;
  }
  auto before = ok(m_store->delivery_stats());
  EXPECT_EQ(before.by_state["delivered"], 4);
  EXPECT_EQ(before.attempts, 6);
  // Older than the first two finished: those two go; then only the newest one is kept.
  const std::int64_t first_finished = *m_now - 5000;
  EXPECT_EQ(ok(m_store->prune_deliveries(first_finished + 1500, 100)), 2);
  EXPECT_EQ(ok(m_store->prune_deliveries(0, 1)), 1);
  auto after = ok(m_store->delivery_stats());
  EXPECT_EQ(after.by_state["delivered"], 1);
  EXPECT_EQ(after.by_state["failed"], 1) << "a given-up delivery keeps its reason";
  EXPECT_EQ(after.pruned, 3);
  EXPECT_EQ(after.attempts, before.attempts) << "the attempts counter never goes back";
  auto left = ok(m_store->list_deliveries(DeliveryFilter{}));
  ASSERT_EQ(left.items.size(), 2u);
  EXPECT_EQ(left.items[1].attempts, 2) << "the newest delivered one, of two attempts, is the one kept";
  EXPECT_EQ(ok(m_store->prune_deliveries(0, 1)), 0);
  EXPECT_EQ(m_store->prune_deliveries(0, -1).error().code, Errc::invalid_argument);
}

}  // namespace
}  // namespace kport::db::test
