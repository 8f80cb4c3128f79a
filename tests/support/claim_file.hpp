// One claims file read back: for the claims tests that need a Claim, or its reading's error.
#pragma once

#include <string>

#include "normlab/base/errors.hpp"
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

// The InputError that reading `text` as a claims file gives, after the file's name (so
// ":LINE: ..."); "" when it reads.
inline std::string claims_file_error(const std::string& text) {
  TempDir tmp;
  write_bytes(tmp / "claims" / "p.toml", text);
  try {
    claims::read_paper(tmp / "claims" / "p.toml", tmp.path());
    return "";
  } catch (const InputError& e) {
    const std::string file = (tmp / "claims" / "p.toml").string();
    return std::string(e.what()).substr(file.size());
  }
}

}  // namespace normlab::testing
