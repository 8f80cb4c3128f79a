// Error types shared by the library and the command line.
//
// UsageError: the user asked for something invalid (an unknown value, a bad combination);
//             the CLI prints the message and exits with code 2.
// InputError: a file or input the user gave is broken (truncated checkpoint, bad TOML);
//             the CLI prints the message and exits with code 1.
// Interrupted: SIGINT or SIGTERM stopped the work after saving it (base/interrupts.hpp); the
//             message says what was saved and how to resume; the CLI exits with code 130.
#pragma once

#include <stdexcept>
#include <string>

namespace normlab {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace normlab
