#include "normlab/experiment/dry_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "normlab/base/rng.hpp"
#include "normlab/bench/train_bench.hpp"
#include "normlab/core/threads.hpp"
#include "normlab/io/progress.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/model/model.hpp"
#include "normlab/model/model_config.hpp"
#include "normlab/probes/length_sweep.hpp"
#include "normlab/probes/probe_input.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/trainer.hpp"

namespace normlab {
namespace fs = std::filesystem;

namespace {

// A leaf's value as TOML writes it, on one line; numbers in their shortest form (0.003, not
// toml++'s 0.0030000000000000001).
std::string toml_text(const toml::node& node) {
  if (const auto* d = node.as_floating_point()) return fmt::format("{}", d->get());
  if (const toml::array* a = node.as_array()) {
    std::string out = "[";
    for (size_t i = 0; i < a->size(); ++i) out += (i > 0 ? ", " : "") + toml_text(*a->get(i));
    return out + "]";
  }
  std::ostringstream s;
  node.visit([&](const auto& v) { s << toml::toml_formatter(v, {}); });
  return s.str();
}

void list_leaves(const toml::table& t, const std::string& prefix, const std::string& file,
                 std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& [key, node] : t) {
    const std::string name =
        prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const toml::table* sub = node.as_table()) {
      list_leaves(*sub, name, file, out);
      continue;
    }
    std::string where = node_location(file, node);
    where = where.substr(0, where.size() - 2);  // without the ": " that precedes a message
    out.push_back({name + " = " + toml_text(node), where});
  }
}

}  // namespace

std::string training_duration(double seconds) {
  if (seconds >= 3600) {
    return fmt::format("{} h {:02} min", static_cast<int>(seconds / 3600),
                       static_cast<int>(seconds / 60) % 60);
  }
  if (seconds >= 60) return fmt::format("{} min", static_cast<int>(seconds / 60 + 0.5));
  return fmt::format("{} s", static_cast<int>(seconds + 0.5));
}

std::string rate_text(double steps_per_s) {
  if (steps_per_s >= 10) return fmt::format("{:.0f}", steps_per_s);
  return fmt::format("{:.2g}", steps_per_s);
}

std::string resolved_values(const toml::table& doc, const std::string& file) {
  std::vector<std::pair<std::string, std::string>> leaves;
  list_leaves(doc, "", file, leaves);
  size_t width = 0;
  for (const auto& [text, where] : leaves) width = std::max(width, text.size());
  width = std::min<size_t>(width, 60);
  // A key that [sweep] lists keeps its file's value here, but each run trains with its point's.
  const auto name_of = [](const std::string& text) { return text.substr(0, text.find(" = ")); };
  std::set<std::string> swept;
  for (const auto& [text, where] : leaves) {
    if (text.rfind("sweep.", 0) == 0) swept.insert(name_of(text).substr(6));
  }
  std::string out;
  for (const auto& [text, where] : leaves) {
    out += fmt::format("  {:<{}}  # {}{}\n", text, width, where,
                       swept.count(name_of(text)) > 0 ? " (each run: its [sweep] value)" : "");
  }
  return out;
}

RunState run_state(const Variant& v, uint64_t seed, const fs::path& out) {
  RunState r{run_directory(out, v, seed), "to do", v.train.steps};
  if (!fs::exists(r.dir / "run.json")) return r;
  const RunStatus status = read_run_status(r.dir);
  const int64_t step = checkpoint_step(r.dir);
  if (status == RunStatus::finished || status == RunStatus::diverged) {
    r.state = to_string(status);
    r.steps_left = 0;
  } else if (step > 0) {
    r.state = fmt::format("to resume from step {} of {}", step, v.train.steps);
    r.steps_left = v.train.steps - step;
  }
  return r;
}

