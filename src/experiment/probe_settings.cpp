// The [probe] keys of the length probes in experiment files (experiment.hpp,
// docs/experiments.md): variance, lengths, samples, dilution.
#include <fmt/format.h>

#include <algorithm>

#include "normlab/base/errors.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/probes/dilution_probe.hpp"
#include "normlab/probes/variance_probe.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab {

std::vector<int64_t> default_probe_lengths(const Task& task) {
  constexpr int64_t kLongest = int64_t{1} << 14;
  auto valid = [&](int64_t n) {
    try {
      task.check_length(n);
      return true;
    } catch (const UsageError&) {
      return false;
    }
  };
  std::vector<int64_t> out;
  for (int64_t n = 1; n <= kLongest; n *= 2) {
    if (valid(n)) out.push_back(n);
  }
  const LengthRange r = task.length_range();
  if (r.max < kLongest && valid(r.max) && (out.empty() || out.back() != r.max)) {
    out.push_back(r.max);
  }
  return out;
}

void read_probe_settings(TomlSection& probe, const Task& task, Experiment& e) {
  e.probe_variance = probe.get_bool("variance", false);
  e.probe_dilution = probe.get_bool("dilution", false);
  e.probe_bridge = probe.get_bool("bridge", false);
  e.probe_samples = probe.get_int("samples", e.probe_samples);
  const bool given = probe.has("lengths");
  e.probe_lengths = probe.get_int_list("lengths", {});
  if (e.probe_samples < 2) {
    throw UsageError(probe.where("samples") +
                     "samples must be at least 2 (the variance probe needs two sequences)");
  }
  if (given && !e.probe_variance) {
    throw UsageError(probe.where("lengths") + "lengths apply to variance = true only");
  }
  if (e.probe_dilution && !is_set_complement(task)) {
    throw UsageError(fmt::format("{}dilution applies to set_complement only; the task is {}",
                                 probe.where("dilution"), task.label()));
  }
  if (!e.probe_variance) return;
  const std::string key = given ? "lengths" : "variance";
  if (!given) e.probe_lengths = default_probe_lengths(task);
  for (int64_t n : e.probe_lengths) {
    try {
      task.check_length(n);
    } catch (const UsageError& err) {
      throw UsageError(probe.where(key) + "lengths: " + err.what());
    }
  }
  if (e.probe_lengths.size() < 2) {
    throw UsageError(fmt::format("{}the variance probe needs at least two lengths (task {})",
                                 probe.where(key), task.label()));
  }
  // The sweep's own checks (repeats, learned positions, memory) on every variant's model.
  const ProbeInput input = ProbeInput::from_task(task);
  for (const Variant& v : e.variants) {
    VarianceConfig vc;
    vc.sweep.lengths = e.probe_lengths;
    vc.sweep.samples = e.probe_samples;
    try {
      validate_variance(v.model, input, vc);
    } catch (const UsageError& err) {
      throw UsageError(fmt::format("{}lengths ({}): {}", probe.where(key), v.label, err.what()));
    }
  }
  std::sort(e.probe_lengths.begin(), e.probe_lengths.end());
}

nlohmann::json probe_settings_json(const Experiment& e) {
  return {{"depth", e.probe_depth},       {"batch", e.probe_batch},
          {"length", e.probe_length},     {"variance", e.probe_variance},
          {"lengths", e.probe_lengths},   {"samples", e.probe_samples},
          {"dilution", e.probe_dilution}, {"bridge", e.probe_bridge}};
}

}  // namespace normlab
