// The loss over the task's classes (train.loss_over = "classes"; src/train/class_loss.hpp,
// docs/training.md "The loss over the classes"):
//   - the loss and its gradient are those of a softmax over the C class logits alone, computed
//     here independently in double, and every other logit gets exactly zero gradient;
//   - a block of the whole vocabulary is the kernel itself, bit for bit;
//   - a scored target outside the block throws, an unscored one does not;
//   - the Chomsky tasks name their classes, other tasks refuse the option, in code and in an
//     experiment file (with its file and line);
//   - in training, the readout of the tokens outside the block gets no gradient and, with no
//     weight decay, never moves, and periodic validation runs over the classes too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/model/checkpoint.hpp"
#include "normlab/model/model.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/train_step.hpp"
#include "normlab/train/trainer.hpp"
#include "support/cli.hpp"
#include "support/experiment_file.hpp"
#include "train/class_loss.hpp"

namespace normlab {
namespace {

using testing::experiment_error;
using testing::TempDir;

// N rows of V logits; row n's target: soft over classes c0 + (n mod C) and c0 + ((n + 2) mod C)
// (0.7, 0.3; ascending), or one-hot on c0 + (n mod C) for even n; weights 1, 2 and 0 in turn.
template <typename T>
struct Rows {
  int64_t N = 0;
  int V = 0;
  std::vector<T> logits, weight, probs;
  std::vector<int32_t> tokens;
  std::vector<int64_t> offsets{0};

