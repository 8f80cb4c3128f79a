// Experiment files: strict reading (file, line and key in every error), variants, and a
// whole tiny experiment through `normlab run`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <sqlite3.h>
#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/experiment/overrides.hpp"
#include "normlab/experiment/sweep.hpp"
#include "normlab/io/csv.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/model/scheme.hpp"
#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

using testing::experiment_error;
using testing::run_normlab;
using testing::TempDir;

const char* kValid = R"toml(name = "tiny"
schemes = ["pre", "post_attn/standardize", "mix(1)"]
seeds = [1, 2]

[task]
name = "set_complement"
v = 6

[model]
width = 5
layers = 1
mlp = false

[train]
steps = 40
batch = 8
lengths = [1, 3]
checkpoint_every = 20

[eval]
lengths = [2, 5]
samples = 32
weights = ["raw", "bema"]
)toml";

TEST(ExperimentFile, ValidFileResolves) {
  Experiment e;
  ASSERT_EQ(experiment_error(kValid, &e), "");
  EXPECT_EQ(e.name, "tiny");
  ASSERT_EQ(e.variants.size(), 3u);
  EXPECT_EQ(e.variants[1].model.scheme, Scheme::post_attn);
  EXPECT_EQ(e.variants[1].model.norm, NormKind::standardize);
  EXPECT_EQ(e.variants[2].model.mix_layers, 1);
  EXPECT_EQ(e.variants[0].model.vocab, 7);  // from the task: v + 1
  EXPECT_EQ(e.variants[0].model.width, 5);
  EXPECT_EQ(e.train.steps, 40);
  EXPECT_EQ(e.eval.lengths, (std::vector<int64_t>{2, 5}));
}

// [[variant]] tables: a label, a scheme, and model keys for that variant only.
TEST(ExperimentFile, VariantTablesOverrideTheModelPerVariant) {
  std::string text = kValid;
  text.replace(text.find("schemes = "),
               text.find('\n', text.find("schemes = ")) - text.find("schemes = "),
               "schemes = [\"pre\"]");
  text += R"toml(
[[variant]]
label = "attn_ln"
scheme = "post"
attn_norms = "out:standardize"
width = 7

[[variant]]
label = "peri_ln"
scheme = "peri/layernorm"
final_norm = "off"
)toml";
  Experiment e;
  ASSERT_EQ(experiment_error(text, &e), "");
  ASSERT_EQ(e.variants.size(), 3u);
  EXPECT_EQ(e.variants[0].label, "pre");
  EXPECT_EQ(e.variants[1].label, "attn_ln");
  EXPECT_EQ(e.variants[1].slug, "attn_ln");
  EXPECT_EQ(e.variants[1].model.scheme, Scheme::post);
  EXPECT_EQ(to_string(e.variants[1].model.attn_norms), "out:standardize");
  EXPECT_EQ(e.variants[1].model.width, 7);
  EXPECT_EQ(e.variants[0].model.width, 5);  // [model] stays the default of the others
  EXPECT_EQ(e.variants[2].model.norm, NormKind::layernorm);
  EXPECT_EQ(e.variants[2].model.final_norm, Toggle::off);
  EXPECT_EQ(e.variants[0].model.final_norm, Toggle::automatic);
}

// The norm kinds with scalar parameters from a TOML file: the [model] norm, a scheme's
// "/KIND", and a [[variant]]'s placement slot.
TEST(ExperimentFile, NormKindsWithScalarsResolve) {
  std::string text = kValid;
  text.replace(text.find("schemes = "),
               text.find('\n', text.find("schemes = ")) - text.find("schemes = "),
               "schemes = [\"pre\", \"post/scalenorm\"]");
  text.replace(text.find("mlp = false"), std::string("mlp = false").size(),
               "mlp = false\nnorm = \"dyt\"");
  text += R"toml(
[[variant]]
label = "attn_derf"
scheme = "post"
attn_norms = "out:derf"
)toml";
  Experiment e;
  ASSERT_EQ(experiment_error(text, &e), "");
  ASSERT_EQ(e.variants.size(), 3u);
  EXPECT_EQ(e.variants[0].model.norm, NormKind::dyt);
  EXPECT_EQ(e.variants[1].model.norm, NormKind::scalenorm);
  EXPECT_EQ(e.variants[2].model.norm, NormKind::dyt);
  const ResolvedScheme r = resolve_scheme(e.variants[2].model);
  EXPECT_TRUE(r.sublayers[0].norm_out);
  EXPECT_EQ(r.sublayers[0].kind_out, NormKind::derf);
  EXPECT_NE(experiment_error(kValid + std::string("\n[[variant]]\nlabel = \"x\"\nscheme = "
                                                  "\"post\"\nattn_norms = \"out:tanh\"\n"))
                .find("unknown norm 'tanh'"),
            std::string::npos);
}

