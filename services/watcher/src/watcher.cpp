#include <exception>
#include <thread>

#include "impl.h"
#include "kport/common/log.h"

namespace kport::watcher {

Watcher::Impl::Impl(Config c, std::unique_ptr<porting::ToolkitProbe> p)
    : config(std::move(c)), api(config.server, config.token, config.ca_file), probe(std::move(p)) {}

Watcher::Watcher(Config config, std::unique_ptr<porting::ToolkitProbe> probe)
    : m_impl(std::make_unique<Impl>(std::move(config), std::move(probe))) {}

Watcher::~Watcher() = default;

Report Watcher::run_once() {
  auto& m = *m_impl;
  Report report;
  m.fetched.clear();
  // Toolkit first: on a fresh coordinator it registers the targets a pushed commit is
  // then built for (and the head it brings them up at needs no second pipeline).
  // An answer of an unexpected shape must cost one round of one watch, not the process.
  auto guarded = [&report](const char* name, auto&& watch) {
    try {
      watch();
    } catch (const std::exception& e) {
      report.errors.push_back(std::string(name) + ": unexpected answer: " + e.what());
    }
  };
  if (m.config.toolkit) guarded("toolkit", [&] { m.watch_toolkit(report); });
  if (m.config.git) guarded("git", [&] { m.watch_git(report); });
  if (m.config.fleet) guarded("fleet", [&] { m.watch_fleet(report); });
  for (const auto& e : report.errors) log::warn("watch failed", {{"error", e}});
  return report;
}

void Watcher::run(const std::atomic<bool>& stop) {
  while (!stop) {
    run_once();
    for (auto waited = std::chrono::milliseconds(0); waited < m_impl->config.interval && !stop;
         waited += std::chrono::milliseconds(200))
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace kport::watcher