namespace {

// Seconds to evaluate one sequence of task length n: its scored rows through the variant's
// model (Model::forward_rows, as the evaluation runs it), with weights as initialized (the
// cost does not depend on their values).
double seconds_per_sequence(const Variant& v, const Task& task, int64_t n) {
  set_num_threads(v.train.threads);
  Model<float> model(v.model);
  model.init(1);
  Rng rng(1);
  const Batch batch = task.make_batch(n, 1, rng, /*validation=*/true);
  std::vector<int64_t> rows;
  for (int64_t k = 0; k < batch.len; ++k) {
    if (batch.weight[k] > 0) rows.push_back(k);
  }
  const double start = steady_seconds();
  model.forward_rows(batch.tokens.data(), 1, batch.len, batch.fields, rows);
  return steady_seconds() - start;
}

// Seconds of the variance probe on one run: at each [probe] length, probe_samples sequences at
// the time of one, timed by the probe's own sweep (run_length_sweep, one sequence per length,
// the variant's model as initialized) and kept in `rate_of` ("variance|" keys).
double variance_probe_seconds(const Experiment& e, const Variant& v, const Task& task,
                              const std::string& task_key, StepRates& rate_of) {
  const auto key_of = [&](int64_t n) {
    return fmt::format("variance|{}|{}|{}|{}", task_key, to_json(v.model).dump(), n,
                       v.train.threads);
  };
  SweepConfig sweep;
  sweep.samples = 1;
  sweep.seed = e.eval.seed;
  for (int64_t n : e.probe_lengths) {
    if (rate_of.count(key_of(n)) == 0) sweep.lengths.push_back(n);
  }
  if (!sweep.lengths.empty()) {
    set_num_threads(v.train.threads);
    Model<float> model(v.model);
    model.init(1);
    const ProbeInput input = ProbeInput::from_task(task);
    for (const SweepLength& l : run_length_sweep(model, input, sweep, [](const SweepSample&) {})) {
      rate_of[key_of(l.length)] = l.seconds;
    }
  }
  double seconds = 0;
  for (int64_t n : e.probe_lengths) {
    seconds += rate_of[key_of(n)] * static_cast<double>(e.probe_samples);
  }
  return seconds;
}

// The probes a study runs that the estimate does not time, in the order they run.
std::vector<std::string> untimed_probes(const Experiment& e) {
  std::vector<std::string> names;
  if (e.probe_depth) names.push_back("depth");
  if (e.probe_dilution) names.push_back("dilution");
  if (e.probe_bridge) names.push_back("bridge");
  return names;
}

}  // namespace

std::string estimate_amounts(double seconds, double eval_seconds, bool variance,
                             double probe_seconds) {
  if (!variance) {
    return fmt::format("{} of training and {} of evaluation", training_duration(seconds),
                       training_duration(eval_seconds));
  }
  return fmt::format("{} of training, {} of evaluation and {} of the variance probe",
                     training_duration(seconds), training_duration(eval_seconds),
                     training_duration(probe_seconds));
}

