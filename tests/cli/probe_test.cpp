// `normlab probe`: each KIND writes its files and a table on a fresh checkpoint and on a run
// (with the run's task as input); bad input gives one stderr line and exit 2 (usage) or 1
// (files); without gnuplot the probe warns once and writes everything but the PNG.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "normlab/io/csv.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/probes/probe_plots.hpp"
#include "normlab/train/trainer.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::RunResult;
using testing::TempDir;

class ProbeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ModelConfig c;
    c.vocab = 12;
    c.width = 16;
    c.heads = 2;
    c.layers = 2;
    c.scheme = Scheme::post_attn;
    c.norm = NormKind::layernorm;
    Model<float> m(c);
    m.init(1);
    save_checkpoint(dir_.path(), m);
  }
  std::string ckpt() const { return dir_.path().string(); }
  static RunResult probe(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), "probe");
    return testing::run_normlab(args, env);
  }
  static void expect_error(const RunResult& r, int code, const std::vector<std::string>& words) {
    ASSERT_TRUE(r.exited) << r.describe();
    EXPECT_EQ(r.exit_code, code) << r.describe();
    EXPECT_EQ(r.out, "") << r.describe();
    ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
    for (const std::string& w : words) {
      EXPECT_NE(r.err.find(w), std::string::npos) << "message lacks '" << w << "'\n"
                                                  << r.describe();
    }
  }
  TempDir dir_;
};

TEST_F(ProbeCli, VarianceWritesFilesTableAndPlots) {
  const std::string prefix = (dir_ / "out/var").string();
  const RunResult r = probe({"variance", "--checkpoint", ckpt(), "--lengths", "2,4,8,16,64",
                             "--samples", "32", "--out", prefix});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("fit of ln(mean per-feature std)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attn_out_normed"), std::string::npos) << r.out;
  for (const char* suffix : {".csv", "_fit.csv", "_hist.csv", ".json"}) {
    EXPECT_TRUE(fs::exists(prefix + suffix)) << suffix;
  }
  if (gnuplot_available()) {
    EXPECT_GT(fs::file_size(prefix + ".png"), 1000u);
    EXPECT_GT(fs::file_size(prefix + "_hist.png"), 1000u);
  }
  const auto j = nlohmann::json::parse(testing::slurp(prefix + ".json"));
  EXPECT_EQ(j["probe"], "variance");
  EXPECT_EQ(j["scheme"], "post_attn");
  EXPECT_EQ(j["input"]["kind"], "random");
  EXPECT_EQ(j["results"]["norm_after"], "layernorm");
  EXPECT_EQ(j["results"]["lengths"].size(), 5u);
  // 2 layers × (attn_out, attn_out_normed, stream_out, 2 heads) fits.
  EXPECT_EQ(j["results"]["fits"].size(), 10u);
  EXPECT_EQ(j["results"]["histograms"][0]["lengths"][0]["length"], 16);
  EXPECT_EQ(csv_row(read_csv_table(prefix + ".csv").columns),
            "length,seq_len,layer,sublayer,site,head,rows,features,mean_feature_std,global_mean,"
            "global_var,global_std\n");
}

