// kport-coordinator: parse the configuration, serve until SIGINT/SIGTERM, then stop
// gracefully (stop accepting, drain, checkpoint).
#include <csignal>
#include <cstdio>

#include "kport/common/log.h"
#include "kport/coordinator/coordinator.h"

int main(int argc, char** argv) {
  // Block the stop signals in every thread; the main thread waits for them below.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  bool help = false;
  std::string help_text;
  auto config = kport::coordinator::parse_config(argc, argv, help, help_text);
  if (!config.ok()) {
    std::fprintf(stderr, "kport-coordinator: %s\n", config.error().message.c_str());
    return 2;
  }
  if (help) {
    std::fputs(help_text.c_str(), stdout);
    return 0;
  }
  kport::log::init("kport-coordinator", config->log.level, config->log.format);

  auto coordinator = kport::coordinator::Coordinator::create(*config);
  if (!coordinator.ok()) {
    std::fprintf(stderr, "kport-coordinator: %s\n", coordinator.error().message.c_str());
    return 1;
  }
  if (auto st = (*coordinator)->start(); !st.ok()) {
    std::fprintf(stderr, "kport-coordinator: %s\n", st.error().message.c_str());
    return 1;
  }
  int sig = 0;
  sigwait(&signals, &sig);
  kport::log::info("stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
  (*coordinator)->stop();
  kport::log::flush();
  return 0;
}
