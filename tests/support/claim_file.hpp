// One claims file with one claim, read back: for the claims tests that need a Claim.
#pragma once

#include <string>

#include "normlab/claims/claims_file.hpp"
#include "support/cli.hpp"

namespace normlab::testing {

// tmp/claims/p.toml holding paper 0000.00000 and claim "c" (sentence "s", study
// "study.toml"); `body` is the claim's keys after id, sentence and study.
inline claims::Claim read_one_claim(const TempDir& tmp, const std::string& body) {
  write_bytes(tmp / "claims" / "p.toml",
              "paper = \"0000.00000\"\n[[claim]]\nid = \"c\"\nsentence = \"s\"\nstudy = "
              "\"study.toml\"\n" +
                  body);
  return claims::read_paper(tmp / "claims" / "p.toml", tmp.path()).claims.at(0);
}

}  // namespace normlab::testing
