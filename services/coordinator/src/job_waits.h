// Why a queued job waits, in the words the pipeline page and the job page show: the
// build it depends on, a backoff after a failed attempt, no online runner able to take
// it, or the jobs ahead of it in the queue. Pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kport/db/records.h"

namespace kport::coordinator {

struct WaitFacts {
  db::Job job;
  std::optional<db::Job> dependency;    // the job it depends on, when it names one
  std::optional<db::QueuePlace> place;  // Store::queue_place; nullopt when not queued
  std::int64_t now_ms = 0;
};

// nullopt for a job that does not wait (running or finished); otherwise one sentence,
// the first of these that holds: its build has not succeeded; it backs off after a
// failed attempt; no online runner can take it (saying which one would); N jobs are
// ahead of it; every runner able to take it is busy; a runner should claim it now.
std::optional<std::string> wait_reason(const WaitFacts& facts);

}  // namespace kport::coordinator