TEST_F(ProbeCli, DispersionAndDepthWriteBesideTheCheckpoint) {
  RunResult r = probe({"dispersion", "--checkpoint", ckpt(), "--lengths", "2,8,32", "--samples",
                       "8", "--threads", "2"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_TRUE(fs::exists(dir_ / "probe_dispersion.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "probe_dispersion.json"));
  EXPECT_NE(r.out.find("L1 entropy"), std::string::npos) << r.out;
  r = probe({"depth", "--checkpoint", ckpt(), "--batch", "4", "--seq-len", "16"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  for (const char* f : {"probe_depth.csv", "probe_depth_params.csv", "probe_depth.json"}) {
    EXPECT_TRUE(fs::exists(dir_ / f)) << f;
  }
  EXPECT_NE(r.out.find("gradient norm"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(testing::slurp(dir_ / "probe_depth.json"));
  EXPECT_EQ(j["results"]["positions"].size(), 5u);  // 4 sublayers and the final stream
}

TEST_F(ProbeCli, WithoutGnuplotWarnsOnceAndWritesTheRest) {
  TempDir empty;  // PATH without gnuplot
  const std::string prefix = (dir_ / "np").string();
  const RunResult r = probe(
      {"variance", "--checkpoint", ckpt(), "--lengths", "2,4,8", "--samples", "8", "--out", prefix},
      {"PATH=" + empty.path().string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  size_t warnings = 0;
  for (const std::string& line : r.err_lines()) warnings += line.find("gnuplot") != line.npos;
  EXPECT_EQ(warnings, 1u) << r.describe();
  EXPECT_TRUE(fs::exists(prefix + ".csv"));
  EXPECT_FALSE(fs::exists(prefix + ".png"));
  EXPECT_FALSE(fs::exists(prefix + "_hist.png"));
}

TEST_F(ProbeCli, RunDirectoryGivesTheTaskInputs) {
  TempDir runs;
  const fs::path run = runs / "run";
  RunSpec spec;
  spec.label = "probe test";
  spec.model.vocab = 17;  // set_complement(v=16)
  spec.model.width = 16;
  spec.model.layers = 1;
  spec.task = {{"name", "set_complement"}, {"v", 16}};
  spec.train.max_len = 8;
  prepare_run(run, spec);
  Model<float> m(spec.model);
  m.init(3);
  save_checkpoint(run / "final", m);
  RunResult r = probe({"variance", "--checkpoint", run.string(), "--input", "task", "--lengths",
                       "2,4,8", "--samples", "8", "--no-plot"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  const auto j = nlohmann::json::parse(testing::slurp(run / "final/probe_variance_task.json"));
  EXPECT_EQ(j["input"]["kind"], "task");
  EXPECT_EQ(j["input"]["task"]["name"], "set_complement");
  EXPECT_EQ(j["results"]["lengths"][2]["seq_len"], 9);  // T = n + 1
  // depth: the run's longest training length by default.
  r = probe({"depth", "--checkpoint", (run / "final").string(), "--input", "task", "--batch", "4",
             "--no-plot"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  const auto d = nlohmann::json::parse(testing::slurp(run / "final/probe_depth_task.json"));
  EXPECT_EQ(d["length"], 8);
  EXPECT_EQ(d["results"]["seq_len"], 9);
  // A task length outside the task's range.
  expect_error(
      probe({"variance", "--checkpoint", run.string(), "--input", "task", "--lengths", "4,16"}), 2,
      {"set_complement", "length 16"});
}

// dilution: a set_complement run's files beside its weights; any other task, or a checkpoint
// without one, is refused with one line and exit 2.
TEST_F(ProbeCli, DilutionOnASetComplementRunOnly) {
  TempDir runs;
  const fs::path run = runs / "run";
  RunSpec spec;
  spec.label = "dilution test";
  spec.model.vocab = 17;  // set_complement(v=16)
  spec.model.width = 16;
  spec.model.layers = 1;
  spec.model.mlp = false;
  spec.model.scheme = Scheme::peri;
  spec.model.final_norm = Toggle::off;
  spec.task = {{"name", "set_complement"}, {"v", 16}};
  spec.train.max_len = 8;
  prepare_run(run, spec);
  Model<float> m(spec.model);
  m.init(3);
  save_checkpoint(run / "final", m);
  const RunResult r = probe({"dilution", "--checkpoint", run.string(), "--sizes", "15,1,4",
                             "--samples", "8", "--no-plot"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("fit of ln|gap| against ln s"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("s = 15 done"), std::string::npos) << r.err;
  const CsvTable gaps = read_csv_table(run / "final/probe_dilution.csv");
  EXPECT_EQ(csv_row(gaps.columns), "s,seq_len,site,samples,gap,gap_sd,gap_low,gap_high\n");
  ASSERT_EQ(gaps.rows.size(), 3u * 3);  // s = 1, 4, 15; peri: three sites
  EXPECT_EQ(std::vector<std::string>(gaps.rows[0].begin(), gaps.rows[0].begin() + 4),
            (std::vector<std::string>{"1", "2", "logits", "8"}));
  const auto j = nlohmann::json::parse(testing::slurp(run / "final/probe_dilution.json"));
  EXPECT_EQ(j["results"]["norm_after"], "rmsnorm");
  EXPECT_EQ(j["results"]["fits"].size(), 3u);

  expect_error(probe({"dilution", "--checkpoint", ckpt()}), 2, {"not a training run", "--task"});
  expect_error(probe({"dilution", "--checkpoint", ckpt(), "--task", "dyck"}), 2,
               {"applies to set_complement only", "dyck"});
  expect_error(probe({"dilution", "--checkpoint", run.string(), "--sizes", "3,16"}), 2,
               {"set_complement", "length 16"});
}

// docs/design.md principle 8: the numbers do not depend on the thread count.
TEST_F(ProbeCli, SameNumbersWithOneAndTwoThreads) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"variance", "--lengths", "2,16,128", "--samples", "16"},
        std::vector<std::string>{"dispersion", "--lengths", "2,16,128", "--samples", "16"},
        std::vector<std::string>{"depth", "--batch", "3", "--seq-len", "40"}}) {
    std::string csv[2];
    for (int threads : {1, 2}) {
      std::vector<std::string> a = args;
      const std::string prefix = (dir_ / ("t" + std::to_string(threads))).string();
      for (const std::string& x :
           {std::string("--checkpoint"), ckpt(), std::string("--threads"), std::to_string(threads),
            std::string("--out"), prefix, std::string("--no-plot")}) {
        a.push_back(x);
      }
      const RunResult r = probe(a);
      ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
      csv[threads - 1] = testing::slurp(prefix + ".csv");
    }
    EXPECT_FALSE(csv[0].empty());
    EXPECT_EQ(csv[0], csv[1]) << args[0];
  }
}

TEST_F(ProbeCli, UnknownKind) {
  expect_error(probe({"spectrum", "--checkpoint", ckpt()}), 2,
               {"unknown probe 'spectrum'", "variance, dispersion, depth"});
  expect_error(probe({}), 2, {"variance", "dispersion", "depth"});
}

TEST_F(ProbeCli, MissingCheckpoint) {
  expect_error(probe({"variance", "--checkpoint", (dir_ / "nope").string()}), 1,
               {"nope", "no such checkpoint"});
  expect_error(probe({"depth", "--checkpoint", ckpt(), "--weights", "ema"}), 1,
               {"ema.safetensors"});
}

TEST_F(ProbeCli, TaskInputNeedsARunOrATask) {
  expect_error(probe({"variance", "--checkpoint", ckpt(), "--input", "task"}), 2,
               {"not a training run", "--task"});
  expect_error(probe({"depth", "--checkpoint", ckpt(), "--input", "task", "--task", "dyck"}), 2,
               {"vocabulary"});
  expect_error(probe({"variance", "--checkpoint", ckpt(), "--input", "random", "--task", "dyck"}),
               2, {"--input task"});
  // --input auto (the default) takes --task as the inputs: the vocabulary is checked.
  expect_error(probe({"variance", "--checkpoint", ckpt(), "--task", "dyck"}), 2, {"vocabulary"});
}

TEST_F(ProbeCli, InvalidLengths) {
  expect_error(probe({"variance", "--checkpoint", ckpt(), "--lengths", "0,4"}), 2,
               {"--lengths", "'0'"});
  expect_error(probe({"variance", "--checkpoint", ckpt(), "--lengths", "4,x"}), 2,
               {"--lengths", "'x'", "not an integer"});
  expect_error(probe({"dispersion", "--checkpoint", ckpt(), "--lengths", "8,4,8"}), 2,
               {"length 8", "twice"});
  expect_error(probe({"variance", "--checkpoint", ckpt(), "--lengths", "16777216"}), 2,
               {"length 16777216", "--max-memory"});
  expect_error(
      probe({"variance", "--checkpoint", ckpt(), "--lengths", "4,8", "--hist-lengths", "16"}), 2,
      {"histogram length 16"});
  expect_error(probe({"depth", "--checkpoint", ckpt(), "--lengths", "4"}), 2,
               {"--lengths", "normlab probe depth --help"});
}

}  // namespace
}  // namespace normlab
