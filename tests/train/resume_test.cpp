// A run killed with SIGKILL and resumed reaches final weights bit-identical to an
// uninterrupted run, with the same periodic validation losses, whether its last checkpoint is
// of a multiple of checkpoint_every or a timed one; periodic validation does not change
// training; a diverging run stops with its last good checkpoint kept.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "normlab/train/trainer.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::run_normlab;
using testing::slurp;
using testing::TempDir;

RunSpec small_run(Scheme scheme) {
  RunSpec spec;
  spec.label = "resume test";
  spec.task = {{"name", "set_complement"}, {"v", 8}, {"targets", "sampled"}};
  spec.model.vocab = 9;
  spec.model.width = 8;
  spec.model.heads = 2;
  spec.model.layers = 2;
  spec.model.scheme = scheme;
  spec.train.steps = 60;
  spec.train.batch = 16;
  spec.train.min_len = 1;
  spec.train.max_len = 6;
  spec.train.warmup = 5;
  spec.train.checkpoint_every = 10;
  spec.train.log_every = 1;
  spec.train.averaging.every = 4;
  spec.train.averaging.start = 3;
  spec.train.seed = 5;
  return spec;
}

std::vector<nlohmann::json> metrics_lines(const std::filesystem::path& file) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// The lines of metrics.jsonl that carry `key` ("loss": training lines, "val_loss": validation).
std::vector<nlohmann::json> lines_with(const std::filesystem::path& file, const char* key) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& j : metrics_lines(file)) {
    if (j.contains(key)) out.push_back(j);
  }
  return out;
}

// Periodic validation every 7 steps: at 0, 7, ..., 56 and at the end (60); the kill at 37
// falls between validations and the resume point (30) is not a validation step.
RunSpec with_validation(RunSpec spec) {
  spec.train.eval_every = 7;
  spec.train.eval_batches = 3;
  spec.train.eval_length = 5;
  return spec;
}

class Resume : public ::testing::TestWithParam<Scheme> {};

TEST_P(Resume, KilledAndResumedRunMatchesUninterruptedRun) {
  TempDir tmp;
  const RunSpec spec = with_validation(small_run(GetParam()));
  prepare_run(tmp / "whole", spec);
  prepare_run(tmp / "killed", spec);

  const auto whole = run_normlab({"train", (tmp / "whole").string()});
  ASSERT_TRUE(whole.exited && whole.exit_code == 0) << whole.describe();

  // Killed after step 37: the last checkpoint is step 30, so 7 steps are redone.
  const auto killed = run_normlab({"train", (tmp / "killed").string(), "--kill-at-step", "37"});
  ASSERT_FALSE(killed.exited) << killed.describe();
  ASSERT_EQ(killed.signal, SIGKILL);
  ASSERT_FALSE(std::filesystem::exists(tmp / "killed" / "final"));
  EXPECT_EQ(read_run_status(tmp / "killed"), RunStatus::running);

  const auto resumed = run_normlab({"train", (tmp / "killed").string(), "--resume"});
  ASSERT_TRUE(resumed.exited && resumed.exit_code == 0) << resumed.describe();
  EXPECT_EQ(read_run_status(tmp / "killed"), RunStatus::finished);

  for (const char* file : {"model.safetensors", "ema.safetensors", "bema.safetensors"}) {
    const std::string a = slurp(tmp / "whole" / "final" / file);
    const std::string b = slurp(tmp / "killed" / "final" / file);
    ASSERT_FALSE(a.empty());
    EXPECT_TRUE(a == b) << file << " differs between the uninterrupted and the resumed run";
  }
  // The averaged weights are not the raw ones (averaging really ran).
  EXPECT_NE(slurp(tmp / "whole" / "final" / "model.safetensors"),
            slurp(tmp / "whole" / "final" / "bema.safetensors"));

  // The metrics log of the resumed run has each step once, with the same losses.
  const auto a = lines_with(tmp / "whole" / "metrics.jsonl", "loss");
  const auto b = lines_with(tmp / "killed" / "metrics.jsonl", "loss");
  ASSERT_EQ(a.size(), 60u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(b[i]["step"], a[i]["step"]);
    EXPECT_EQ(b[i]["loss"], a[i]["loss"]) << "step " << a[i]["step"];
  }
  // And each validation step once, at the right steps, finite, with the same values.
  const auto va = lines_with(tmp / "whole" / "metrics.jsonl", "val_loss");
  const auto vb = lines_with(tmp / "killed" / "metrics.jsonl", "val_loss");
  const std::vector<int64_t> want = {0, 7, 14, 21, 28, 35, 42, 49, 56, 60};
  ASSERT_EQ(va.size(), want.size());
  ASSERT_EQ(vb.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(va[i]["step"].get<int64_t>(), want[i]);
    EXPECT_EQ(vb[i]["step"].get<int64_t>(), want[i]);
    ASSERT_TRUE(va[i]["val_loss"].is_number()) << va[i].dump();
    EXPECT_TRUE(std::isfinite(va[i]["val_loss"].get<double>()));
    EXPECT_EQ(vb[i]["val_loss"], va[i]["val_loss"]) << "step " << want[i];
  }
  // Training lowers the validation loss of this learnable task.
  EXPECT_LT(va.back()["val_loss"].get<double>(), va.front()["val_loss"].get<double>());
}