// The placement language in experiment files: in a [[variant]], next to the new schemes, and
// an error located at its key's line.
TEST(ExperimentFile, PlacementsAndNewSchemesResolve) {
  std::string text = kValid;
  text.replace(text.find("schemes = "),
               text.find('\n', text.find("schemes = ")) - text.find("schemes = "),
               "schemes = [\"layerscale\", \"rezero\"]");
  text += R"toml(
[[variant]]
label = "pre_gated"
scheme = "custom"
placement = "all: in, branch=scalar(0.5); final: on"
)toml";
  Experiment e;
  ASSERT_EQ(experiment_error(text, &e), "");
  ASSERT_EQ(e.variants.size(), 3u);
  EXPECT_EQ(e.variants[0].model.scheme, Scheme::layerscale);
  EXPECT_EQ(e.variants[1].model.scheme, Scheme::rezero);
  EXPECT_EQ(to_string(e.variants[2].model.placement), "all: in, branch=scalar(0.5); final: on");
  const ResolvedScheme r = resolve_scheme(e.variants[2].model);
  EXPECT_TRUE(r.final_norm);
  EXPECT_EQ(r.sublayers[0].branch, (ScaleSpec{ScaleKind::scalar, 0.5}));
  const std::string bad =
      experiment_error(kValid + std::string("\n[[variant]]\nlabel = \"x\"\nscheme = \"pre\"\n"
                                            "placement = \"all: in, gain=2\"\n"));
  EXPECT_NE(bad.find("unknown setting 'gain'"), std::string::npos) << bad;
  EXPECT_NE(bad.find(":"), std::string::npos) << bad;  // FILE:LINE
}

// QK-norm and hybridnorm from a TOML file: qk_norm in [model] applies to every scheme listed,
// a [[variant]] sets it for itself; a kind outside none, l2, rmsnorm is refused.
TEST(ExperimentFile, QkNormAndHybridNormResolve) {
  std::string text = kValid;
  text.replace(text.find("schemes = "),
               text.find('\n', text.find("schemes = ")) - text.find("schemes = "),
               "schemes = [\"pre\", \"post\"]");
  text.replace(text.find("mlp = false"), std::string("mlp = false").size(),
               "mlp = false\nqk_norm = \"rmsnorm\"");
  text += R"toml(
[[variant]]
label = "pre_qk_l2"
scheme = "pre"
qk_norm = "l2"

[[variant]]
label = "hybrid"
scheme = "hybridnorm"
qk_norm = "none"
)toml";
  Experiment e;
  ASSERT_EQ(experiment_error(text, &e), "");
  ASSERT_EQ(e.variants.size(), 4u);
  EXPECT_EQ(e.variants[0].model.qk_norm, QkNorm::rmsnorm);
  EXPECT_EQ(e.variants[1].model.qk_norm, QkNorm::rmsnorm);
  EXPECT_EQ(e.variants[2].model.qk_norm, QkNorm::l2);
  EXPECT_EQ(e.variants[3].model.scheme, Scheme::hybridnorm);
  EXPECT_EQ(e.variants[3].model.qk_norm, QkNorm::none);
  const std::string bad =
      experiment_error(kValid + std::string("\n[[variant]]\nlabel = \"x\"\nscheme = \"pre\"\n"
                                            "qk_norm = \"layernorm\"\n"));
  EXPECT_NE(bad.find("qk_norm"), std::string::npos) << bad;
  EXPECT_NE(bad.find("l2"), std::string::npos) << bad;
  EXPECT_NE(bad.find("rmsnorm"), std::string::npos) << bad;
}

TEST(ExperimentFile, VariantTableErrorsNameTheKey) {
  const std::string base = kValid;
  EXPECT_NE(experiment_error(base + "\n[[variant]]\nscheme = \"post\"\n").find("needs a label"),
            std::string::npos);
  EXPECT_NE(experiment_error(base + "\n[[variant]]\nlabel = \"x\"\nscheme = \"post\"\n"
                                    "attn_norms = \"middle\"\n")
                .find("unknown slot 'middle'"),
            std::string::npos);
  EXPECT_NE(experiment_error(base + "\n[[variant]]\nlabel = \"x\"\nscheme = \"post\"\nstpes = 1\n")
                .find("unknown key 'stpes'"),
            std::string::npos);
  EXPECT_NE(experiment_error(base + "\n[[variant]]\nlabel = \"pre\"\nscheme = \"post\"\n")
                .find("same name on disk"),
            std::string::npos);
  const std::string with_line = experiment_error(
      base + "\n[[variant]]\nlabel = \"x\"\nscheme = \"post\"\nmlp_norms = \"post\"\n");
  EXPECT_NE(with_line.find("needs an MLP"), std::string::npos) << with_line;
}

