// `normlab bench train --preset minimal|small|depth [--threads N] [--json]`: training throughput
// next to this CPU's single-core SGEMM peak (docs/performance.md). `--scheme`,
// `--block-size`, `--layers`, `--width` and `--pos` change the preset's model (e.g. the cost of
// block_attnres against pre at the same size, docs/attnres.md).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/bench/eval_bench.hpp"
#include "normlab/bench/train_bench.hpp"
#include "normlab/core/machine.hpp"
#include "normlab/core/threads.hpp"
#include "normlab/model/model_config.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/train_config.hpp"
#include "validators.hpp"

#include <unistd.h>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace normlab::cli {

namespace {

// Runs bench/twin.py --bench-eval on the same checkpoint and inputs; null JSON when the twin
// cannot run (python3-torch absent).
nlohmann::json run_twin_eval(const std::filesystem::path& dir, int repeats) {
  const std::string script = std::string(NORMLAB_SOURCE_DIR) + "/bench/twin.py";
  const std::string out = (dir / "twin.json").string();
  const std::string cmd = "/usr/bin/python3 '" + script + "' --bench-eval '" + dir.string() +
                          "' '" + (dir / "tokens.safetensors").string() + "' --repeats " +
                          std::to_string(repeats) + " > '" + out + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    std::fprintf(stderr, "twin not run: %s\n", ss.str().c_str());
    return nullptr;
  }
  std::ifstream in(out);
  return nlohmann::json::parse(in);
}

