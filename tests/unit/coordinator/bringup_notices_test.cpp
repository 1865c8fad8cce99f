// What a target's bring-up tells the notification webhooks: each milestone once, a drop
// as a regression, one webhook of each kind per URL.
#include "bringup_notices.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace kport::coordinator {
namespace {

porting::StageCounts counts(std::int64_t applicable, std::int64_t builds, std::int64_t numerics) {
  porting::StageCounts c;
  c.variants = applicable + 1;
  c.applicable = applicable;
  c.builds = builds;
  c.resources_clean = builds;
  c.numerics_passed = numerics;
  return c;
}

TEST(BringupNotices, FirstAndAllAreToldOnceEach) {
  auto first = bringup_change(std::nullopt, {}, counts(3, 1, 0));
  EXPECT_EQ(first.milestones, (std::vector<std::string>{"builds/first", "resources_clean/first"}));
  EXPECT_TRUE(first.regressions.empty());
  auto all = bringup_change(counts(3, 1, 0), first.milestones, counts(3, 3, 1));
  EXPECT_EQ(all.milestones, (std::vector<std::string>{"builds/all", "resources_clean/all", "numerics_passed/first"}));
  std::vector<std::string> told = first.milestones;
  told.insert(told.end(), all.milestones.begin(), all.milestones.end());
  EXPECT_TRUE(bringup_change(counts(3, 3, 1), told, counts(3, 3, 1)).empty());
  EXPECT_TRUE(bringup_change(std::nullopt, {}, counts(0, 0, 0)).empty()) << "nothing applicable, nothing reached";
}

TEST(BringupNotices, ACountBelowTheMarkIsARegression) {
  auto c = bringup_change(
      counts(3, 3, 2),
      {"builds/first", "builds/all", "resources_clean/first", "resources_clean/all", "numerics_passed/first"},
      counts(3, 2, 2));
  EXPECT_TRUE(c.milestones.empty());
  ASSERT_EQ(c.regressions.size(), 2u);
  EXPECT_EQ(c.regressions[0].stage, "builds");
  EXPECT_EQ(c.regressions[0].before, 3);
  EXPECT_EQ(c.regressions[0].after, 2);
  EXPECT_EQ(c.regressions[1].stage, "resources_clean");
}

TEST(BringupNotices, CountsRoundTripAndBadTextIsNoMark) {
  auto back = parse_stage_counts(R"({"variants":4,"applicable":3,"builds":3,"resources_clean":2,)"
                                 R"("numerics_passed":1,"measured":1,"selected_best":0})");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->resources_clean, 2);
  EXPECT_FALSE(parse_stage_counts("{\"builds\":1}"));
  EXPECT_FALSE(parse_stage_counts("not json"));
}

TEST(BringupNotices, OneWebhookOfEachKindPerUrl) {
  BringupNotice n;
  n.target = "sm_100a";
  n.is_new = true;
  n.commit = std::string(40, 'e');
  n.counts = counts(3, 2, 0);
  n.change.milestones = {"builds/first"};
  n.change.regressions = {{"numerics_passed", 1, 0}};
  n.public_url = "https://kport.example";
  n.notify_urls = {"https://a.example/hook", "https://b.example/hook"};
  n.max_attempts = 4;
  auto out = bringup_deliveries(n);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].event, "bringup.milestone");
  EXPECT_EQ(out[1].event, "bringup.regression");
  EXPECT_EQ(out[2].url, "https://b.example/hook");
  EXPECT_EQ(out[0].subject, "webhook https://a.example/hook") << "in order with the verdicts told there";
  EXPECT_EQ(out[0].max_attempts, 4);
  EXPECT_FALSE(out[0].pipeline_id);
  auto body = boost::json::parse(out[0].body).as_object();
  EXPECT_EQ(body.at("url").as_string(), "https://kport.example/#/target/sm_100a");
  EXPECT_TRUE(body.at("is_new").as_bool());
  const auto& m = body.at("milestones").as_array().at(0).as_object();
  EXPECT_EQ(m.at("stage").as_string(), "builds");
  EXPECT_EQ(m.at("level").as_string(), "first");
  EXPECT_EQ(m.at("count").as_int64(), 2);
  EXPECT_EQ(m.at("applicable").as_int64(), 3);
  auto drop = boost::json::parse(out[1].body).as_object();
  EXPECT_EQ(drop.at("regressions").as_array().at(0).at("before").as_int64(), 1);
}

}  // namespace
}  // namespace kport::coordinator
