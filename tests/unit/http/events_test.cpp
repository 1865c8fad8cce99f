#include "kport/http/events.h"

#include <gtest/gtest.h>

namespace kport::http {
namespace {

TEST(FormatEvent, SplitsDataLinesAndOmitsEmptyFields) {
  EXPECT_EQ(format_event("result", "{\"id\":7}", "42"), "id: 42\nevent: result\ndata: {\"id\":7}\n\n");
  EXPECT_EQ(format_event("", "a\nb"), "data: a\ndata: b\n\n");
  EXPECT_EQ(format_event("x\ndata: forged", ""), "event: x\ndata: \n\n");
}

TEST(EventHub, DeliversByTopic) {
  EventHub hub;
  auto results = hub.subscribe({"results"});
  auto all = hub.subscribe();
  EXPECT_EQ(hub.publish("results", "result", "1"), 2u);
  EXPECT_EQ(hub.publish("jobs", "job", "2"), 1u);
  std::vector<EventFrame> got;
  ASSERT_TRUE(results->drain(got));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(*got[0], "event: result\ndata: 1\n\n");
  got.clear();
  ASSERT_TRUE(all->drain(got));
  EXPECT_EQ(got.size(), 2u);
}

TEST(EventHub, DropsASlowSubscriberInsteadOfGrowing) {
  EventHub hub;
  auto slow = hub.subscribe({}, 3);
  auto fast = hub.subscribe({}, 100);
  for (int i = 0; i < 10; ++i) hub.publish("t", "e", std::to_string(i));
  EXPECT_TRUE(slow->closed());
  EXPECT_TRUE(slow->overflowed());
  EXPECT_FALSE(fast->closed());
  EXPECT_EQ(hub.dropped_total(), 1u);
  EXPECT_EQ(hub.subscriber_count(), 1u);
  std::vector<EventFrame> got;
  EXPECT_FALSE(slow->drain(got)) << "a dropped subscriber keeps nothing queued";
  EXPECT_TRUE(got.empty());
}

TEST(EventHub, NotifiesAndCloseAllEndsSubscriptions) {
  EventHub hub;
  auto sub = hub.subscribe();
  int notified = 0;
  sub->set_notify([&notified] { ++notified; });
  hub.publish("t", "e", "x");
  EXPECT_EQ(notified, 1);
  hub.close_all();
  EXPECT_EQ(notified, 2);
  EXPECT_TRUE(sub->closed());
  EXPECT_EQ(hub.publish("t", "e", "y"), 0u);
}

TEST(EventHub, ForgetsSubscriptionsNobodyHolds) {
  EventHub hub;
  { auto gone = hub.subscribe(); }
  EXPECT_EQ(hub.subscriber_count(), 0u);
  EXPECT_EQ(hub.publish("t", "e", "x"), 0u);
}

}  // namespace
}  // namespace kport::http
