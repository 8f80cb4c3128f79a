// Floor (chance level) and ceiling (perfect score) of every task's metrics: the table of
// docs/tasks.md, "Floor and ceiling". Chance is a uniform guess: over the vocabulary for the
// distributional metrics (TVD: the evaluator's chance row; loss), over the tokens that can be
// the answer for the argmax metrics; for the Chomsky-hierarchy tasks, whose classes are not
// all equally frequent, the best answer that does not read the input on the study's own
// evaluation sequences (a class per position, BlindAnswer).
#include <fmt/format.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "normlab/claims/informativeness.hpp"
#include "normlab/eval/evaluator.hpp"
#include "normlab/tasks/task.hpp"
#include "tasks/char_lm.hpp"
#include "tasks/chomsky/chomsky_task.hpp"

namespace normlab::claims {

namespace {

MetricScale constant(double floor, double ceiling, std::string rule) {
  return {floor, ceiling, "", std::move(rule)};
}

MetricScale chance_row(const std::string& metric, double ceiling) {
  const std::string row = chance_metric_name(metric);
  return {0, ceiling, row,
          fmt::format("the {} rows (the uniform-over-the-vocabulary predictor on the same samples)",
                      row)};
}

}  // namespace

std::optional<MetricScale> metric_scale(const nlohmann::json& task, const std::string& metric,
                                        int64_t n) {
  const std::string name = task.at("name").get<std::string>();
  const auto param = [&](const char* key) { return task.at(key).get<double>(); };
  if (name == "set_complement") {
    if (metric == "tvd") return chance_row(metric, 0.0);
    if (metric == "accuracy") {
      // A uniform guess among the v elements is one of the v − s absent ones (s = n).
      const double v = param("v");
      return constant((v - static_cast<double>(n)) / v, 1.0,
                      fmt::format("(v − s)/v (v = {:g}, s = n)", v));
    }
  } else if (name == "max_retrieval") {
    if (metric == "accuracy") {
      // The answer is one of C classes, uniform and independent of the priorities; a study
      // recorded before the classes (one token per value, v of them) answers one of v values.
      if (task.contains("classes")) {
        const double classes = param("classes");
        return constant(1.0 / classes, 1.0, fmt::format("1/C (C = {:g} classes)", classes));
      }
      const double v = param("v");
      return constant(1.0 / v, 1.0, fmt::format("1/v (v = {:g})", v));
    }
  } else if (name == "dyck") {
    if (metric == "tvd") return chance_row(metric, 0.0);
  } else if (name == "tomita") {
    // Accept and reject are equally likely at every length; equal scores rank as ties (AUC ½)
    // and a guess between the two classes is right half the time.
    if (metric == "roc_auc") return constant(0.5, 1.0, "1/2 (equal scores)");
    if (metric == "accuracy") return constant(0.5, 1.0, "1/2 (balanced classes)");
  } else if (name == "argmax_retrieval" || name == "dict_lookup") {
    if (metric == "accuracy") {
      const double w = param("values");
      return constant(1.0 / w, 1.0, fmt::format("1/W (W = {:g} values)", w));
    }
  } else if (name == "char_lm") {
    const double V = static_cast<double>(char_lm::vocabulary().size());
    if (metric == "loss") return constant(std::log(V), 0.0, fmt::format("ln V (V = {:g})", V));
    if (metric == "bpc") return constant(std::log2(V), 0.0, fmt::format("log2 V (V = {:g})", V));
    if (metric == "accuracy") return constant(1.0 / V, 1.0, fmt::format("1/V (V = {:g})", V));
  } else if (const auto task_object = make_task_from_json(task);
             dynamic_cast<const ChomskyTask*>(task_object.get()) != nullptr) {
    // The Chomsky-hierarchy tasks: the best answer that does not read the input, a class per
    // output position, fitted to and scored on the study's own evaluation sequences.
    if (metric == "accuracy") {
      MetricScale s;
      s.ceiling = 1.0;
      s.blind_answer = true;
      s.rule =
          "the accuracy of the best class per output position, the input unread, on the study's "
          "own evaluation sequences at each length (recomputed from experiment.json)";
      return s;
    }
  }
  return std::nullopt;
}

}  // namespace normlab::claims
