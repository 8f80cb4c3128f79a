// The tiny study of the claims ledger's command-line tests: Set Complement v = 8, pre and post,
// a few hundred steps (tests/data/claims_tiny_study.toml).
#pragma once

#include <filesystem>

namespace normlab::testing {

inline const std::filesystem::path kTinyStudy =
    std::filesystem::path(NORMLAB_SOURCE_DIR) / "tests" / "data" / "claims_tiny_study.toml";

}  // namespace normlab::testing
