#include "kport/http/events.h"

#include <algorithm>

namespace kport::http {

std::string format_event(std::string_view event, std::string_view data, std::string_view id) {
  std::string out;
  out.reserve(data.size() + event.size() + id.size() + 32);
  // Field values must not contain line breaks, or a publisher could forge frames.
  auto single_line = [](std::string_view v) { return v.substr(0, v.find_first_of("\r\n")); };
  if (!id.empty()) out.append("id: ").append(single_line(id)).push_back('\n');
  if (!event.empty()) out.append("event: ").append(single_line(event)).push_back('\n');
  std::size_t start = 0;
  do {
    std::size_t nl = data.find('\n', start);
    std::string_view line = data.substr(start, nl == std::string_view::npos ? nl : nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.append("data: ").append(line).push_back('\n');
    start = nl == std::string_view::npos ? data.size() + 1 : nl + 1;
  } while (start <= data.size());
  out.push_back('\n');
  return out;
}

Subscription::Subscription(std::vector<std::string> topics, std::size_t queue_limit)
    : m_topics(std::move(topics)), m_limit(queue_limit == 0 ? 1 : queue_limit) {}

// The notify callback runs outside the lock: it posts to an I/O thread, which then
// takes this lock to drain.
bool Subscription::push(EventFrame frame) {
  std::function<void()> notify;
  bool accepted = true;
  {
    std::lock_guard lock(m_mu);
    if (m_closed.load(std::memory_order_relaxed)) return false;
    if (m_queue.size() >= m_limit) {
      // Dropping the subscriber bounds memory; the client reconnects and refetches state.
      m_queue.clear();
      m_overflowed.store(true, std::memory_order_release);
      m_closed.store(true, std::memory_order_release);
      accepted = false;
    } else {
      m_queue.push_back(std::move(frame));
    }
    notify = m_notify;
  }
  if (notify) notify();
  return accepted;
}

bool Subscription::drain(std::vector<EventFrame>& out) {
  std::lock_guard lock(m_mu);
  for (auto& f : m_queue) out.push_back(std::move(f));
  m_queue.clear();
  return !(m_closed.load(std::memory_order_relaxed) && out.empty());
}

void Subscription::set_notify(std::function<void()> fn) {
  std::lock_guard lock(m_mu);
  m_notify = std::move(fn);
}

void Subscription::close() {
  std::function<void()> notify;
  {
    std::lock_guard lock(m_mu);
    if (m_closed.exchange(true, std::memory_order_acq_rel)) return;
    notify = m_notify;
  }
  if (notify) notify();
}

bool Subscription::wants(std::string_view topic) const noexcept {
  if (m_topics.empty()) return true;
  return std::any_of(m_topics.begin(), m_topics.end(), [&](const std::string& t) { return t == topic; });
}

EventHub::EventHub(std::size_t default_queue_limit) : m_default_limit(default_queue_limit) {}

std::shared_ptr<Subscription> EventHub::subscribe(std::vector<std::string> topics, std::size_t queue_limit) {
  auto sub = std::make_shared<Subscription>(std::move(topics), queue_limit == 0 ? m_default_limit : queue_limit);
  std::lock_guard lock(m_mu);
  prune_locked();
  m_subs.push_back(sub);
  return sub;
}

// The frame is formatted once and shared: a thousand dashboards cost one string.
std::size_t EventHub::publish(std::string_view topic, std::string_view event, std::string_view data,
                              std::string_view id) {
  auto frame = std::make_shared<const std::string>(format_event(event, data, id));
  std::vector<std::shared_ptr<Subscription>> targets;
  {
    std::lock_guard lock(m_mu);
    prune_locked();
    targets.reserve(m_subs.size());
    for (auto& w : m_subs)
      if (auto s = w.lock(); s && s->wants(topic)) targets.push_back(std::move(s));
  }
  // Push outside the hub lock: notify callbacks post to I/O threads and must not
  // serialize all publishers behind one subscriber.
  std::size_t delivered = 0;
  for (auto& s : targets) {
    if (s->push(frame))
      ++delivered;
    else if (s->overflowed())
      m_dropped.fetch_add(1, std::memory_order_relaxed);
  }
  return delivered;
}

std::size_t EventHub::subscriber_count() const {
  std::lock_guard lock(m_mu);
  std::size_t n = 0;
  for (auto& w : m_subs)
    if (auto s = w.lock(); s && !s->closed()) ++n;
  return n;
}

void EventHub::close_all() {
  std::vector<std::shared_ptr<Subscription>> subs;
  {
    std::lock_guard lock(m_mu);
    for (auto& w : m_subs)
      if (auto s = w.lock()) subs.push_back(std::move(s));
    m_subs.clear();
  }
  for (auto& s : subs) s->close();
}

void EventHub::prune_locked() {
  m_subs.erase(std::remove_if(m_subs.begin(), m_subs.end(),
                              [](const std::weak_ptr<Subscription>& w) {
                                auto s = w.lock();
                                return !s || s->closed();
                              }),
               m_subs.end());
}

}  // namespace kport::http
