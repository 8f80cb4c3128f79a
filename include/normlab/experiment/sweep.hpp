// Grids of settings: a [sweep] table in an experiment file gives lists of values for dotted
// keys, and the study runs every combination, times every scheme and seed
// (docs/experiments.md, "Sweeps"):
//
//   [sweep]
//   train.lr = [1e-3, 3e-3]
//   model.width = [15, 31]        # 2 × 2 points × schemes × seeds runs
//
// Each point is read by the strict experiment reader as if its values were written in place,
// so every error names the file, the line and the key. Each variant of each point becomes one
// variant of the study, labelled "SCHEME KEY=VALUE ..." by its varying values (e.g.
// "pre lr=0.003 width=31"), on disk "SCHEME__lr=0.003__width=31".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "normlab/experiment/experiment.hpp"

namespace toml {
inline namespace v3 {
class table;
}  // namespace v3
}  // namespace toml

namespace normlab {

// One swept key: its dotted path, the name it has in labels (the last part of the path, or
// the whole path when two axes share their last part) and each value as written in labels.
// The most points a [sweep] may expand to; a larger grid is refused before it is expanded.
inline constexpr uint64_t kMaxSweepPoints = 10000;

struct SweepAxis {
  std::string key;                  // "train.lr"
  std::string name;                 // "lr"
  std::vector<std::string> values;  // "0.001", "0.003"
};

// The axes of the document's [sweep] table, in key order; empty without one. Checks that
// every entry is a non-empty list of distinct plain values under [model] or [train] (the
// parts of a study that may differ between its runs); UsageError with the file and line.
std::vector<SweepAxis> read_sweep_axes(const toml::table& doc, const std::string& file);

// Every point of the grid: one index per axis, the last axis varying fastest.
std::vector<std::vector<size_t>> sweep_points(const std::vector<SweepAxis>& axes);

// Puts the point's values in place of their keys (moved out of [sweep], so they keep their
// source lines) and removes [sweep].
void apply_sweep_point(toml::table& doc, const std::vector<SweepAxis>& axes,
                       const std::vector<size_t>& point);

// Reads the experiment of the document `load()` returns (called once per point: each point
// needs a document of its own) at every point of its grid, and joins the points' variants
// into one study. Without [sweep], the same as read_experiment.
Experiment read_swept_experiment(const std::function<std::shared_ptr<toml::table>()>& load,
                                 const std::string& file);

}  // namespace normlab
