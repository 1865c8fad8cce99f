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
#include "github_app.h"
#include "kport/http/client.h"
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
  // One forge call or webhook sent, and what its answer means (classify_answer).
  db::DeliveryAttempt send(http::Client& client, const db::Delivery& d, const OutgoingRequest& request,
                           std::int64_t retry_at, bool github_app);
  Result<ClientAnswer> fetch(http::Client& client, const OutgoingRequest& request);
  // The installation token of GitHub App connection `c`: the one held unless `renew`,
  // else one exchanged now for the app's JWT (`exchanged` set). nullopt with `failed`
  // filled when the key or the exchange failed (refused, or retry at `retry_at`).
  std::optional<std::string> installation_token(http::Client& client, const db::Delivery& d,
                                                const db::ForgeConnection& c, std::int64_t retry_at, bool renew,
                                                db::DeliveryAttempt& failed, bool& exchanged);
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
  std::int64_t m_pruned_ms = 0;     // sender thread only: when delivered rows were last pruned
  InstallationTokens m_app_tokens;  // sender thread only: GitHub Apps' installation tokens, in memory
};

}  // namespace kport::coordinator