void add_eval_bench(CLI::App* cmd) {
  auto* ev = cmd->add_subcommand(
      "eval", "Evaluation speed of a one-layer model at long lengths, against the PyTorch twin");
  auto items = std::make_shared<int64_t>(16384);
  auto samples = std::make_shared<int64_t>(4);
  auto repeats = std::make_shared<int>(2);
  auto json = std::make_shared<bool>(false);
  auto no_twin = std::make_shared<bool>(false);
  ev->add_option("--len", *items, "Items per sequence (task length n; T = n + 1)")
      ->check(integer_in(1, int64_t{1} << 20))
      ->capture_default_str();
  ev->add_option("--samples", *samples, "Sequences")
      ->check(integer_in(1, 1000))
      ->capture_default_str();
  ev->add_option("--repeats", *repeats, "Timings per sequence (best kept)")
      ->check(integer_in(1, 100))
      ->capture_default_str();
  ev->add_flag("--json", *json, "Print one JSON object");
  ev->add_flag("--no-twin", *no_twin, "Do not run the PyTorch twin");
  ev->callback([=] {
    set_num_threads(1);
    char templ[] = "/tmp/normlab_evalbench_XXXXXX";
    if (::mkdtemp(templ) == nullptr) throw InputError("cannot create a temporary directory");
    const std::filesystem::path dir(templ);
    const EvalBenchResult r = run_eval_bench(dir, *items, *samples, *repeats);
    nlohmann::ordered_json j{
        {"model", "argmax_retrieval, D=64, 1 layer, 1 head, MLP 4x, post_attn"},
        {"seq_len", r.seq_len},
        {"sequences", r.sequences},
        {"threads", 1},
        {"normlab_seconds_per_sequence", r.seconds_per_sequence}};
    const nlohmann::json twin = *no_twin ? nlohmann::json(nullptr) : run_twin_eval(dir, *repeats);
    if (!twin.is_null()) {
      // Per sequence: max |a − t| over the logits / max |t| (docs/twin.md's measure).
      double worst = 0;
      for (size_t b = 0; b < r.last.size(); ++b) {
        double diff = 0, scale = 1e-30;
        for (size_t v = 0; v < r.last[b].size(); ++v) {
          const double a = r.last[b][v], t = twin["last_logits"][b][v].get<double>();
          diff = std::max(diff, std::abs(a - t));
          scale = std::max(scale, std::abs(t));
        }
        worst = std::max(worst, diff / scale);
      }
      const double ts = twin["seconds_per_sequence"].get<double>();
      j["twin_seconds_per_sequence"] = ts;
      j["speedup"] = ts / r.seconds_per_sequence;
      j["max_relative_logit_difference"] = worst;
    }
    std::filesystem::remove_all(dir);
    if (*json) {
      std::printf("%s\n", j.dump().c_str());
      return;
    }
    std::printf("one-layer model, T = %lld, %lld sequences, 1 thread\n",
                static_cast<long long>(r.seq_len), static_cast<long long>(r.sequences));
    std::printf("  normlab (streaming, query row only): %.4f s per sequence\n",
                r.seconds_per_sequence);
    if (j.contains("speedup")) {
      std::printf("  PyTorch twin (full forward):          %.4f s per sequence\n",
                  j["twin_seconds_per_sequence"].get<double>());
      std::printf("  speedup %.1fx; logits agree to %.2g (max relative difference)\n",
                  j["speedup"].get<double>(), j["max_relative_logit_difference"].get<double>());
    }
  });
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Benchmarks (figures, not tests)");
  cmd->require_subcommand(1);
  add_eval_bench(cmd);
  auto* train = cmd->add_subcommand("train", "Training steps per second on a preset model");
  auto preset = std::make_shared<std::string>("minimal");
  auto threads = std::make_shared<int>(1);
  auto json = std::make_shared<bool>(false);
  auto seconds = std::make_shared<double>(3.0);
  auto scheme = std::make_shared<std::string>();
  auto block_size = std::make_shared<int>(0);
  auto layers = std::make_shared<int>(0);
  auto width = std::make_shared<int>(0);
  auto pos = std::make_shared<std::string>();
  train->add_option("--preset", *preset, "Model and batch preset")
      ->check(CLI::IsMember(bench_preset_names()))
      ->capture_default_str();
  train->add_option("--threads", *threads, "Threads")
      ->check(integer_in(train_limits::threads))
      ->capture_default_str();
  train->add_option("--seconds", *seconds, "Minimum timed seconds")
      ->check(real_in(train_limits::positive))
      ->capture_default_str();
  train->add_option("--scheme", *scheme, "Replace the preset's scheme")
      ->check(CLI::IsMember(scheme_names()));
  train
      ->add_option("--block-size", *block_size, "Sublayers per block (with --scheme block_attnres)")
      ->check(integer_in(1, 1 << 16));
  train->add_option("--layers", *layers, "Replace the preset's number of layers")
      ->check(integer_in(1, 1 << 12));
  train->add_option("--width", *width, "Replace the preset's width D")
      ->check(integer_in(1, 1 << 16));
  train->add_option("--pos", *pos, "Replace the preset's positional encoding")
      ->check(CLI::IsMember(pos_encoding_names()));
  train->add_flag("--json", *json, "Print one JSON object");
  auto task_name = std::make_shared<std::string>();
  auto task_len = std::make_shared<int64_t>(0);
  train->add_option("--task", *task_name,
                    "Train on this task's batches (default parameters) instead of random tokens");
  train->add_option("--task-len", *task_len,
                    "Task length n (default: the longest with sequence length <= the preset's)");
  train->callback([=] {
    BenchPreset p = bench_preset(*preset);
    if (!scheme->empty()) p.model.scheme = parse_scheme(*scheme);
    if (*block_size > 0) {
      if (p.model.scheme != Scheme::block_attnres) {
        throw UsageError("--block-size applies only to --scheme block_attnres");
      }
      p.model.block_size = *block_size;
    }
    if (*layers > 0) p.model.layers = *layers;
    if (*width > 0) p.model.width = *width;
    if (!pos->empty()) p.model.pos = parse_pos_encoding(*pos);
    validate(p.model);
    std::unique_ptr<Task> task;
    int64_t n = *task_len;
    if (!task_name->empty()) {
      task = make_task_from_json(nlohmann::json{{"name", *task_name}});
      if (n == 0) {  // the longest valid task length whose sequence fits the preset's length
        const LengthRange range = task->length_range();
        for (int64_t k = range.min; k <= std::min<int64_t>(range.max, p.len); k += range.step) {
          if (task->sequence_length(k) <= p.len) n = k;
        }
      }
      task->check_length(n);
    }
    TrainBenchResult r = run_train_bench(p, *threads, 20, 50, *seconds, task.get(), n);
    if (!task) add_sgemm_peak(r);
    // With a task: the same model (the task's vocabulary) on random tokens, for the ratio.
    TrainBenchResult base;
    if (task) {
      BenchPreset same = p;
      same.model.vocab = task->vocab();
      same.len = task->sequence_length(n);
      base = run_train_bench(same, *threads, 20, 50, *seconds);
    }
    nlohmann::ordered_json j{{"preset", p.name},
                             {"scheme", scheme_label(p.model)},
                             {"layers", p.model.layers},
                             {"width", p.model.width},
                             {"pos", to_string(p.model.pos)},
                             {"task", task ? task->label() : "random tokens"},
                             {"task_len", n},
                             {"threads", *threads},
                             {"batch", p.batch},
                             {"seq_len", p.len},
                             {"steps", r.steps},
                             {"seconds", r.seconds},
                             {"steps_per_s", r.steps_per_s},
                             {"cpu_seconds_per_step", r.cpu_seconds_per_step},
                             {"tokens_per_s", r.tokens_per_s},
                             {"flops_per_step", r.flops_per_step},
                             {"gflops", r.gflops},
                             {"openblas_sgemm_gflops", r.openblas_sgemm_gflops},
                             {"normlab_sgemm_gflops", r.normlab_sgemm_gflops},
                             {"sgemm_peak_gflops", r.sgemm_peak_gflops},
                             {"fraction_of_sgemm_peak", r.fraction_of_peak}};
    const MachineInfo machine = machine_info();
    j["cpu"] = machine.cpu;
    j["cpu_family"] = machine.family;
    j["cpu_model"] = machine.model;
    j["products"] = machine.products;
    j["openblas_core"] = machine.openblas_core;
    if (task) {
      for (const char* key :
           {"flops_per_step", "gflops", "openblas_sgemm_gflops", "normlab_sgemm_gflops",
            "sgemm_peak_gflops", "fraction_of_sgemm_peak"}) {
        j.erase(key);
      }
      j["random_tokens_steps_per_s"] = base.steps_per_s;
      j["task_over_random_steps"] = r.steps_per_s / base.steps_per_s;
    }
    if (*json) {
      std::printf("%s\n", j.dump().c_str());
      return;
    }
    std::printf("%s", describe_machine(machine).c_str());
    std::printf("preset %s (%s, norm %s, pos %s, L=%d, D=%d, B=%lld, T=%lld), %s, %d thread(s)\n",
                p.name.c_str(), scheme_label(p.model).c_str(), to_string(p.model.norm).c_str(),
                to_string(p.model.pos).c_str(), p.model.layers, p.model.width,
                static_cast<long long>(p.batch),
                static_cast<long long>(task ? task->sequence_length(n) : p.len),
                task ? task->label().c_str() : "random tokens", *threads);
    if (!task) {
      std::printf("  %.1f steps/s, %.0f tokens/s, %.2f model GFLOP/s\n", r.steps_per_s,
                  r.tokens_per_s, r.gflops);
      std::printf(
          "  single-core SGEMM peak %.1f GFLOP/s (OpenBLAS %.1f, normlab %.1f); model at %.1f%% "
          "of it\n",
          r.sgemm_peak_gflops, r.openblas_sgemm_gflops, r.normlab_sgemm_gflops,
          100 * r.fraction_of_peak);
    } else {
      // Only scored rows reach the unembedding, so model FLOPs are not comparable here.
      std::printf("  %.1f steps/s, %.0f tokens/s (batch generation included)\n", r.steps_per_s,
                  r.tokens_per_s);
      std::printf(
          "  same model on random tokens (all positions scored): %.1f steps/s; task/random "
          "= %.2f\n",
          base.steps_per_s, r.steps_per_s / base.steps_per_s);
    }
  });
}

}  // namespace normlab::cli
