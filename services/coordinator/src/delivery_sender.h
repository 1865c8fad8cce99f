// The coordinator's outgoing side: one thread that, every --delivery-poll-ms, moves the
// reports of push pipelines along (forge_report.h plans the deliveries; the store
// enqueues them with the state change, in one transaction) and sends the deliveries
// that are due, one at a time, recording each attempt's outcome in the store. Nothing
// is kept in memory that a restart would lose: the queue is the deliveries table.
//
// A forge's answer never reaches further than classify_answer: bodies are bounded
// (1 MiB), every call has a deadline (--delivery-timeout-ms), and what cannot be read is
// an error value for the retry, never an exception. Tokens are read from their files
// when a call is sent and appear in no log line, answer or metric.
//
// Thread-safety: start/stop from the controlling thread; metrics() from any.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "context.h"
#include "forge_report.h"
#include "kport/porting/verdict.h"

namespace kport::coordinator {

// The repro command of each result the verdict's reasons name (a bounded number): what
// a completed report's summary lists.
std::map<std::int64_t, std::string> verdict_repro_commands(Context& ctx, const porting::Verdict& v);

class DeliverySender {
 public:
  explicit DeliverySender(Context& ctx);
  ~DeliverySender();
  void start();
  // Stops after the call in flight (bounded by the delivery timeout).
  void stop();
  // Wakes the thread now (a pipeline changed), instead of at the next poll.
  void poke();
  // The Prometheus text of the delivery gauges, as of the last round.
  std::string metrics() const;

 private:
  void run();
  void report_round();
  void send_round();
  void prune_round();
  void refresh_metrics();
  // The source lines of the verdict's resource regressions at `commit` (a bounded number).
  std::vector<Annotation> annotations(const porting::Verdict& v, const std::string& commit);

  Context& m_ctx;
  std::thread m_thread;
  mutable std::mutex m_mu;  // guards the members below
  std::condition_variable m_cv;
  bool m_stopping = false;
  bool m_poked = false;
  std::string m_metrics;
  // Sender thread only: completed pipelines whose verdict still asks for re-measures,
  // and when that was first seen.
  std::map<std::int64_t, std::int64_t> m_deferred;
  std::int64_t m_pruned_ms = 0;  // sender thread only: when delivered rows were last pruned
};

}  // namespace kport::coordinator
