// The expected answer to a bad input, a normlab InputError or UsageError. With the environment
// variable FUZZ_SHOW_REFUSALS set, its message goes to stderr: a way to see by hand how far a
// seed input gets (FUZZ_SHOW_REFUSALS=1 build-fuzz/fuzz_claims fuzz/corpus/claims/seed_*).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace normlab::fuzz {

inline void refused(const std::exception& e) {
  static const bool show = std::getenv("FUZZ_SHOW_REFUSALS") != nullptr;
  if (show) std::fprintf(stderr, "refused: %s\n", e.what());
}

}  // namespace normlab::fuzz