INSTANTIATE_TEST_SUITE_P(Schemes, Resume, ::testing::Values(Scheme::pre, Scheme::ngpt),
                         [](const auto& info) { return to_string(info.param); });

// --checkpoint-minutes 0 writes a checkpoint after every step whatever checkpoint_every (10)
// says: killed after step 37, the run has a checkpoint of step 37, where without it (a period
// no test reaches) it has one of step 30; resumed from 37, it ends with the uninterrupted
// run's final weights and logs each step once.
TEST(Resume, ATimedCheckpointFallsBetweenTheStepCheckpoints) {
  TempDir tmp;
  const RunSpec spec = small_run(Scheme::pre);
  for (const char* dir : {"whole", "by_steps", "timed"}) prepare_run(tmp / dir, spec);
  const auto whole = run_normlab({"train", (tmp / "whole").string()});
  ASSERT_TRUE(whole.exited && whole.exit_code == 0) << whole.describe();

  const std::pair<const char*, const char*> kills[] = {{"by_steps", "100000"}, {"timed", "0"}};
  for (const auto& [dir, minutes] : kills) {
    const auto killed = run_normlab(
        {"train", (tmp / dir).string(), "--checkpoint-minutes", minutes, "--kill-at-step", "37"});
    ASSERT_EQ(killed.signal, SIGKILL) << killed.describe();
  }
  EXPECT_EQ(checkpoint_step(tmp / "by_steps"), 30);
  EXPECT_EQ(checkpoint_step(tmp / "timed"), 37);

  const auto resumed = run_normlab({"train", (tmp / "timed").string(), "--resume"});
  ASSERT_TRUE(resumed.exited && resumed.exit_code == 0) << resumed.describe();
  for (const char* file : {"model.safetensors", "ema.safetensors", "bema.safetensors"}) {
    EXPECT_TRUE(slurp(tmp / "whole" / "final" / file) == slurp(tmp / "timed" / "final" / file))
        << file << " differs between the uninterrupted and the resumed run";
  }
  const auto a = lines_with(tmp / "whole" / "metrics.jsonl", "loss");
  const auto b = lines_with(tmp / "timed" / "metrics.jsonl", "loss");
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(b[i]["loss"], a[i]["loss"]) << "line " << i;

  const auto negative =
      run_normlab({"train", (tmp / "whole").string(), "--checkpoint-minutes", "-1"});
  EXPECT_TRUE(negative.exited && negative.exit_code == 2) << negative.describe();
}

