// libFuzzer harness: a claims file (claims/*.toml, read_paper) and the study files a claim is
// decided from: every claim read is evaluated (evaluate_claim: the CSV table, the study's
// facts, the pairs, design rule D1, the verdict) against the fuzzed table.
//
// Input: parts separated by a line "%%" (fuzz_parts.hpp), written to this process's scratch
// folder (fuzz_scratch.hpp):
//   part 0   the claims file, claims/fuzz.toml (its relative study paths resolve against the
//            scratch folder)
//   part 1   if present, the CSV table; each claim reads it under the file name of its own
//            `source` (results.csv when that names no plain file), in study/
//   part 2   if present, study/experiment.json (the facts of "beyond_training", "last_step",
//            ... and the task of D1)
// fuzz/make_corpus.py makes the seeds from claims/*.toml and docs/full-tier.
//
// A normlab InputError or UsageError is the expected answer; any other exception, crash, leak,
// hang or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz_parts.hpp"
#include "fuzz_refusal.hpp"
#include "fuzz_scratch.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/claims/claims_file.hpp"
#include "normlab/claims/evaluate.hpp"

namespace fs = std::filesystem;

namespace {

// The claim's source as a file name the study folder can hold.
std::string table_name(const std::string& source) {
  const std::string name = fs::path(source).filename().string();
  const bool usable = !name.empty() && name != "." && name != ".." && name.size() <= 200 &&
                      name.find('\0') == std::string::npos;
  return usable ? name : "results.csv";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace normlab::claims;
  const std::vector<std::string> parts = normlab::fuzz::split_parts(data, size);
  const fs::path& root = normlab::fuzz::scratch_dir();
  const fs::path file = root / "claims" / "fuzz.toml", study = root / "study";
  fs::remove_all(study);  // nothing of an earlier input
  fs::create_directories(study);
  normlab::fuzz::write_text(file, parts[0]);
  if (parts.size() > 2) normlab::fuzz::write_text(study / "experiment.json", parts[2]);
  try {
    Paper paper = read_paper(file, root);
    for (Claim& c : paper.claims) {
      to_string(c.expect);
      if (parts.size() < 2) continue;
      c.source = table_name(c.source);
      normlab::fuzz::write_text(study / c.source, parts[1]);
      try {
        evaluate_claim(c, study);
      } catch (const normlab::InputError& e) {  // the next claim reads the table too
        normlab::fuzz::refused(e);
      } catch (const normlab::UsageError& e) {
        normlab::fuzz::refused(e);
      }
    }
  } catch (const normlab::InputError& e) {
    normlab::fuzz::refused(e);
  } catch (const normlab::UsageError& e) {
    normlab::fuzz::refused(e);
  }
  return 0;
}