  Rows(int64_t n, int v, int32_t c0, int C, uint64_t seed) : N(n), V(v) {
    Rng rng(seed);
    for (int64_t k = 0; k < N * V; ++k) logits.push_back(static_cast<T>(3.0 * rng.normal()));
    for (int64_t r = 0; r < N; ++r) {
      weight.push_back(static_cast<T>(r % 3 == 2 ? 0 : 1 + r % 3));
      const int32_t a = c0 + static_cast<int32_t>(r % C);
      const int32_t b = c0 + static_cast<int32_t>((r + 2) % C);
      if (r % 2 == 0 || a == b) {
        tokens.push_back(a);
        probs.push_back(T(1));
      } else {
        tokens.push_back(std::min(a, b));
        tokens.push_back(std::max(a, b));
        probs.push_back(static_cast<T>(a < b ? 0.7 : 0.3));
        probs.push_back(static_cast<T>(a < b ? 0.3 : 0.7));
      }
      offsets.push_back(static_cast<int64_t>(tokens.size()));
    }
  }
  SparseTargets<T> targets() const {
    return {
        .slot = nullptr, .offsets = offsets.data(), .tokens = tokens.data(), .probs = probs.data()};
  }
};

// The loss Σ_n w_n Σ_k −p_k log softmax_C(z_n)_{t_k} / Σ_n w_n over the C logits of the block,
// and its gradient (N, V): w_n (softmax_C(z_n) Σ_k p_k − p_n) / Σ w on the block, 0 elsewhere.
template <typename T>
double reference(const Rows<T>& r, int32_t c0, int C, std::vector<double>& grad) {
  double total_w = 0, loss = 0;
  for (int64_t n = 0; n < r.N; ++n) total_w += static_cast<double>(r.weight[n]);
  grad.assign(r.N * r.V, 0.0);
  for (int64_t n = 0; n < r.N; ++n) {
    const double w = static_cast<double>(r.weight[n]);
    if (w == 0) continue;
    const T* z = r.logits.data() + n * r.V + c0;
    double zmax = -INFINITY;
    for (int j = 0; j < C; ++j) zmax = std::max(zmax, static_cast<double>(z[j]));
    double sum = 0;
    for (int j = 0; j < C; ++j) sum += std::exp(static_cast<double>(z[j]) - zmax);
    const double lse = zmax + std::log(sum);
    double psum = 0;
    std::vector<double> p(C, 0.0);
    for (int64_t k = r.offsets[n]; k < r.offsets[n + 1]; ++k) {
      const double pk = static_cast<double>(r.probs[k]);
      p[r.tokens[k] - c0] += pk;
      psum += pk;
      loss += w * pk * (lse - static_cast<double>(z[r.tokens[k] - c0]));
    }
    for (int j = 0; j < C; ++j) {
      const double softmax = std::exp(static_cast<double>(z[j]) - lse);
      grad[n * r.V + c0 + j] = w * (softmax * psum - p[j]) / total_w;
    }
  }
  return loss / total_w;
}

template <typename T>
void check_against_reference(double tolerance) {
  // V = 40 with the block [23, 35): the rest of the vocabulary on both sides, rows beyond one
  // 16-lane block and a block that is not aligned to one.
  const int V = 40, C = 12;
  const int32_t c0 = 23;
  const Rows<T> r(37, V, c0, C, 3);
  std::vector<T> dlogits(r.N * r.V, T(7));  // overwritten, every element
  const double loss = cross_entropy_over(r.logits.data(), r.targets(), r.weight.data(),
                                         dlogits.data(), r.N, V, TokenBlock{c0, C});
  std::vector<double> grad;
  const double expected = reference(r, c0, C, grad);
  EXPECT_NEAR(loss, expected, tolerance * std::abs(expected));
  // The whole vocabulary's loss is another number: the option changes the loss.
  const double whole = cross_entropy(r.logits.data(), r.targets(), r.weight.data(),
                                     static_cast<T*>(nullptr), r.N, V);
  EXPECT_GT(std::abs(whole - expected), 0.1);
  double scale = 0;
  for (double g : grad) scale = std::max(scale, std::abs(g));
  for (int64_t n = 0; n < r.N; ++n) {
    for (int v = 0; v < V; ++v) {
      const T g = dlogits[n * V + v];
      if (v < c0 || v >= c0 + C || r.weight[n] == T(0)) {
        EXPECT_EQ(g, T(0)) << "row " << n << " token " << v;
        EXPECT_FALSE(std::signbit(g)) << "row " << n << " token " << v;
      } else {
        EXPECT_NEAR(static_cast<double>(g), grad[n * V + v], tolerance * scale)
            << "row " << n << " token " << v;
      }
    }
  }
  // Without dlogits: the same loss.
  EXPECT_EQ(cross_entropy_over(r.logits.data(), r.targets(), r.weight.data(),
                               static_cast<T*>(nullptr), r.N, V, TokenBlock{c0, C}),
            loss);
}

TEST(ClassLoss, IsTheSoftmaxOverTheClassLogitsInFloat) {
  check_against_reference<float>(2e-6);
}

TEST(ClassLoss, IsTheSoftmaxOverTheClassLogitsInDouble) {
  check_against_reference<double>(1e-6);  // the kernel's exp is an approximation (fast_math)
}

// The kernel's exp approximation bounds the double case; the float case equals the kernel over
// a compact copy of the block, so both are the same numbers as a model whose readout has C
// outputs. A block of the whole vocabulary is then the kernel itself.
TEST(ClassLoss, TheWholeVocabularyAsABlockIsTheKernel) {
  const int V = 21;
  const Rows<float> r(30, V, 0, V, 5);
  std::vector<float> a(r.N * V), b(r.N * V), c(r.N * V);
  const double la = cross_entropy(r.logits.data(), r.targets(), r.weight.data(), a.data(), r.N, V);
  const double lb = cross_entropy_over(r.logits.data(), r.targets(), r.weight.data(), b.data(), r.N,
                                       V, TokenBlock{0, V});
  const double lc = cross_entropy_over(r.logits.data(), r.targets(), r.weight.data(), c.data(), r.N,
                                       V, std::nullopt);
  EXPECT_EQ(la, lb);
  EXPECT_EQ(la, lc);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
}

TEST(ClassLoss, AScoredTargetOutsideTheBlockThrows) {
  const int V = 10;
  Rows<float> r(4, V, 5, 4, 7);  // targets in [5, 9)
  std::vector<float> d(r.N * V);
  EXPECT_NO_THROW(cross_entropy_over(r.logits.data(), r.targets(), r.weight.data(), d.data(), r.N,
                                     V, TokenBlock{5, 4}));
  r.tokens[r.offsets[1]] = 2;  // row 1 (weight 2) now targets token 2, outside the block
  try {
    cross_entropy_over(r.logits.data(), r.targets(), r.weight.data(), d.data(), r.N, V,
                       TokenBlock{5, 4});
    FAIL() << "a target outside the block was accepted";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("token ids 5 to 8 (train.loss_over = \"classes\")"), std::string::npos)
        << what;
    EXPECT_NE(what.find("scored row 1 has token 2"), std::string::npos) << what;
  }
  // Unscored (weight 0): not read, not refused.
  r.weight[1] = 0.0f;
  EXPECT_NO_THROW(cross_entropy_over(r.logits.data(), r.targets(), r.weight.data(), d.data(), r.N,
                                     V, TokenBlock{5, 4}));
}

std::unique_ptr<Task> task_named(const std::string& name) {
  return make_task_from_json(nlohmann::json{{"name", name}});
}

TEST(ClassLoss, TheChomskyTasksNameTheirClasses) {
  TrainConfig tc;
  EXPECT_EQ(loss_logits(tc, *task_named("parity_check")), std::nullopt);
  tc.loss_over = LossOver::classes;
  // parity_check: input ids 0, 1, the empty token 2, classes 3, 4.
  EXPECT_EQ(loss_logits(tc, *task_named("parity_check")), (TokenBlock{3, 2}));
  // Every Chomsky task: the block is its last K ids, each target inside it.
  for (const TaskInfo& info : task_registry()) {
    std::unique_ptr<Task> task = task_named(info.name);
    const std::optional<TokenBlock> block = task->class_block();
    if (!block) continue;
    EXPECT_EQ(block->first + block->count, task->vocab()) << info.name;
    Rng rng(1);
    const Batch b = task->make_batch(5, 8, rng);
    for (int64_t n = 0; n < b.batch * b.len; ++n) {
      const TargetView t = b.target(n);
      for (int64_t k = 0; k < t.size; ++k) {
        EXPECT_GE(t.tokens[k], block->first) << info.name;
        EXPECT_LT(t.tokens[k], block->first + block->count) << info.name;
      }
    }
  }
  try {
    loss_logits(tc, *task_named("set_complement"));
    FAIL() << "set_complement accepted loss_over = classes";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("task set_complement("), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(") has none"), std::string::npos) << e.what();
  }
}

