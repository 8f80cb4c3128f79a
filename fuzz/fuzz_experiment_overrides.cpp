// libFuzzer harness: what `normlab run FILE [--tier NAME] [--set KEY=VALUE ...]` reads before it
// trains (apps/normlab/cmd_run.cpp): the file with `extends`, the tier, each --set, the kind,
// then every point of the [sweep] grid read strictly, the study's folder name and its
// experiment.json; it stops where run_experiment would make the results folder.
//
// Input: parts separated by a line "%%" (fuzz_parts.hpp), written to this process's scratch
// folder (fuzz_scratch.hpp):
//   part 0     the experiment file, experiment.toml
//   part 1     if present, base.toml, the file part 0 may name in `extends = "base.toml"`
//   parts 2..  one --set assignment each; a part "--tier=NAME" asks for tier NAME instead
// fuzz/make_corpus.py makes the seeds from experiments/*.toml.
//
// A normlab InputError or UsageError is the expected answer; any other exception, crash, leak,
// hang or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "fuzz_parts.hpp"
#include "fuzz_refusal.hpp"
#include "fuzz_scratch.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/experiment/overrides.hpp"
#include "normlab/experiment/sweep.hpp"
#include "normlab/io/toml_reader.hpp"

namespace {

// cmd_run.cpp's callback and run_train_study up to run_experiment.
void read_as_run(const std::string& file, const std::string& tier,
                 const std::vector<std::string>& sets) {
  using namespace normlab;
  tier_names(*parse_experiment_file(file), file);
  std::string applied;
  const auto table = load_experiment_document(file, tier, sets, &applied);
  TomlSection top(table.get(), file, "top level");
  const std::string kind = top.get_choice("kind", "train", {"train", "particles"});
  if (kind != "train") {
    // A particle study's reader also runs it (particles::run_study): only its [sweep] check.
    if (table->contains("sweep")) throw UsageError(top.where("sweep") + "[sweep] is refused");
    return;
  }
  Experiment e =
      read_swept_experiment([&] { return load_experiment_document(file, applied, sets); }, file);
  e.tier = applied;
  for (const std::string& set : sets) e.sets.push_back(normalized_set(set));
  study_folder_name(e.name, applied, e.sets);
  to_json(e).dump(2);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> parts = normlab::fuzz::split_parts(data, size);
  const std::filesystem::path& dir = normlab::fuzz::scratch_dir();
  const std::filesystem::path file = dir / "experiment.toml", base = dir / "base.toml";
  normlab::fuzz::write_text(file, parts[0]);
  if (parts.size() > 1) {
    normlab::fuzz::write_text(base, parts[1]);
  } else {
    std::filesystem::remove(base);  // no base of an earlier input
  }
  std::string tier;
  std::vector<std::string> sets;
  for (size_t i = 2; i < parts.size(); ++i) {
    if (parts[i].rfind("--tier=", 0) == 0) {
      tier = parts[i].substr(7);
    } else {
      sets.push_back(parts[i]);
    }
  }
  try {
    read_as_run(file.string(), tier, sets);
  } catch (const normlab::InputError& e) {
    normlab::fuzz::refused(e);
  } catch (const normlab::UsageError& e) {
    normlab::fuzz::refused(e);
  }
  return 0;
}
