// kport-watcher: options and signals here; the watches in the library.
#include <csignal>
#include <iostream>

#include "kport/common/log.h"
#include "kport/watcher/watcher.h"

namespace {
std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }
}  // namespace

int main(int argc, char** argv) {
  bool help = false;
  std::string help_text;
  auto config = kport::watcher::parse_config(argc, argv, help, help_text);
  if (!config.ok()) {
    std::cerr << "kport-watcher: " << config.error().message << "\n";
    return 2;
  }
  if (help) {
    std::cout << help_text;
    return 0;
  }
  kport::log::init("kport-watcher", config->log.level, config->log.format);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  kport::watcher::Watcher w(*config);
  if (config->once) {
    auto report = w.run_once();
    for (const auto& t : report.new_targets) std::cout << "new target " << t << "\n";
    for (const auto& r : report.revalidations) std::cout << "revalidation " << r << "\n";
    for (const auto& c : report.new_commits) std::cout << "new commit " << c << "\n";
    for (const auto& e : report.errors) std::cerr << "kport-watcher: " << e << "\n";
    return report.errors.empty() ? 0 : 1;
  }
  kport::log::info("watcher started",
                   {{"server", config->server}, {"interval_s", static_cast<std::int64_t>(config->interval.count())}});
  w.run(g_stop);
  kport::log::info("watcher stopped");
  return 0;
}
