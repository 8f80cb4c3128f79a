// `normlab train RUN_DIR [--resume] [--checkpoint-minutes M]`: trains the run described by
// RUN_DIR/run.json (written by `normlab run` for every scheme and seed of an experiment), then
// evaluates it if the run has evaluation settings. With --resume, continues from the run's last
// checkpoint and reaches the same final weights as an uninterrupted run; a run whose training
// had finished is only evaluated. A checkpoint is written every checkpoint_every steps and at
// least every M minutes (default 10).
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "commands.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/base/interrupts.hpp"
#include "normlab/train/train_config.hpp"
#include "normlab/train/trainer.hpp"
#include "validators.hpp"

namespace normlab::cli {

void add_train_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "Train one prepared run directory (see `normlab run`)");
  auto dir = std::make_shared<std::string>();
  auto resume = std::make_shared<bool>(false);
  auto kill_at = std::make_shared<int64_t>(0);
  auto interrupt_at = std::make_shared<int64_t>(0);
  auto parent = std::make_shared<pid_t>(0);
  auto checkpoint_minutes = std::make_shared<double>(TrainHooks{}.checkpoint_seconds / 60);
  cmd->add_option("RUN_DIR", *dir, "Run directory holding run.json")->required();
  cmd->add_flag("--resume", *resume,
                "Continue from the last checkpoint if there is one; a finished run is only "
                "evaluated");
  cmd->add_option("--checkpoint-minutes", *checkpoint_minutes,
                  "Also write a checkpoint once this many minutes of training have passed since "
                  "the last one, whatever checkpoint_every says (0: after every step)")
      ->check(real_in(train_limits::nonnegative))
      ->capture_default_str();
  // Internal options (tests, `normlab run`): accepted, not listed in --help.
  cmd->add_option("--kill-at-step", *kill_at,
                  "Testing aid: the process kills itself with SIGKILL after this step")
      ->group("");
  cmd->add_option("--interrupt-at-step", *interrupt_at,
                  "Testing aid: the process sends itself SIGINT after this step")
      ->group("");
  cmd->add_option("--die-with-parent", *parent,
                  "The pid of `normlab run`, which started this process: stop when it ends, and "
                  "wait for a run's earlier trainer to stop instead of failing")
      ->group("");
  cmd->callback([=] {
    TrainHooks hooks;
    if (*parent != 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      // The parent ended before the line above. Compared with its pid, not with 1: an orphan
      // goes to the nearest subreaper, which need not be init.
      if (::getppid() != *parent) return;
      // A trainer the previous `normlab run` of this folder started may still be saving its
      // checkpoint after that process was killed.
      hooks.wait_for_run_lock = true;
    }
    hooks.progress = ::isatty(2) != 0;
    hooks.checkpoint_seconds = *checkpoint_minutes * 60;
    hooks.kill_at_step = *kill_at;
    hooks.interrupt_at_step = *interrupt_at;
    // The same aid for runs `normlab run` starts (tests/experiment/interrupt_test.cpp).
    if (const char* at = std::getenv("NORMLAB_TEST_INTERRUPT_AT_STEP"); at != nullptr) {
      hooks.interrupt_at_step = std::atoll(at);
    }
    hooks.stop_on_interrupt = true;
    catch_interrupts();
    const RunOutcome r = train_run(*dir, *resume, hooks);
    const int signal = interrupt_signal();
    release_interrupts();  // evaluation is not resumable: a signal ends it at once
    if (r.status == RunStatus::interrupted) {
      throw Interrupted(fmt::format(
          "{}: stopped by {} after step {}, saved there; `normlab train {} --resume` continues it",
          *dir, interrupt_name(signal), r.steps, *dir));
    }
    if (r.status == RunStatus::diverged) {
      throw InputError(fmt::format("{}: {}", *dir, r.message));
    }
    if (r.trained_before) {
      std::printf("%s: trained before (%lld steps, last loss %.5f); evaluating\n", dir->c_str(),
                  static_cast<long long>(r.steps), r.last_loss);
    } else {
      std::printf("%s: %lld steps, last loss %.5f, %.1f s\n", dir->c_str(),
                  static_cast<long long>(r.steps), r.last_loss, r.seconds);
    }
    evaluate_run(*dir, hooks.progress);
  });
}

}  // namespace normlab::cli
