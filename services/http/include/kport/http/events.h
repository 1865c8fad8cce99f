// Server-sent events (text/event-stream): an EventHub that publishers push events to,
// and Subscriptions with bounded queues that the server drains onto connections.
//
//   auto sub = hub->subscribe({"results"});          // in a handler
//   Response r; r.events = sub; reply(std::move(r)); // the server streams from now on
//   hub->publish("results", "result", R"({"id":7})"); // from any thread
//
// A subscriber whose queue is full is dropped (closed), never allowed to grow memory;
// the browser's EventSource reconnects by itself. Thread-safe throughout.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kport::http {

// One formatted event frame, shared by all subscribers that receive it.
using EventFrame = std::shared_ptr<const std::string>;

// Formats "id: ..\nevent: ..\ndata: ..\n\n"; data with newlines becomes several
// data lines; empty id/event are omitted.
std::string format_event(std::string_view event, std::string_view data, std::string_view id = {});

class Subscription {
 public:
  Subscription(std::vector<std::string> topics, std::size_t queue_limit);

  // Queues a frame. Returns false (and closes the subscription) when the queue is full.
  bool push(EventFrame frame);
  // Moves the queued frames into `out`; returns false once closed and empty.
  bool drain(std::vector<EventFrame>& out);
  // Called (from the pushing thread) whenever frames arrive or the subscription closes.
  // The server installs this; it must be cheap and must not call back into push().
  void set_notify(std::function<void()> fn);
  void close();
  bool closed() const noexcept { return m_closed.load(std::memory_order_acquire); }
  // True when closed because the subscriber fell behind.
  bool overflowed() const noexcept { return m_overflowed.load(std::memory_order_acquire); }
  bool wants(std::string_view topic) const noexcept;

 private:
  std::vector<std::string> m_topics;  // empty: every topic
  std::size_t m_limit;
  mutable std::mutex m_mu;
  std::deque<EventFrame> m_queue;
  std::function<void()> m_notify;
  std::atomic<bool> m_closed{false};
  std::atomic<bool> m_overflowed{false};
};

class EventHub {
 public:
  explicit EventHub(std::size_t default_queue_limit = 256);
  // A new subscription to `topics` (all topics when empty).
  std::shared_ptr<Subscription> subscribe(std::vector<std::string> topics = {}, std::size_t queue_limit = 0);
  // Sends an event to every live subscriber of `topic`; returns how many got it.
  std::size_t publish(std::string_view topic, std::string_view event, std::string_view data, std::string_view id = {});
  std::size_t subscriber_count() const;
  std::uint64_t dropped_total() const noexcept { return m_dropped.load(); }
  // Closes every subscription (on shutdown).
  void close_all();

 private:
  void prune_locked();
  std::size_t m_default_limit;
  mutable std::mutex m_mu;
  std::vector<std::weak_ptr<Subscription>> m_subs;
  std::atomic<std::uint64_t> m_dropped{0};
};

}  // namespace kport::http