std::string probes_on_top(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string list = names.front();
  for (size_t i = 1; i < names.size(); ++i) {
    list += (i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return fmt::format("the {} probe{} come{} on top", list, names.size() > 1 ? "s" : "",
                     names.size() > 1 ? "" : "s");
}

TrainingEstimate estimate_training(const Experiment& e, const fs::path& out, int jobs, bool measure,
                                   const fs::path& kept, StepRates* rates) {
  TrainingEstimate t;
  t.runs = static_cast<int>(e.variants.size() * e.seeds.size());
  std::map<std::string, int64_t> steps_to_do;  // variant label → steps left over its seeds
  std::map<std::string, int> runs_to_do;       // variant label → its runs not ended
  std::map<std::string, int64_t> most_left;    // variant label → the most steps one run has left
  for (const Variant& v : e.variants) {
    for (uint64_t seed : e.seeds) {
      const RunState r = run_state(v, seed, out);
      if (r.steps_left == 0) continue;
      if (!kept.empty() && r.state == "to do") {
        const fs::path k = kept / r.dir.filename();
        if (fs::exists(k / "run.json") && read_run_status(k) == RunStatus::finished) continue;
      }
      ++t.to_do;
      ++runs_to_do[v.label];
      steps_to_do[v.label] += r.steps_left;
      most_left[v.label] = std::max(most_left[v.label], r.steps_left);
    }
  }
  t.at_once = std::max(1, std::min(jobs, t.to_do));
  t.untimed_probes = untimed_probes(e);
  if (t.to_do == 0 || !measure) return t;
  // Training time: each variant's steps left at its measured rate, spread over `jobs`. Variants
  // that differ only in what does not change a step's work (learning rate, seeds) are timed
  // once.
  StepRates own_rates;
  StepRates& rate_of = rates != nullptr ? *rates : own_rates;
  const std::string task_key = e.task.dump();
  const std::unique_ptr<Task> task = make_task_from_json(e.task);  // one task for every variant
  for (const Variant& v : e.variants) {
    if (steps_to_do.count(v.label) == 0) continue;
    // The mean training length, or the next the task accepts (Dyck: even lengths).
    const int64_t len = std::min(
        round_up_to_step(task->length_range(), mean_training_length(v.train)), v.train.max_len);
    const std::string key = fmt::format("{}|{}|{}|{}|{}", task_key, to_json(v.model).dump(),
                                        v.train.batch, len, v.train.threads);
    if (rate_of.count(key) == 0) {
      const BenchPreset preset{v.label, v.model, v.train.batch, len};
      rate_of[key] =
          run_train_bench(preset, v.train.threads, 2, 10, 0.3, task.get(), len).steps_per_s;
    }
    t.seconds += static_cast<double>(steps_to_do[v.label]) / rate_of[key];
    t.longest_run_seconds =
        std::max(t.longest_run_seconds, static_cast<double>(most_left[v.label]) / rate_of[key]);
    t.rates +=
        fmt::format("{}{} {}", t.rates.empty() ? "" : ", ", v.label, rate_text(rate_of[key]));
    // Evaluation: each length's samples at the time of one sequence, for every weights.
    double per_run = 0;
    for (int64_t n : e.eval.lengths) {
      const std::string eval_key =
          fmt::format("eval|{}|{}|{}|{}", task_key, to_json(v.model).dump(), n, v.train.threads);
      if (rate_of.count(eval_key) == 0) rate_of[eval_key] = seconds_per_sequence(v, *task, n);
      per_run += rate_of[eval_key] * static_cast<double>(e.eval.samples);
    }
    t.eval_seconds += per_run * static_cast<double>(e.weights.size()) * runs_to_do[v.label];
    if (e.probe_variance) {
      t.probe_seconds +=
          variance_probe_seconds(e, v, *task, task_key, rate_of) * runs_to_do[v.label];
    }
  }
  t.seconds /= t.at_once;
  t.eval_seconds /= t.at_once;
  t.probe_seconds /= t.at_once;
  return t;
}

std::string dry_run_report(const toml::table& doc, const Experiment& e, const fs::path& out,
                           int jobs, bool estimate) {
  std::string report = fmt::format("{} (from {}{}), resolved:\n", e.name, e.file,
                                   e.tier.empty() ? "" : ", tier " + e.tier);
  report += resolved_values(doc, e.file);
  const size_t runs = e.variants.size() * e.seeds.size();
  report += fmt::format("\n{} runs ({} variants × {} seeds), results in {}:\n", runs,
                        e.variants.size(), e.seeds.size(), out.string());
  for (const Variant& v : e.variants) {
    for (uint64_t seed : e.seeds) {
      const RunState r = run_state(v, seed, out);
      report += fmt::format("  {:<28} {:<36} {}\n", fmt::format("{} seed {}", v.label, seed),
                            fs::relative(r.dir, out).string(), r.state);
    }
  }
  const TrainingEstimate t = estimate_training(e, out, jobs, estimate);
  if (t.to_do == 0) return report + "\nnothing to train: every run has ended\n";
  if (!estimate) return report;
  report += fmt::format(
      "\n{} runs to do: about {} of training at {} at a time, the longest run {} (steps/s "
      "measured here at the mean training length: {}), {}{} of evaluation (one sequence timed "
      "at each length)",
      t.to_do, training_duration(t.seconds), t.at_once, training_duration(t.longest_run_seconds),
      t.rates, e.probe_variance ? "" : "and ", training_duration(t.eval_seconds));
  if (e.probe_variance) {
    report += fmt::format(" and {} of the variance probe (one sequence timed at each probe length)",
                          training_duration(t.probe_seconds));
  }
  if (!t.untimed_probes.empty()) report += "; " + probes_on_top(t.untimed_probes);
  return report + "\n";
}

}  // namespace normlab
