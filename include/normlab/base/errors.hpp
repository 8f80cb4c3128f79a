// Error types shared by the library and the command line.
//
// UsageError: the user asked for something invalid (an unknown value, a bad combination);
//             the CLI prints the message and exits with code 2.
// InputError: a file or input the user gave is broken (truncated checkpoint, bad TOML);
//             the CLI prints the message and exits with code 1.
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

}  // namespace normlab
