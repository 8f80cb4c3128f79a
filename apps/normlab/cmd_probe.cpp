// `normlab probe KIND`: the diagnostics the papers argue from (docs/probes.md), on a trained
// run or a fresh checkpoint of any scheme.
//   variance    attention-output spread against length, its log-log slope, histograms
//   dispersion  max attention weight and attention entropy against length
//   depth       per-layer stream and block-output norms, gradient norms, token collapse
//   dilution    set_complement: logit gap of absent against present elements, against s
// Each writes PREFIX.csv, PREFIX.json and PREFIX.png (variance also PREFIX_fit.csv,
// PREFIX_hist.csv, PREFIX_hist.png; depth PREFIX_params.csv, PREFIX_blocks.csv; dilution
// PREFIX_fit.csv) and prints a short table.
//
// --checkpoint accepts a run directory, its final/ directory, or a bare checkpoint
// (checkpoint_source.hpp); --input task needs a run or --task.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "checkpoint_source.hpp"
#include "commands.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/core/threads.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/progress.hpp"
#include "normlab/probes/depth_probe.hpp"
#include "normlab/probes/dilution_probe.hpp"
#include "normlab/probes/dispersion_probe.hpp"
#include "normlab/probes/probe_plots.hpp"
#include "normlab/probes/variance_probe.hpp"
#include "normlab/train/train_config.hpp"
#include "normlab/train/trainer.hpp"
#include "validators.hpp"