TEST(ExperimentFile, UnknownKeyNamesFileLineAndKey) {
  std::string text = kValid;
  text.replace(text.find("steps = 40"), 10, "stpes = 40");
  const std::string err = experiment_error(text);
  EXPECT_EQ(err.rfind(":15: unknown key 'stpes' in [train]", 0), 0u) << err;
}

TEST(ExperimentFile, WrongTypeNamesFileLineAndKey) {
  std::string text = kValid;
  text.replace(text.find("width = 5"), 9, "width = \"5\"");
  const std::string err = experiment_error(text);
  EXPECT_EQ(err.rfind(":10: key 'width' in [model] must be an integer", 0), 0u) << err;
}

// A real-valued key given an integer a double would round is refused (it was read through an
// empty value: lr = -9007199254740993 trained with lr = 6.95e-310); one it holds is read.
TEST(ExperimentFile, IntegersADoubleWouldRoundAreRefused) {
  std::string text = kValid;
  text.replace(text.find("batch = 8"), 9, "batch = 8\nlr = -9007199254740993");
  const std::string err = experiment_error(text);
  EXPECT_EQ(err.rfind(":17: key 'lr' in [train] must be a number a double holds exactly", 0), 0u)
      << err;
  text = kValid;
  text.replace(text.find("batch = 8"), 9, "batch = 8\nlr = 9007199254740992");
  Experiment e;
  EXPECT_EQ(experiment_error(text, &e), "");
  EXPECT_EQ(e.variants.at(0).train.adam.lr, 9007199254740992.0);
}

TEST(ExperimentFile, UnknownTaskParameter) {
  std::string text = kValid;
  text.replace(text.find("v = 6"), 5, "w = 6");
  const std::string err = experiment_error(text);
  EXPECT_NE(err.find("unknown key 'w' in [task]"), std::string::npos) << err;
  EXPECT_NE(err.find(":7:"), std::string::npos) << err;
}

TEST(ExperimentFile, BadSchemeSaysWhatIsAllowed) {
  std::string text = kValid;
  text.replace(text.find("\"mix(1)\""), 8, "\"mix(5)\"");
  std::string err = experiment_error(text);
  EXPECT_NE(err.find("mix(k) needs 0 <= k <= layers"), std::string::npos) << err;
  text = kValid;
  text.replace(text.find("\"pre\""), 5, "\"prenorm\"");
  err = experiment_error(text);
  EXPECT_NE(err.find("unknown scheme 'prenorm'; allowed: pre, post"), std::string::npos) << err;
  EXPECT_NE(err.find(", custom; did you mean pre?"), std::string::npos) << err;
  // A number only for the schemes whose row takes one, each named with its own letter.
  text = kValid;
  text.replace(text.find("\"pre\""), 5, "\"pre(2)\"");
  err = experiment_error(text);
  EXPECT_NE(err.find("scheme 'pre(2)': only mix(K), block_attnres(S), hyper_connections(n) take "
                     "a number"),
            std::string::npos)
      << err;
}

// NAME(K) sets the field of the scheme's row: block_attnres(3) is block_size 3, and the label
// gives the number back.
TEST(ExperimentFile, ASchemesNumberSetsItsRowsField) {
  std::string text = kValid;
  text.replace(text.find("\"mix(1)\""), 8, "\"block_attnres(3)\"");
  Experiment e;
  ASSERT_EQ(experiment_error(text, &e), "");
  ASSERT_EQ(e.variants.size(), 3u);
  EXPECT_EQ(e.variants[2].model.scheme, Scheme::block_attnres);
  EXPECT_EQ(e.variants[2].model.block_size, 3);
  EXPECT_EQ(e.variants[2].label, "block_attnres(3)");
}

TEST(ExperimentFile, EvaluationLengthOutsideTheTaskRange) {
  std::string text = kValid;
  text.replace(text.find("lengths = [2, 5]"), 16, "lengths = [2, 6]");
  const std::string err = experiment_error(text);
  EXPECT_NE(err.find("set_complement"), std::string::npos) << err;
  EXPECT_NE(err.find("length 6 is outside"), std::string::npos) << err;
}

TEST(ExperimentFile, TomlSyntaxErrorHasLine) {
  const std::string err = experiment_error("name = \n");
  EXPECT_EQ(err.rfind(":1:", 0), 0u) << err;
}

