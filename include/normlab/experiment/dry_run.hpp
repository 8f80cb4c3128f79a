// `normlab run FILE --dry-run`: what a run would do, without training anything.
#pragma once

#include <filesystem>
#include <string>

#include <toml++/toml.h>

#include "normlab/experiment/experiment.hpp"

namespace normlab {

// Every value of the resolved document (after extends, the tier and --set), one line per
// leaf, "dotted.key = value   # where it was written" (FILE:LINE or --set KEY=VALUE).
std::string resolved_values(const toml::table& doc, const std::string& file);

// The report of --dry-run: the resolved values, then each run with its folder under `out`
// and its state there (to do, at step S of N, finished, diverged), then an estimate of the
// training time of the runs to do at `jobs` at a time, from timed steps of each variant's
// model on its task at the mean training length (`estimate` false: no estimate, for tests).
std::string dry_run_report(const toml::table& doc, const Experiment& e,
                           const std::filesystem::path& out, int jobs, bool estimate = true);

}  // namespace normlab
