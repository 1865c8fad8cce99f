// kport-coordinator as a library: the service that owns the database and serves the
// REST API, the runner protocol, artifacts, events and the dashboard.
//
// Lifecycle: create() opens the store (applying migrations) and resolves tokens;
// start() binds and serves; stop() is the graceful two-phase shutdown (stop accepting,
// answer parked long-polls, drain in-flight requests, checkpoint the WAL).
// Thread-safety: start/stop from one controlling thread; port() from any.
#pragma once

#include <memory>

#include "kport/common/result.h"
#include "kport/coordinator/config.h"

namespace kport::coordinator {

class Coordinator {
 public:
  static Result<std::unique_ptr<Coordinator>> create(Config config);
  ~Coordinator();

  Status start();
  std::uint16_t port() const;
  const Config& config() const;
  void stop();

  class Impl;

 private:
  explicit Coordinator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace kport::coordinator