namespace normlab::cli {
namespace fs = std::filesystem;

namespace {

std::vector<int64_t> default_lengths() {
  std::vector<int64_t> v;
  for (int k = 1; k <= 14; ++k) v.push_back(int64_t{1} << k);
  return v;
}

struct ProbeOptions {
  std::string kind;
  std::string checkpoint;
  std::string weights = "raw";
  std::string input = "auto";
  std::string task;
  std::vector<std::string> task_params;
  // variance, dispersion
  std::vector<int64_t> lengths = default_lengths();
  int64_t samples = 256;
  int64_t query_rows = 1;
  int64_t max_memory_mib = 256;
  std::vector<int64_t> hist_lengths;  // variance
  std::vector<int64_t> sizes;         // dilution (empty: 1 .. v − 1)
  // depth
  int64_t batch = 32;
  int64_t seq_len = 256;
  int64_t task_length = 0;
  int block_size = 0;  // block sums of an additive scheme (0: the model's block_size)
  uint64_t seed = SweepConfig{}.seed;
  int threads = 1;
  std::string out;
  bool no_plot = false;
  CLI::App* cmd = nullptr;
};

bool given(const ProbeOptions& o, const std::string& option) {
  return o.cmd->count(option) > 0;
}

void write_outputs(const std::string& prefix,
                   const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [suffix, contents] : files) write_file_atomic(prefix + suffix, contents);
}

void run_probe(const ProbeOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  // `probe` allows extras (to name an unknown KIND), so they arrive there.
  const std::vector<std::string> rest = o.cmd->get_parent()->remaining();
  if (!rest.empty()) {
    throw UsageError(fmt::format(
        "unexpected argument '{}'; run 'normlab probe {} --help' for the allowed options",
        rest.front(), o.kind));
  }
  set_num_threads(o.threads);
  const CheckpointSource source = resolve_checkpoint(o.checkpoint, o.weights);
  // auto: the task's inputs for a model that has a task (a run, or --task), else random ones.
  const bool has_task = !o.task.empty() || !source.run_dir.empty();
  const bool task_input =
      o.input == "task" || o.kind == "dilution" || (o.input == "auto" && has_task);
  if (!task_input && (!o.task.empty() || !o.task_params.empty())) {
    throw UsageError(
        "--task and --task-param choose the inputs of --input task; "
        "the probe's input is random tokens");
  }
  if (o.kind == "depth") {
    if (task_input && given(o, "--seq-len")) {
      throw UsageError(
          "--seq-len sets the length of random inputs; with --input task give "
          "--task-length");
    }
    if (!task_input && given(o, "--task-length")) {
      throw UsageError("--task-length applies to --input task; random inputs take --seq-len");
    }
  }
  SourceTask task;
  if (task_input) task = resolve_task(source, o.checkpoint, o.task, o.task_params, true);
  if (o.kind == "dilution" && !is_set_complement(*task.task)) {
    throw UsageError(fmt::format("the dilution probe applies to set_complement only; {} is {}",
                                 o.checkpoint, task.task->label()));
  }
  auto model = load_source_model(source);
  const ModelConfig& c = model->config();
  if (task_input) check_task_vocab(*task.task, c.vocab);
  const ProbeInput input =
      task_input ? ProbeInput::from_task(*task.task) : ProbeInput::random(c.vocab);

  std::string suffix = source.weights == "raw" ? "" : "_" + source.weights;
  if (task_input && o.kind != "dilution") suffix += "_task";
  const std::string prefix =
      o.out.empty() ? (source.dir / ("probe_" + o.kind + suffix)).string() : o.out;
  nlohmann::json input_json = input.to_json();
  if (task_input) input_json["task"] = task.json;
  nlohmann::json j{{"probe", o.kind},
                   {"checkpoint", source.file.string()},
                   {"weights", source.weights},
                   {"scheme", scheme_label(c)},
                   {"model", to_json(c)},
                   {"input", input_json},
                   {"seed", o.seed},
                   {"threads", o.threads},
                   {"max_memory_mib", o.max_memory_mib}};
  std::vector<std::pair<std::string, std::string>> files;
  std::string table;
  std::function<std::vector<std::string>()> draw;  // the plots, drawn after the data files

  // Per length, with an ETA (set once the lengths are known).
  std::unique_ptr<ItemProgress> length_progress;
  auto progress = [&](const SweepLength& r) {
    length_progress->item_done(fmt::format("length {} (T = {})", r.length, r.seq_len));
  };
  auto expect_lengths = [&](const std::vector<int64_t>& lengths) {
    std::vector<double> costs;
    for (int64_t n : lengths) costs.push_back(forward_cost(input.sequence_length(n), c.width));
    length_progress = std::make_unique<ItemProgress>(costs);
  };
  if (o.kind == "dilution") {
    DilutionConfig dc;
    dc.sizes = o.sizes;
    dc.samples = o.samples;
    dc.seed = o.seed;
    validate_dilution(c, *task.task, dc);  // every bad size before any work
    std::fprintf(stderr,
                 "probe dilution: %s (%s weights), scheme %s; %s, %lld sequences per size, "
                 "sizes %lld..%lld\n",
                 source.file.string().c_str(), source.weights.c_str(), scheme_label(c).c_str(),
                 task.task->label().c_str(), static_cast<long long>(o.samples),
                 static_cast<long long>(dc.sizes.front()), static_cast<long long>(dc.sizes.back()));
    const DilutionResult r =
        run_dilution_probe(*model, *task.task, dc, [](int64_t s, double seconds) {
          std::fprintf(stderr, "  s = %lld done in %.3f s\n", static_cast<long long>(s), seconds);
        });
    j["samples"] = o.samples;
    j["results"] = dilution_json(r);
    files = {{".csv", dilution_csv(r)}, {"_fit.csv", dilution_fit_csv(r)}};
    table = format_dilution_table(r);
    draw = [r, prefix] { return plot_dilution(r, prefix); };
  } else if (o.kind == "variance" || o.kind == "dispersion") {
    SweepConfig sweep;
    // Task inputs default to the lengths the task has (Set Complement(16) stops at 15).
    sweep.lengths =
        task_input && !given(o, "--lengths") ? default_probe_lengths(*task.task) : o.lengths;
    sweep.samples = o.samples;
    sweep.query_rows = o.query_rows;
    sweep.seed = o.seed;
    sweep.max_memory = o.max_memory_mib << 20;
    VarianceConfig vc;
    vc.sweep = sweep;
    vc.hist_lengths = o.hist_lengths;
    // Every bad length is reported before any work.
    if (o.kind == "variance") {
      validate_variance(c, input, vc);
    } else {
      validate_sweep(c, input, sweep);
    }
    std::fprintf(stderr,
                 "probe %s: %s (%s weights), scheme %s; %s, %lld sequences per length, "
                 "last %lld measured position(s)\n",
                 o.kind.c_str(), source.file.string().c_str(), source.weights.c_str(),
                 scheme_label(c).c_str(), input.label().c_str(), static_cast<long long>(o.samples),
                 static_cast<long long>(o.query_rows));
    j["samples"] = o.samples;
    j["query_rows"] = o.query_rows;
    expect_lengths(sweep.lengths);
    if (o.kind == "variance") {
      const VarianceResult r = run_variance_probe(*model, input, vc, progress);
      j["results"] = variance_json(r);
      files = {{".csv", variance_csv(r)},
               {"_fit.csv", variance_fit_csv(r)},
               {"_hist.csv", variance_hist_csv(r)}};
      table = format_variance_table(r);
      draw = [r, prefix] { return plot_variance(r, prefix); };
    } else {
      const DispersionResult r = run_dispersion_probe(*model, input, sweep, progress);
      j["results"] = dispersion_json(r);
      files = {{".csv", dispersion_csv(r)}};
      table = format_dispersion_table(r);
      draw = [r, prefix] { return plot_dispersion(r, prefix); };
    }
  } else {
    int64_t n = o.seq_len;
    if (task_input) {
      if (o.task_length > 0) {
        n = o.task_length;
      } else if (!source.run_dir.empty()) {
        n = read_run_spec(source.run_dir).train.max_len;  // the longest training length
      } else {
        throw UsageError(
            "give --task-length: the checkpoint is not a run, so its training "
            "length is unknown");
      }
    }
    input.check_length(n);
    const int64_t T = input.sequence_length(n);
    if (c.pos == PosEncoding::learned && T > c.max_len) {
      throw UsageError(fmt::format(
          "sequence length {} exceeds the model's learned positions (max-len {})", T, c.max_len));
    }
    Rng rng(o.seed);
    const Batch batch = input.make_batch(n, o.batch, rng, true);
    std::fprintf(stderr, "probe depth: %s (%s weights), scheme %s; %s, batch %lld x %lld\n",
                 source.file.string().c_str(), source.weights.c_str(), scheme_label(c).c_str(),
                 input.label().c_str(), static_cast<long long>(o.batch), static_cast<long long>(T));
    // A run trained with its loss over the task's classes (train.loss_over) is probed with
    // that loss on its task's inputs; random inputs and bare checkpoints take the vocabulary.
    std::optional<TokenBlock> over;
    if (task_input && !source.run_dir.empty()) {
      over = loss_logits(read_run_spec(source.run_dir).train, *task.task);
    }
    if (over) {
      std::fprintf(stderr, "  the loss over the task's classes, token ids %d to %d (loss_over)\n",
                   over->first, over->first + over->count - 1);
      j["loss_over"] = "classes";
    }
    const DepthResult r =
        run_depth_probe(*model, batch, o.max_memory_mib << 20, o.block_size, over);
    j["length"] = n;
    j["batch"] = o.batch;
    j["results"] = depth_json(r);
    files = {{".csv", depth_csv(r)},
             {"_params.csv", depth_params_csv(r)},
             {"_blocks.csv", depth_blocks_csv(r)}};
    table = format_depth_table(r);
    draw = [r, prefix] { return plot_depth(r, prefix); };
  }
  j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  files.emplace_back(".json", j.dump(2) + "\n");
  write_outputs(prefix, files);
  const std::vector<std::string> plots = o.no_plot ? std::vector<std::string>() : draw();
  std::printf("%s", table.c_str());
  std::string list;
  for (const auto& [s, contents] : files) list += (list.empty() ? "" : ", ") + prefix + s;
  for (const std::string& p : plots) list += ", " + p;
  std::printf("wrote %s\n", list.c_str());
}

void add_common_options(CLI::App* cmd, ProbeOptions& o) {
  const bool dilution = o.kind == "dilution";  // always the task's inputs, always small
  cmd->add_option("--checkpoint", o.checkpoint,
                  "Run directory, its final/, a checkpoint, or a weights file")
      ->required();
  cmd->add_option("--weights", o.weights, "Which weights of a run")
      ->check(CLI::IsMember({"raw", "ema", "bema"}))
      ->capture_default_str();
  if (!dilution) {
    cmd->add_option("--input", o.input,
                    "task: the task's inputs; random: i.i.d. uniform tokens; auto: the task's "
                    "for a run (or with --task), else random")
        ->check(CLI::IsMember({"auto", "task", "random"}))
        ->capture_default_str();
  }
  cmd->add_option("--task", o.task,
                  dilution ? "Task (set_complement; needed for a checkpoint that is not a run)"
                           : "Task of --input task (needed for a checkpoint that is not a run)");
  cmd->add_option("--task-param", o.task_params, "Task parameter KEY=VALUE (repeatable)");
  cmd->add_option("--seed", o.seed, "Input seed")->check(seed_value())->capture_default_str();
  cmd->add_option("--threads", o.threads, "Threads")
      ->check(integer_in(train_limits::threads))
      ->capture_default_str();
  cmd->add_option("--out", o.out,
                  "Output prefix (default: beside the weights, probe_KIND[_WEIGHTS][_task])")
      ->check(non_empty_path());
  cmd->add_flag("--no-plot", o.no_plot, "Write no PNG");
  if (dilution) return;
  cmd->add_option("--max-memory", o.max_memory_mib,
                  "MiB of activations per pass through the model (bounds the sequences per "
                  "pass)")
      ->check(integer_in(16, int64_t{1} << 20))
      ->capture_default_str();
}

void add_sweep_options(CLI::App* cmd, ProbeOptions& o) {
  cmd->add_option("--lengths", o.lengths,
                  "Lengths: sequence lengths N (random input) or task lengths (task input; default "
                  "the powers of two up to 2^14 the task has, and its longest)")
      ->delimiter(',')
      ->check(integer_in(1, int64_t{1} << 24))
      ->capture_default_str();
  cmd->add_option("--samples", o.samples, "Sequences per length")
      ->check(integer_in(1, int64_t{1} << 24))
      ->capture_default_str();
  cmd->add_option("--query-rows", o.query_rows,
                  "Measured positions per sequence: the last k (task input: the last k scored)")
      ->check(integer_in(1, int64_t{1} << 24))
      ->capture_default_str();
}

}  // namespace

