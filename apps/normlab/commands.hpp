// One function per subcommand; each lives in its own cmd_*.cpp file and registers its options
// and its callback on the root application.
#pragma once

#include <CLI/CLI.hpp>

namespace normlab::cli {

void add_version_command(CLI::App& app);
void add_init_command(CLI::App& app);
void add_forward_command(CLI::App& app);
void add_grads_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_train_steps_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_particles_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_probe_command(CLI::App& app);
void add_tasks_command(CLI::App& app);
void add_claims_command(CLI::App& app);
void add_results_command(CLI::App& app);
void add_merge_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_schemes_command(CLI::App& app);

}  // namespace normlab::cli