TEST(ExperimentFile, LossOverClassesNeedsATaskWithClasses) {
  std::string text = testing::kTinyExperiment;
  text.replace(text.find("lr = 0.01"), 9, "lr = 0.01\nloss_over = \"classes\"");
  const std::string err = experiment_error(text);
  EXPECT_NE(err.find("loss_over = \"classes\" needs a task whose targets are a block of output "
                     "classes"),
            std::string::npos)
      << err;
  // The message names the line of loss_over.
  const std::string before = text.substr(0, text.find("loss_over"));
  const int64_t line = std::count(before.begin(), before.end(), '\n') + 1;
  EXPECT_NE(err.find(":" + std::to_string(line) + ":"), std::string::npos) << err;
  std::string chomsky = text;
  chomsky.replace(chomsky.find("name = \"set_complement\"\nv = 6"), 29, "name = \"parity_check\"");
  Experiment e;
  ASSERT_EQ(experiment_error(chomsky, &e), "");
  EXPECT_EQ(e.train.loss_over, LossOver::classes);
  EXPECT_EQ(to_json(e.train).at("loss_over"), "classes");
}

// A run over a Chomsky task with its loss over the classes and a bias on the readout: every
// readout row and bias entry outside the classes gets no gradient, and (no weight decay, Adam
// moves nothing without a gradient) ends where it started; the classes' rows move.
TEST(ClassLoss, TrainingLeavesTheOtherReadoutRowsWhereTheyStarted) {
  TempDir tmp;
  RunSpec spec;
  spec.label = "class loss";
  spec.task = {{"name", "parity_check"}};
  spec.model.vocab = 5;
  spec.model.width = 8;
  spec.model.heads = 2;
  spec.model.layers = 1;
  spec.model.causal = false;
  spec.model.scheme = Scheme::post;
  spec.model.readout_bias = true;
  spec.model.mlp_bias = true;
  spec.train.steps = 12;
  spec.train.batch = 8;
  spec.train.min_len = 1;
  spec.train.max_len = 6;
  spec.train.warmup = 0;
  spec.train.adam.weight_decay = 0.0;
  spec.train.log_every = 1;
  spec.train.eval_every = 4;
  spec.train.eval_batches = 2;
  spec.train.loss_over = LossOver::classes;
  prepare_run(tmp / "run", spec);
  const RunOutcome out = train_run(tmp / "run", false, {});
  ASSERT_EQ(out.status, RunStatus::finished) << out.message;

  Model<float> start(spec.model);
  start.init(spec.train.seed);
  const std::unique_ptr<Model<float>> end = load_checkpoint(tmp / "run" / "final");
  const TensorSpec* u = start.layout().find("unembed.weight");
  const TensorSpec* b = start.layout().find("unembed.bias");
  const int D = spec.model.width;
  for (int v = 0; v < 5; ++v) {
    const bool cls = v >= 3;  // parity_check's classes: ids 3, 4
    bool moved = false;
    for (int d = 0; d < D; ++d) {
      moved |= end->params()[u->offset + v * D + d] != start.params()[u->offset + v * D + d];
    }
    EXPECT_EQ(moved, cls) << "readout row " << v;
    EXPECT_EQ(end->params()[b->offset + v] != start.params()[b->offset + v], cls)
        << "readout bias " << v;
  }
  // The periodic validation ran: finite losses at steps 0, 4, 8, 12.
  std::ifstream in(tmp / "run" / "metrics.jsonl");
  int validations = 0;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (!j.contains("val_loss")) continue;
    ++validations;
    EXPECT_TRUE(std::isfinite(j.at("val_loss").get<double>())) << line;
    // Over two classes: near log 2 = 0.69, not log 5 = 1.61 as over the vocabulary.
    EXPECT_LT(j.at("val_loss").get<double>(), 1.2) << line;
  }
  EXPECT_EQ(validations, 4);
}