// A variant label holding '|' and a line break: summary.md's table rows keep the header's
// columns and stay one line each (printable.hpp, markdown_cell).
TEST(ExperimentRun, ALabelWithAPipeAndALineBreakKeepsSummaryMdsColumns) {
  TempDir tmp;
  std::string text = kValid;
  text.replace(text.find("schemes = "),
               text.find('\n', text.find("schemes = ")) - text.find("schemes = "),
               "schemes = [\"pre\"]");
  text += "\n[[variant]]\nlabel = \"post | peri\\nnext\"\nscheme = \"post\"\n";
  std::ofstream(tmp / "tiny.toml") << text;
  const auto out = tmp / "results";
  const auto r = run_normlab({"run", (tmp / "tiny.toml").string(), "--out", out.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  std::istringstream md(testing::slurp(out / "summary.md"));
  std::string line;
  int header_bars = -1, rows = 0;
  while (std::getline(md, line)) {
    if (line.empty() || line[0] != '|') {
      header_bars = -1;  // a table ended
      continue;
    }
    int bars = 0;
    for (size_t i = 0; i < line.size(); ++i)
      bars += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    if (header_bars < 0) header_bars = bars;
    EXPECT_EQ(bars, header_bars) << line;
    if (line.find("post \\| peri\\x0anext") != std::string::npos) ++rows;
  }
  EXPECT_GT(rows, 0) << testing::slurp(out / "summary.md");
}

TEST(ExperimentRun, TrainsEvaluatesSummarizesAndSkipsFinishedRuns) {
  TempDir tmp;
  std::ofstream(tmp / "tiny.toml") << kValid;
  const auto out = tmp / "results";
  const auto r = run_normlab({"run", (tmp / "tiny.toml").string(), "--out", out.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("accuracy (mean [95% interval] across seeds)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("post_attn/standardize"), std::string::npos) << r.out;
  // results.csv: 3 variants × 2 seeds × 2 weights × 2 lengths × 3 metrics rows + header (tvd,
  // accuracy and tvd_chance, the uniform predictor's TVD: (s + 1)/(v + 1) = 3/7 at s = 2).
  const std::string csv = testing::slurp(out / "results.csv");
  const CsvTable results = read_csv_table(out / "results.csv");
  EXPECT_EQ(results.rows.size(), 3u * 2 * 2 * 2 * 3) << csv;
  bool chance_row = false;
  for (size_t i = 0; i < results.rows.size(); ++i) {
    chance_row = chance_row ||
                 (results.cell(i, "weights") == "raw" && results.cell(i, "length") == "2" &&
                  results.cell(i, "seq_len") == "3" && results.cell(i, "metric") == "tvd_chance" &&
                  results.cell(i, "value") == "0.428571");
  }
  EXPECT_TRUE(chance_row) << csv;
  EXPECT_TRUE(std::filesystem::exists(out / "summary.md"));
  {  // The SQLite store holds the same rows.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((out / "results.sqlite").c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT COUNT(*), COUNT(DISTINCT seed) FROM results "
                                 "WHERE variant = 'mix(1)'",
                                 -1, &st, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(st, 0), 2 * 2 * 2 * 3);
    EXPECT_EQ(sqlite3_column_int(st, 1), 2);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  EXPECT_TRUE(std::filesystem::exists(out / "runs" / "post_attn-standardize__seed2" / "final"));
  // A second run finds everything done.
  const auto again = run_normlab({"run", (tmp / "tiny.toml").string(), "--out", out.string()});
  ASSERT_TRUE(again.exited && again.exit_code == 0) << again.describe();
  EXPECT_NE(again.err.find("(0 to do, 6 already done)"), std::string::npos) << again.err;
  EXPECT_EQ(testing::slurp(out / "results.csv"), csv);
}

// A whole (tiny) character-level study with periodic validation: the length sweep reports
// loss, bpc and accuracy, and the loss curves of every run are collected and plotted.
const char* kCharLm = R"toml(name = "tiny_charlm"
schemes = ["pre", "post"]
seeds = [3]

[task]
name = "char_lm"

[model]
width = 16
heads = 2
layers = 2
causal = true
pos = "rope"

[train]
steps = 30
batch = 8
lengths = [16, 16]
lr = 0.01
warmup = 5
log_every = 10
eval_every = 10
eval_batches = 2

[eval]
lengths = [16, 32]
samples = 8
)toml";

TEST(ExperimentRun, CharLmWithValidationCurves) {
  TempDir tmp;
  std::ofstream(tmp / "c.toml") << kCharLm;
  const auto out = tmp / "results";
  const auto r = run_normlab({"run", (tmp / "c.toml").string(), "--out", out.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("bpc (mean [95% interval] across seeds)"), std::string::npos) << r.out;
  // curves.csv: per run, validation at 0, 10, 20, 30 and training lines at 10, 20, 30.
  const std::string csv = testing::slurp(out / "curves.csv");
  const CsvTable curves = read_csv_table(out / "curves.csv");
  EXPECT_EQ(csv_row(curves.columns), "variant,seed,step,train_loss,val_loss\n");
  ASSERT_EQ(curves.rows.size(), 8u) << csv;
  // Step 0 of each run: no training loss yet.
  EXPECT_EQ(curves.cell(0, "variant"), "pre") << csv;
  EXPECT_EQ(curves.cell(4, "variant"), "post") << csv;
  for (const size_t i : {0, 4}) {
    EXPECT_EQ(curves.cell(i, "seed"), "3") << csv;
    EXPECT_EQ(curves.cell(i, "step"), "0") << csv;
    EXPECT_EQ(curves.cell(i, "train_loss"), "") << csv;
  }
  for (size_t i = 0; i < curves.rows.size(); ++i) {
    EXPECT_NE(curves.cell(i, "val_loss"), "") << "every row here has a validation loss: " << csv;
  }
  // The validation loss starts near log V = log 114 and falls.
  const double first = std::stod(curves.cell(0, "val_loss"));
  const double last = std::stod(curves.cell(3, "val_loss"));
  EXPECT_NEAR(first, std::log(114.0), 0.5);
  EXPECT_LT(last, first - 0.3);
  if (std::system("command -v gnuplot > /dev/null 2>&1") == 0) {
    EXPECT_GT(std::filesystem::file_size(out / "curves.png"), 1000u);
    EXPECT_NE(r.out.find("curves.png"), std::string::npos) << r.out;
  }
}

// [probe] depth = true: after training, the depth probe runs on every run once, and the study
// gets depth.csv (per stream position) and depth_layers.csv (per layer). A layer's gradient
// norm there is the norm over its two sublayers' parameters, so it must equal
// sqrt(g_attn² + g_mlp²) of the per-position rows.
// [probe] bridge: the particle ODE on each trained RoPE model's own attention; at layer 0 the
// prediction is the measured cosine itself (the same tokens), a scheme without a particle law
// is named as skipped, and a second run reuses each run's probe_bridge.csv.
TEST(ExperimentRun, ParticleBridgeOverEveryRun) {
  TempDir tmp;
  std::string text = kCharLm;
  text.replace(text.find("\"pre\", \"post\""), 13, "\"pre\", \"attnres\"");
  text += "\n[probe]\nbridge = true\nbatch = 2\n";
  std::ofstream(tmp / "c.toml") << text;
  const auto out = tmp / "results";
  const auto r = run_normlab({"run", (tmp / "c.toml").string(), "--out", out.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("particle bridge (2 validation sequences"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no particle law (not bridged): attnres"), std::string::npos) << r.out;
  const CsvTable bridge = read_csv_table(out / "bridge.csv");
  EXPECT_EQ(csv_row(bridge.columns), "variant,seed,layer,predicted_cos,measured_cos\n");
  ASSERT_EQ(bridge.rows.size(), 3u);  // layers 0, 1, 2
  for (size_t i = 0; i < bridge.rows.size(); ++i) {
    EXPECT_EQ(bridge.cell(i, "variant"), "pre");
    EXPECT_EQ(std::stoi(bridge.cell(i, "layer")), static_cast<int>(i));
  }
  EXPECT_NEAR(std::stod(bridge.cell(0, "predicted_cos")), std::stod(bridge.cell(0, "measured_cos")),
              1e-6);
  const auto again = run_normlab({"run", (tmp / "c.toml").string(), "--out", out.string()});
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  EXPECT_EQ(again.err.find("particle bridge: pre"), std::string::npos) << again.err;
}

TEST(ExperimentRun, DepthProbeOverEveryRun) {
  TempDir tmp;
  std::string text = kCharLm;
  text.replace(text.find("\"pre\", \"post\""), 13, "\"pre\", \"block_attnres(1)\"");
  text += "\n[probe]\ndepth = true\nbatch = 3\n";
  std::ofstream(tmp / "c.toml") << text;
  const auto out = tmp / "results";
  const auto r = run_normlab({"run", (tmp / "c.toml").string(), "--out", out.string()});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
  EXPECT_NE(r.out.find("depth probe (3 validation sequences"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("depth probe: block_attnres(1) seed 3"), std::string::npos) << r.err;

  const CsvTable positions = read_csv_table(out / "depth.csv");
  EXPECT_EQ(csv_row(positions.columns),
            "variant,seed,position,layer,kind,hidden_rms,branch_rms,grad_norm,cosine,erank\n");
  std::map<std::string, std::vector<double>> position_grads;  // variant → per sublayer
  for (size_t i = 0; i < positions.rows.size(); ++i) {
    EXPECT_GT(std::stod(positions.cell(i, "hidden_rms")), 0.0) << "row " << i;
    if (positions.cell(i, "kind") != "final") {
      position_grads[positions.cell(i, "variant")].push_back(
          std::stod(positions.cell(i, "grad_norm")));
    }
  }
  // 2 variants × (2 layers × 2 sublayers + the output)
  EXPECT_EQ(positions.rows.size(), 2u * (2 * 2 + 1));

  const CsvTable layers = read_csv_table(out / "depth_layers.csv");
  EXPECT_EQ(csv_row(layers.columns), "variant,seed,layer,grad_norm,param_norm\n");
  for (size_t i = 0; i < layers.rows.size(); ++i) {
    const auto& g = position_grads.at(layers.cell(i, "variant"));
    const int l = std::stoi(layers.cell(i, "layer"));
    const double expected = std::hypot(g.at(2 * l), g.at(2 * l + 1));
    EXPECT_NEAR(std::stod(layers.cell(i, "grad_norm")), expected, 1e-4 * expected) << "row " << i;
  }
  EXPECT_EQ(layers.rows.size(), 2u * 2);

  // Block sums: block_attnres(1) makes every sublayer a block, and pre uses the same groups.
  const CsvTable blocks = read_csv_table(out / "depth_blocks.csv");
  EXPECT_EQ(csv_row(blocks.columns),
            "variant,seed,block,first_sublayer,last_sublayer,block_size,block_rms\n");
  for (size_t i = 0; i < blocks.rows.size(); ++i) {
    // One sublayer per block.
    EXPECT_EQ(blocks.cell(i, "first_sublayer"), blocks.cell(i, "last_sublayer")) << "row " << i;
    EXPECT_GT(std::stod(blocks.cell(i, "block_rms")), 0.0) << "row " << i;
  }
  EXPECT_EQ(blocks.rows.size(), 2u * 4);

  // Probed runs are not probed again.
  const auto again = run_normlab({"run", (tmp / "c.toml").string(), "--out", out.string()});
  ASSERT_TRUE(again.exited && again.exit_code == 0) << again.describe();
  EXPECT_EQ(again.err.find("depth probe:"), std::string::npos) << again.err;
  // summary.md carries the depth table once, after the metric tables, also on a second run.
  const std::string md = testing::slurp(out / "summary.md");
  const size_t table = md.find("**depth probe** (3 validation sequences");
  ASSERT_NE(table, std::string::npos) << md;
  EXPECT_EQ(md.find("**depth probe**", table + 1), std::string::npos) << md;
  EXPECT_LT(md.find("(mean [95% interval] across seeds)"), table) << md;
  EXPECT_NE(md.find("| block_attnres(1) | "), std::string::npos) << md;
}

TEST(ExperimentFile, ProbeSectionIsStrict) {
  std::string err = experiment_error(std::string(kValid) + "[probe]\ndepht = true\n");
  EXPECT_NE(
      err.find("unknown key 'depht' in [probe]; allowed: batch, bridge, depth, dilution, length, "
               "lengths, samples, variance"),
      std::string::npos)
      << err;
  err = experiment_error(std::string(kValid) + "[probe]\ndepth = true\nlength = 9\n");
  EXPECT_NE(err.find("length 9 is outside"), std::string::npos) << err;
}

TEST(ExperimentFile, ValidationLengthOutsideTheTaskRange) {
  std::string text = kValid;
  text.replace(text.find("checkpoint_every = 20"), 21,
               "checkpoint_every = 20\neval_every = 5\neval_length = 6");
  const std::string err = experiment_error(text);
  EXPECT_NE(err.find("eval_length"), std::string::npos) << err;
  EXPECT_NE(err.find("length 6 is outside its range"), std::string::npos) << err;
}

// Every training experiment shipped in experiments/ reads without error.
// A shipped file read as `normlab run FILE --tier TIER` reads it ("" : a file without tiers),
// [sweep] grids included.
Experiment read_shipped(const std::string& name, const std::string& tier) {
  const auto path = std::filesystem::path(NORMLAB_SOURCE_DIR) / "experiments" / (name + ".toml");
  return read_swept_experiment([&] { return load_experiment_document(path, tier, {}); },
                               path.string());
}

// Every training study, at every tier it has.
TEST(ExperimentFile, ShippedFilesAreValid) {
  const std::filesystem::path dir = std::filesystem::path(NORMLAB_SOURCE_DIR) / "experiments";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    auto table = parse_toml_file(entry.path());
    if (table->get("kind") != nullptr && table->get("kind")->value_or(std::string()) != "train") {
      continue;
    }
    std::vector<std::string> tiers = tier_names(*table, entry.path().string());
    if (tiers.empty()) tiers.push_back("");
    for (const std::string& tier : tiers) {
      SCOPED_TRACE(entry.path().string() + " tier " + tier);
      EXPECT_NO_THROW(read_shipped(entry.path().stem().string(), tier));
      ++checked;
    }
  }
  EXPECT_GE(checked, 16);
}

// The studies of the claims ledger have a quick and a full tier that differ only in budget:
// the same variants, models, task and metrics, the quick tier's lengths a subset of the full
// tier's (D2's dense grid, docs/claims.md, is for the verdicts) with its longest; the full tier
// has at least as many steps and at least five seeds (three for the depth study).
TEST(ExperimentFile, TiersKeepTheDesign) {
  for (const char* name :
       {"resharpen_set_complement", "resharpen_width", "resharpen_max_retrieval", "resharpen_dyck",
        "resharpen_tomita", "vanishing_variance_argmax", "vanishing_variance_dict",
        "depth_charlm_L16", "open_resharpen_depth", "open_variance_pos", "open_attnres_norms",
        "open_charlm_length", "open_variance_depth", "open_width_max_retrieval", "open_width_dyck",
        "open_variance_pos_dict", "open_resharpen_depth_dyck"}) {
    SCOPED_TRACE(name);
    const Experiment quick = read_shipped(name, "quick"), full = read_shipped(name, "full");
    ASSERT_EQ(quick.variants.size(), full.variants.size());
    for (size_t i = 0; i < quick.variants.size(); ++i) {
      EXPECT_EQ(quick.variants[i].label, full.variants[i].label);
      EXPECT_EQ(to_json(quick.variants[i].model), to_json(full.variants[i].model));
    }
    EXPECT_EQ(quick.task, full.task);
    for (int64_t n : quick.eval.lengths) {
      EXPECT_NE(std::find(full.eval.lengths.begin(), full.eval.lengths.end(), n),
                full.eval.lengths.end())
          << "quick length " << n;
    }
    EXPECT_EQ(quick.eval.lengths.back(), full.eval.lengths.back());
    EXPECT_EQ(quick.weights, full.weights);
    EXPECT_EQ(quick.train.min_len, full.train.min_len);
    EXPECT_EQ(quick.train.max_len, full.train.max_len);
    EXPECT_EQ(quick.train.decay, full.train.decay);
    EXPECT_LE(quick.train.steps, full.train.steps);
    EXPECT_GE(full.seeds.size(), std::string(name) == "depth_charlm_L16" ? 3u : 5u);
    EXPECT_GE(quick.seeds.size(), 2u);
  }
}

// The paper's minimal models of 2510.08341 have no norm after the residual add but where the
// scheme puts one: no final norm in any variant of its studies.
TEST(ExperimentFile, PostNormPaperStudiesHaveNoFinalNorm) {
  for (const char* name : {"quick", "resharpen_set_complement", "resharpen_width",
                           "resharpen_max_retrieval", "resharpen_dyck", "resharpen_tomita"}) {
    SCOPED_TRACE(name);
    const Experiment e = read_shipped(name, std::string(name) == "quick" ? "" : "quick");
    for (const Variant& v : e.variants) {
      EXPECT_FALSE(resolve_scheme(v.model).final_norm) << v.label;
    }
  }
}

// The vanishing-variance studies: the baseline and the proposals differ only in the attention
// sublayer's norms (2504.02827, docs/reference.md §5).
TEST(ExperimentFile, VanishingVarianceBlocksDifferOnlyInTheAttentionNorm) {
  for (const char* name : {"vanishing_variance_argmax", "vanishing_variance_dict"}) {
    SCOPED_TRACE(name);
    const Experiment e = read_shipped(name, "quick");
    ASSERT_EQ(e.variants[0].label, "post_ln");
    const ResolvedScheme base = resolve_scheme(e.variants[0].model);
    EXPECT_TRUE(base.sublayers[0].norm_post);
    EXPECT_FALSE(base.sublayers[0].norm_out);
    for (size_t i = 1; i <= 2; ++i) {
      const ResolvedScheme r = resolve_scheme(e.variants[i].model);
      EXPECT_FALSE(r.sublayers[0].norm_post);
      EXPECT_TRUE(r.sublayers[0].norm_out);
      EXPECT_EQ(r.sublayers[0].kind_out, i == 1 ? NormKind::layernorm : NormKind::standardize);
      // The MLP sublayer, the final and embedding norms: exactly the baseline's.
      EXPECT_EQ(r.sublayers[1].norm_post, base.sublayers[1].norm_post);
      EXPECT_EQ(r.sublayers[1].kind_post, base.sublayers[1].kind_post);
      EXPECT_EQ(r.sublayers[1].norm_in, base.sublayers[1].norm_in);
      EXPECT_EQ(r.final_norm, base.final_norm);
      EXPECT_EQ(r.embed_norm, base.embed_norm);
    }
  }
}

// The depth studies: every scheme, validation curves of ~20 points, the final sweep at 1x, 2x
// and 4x the training window; L16 uses WSD with a validation point at the decay's first step.
TEST(ExperimentFile, DepthStudies) {
  for (const char* name : {"depth_charlm_L16", "depth_charlm_L32"}) {
    for (const char* tier : {"quick", "full"}) {
      if (std::string(name) == "depth_charlm_L32" && std::string(tier) == "quick") continue;
      SCOPED_TRACE(std::string(name) + " " + tier);
      const Experiment e = read_shipped(name, std::string(name) == "depth_charlm_L32" ? "" : tier);
      std::vector<std::string> schemes;
      for (const Variant& v : e.variants) schemes.push_back(v.label);
      EXPECT_EQ(schemes, (std::vector<std::string>{"pre", "post", "peri", "ngpt", "sqrt_scaling",
                                                   "attnres", "block_attnres(4)"}));
      EXPECT_EQ(e.task["name"], "char_lm");
      EXPECT_GE(e.variants[0].model.layers, 16);
      EXPECT_EQ(e.train.min_len, e.train.max_len);
      EXPECT_EQ(e.eval.lengths,
                (std::vector<int64_t>{e.train.max_len, 2 * e.train.max_len, 4 * e.train.max_len}));
      ASSERT_GT(e.train.eval_every, 0);
      EXPECT_EQ(e.train.steps % e.train.eval_every, 0);
      EXPECT_TRUE(e.probe_depth);
      if (e.train.decay == Decay::wsd) {
        const int64_t start =
            wsd_decay_start(e.train.steps, e.train.warmup, e.train.decay_fraction);
        EXPECT_EQ(start % e.train.eval_every, 0) << "no validation point at the decay's start";
        EXPECT_GE(e.train.steps / e.train.eval_every, 6);
      } else {
        EXPECT_EQ(e.train.steps / e.train.eval_every, 20);
      }
    }
  }
}

TEST(ExperimentRun, ChangedFileIntoTheSameFolderIsRefused) {
  TempDir tmp;
  std::ofstream(tmp / "tiny.toml") << kValid;
  const auto out = tmp / "results";
  ASSERT_EQ(run_normlab({"run", (tmp / "tiny.toml").string(), "--out", out.string()}).exit_code, 0);
  std::string changed = kValid;
  changed.replace(changed.find("steps = 40"), 10, "steps = 41");
  std::ofstream(tmp / "tiny.toml") << changed;
  const auto r = run_normlab({"run", (tmp / "tiny.toml").string(), "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  // The message names the key that changed, with both values.
  EXPECT_NE(r.err.find("holds a different run: train.steps was 40, now 41; use another output "
                       "directory, or remove that run folder to train it again"),
            std::string::npos)
      << r.err;
}

// A run folder written before a model field existed (no "dropout" in its run.json) is the same
// run as today's, whose dropout is the default 0: it resumes as finished, not refused.
TEST(ExperimentRun, RunWrittenBeforeAFieldExistedResumes) {
  TempDir tmp;
  std::ofstream(tmp / "tiny.toml") << kValid;
  const auto out = tmp / "results";
  ASSERT_EQ(run_normlab({"run", (tmp / "tiny.toml").string(), "--out", out.string()}).exit_code, 0);
  int edited = 0;
  for (const auto& entry : std::filesystem::directory_iterator(out / "runs")) {
    const std::filesystem::path file = entry.path() / "run.json";
    nlohmann::json j = nlohmann::json::parse(std::ifstream(file));
    ASSERT_EQ(j["model"].erase("dropout"), 1u) << file;
    std::ofstream(file) << j.dump(2);
    ++edited;
  }
  ASSERT_EQ(edited, 6);
  const auto r = run_normlab({"run", (tmp / "tiny.toml").string(), "--out", out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.err.find("0 to do, 6 already done"), std::string::npos) << r.describe();
}

}  // namespace
}  // namespace normlab

namespace normlab {
namespace {

// final_norm and embed_norm take a boolean as well as "auto", "on", "off" (issue 13, item 7).
TEST(ExperimentFile, ToggleKeysTakeBooleans) {
  for (const auto& [text, expected] :
       std::vector<std::pair<std::string, Toggle>>{{"true", Toggle::on},
                                                   {"false", Toggle::off},
                                                   {"\"off\"", Toggle::off},
                                                   {"\"auto\"", Toggle::automatic}}) {
    const std::string file = std::string(R"toml(name = "t"
schemes = ["pre"]
seeds = [1]
[task]
name = "set_complement"
v = 6
[model]
final_norm = )toml") + text + R"toml(
[train]
steps = 10
lengths = [1, 3]
[eval]
lengths = [2, 5]
)toml";
    const auto table = std::make_shared<toml::table>(toml::parse(std::string_view(file)));
    TomlSection top(table.get(), "t.toml", "top level");
    const Experiment e = read_experiment(top, "t.toml");
    EXPECT_EQ(e.variants.at(0).model.final_norm, expected) << text;
  }
}

}  // namespace
}  // namespace normlab
