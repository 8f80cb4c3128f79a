// `normlab bench train --preset minimal|small [--threads N] [--json]`: training throughput
// next to this CPU's single-core SGEMM peak (docs/performance.md).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "normlab/model_config.hpp"
#include "normlab/train_bench.hpp"

namespace normlab::cli {

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Benchmarks (figures, not tests)");
  cmd->require_subcommand(1);
  auto* train = cmd->add_subcommand("train", "Training steps per second on a preset model");
  auto preset = std::make_shared<std::string>("minimal");
  auto threads = std::make_shared<int>(1);
  auto json = std::make_shared<bool>(false);
  auto seconds = std::make_shared<double>(3.0);
  train->add_option("--preset", *preset, "Model and batch preset")
      ->check(CLI::IsMember(bench_preset_names()))
      ->capture_default_str();
  train->add_option("--threads", *threads, "Threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  train->add_option("--seconds", *seconds, "Minimum timed seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train->add_flag("--json", *json, "Print one JSON object");
  train->callback([=] {
    const BenchPreset p = bench_preset(*preset);
    const TrainBenchResult r = run_train_bench(p, *threads, 20, 50, *seconds);
    nlohmann::ordered_json j{{"preset", p.name},
                             {"threads", *threads},
                             {"batch", p.batch},
                             {"seq_len", p.len},
                             {"steps", r.steps},
                             {"seconds", r.seconds},
                             {"steps_per_s", r.steps_per_s},
                             {"tokens_per_s", r.tokens_per_s},
                             {"flops_per_step", r.flops_per_step},
                             {"gflops", r.gflops},
                             {"sgemm_peak_gflops", r.sgemm_peak_gflops},
                             {"fraction_of_sgemm_peak", r.fraction_of_peak}};
    if (*json) {
      std::printf("%s\n", j.dump().c_str());
      return;
    }
    std::printf("preset %s (%s, norm %s, B=%lld, T=%lld), %d thread(s)\n", p.name.c_str(),
                scheme_label(p.model).c_str(), to_string(p.model.norm).c_str(),
                static_cast<long long>(p.batch), static_cast<long long>(p.len), *threads);
    std::printf("  %.1f steps/s, %.0f tokens/s, %.2f model GFLOP/s\n", r.steps_per_s,
                r.tokens_per_s, r.gflops);
    std::printf("  OpenBLAS single-core SGEMM peak %.1f GFLOP/s; model at %.1f%% of it\n",
                r.sgemm_peak_gflops, 100 * r.fraction_of_peak);
  });
}

}  // namespace normlab::cli