// One batch's gradient: the readout rows outside the classes get exactly 0.
TEST(ClassLoss, LossAndGradsGiveTheOtherReadoutRowsNoGradient) {
  ModelConfig c;
  c.vocab = 5;
  c.width = 8;
  c.layers = 1;
  c.readout_bias = true;
  Model<float> model(c);
  model.init(2);
  Rng rng(3);
  const Batch batch = task_named("parity_check")->make_batch(4, 6, rng);
  std::vector<float> dlogits;
  const double whole = loss_and_grads(model, batch, dlogits);
  const TensorSpec* u = model.layout().find("unembed.weight");
  EXPECT_NE(model.grads()[u->offset], 0.0f);  // over the vocabulary every row has one
  const double classes = loss_and_grads(model, batch, dlogits, TokenBlock{3, 2});
  EXPECT_LT(classes, whole);
  const TensorSpec* b = model.layout().find("unembed.bias");
  for (int v = 0; v < 5; ++v) {
    double sum = 0;
    for (int d = 0; d < c.width; ++d) sum += std::abs(model.grads()[u->offset + v * c.width + d]);
    sum += std::abs(model.grads()[b->offset + v]);
    if (v < 3) {
      EXPECT_EQ(sum, 0.0) << "readout row " << v;
    } else {
      EXPECT_GT(sum, 0.0) << "readout row " << v;
    }
  }
}

}  // namespace
}  // namespace normlab