void add_probe_command(CLI::App& app) {
  auto* probe = app.add_subcommand(
      "probe", "Probe a checkpoint: variance, dispersion, depth or dilution (docs/probes.md)");
  // Not require_subcommand(): an unknown KIND should be named in the error, so extras are
  // allowed here and checked after parsing.
  probe->allow_extras();
  probe->final_callback([probe] {
    const std::vector<std::string> rest = probe->remaining();
    if (probe->get_subcommands().empty()) {
      if (rest.empty()) {
        throw UsageError(
            "name a probe: normlab probe KIND --checkpoint DIR; KIND is variance, "
            "dispersion, depth or dilution");
      }
      throw UsageError(fmt::format(
          "unknown probe '{}'; allowed: variance, dispersion, depth, dilution", rest.front()));
    }
  });
  struct Kind {
    const char* name;
    const char* help;
  };
  for (const Kind k :
       {Kind{"variance", "Attention-output std against length, log-log slope, histograms"},
        Kind{"dispersion", "Max attention weight and entropy against length"},
        Kind{"depth", "Per-layer norms, gradient norms and token collapse on a batch"},
        Kind{"dilution", "set_complement: logit gap of absent against present tokens against s"}}) {
    auto* cmd = probe->add_subcommand(k.name, k.help);
    cmd->allow_extras(false);  // not inherited from `probe`
    auto o = std::make_shared<ProbeOptions>();
    o->kind = k.name;
    o->cmd = cmd;
    // depth: a quarter of the 32 × 256 batch of an L = 32, D = 128 model per pass, under
    // 1 GiB, and few enough passes that small matrix products cost no time.
    if (o->kind == "depth") o->max_memory_mib = 1024;
    add_common_options(cmd, *o);
    if (o->kind == "depth") {
      cmd->add_option("--batch", o->batch, "Sequences in the batch")
          ->check(integer_in(1, 1 << 16))
          ->capture_default_str();
      cmd->add_option("--seq-len", o->seq_len, "Sequence length of random inputs")
          ->check(integer_in(2, 1 << 20))
          ->capture_default_str();
      cmd->add_option("--task-length", o->task_length,
                      "Task length of --input task (default: the run's longest training length)")
          ->check(integer_in(1, int64_t{1} << 24));
      cmd->add_option("--block-size", o->block_size,
                      "Sublayers per block of the block sums of an additive scheme (default: "
                      "the model's block_size; AttnRes schemes use their own blocks)")
          ->check(integer_in(1, 1 << 16));
    } else if (o->kind == "dilution") {
      cmd->add_option("--sizes", o->sizes, "Input sizes s (default: 1 .. v-1)")
          ->delimiter(',')
          ->check(integer_in(1, int64_t{1} << 24));
      cmd->add_option("--samples", o->samples, "Sequences per size")
          ->check(integer_in(1, int64_t{1} << 24))
          ->capture_default_str();
    } else {
      add_sweep_options(cmd, *o);
      if (o->kind == "variance") {
        cmd->add_option("--hist-lengths", o->hist_lengths,
                        "Two probed lengths for histograms (default: 16 or the shortest, and "
                        "the longest)")
            ->delimiter(',')
            ->expected(1, 2)
            ->check(integer_in(1, int64_t{1} << 24));
      }
    }
    cmd->callback([o] { run_probe(*o); });
  }
}

}  // namespace normlab::cli
