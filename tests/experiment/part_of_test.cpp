// runs_are_part_of (part_of.hpp): a pilot's experiment.json against its study's.
#include "normlab/experiment/part_of.hpp"

#include <gtest/gtest.h>

#include <string>

#include "support/experiment_file.hpp"

namespace normlab {
namespace {

// The tiny experiment's text with `from` replaced by `to` (once; the text must hold it).
std::string edited(const std::string& from, const std::string& to) {
  std::string text = testing::kTinyExperiment;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

nlohmann::json experiment_json(const std::string& text) {
  Experiment e;
  const std::string error = testing::experiment_error(text, &e);
  EXPECT_EQ(error, "");
  return to_json(e);
}

const nlohmann::json& study() {
  static const nlohmann::json j = experiment_json(testing::kTinyExperiment);
  return j;
}

TEST(RunsArePartOf, APilotOfTheBaselineArmWithMoreSeeds) {
  const nlohmann::json pilot =
      experiment_json(edited("schemes = [\"pre\", \"post\"]\nseeds = [1, 2]",
                             "schemes = [\"pre\"]\nseeds = [1, 2, 3, 4, 5]\njobs = 1"));
  EXPECT_TRUE(runs_are_part_of(pilot, study()));
  EXPECT_TRUE(runs_are_part_of(study(), study()));
  // The study is not part of its pilot: post never ran there.
  EXPECT_FALSE(runs_are_part_of(study(), pilot));
}

TEST(RunsArePartOf, ARunSettingThatDiffersIsAnotherExperiment) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"lr = 0.01", "lr = 0.02"},
           {"lengths = [2, 5]", "lengths = [2, 4]"},
           {"width = 5", "width = 6"},
           {"v = 6", "v = 7"},
           {"schemes = [\"pre\", \"post\"]", "schemes = [\"peri\"]"},
       }) {
    EXPECT_FALSE(runs_are_part_of(experiment_json(edited(from, to)), study())) << to;
  }
}

TEST(RunsArePartOf, NoVariantsOrNotAnObjectIsNotPart) {
  nlohmann::json empty = study();
  empty["variants"] = nlohmann::json::array();
  EXPECT_FALSE(runs_are_part_of(empty, study()));
  EXPECT_FALSE(runs_are_part_of(nlohmann::json::array(), study()));
}

}  // namespace
}  // namespace normlab
