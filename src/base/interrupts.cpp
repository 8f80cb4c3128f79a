#include "normlab/base/interrupts.hpp"

#include <csignal>

namespace normlab {

namespace {

volatile std::sig_atomic_t caught = 0;

extern "C" void remember(int signal) {
  caught = signal;
}

}  // namespace

void catch_interrupts() {
  struct sigaction action = {};
  action.sa_handler = remember;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void release_interrupts() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

int interrupt_signal() {
  return caught;
}

const char* interrupt_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "a signal";
  }
}

}  // namespace normlab
