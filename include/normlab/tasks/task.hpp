// A task: a seeded generator of sequences with targets, and its metrics.
//
// Every task has a *task length* n (its own size: set elements, items, pairs, string
// length) and maps it to a model sequence length T = sequence_length(n). Positions with
// weight > 0 in the batch are the scored positions; evaluation computes logits only there.
// Definitions, vocabulary layouts and metrics of every task: docs/tasks.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "normlab/base/batch.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/tasks/metrics.hpp"

namespace normlab {

class TomlSection;

// The `max` of a task that has no longest length.
inline constexpr int64_t kNoLongestLength = int64_t{1} << 40;

// The lengths a task accepts: min ≤ n ≤ max, and n a multiple of `step`.
struct LengthRange {
  int64_t min = 1;
  int64_t max = kNoLongestLength;
  int64_t step = 1;
};

// The smallest multiple of r.step that is at least max(n, r.min): n itself when r accepts it
// (r.step ≥ 1; the result may pass r.max).
inline int64_t round_up_to_step(const LengthRange& r, int64_t n) {
  const int64_t at_least = n < r.min ? r.min : n;
  return (at_least + r.step - 1) / r.step * r.step;
}

// A block of consecutive token ids, [first, first + count).
struct TokenBlock {
  int32_t first = 0;
  int32_t count = 0;
  bool operator==(const TokenBlock&) const = default;
};

class Task {
 public:
  virtual ~Task() = default;

  // Name with parameters, e.g. "set_complement(v=16)".
  virtual std::string label() const = 0;
  // Vocabulary size V the model must have.
  virtual int vocab() const = 0;
  // Tokens per position (F); the model sums their embeddings.
  virtual int fields() const { return 1; }
  virtual LengthRange length_range() const = 0;
  // Why the range is what it is, appended to check_length's message (empty: nothing to add),
  // e.g. "T2 = (ab)* has no accepted string of odd length".
  virtual std::string length_rule() const { return {}; }
  // Model sequence length T for task length n.
  virtual int64_t sequence_length(int64_t n) const = 0;

  // Fills sequence b of `batch` (already resized to (B, sequence_length(n), V, fields())):
  // tokens, target distribution and weight at every position (weight 0 = unscored).
  // Uses only `rng`, so the same seed gives the same sequence.
  virtual void generate(int64_t n, Rng& rng, Batch& batch, int64_t b) const = 0;

  // The same for a held-out validation sequence. Tasks with a fixed data set (char_lm) draw it
  // from their validation split; a synthetic task's samples are fresh draws from the same
  // distribution, so the default is generate().
  virtual void generate_validation(int64_t n, Rng& rng, Batch& batch, int64_t b) const {
    generate(n, rng, batch, b);
  }

  // Adds sequence b's metric values. `logits` holds the rows of b's scored positions
  // (weight > 0), in position order, V values each.
  virtual void score(const Batch& batch, int64_t b, const float* logits,
                     MetricAccumulator& metrics) const = 0;

  // Names of the metrics score() adds, in order.
  virtual std::vector<std::string> metric_names() const = 0;

  // The block of token ids every target is drawn from, when the task has one: its output
  // classes, whose logits are the model's readout (the Chomsky-hierarchy tasks). nullopt: the
  // targets range over the vocabulary. `train.loss_over = "classes"` takes the loss over these
  // logits alone (docs/training.md, "The loss over the classes").
  virtual std::optional<TokenBlock> class_block() const { return std::nullopt; }

  // Throws UsageError "task LABEL: length n is outside its range; allowed: ... (RULE)" for a
  // length the task cannot produce.
  void check_length(int64_t n) const;

  // A batch of B sequences of task length n: training sequences, or with `validation` the
  // task's validation sequences (generate_validation; what evaluation uses).
  Batch make_batch(int64_t n, int64_t batch, Rng& rng, bool validation = false) const;
};

// Task parameters, as read from an experiment file or a checkpoint.
using TaskParam = std::variant<int64_t, double, std::string>;
using TaskParams = std::map<std::string, TaskParam>;

struct TaskParamDef {
  std::string name;
  TaskParam fallback;                // the default; its type is the parameter's type
  std::vector<std::string> choices;  // allowed values of a string parameter (empty: any)
  std::string help;
};

struct TaskInfo {
  std::string name;     // registry key, e.g. "set_complement"
  std::string summary;  // one line
  std::vector<TaskParamDef> params;
  // Builds the task; throws UsageError for invalid parameter values.
  std::function<std::unique_ptr<Task>(const TaskParams&)> make;
};

// Every registered task, in a fixed order.
const std::vector<TaskInfo>& task_registry();
const TaskInfo& find_task(const std::string& name);  // UsageError listing the tasks

// Reads `name` and the task's parameters from a [task] section, strictly (unknown keys and
// wrong types are errors with file and line). Missing parameters take their defaults.
std::unique_ptr<Task> make_task(TomlSection& section, TaskParams* resolved = nullptr);
// From {"name": ..., params...} as written by task_to_json.
std::unique_ptr<Task> make_task_from_json(const nlohmann::json& j);
nlohmann::json task_to_json(const std::string& name, const TaskParams& params);

// Typed access for task constructors (the registry has already checked the types).
int64_t param_int(const TaskParams& p, const std::string& name);
double param_double(const TaskParams& p, const std::string& name);
const std::string& param_string(const TaskParams& p, const std::string& name);

}  // namespace normlab