TEST(Validation, PeriodicValidationDoesNotChangeTraining) {
  TempDir tmp;
  const RunSpec off = small_run(Scheme::pre);
  const RunSpec on = with_validation(off);
  prepare_run(tmp / "off", off);
  prepare_run(tmp / "on", on);
  for (const char* dir : {"off", "on"}) {
    const auto r = run_normlab({"train", (tmp / dir).string()});
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  }
  for (const char* file : {"model.safetensors", "ema.safetensors", "bema.safetensors"}) {
    EXPECT_TRUE(slurp(tmp / "off" / "final" / file) == slurp(tmp / "on" / "final" / file))
        << file << " differs with periodic validation on";
  }
  EXPECT_TRUE(lines_with(tmp / "off" / "metrics.jsonl", "val_loss").empty());
  const auto a = lines_with(tmp / "off" / "metrics.jsonl", "loss");
  const auto b = lines_with(tmp / "on" / "metrics.jsonl", "loss");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i]["loss"], b[i]["loss"]);
  // Off, run.json keeps the keys it had before periodic validation existed.
  EXPECT_FALSE(
      nlohmann::json::parse(slurp(tmp / "off" / "run.json"))["train"].contains("eval_every"));
  EXPECT_EQ(read_run_spec(tmp / "on").train.eval_length, 5);
}

