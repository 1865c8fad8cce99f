// Answers of the dashboard routes, kept until the data behind them changes.
//
// Several people watching the dashboard, and every reload, ask the same questions; an
// answer is reused while no event (results, jobs, pipelines, runners) was published
// since it was computed, and for at most `max_age_ms`, which bounds what events do not
// announce (a runner going quiet). Only 200 answers are kept. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kport/http/events.h"
#include "kport/http/message.h"

namespace kport::coordinator {

class DashboardCache {
 public:
  DashboardCache(http::EventHub& events, std::int64_t max_age_ms, std::size_t max_entries = 256);

  // The answer for `key`: a kept one, or compute()'s (kept when it is a 200).
  http::Response get(const std::string& key, const std::function<http::Response()>& compute);

 private:
  // The change count: bumped by every event; resubscribes when the hub dropped us.
  std::uint64_t generation();

  struct Entry {
    std::uint64_t generation = 0;
    std::int64_t created_ms = 0;
    http::Response response;
  };
  http::EventHub& m_events;
  std::int64_t m_max_age_ms;
  std::size_t m_max_entries;
  std::mutex m_mu;
  std::shared_ptr<http::Subscription> m_sub;
  std::uint64_t m_generation = 0;
  std::map<std::string, Entry> m_entries;
};

}  // namespace kport::coordinator
