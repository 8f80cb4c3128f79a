// A run folder of a study: its name under OUT/runs/ and its loss log, metrics.jsonl (one JSON
// object per logged step, written by the trainer: {"step", "loss"} and, with eval_every,
// {"step", "val_loss"}).
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace normlab {

// "SLUG__seedN": the folder of a variant's run with one seed, under OUT/runs/.
std::string run_folder_name(const std::string& variant_slug, uint64_t seed);

// One logged step of a run: the training loss and the validation loss, NaN where the step has
// only the other.
struct CurvePoint {
  int64_t step = 0;
  double train_loss = NAN, val_loss = NAN;
};

// step → losses of a metrics.jsonl; a torn last line (a killed or running run) ends the reading,
// and a missing file is an empty curve.
std::map<int64_t, CurvePoint> read_run_curve(const std::filesystem::path& metrics_file);

}  // namespace normlab