TEST(Validation, TheSameBatchesEveryTime) {
  // A learning rate too small to move any float weight: every validation loss is the same
  // number, which it is only if the validation batches are the same every time.
  TempDir tmp;
  RunSpec spec = with_validation(small_run(Scheme::pre));
  spec.train.adam.lr = 1e-30;
  spec.train.averaging.start = 1000;
  prepare_run(tmp / "run", spec);
  const auto r = run_normlab({"train", (tmp / "run").string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  const auto v = lines_with(tmp / "run" / "metrics.jsonl", "val_loss");
  ASSERT_EQ(v.size(), 10u);
  for (const auto& line : v) EXPECT_EQ(line["val_loss"], v[0]["val_loss"]) << line.dump();
}

// The validations of a run that never stops (stop_accuracy 1, which no accuracy exceeds), and
// the best accuracy after step 0 with the first step that reaches it.
struct BestValidation {
  std::vector<nlohmann::json> lines;  // every "val_accuracy" line, step 0 first
  double accuracy = 0;
  int64_t step = 0;
};

BestValidation run_never_stopping(const std::filesystem::path& dir, RunSpec spec) {
  spec.train.stop_accuracy = 1.0;
  prepare_run(dir, spec);
  const auto never = run_normlab({"train", dir.string()});
  EXPECT_TRUE(never.exited && never.exit_code == 0) << never.describe();
  BestValidation best;
  best.lines = lines_with(dir / "metrics.jsonl", "val_accuracy");
  for (size_t i = 1; i < best.lines.size(); ++i) {
    const double accuracy = best.lines[i]["val_accuracy"].get<double>();
    if (accuracy > best.accuracy) {
      best.accuracy = accuracy;
      best.step = best.lines[i]["step"].get<int64_t>();
    }
  }
  return best;
}

// stop_accuracy: a run that never stops (stop_accuracy 1, which no accuracy exceeds) logs the
// accuracy at every validation; a threshold just below the best of them after step 0 stops a
// second run at the first validation that reaches that best, with the same lines up to there.
TEST(StopAccuracy, StopsAtTheFirstValidationAboveIt) {
  TempDir tmp;
  RunSpec spec = with_validation(small_run(Scheme::pre));
  const BestValidation best = run_never_stopping(tmp / "never", spec);
  ASSERT_EQ(best.lines.size(), 10u);  // steps 0, 7, ..., 56, 60
  ASSERT_GT(best.accuracy, 0.0) << "the accuracy never rises above 0: the test would be vacuous";
  ASSERT_LE(best.accuracy, 1.0);
  const auto& all = best.lines;
  const int64_t stop_step = best.step;

  spec.train.stop_accuracy = std::nextafter(best.accuracy, 0.0);
  prepare_run(tmp / "stops", spec);
  const auto stops = run_normlab({"train", (tmp / "stops").string()});
  ASSERT_TRUE(stops.exited && stops.exit_code == 0) << stops.describe();
  EXPECT_EQ(read_run_status(tmp / "stops"), RunStatus::finished);
  EXPECT_TRUE(std::filesystem::exists(tmp / "stops" / "final" / "model.safetensors"));
  const auto train_a = lines_with(tmp / "never" / "metrics.jsonl", "loss");
  const auto train_b = lines_with(tmp / "stops" / "metrics.jsonl", "loss");
  ASSERT_EQ(train_b.size(), static_cast<size_t>(stop_step));  // log_every 1
  for (size_t i = 0; i < train_b.size(); ++i) EXPECT_EQ(train_b[i]["loss"], train_a[i]["loss"]);
  const auto val_b = lines_with(tmp / "stops" / "metrics.jsonl", "val_accuracy");
  ASSERT_FALSE(val_b.empty());
  EXPECT_EQ(val_b.back()["step"].get<int64_t>(), stop_step);
  for (size_t i = 0; i < val_b.size(); ++i) EXPECT_EQ(val_b[i], all[i]) << "validation " << i;
  const auto run_json = nlohmann::json::parse(slurp(tmp / "stops" / "run.json"));
  EXPECT_NE(run_json.value("message", "").find(fmt::format("stopped at step {} of 60", stop_step)),
            std::string::npos)
      << run_json.dump();
}

// Killed after a checkpoint and before the stop, then resumed, the run stops at the same
// step with the same weights. The threshold is StopsAtTheFirstValidationAboveIt's: just below
// the best accuracy after step 0, which this run first reaches at step s; the kill is at s − 1.
TEST(StopAccuracy, AResumedRunStopsWhereTheWholeOneDoes) {
  TempDir tmp;
  RunSpec spec = with_validation(small_run(Scheme::pre));
  const BestValidation best = run_never_stopping(tmp / "never", spec);
  const int64_t stop_step = best.step;
  ASSERT_GT(stop_step, 11) << "no checkpoint (every 10 steps) before the stop: pick another seed";
  spec.train.stop_accuracy = std::nextafter(best.accuracy, 0.0);
  prepare_run(tmp / "whole", spec);
  prepare_run(tmp / "killed", spec);
  const auto whole = run_normlab({"train", (tmp / "whole").string()});
  ASSERT_TRUE(whole.exited && whole.exit_code == 0) << whole.describe();
  const std::string kill = std::to_string(stop_step - 1);
  const auto killed = run_normlab({"train", (tmp / "killed").string(), "--kill-at-step", kill});
  ASSERT_EQ(killed.signal, SIGKILL) << killed.describe();
  const auto resumed = run_normlab({"train", (tmp / "killed").string(), "--resume"});
  ASSERT_TRUE(resumed.exited && resumed.exit_code == 0) << resumed.describe();
  for (const char* run : {"whole", "killed"}) {
    EXPECT_EQ(lines_with(tmp / run / "metrics.jsonl", "val_accuracy").back()["step"], stop_step)
        << run;
  }
  EXPECT_TRUE(slurp(tmp / "whole" / "final" / "model.safetensors") ==
              slurp(tmp / "killed" / "final" / "model.safetensors"));
}

TEST(Validation, LengthOutsideTheTaskRangeIsRejectedBeforeTraining) {
  TempDir tmp;
  RunSpec spec = with_validation(small_run(Scheme::pre));
  spec.train.eval_length = 8;  // set_complement(v=8): at most 7 elements
  prepare_run(tmp / "run", spec);
  const auto r = run_normlab({"train", (tmp / "run").string()});
  EXPECT_TRUE(r.exited && r.exit_code == 2) << r.describe();
  EXPECT_NE(r.err.find("length 8 is outside its range"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp / "run" / "metrics.jsonl"));
}

TEST(Resume, WithoutResumeFlagStartsOver) {
  TempDir tmp;
  RunSpec spec = small_run(Scheme::post);
  prepare_run(tmp / "run", spec);
  ASSERT_FALSE(run_normlab({"train", (tmp / "run").string(), "--kill-at-step", "25"}).exited);
  const auto again = run_normlab({"train", (tmp / "run").string()});
  ASSERT_TRUE(again.exited && again.exit_code == 0) << again.describe();
  EXPECT_EQ(metrics_lines(tmp / "run" / "metrics.jsonl").size(), 60u);
}

// A stop during a finished run's evaluation leaves its status finished and its final weights
// written: --resume only evaluates. With the checkpoints removed, a run trained again would
// start over and rewrite metrics.jsonl (its steps/s differ) and checkpoint/.
TEST(Resume, AFinishedRunIsNotTrainedAgain) {
  TempDir tmp;
  RunSpec spec = small_run(Scheme::pre);
  prepare_run(tmp / "run", spec);
  const auto first = run_normlab({"train", (tmp / "run").string()});
  ASSERT_TRUE(first.exited && first.exit_code == 0) << first.describe();
  const std::string metrics = slurp(tmp / "run" / "metrics.jsonl");
  const std::string weights = slurp(tmp / "run" / "final" / "model.safetensors");
  std::filesystem::remove_all(tmp / "run" / "checkpoint");
  const auto again = run_normlab({"train", (tmp / "run").string(), "--resume"});
  ASSERT_TRUE(again.exited && again.exit_code == 0) << again.describe();
  EXPECT_NE(again.out.find("trained before (60 steps"), std::string::npos) << again.out;
  EXPECT_TRUE(slurp(tmp / "run" / "metrics.jsonl") == metrics) << "metrics.jsonl was rewritten";
  EXPECT_TRUE(slurp(tmp / "run" / "final" / "model.safetensors") == weights)
      << "the final weights were written again";
  EXPECT_FALSE(std::filesystem::exists(tmp / "run" / "checkpoint"));
}

// lr = 1e30 without norms: the weights after step 1 are finite but so large that the loss of
// step 2 overflows.
RunSpec overflowing_run(int64_t checkpoint_every) {
  RunSpec spec = small_run(Scheme::pre);
  spec.model.norm = NormKind::none;  // nothing bounds the activations
  spec.train.adam.lr = 1e30;
  spec.train.adam.clip_norm = 0;
  spec.train.warmup = 0;
  spec.train.checkpoint_every = checkpoint_every;
  return spec;
}

// The message says exactly what is kept, and the kept checkpoint (the weights of step 1) is
// refused by forward with one line instead of printing null logits.
TEST(Divergence, NonFiniteLossStopsTheRunAndSaysWhatIsKept) {
  TempDir tmp;
  prepare_run(tmp / "run", overflowing_run(1));
  const auto r = run_normlab({"train", (tmp / "run").string()});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("loss became"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the checkpoint of step 1 is kept, but it holds the weights that gave"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_run_status(tmp / "run"), RunStatus::diverged);
  EXPECT_FALSE(std::filesystem::exists(tmp / "run" / "final"));
  ASSERT_TRUE(std::filesystem::exists(tmp / "run" / "checkpoint" / "model.safetensors"));
  const auto fwd = run_normlab(
      {"forward", "--checkpoint", (tmp / "run" / "checkpoint").string(), "--tokens", "1 2 0"});
  ASSERT_TRUE(fwd.exited) << fwd.describe();
  EXPECT_EQ(fwd.exit_code, 1) << fwd.describe();
  EXPECT_EQ(fwd.out, "") << fwd.describe();
  EXPECT_NE(fwd.err.find("logits are not finite"), std::string::npos) << fwd.describe();
}

// Diverging before the first checkpoint keeps nothing, and says so.
TEST(Divergence, BeforeTheFirstCheckpointNothingIsKept) {
  TempDir tmp;
  prepare_run(tmp / "run", overflowing_run(1000));
  const auto r = run_normlab({"train", (tmp / "run").string()});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no checkpoint was kept (none had been written yet)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp / "run" / "checkpoint" / "model.safetensors"));
}

// The message names the checkpoint that was written, not a multiple of checkpoint_every: with
// checkpoint_every 1000 and a checkpoint after every step (--checkpoint-minutes 0), the loss
// that overflows at step 2 was given by the checkpoint of step 1.
TEST(Divergence, TheMessageNamesATimedCheckpoint) {
  TempDir tmp;
  prepare_run(tmp / "run", overflowing_run(1000));
  const auto r = run_normlab({"train", (tmp / "run").string(), "--checkpoint-minutes", "0"});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the checkpoint of step 1 is kept, but it holds the weights that gave"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(checkpoint_step(tmp / "run"), 1);
}

// A damaged checkpoint state is refused in one line naming the file, before any step.
TEST(DamagedState, AWrongTypeAndABadRngWordAreRefusedByName) {
  const std::pair<const char*, const char*> cases[] = {
      {"\"step\": 30", "type must be number, but is string"},  // step becomes "30"
      {"\"rng\": [", "rng word 0 is not a 64-bit unsigned integer"},
  };
  for (const auto& [field, message] : cases) {
    TempDir tmp;
    prepare_run(tmp / "run", small_run(Scheme::pre));
    const auto killed = run_normlab({"train", (tmp / "run").string(), "--kill-at-step", "37"});
    ASSERT_FALSE(killed.exited) << killed.describe();
    const std::filesystem::path state = tmp / "run" / "checkpoint" / "state.json";
    nlohmann::json j = nlohmann::json::parse(slurp(state));
    if (std::string(field).rfind("\"step\"", 0) == 0) {
      j["step"] = "30";
    } else {
      j["rng"][0] = "12x";
    }
    std::ofstream(state) << j.dump();
    const auto r = run_normlab({"train", (tmp / "run").string(), "--resume"});
    ASSERT_TRUE(r.exited) << r.describe();
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(state.string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("stoull"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace normlab

namespace normlab {
namespace {

TEST(RunLock, SecondTrainerOnTheSameRunIsRefused) {
  testing::TempDir tmp;
  prepare_run(tmp / "run", small_run(Scheme::pre));
  const int fd = ::open((tmp / "run" / ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);  // this test plays the running trainer
  const auto r = testing::run_normlab({"train", (tmp / "run").string()});
  ::close(fd);
  EXPECT_TRUE(r.exited && r.exit_code == 1) << r.describe();
  EXPECT_NE(r.err.find("another process is training this run"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp / "run" / "metrics.jsonl"));
}

// A trainer `normlab run` starts (--die-with-parent PID) waits for the run's earlier trainer,
// say one a killed sweep left saving its checkpoint, and trains once the lock is free.
TEST(RunLock, AStudysTrainerWaitsForTheEarlierOne) {
  testing::TempDir tmp;
  prepare_run(tmp / "run", small_run(Scheme::pre));
  const int fd = ::open((tmp / "run" / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);  // this test plays the earlier trainer
  // `exec`: the trainer's parent is this process, whose pid it is given.
  const std::string command = "exec " + testing::shell_quote(NORMLAB_BINARY) + " train " +
                              testing::shell_quote((tmp / "run").string()) + " --die-with-parent " +
                              std::to_string(::getpid()) + " 2>&1";
  FILE* out = ::popen(command.c_str(), "r");
  ASSERT_NE(out, nullptr);
  std::string printed;
  char line[4096];
  bool waiting = false;
  while (std::fgets(line, sizeof line, out) != nullptr) {
    printed += line;
    if (!waiting && printed.find("waiting for it to stop") != std::string::npos) {
      waiting = true;
      EXPECT_FALSE(std::filesystem::exists(tmp / "run" / "metrics.jsonl"));
      ::close(fd);  // the earlier trainer stops
    }
  }
  if (!waiting) ::close(fd);
  const int status = ::pclose(out);
  EXPECT_TRUE(waiting) << printed;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << printed;
  EXPECT_NE(testing::slurp(tmp / "run" / "metrics.jsonl").find("\"step\":"), std::string::npos);
}

}  // namespace
}  // namespace normlab
