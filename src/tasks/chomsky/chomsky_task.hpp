// A task of "Neural Networks and the Chomsky Hierarchy" (Delétang et al., arXiv 2207.02098) as
// its reference code feeds it to the non-autoregressive encoder (docs/benchmarks/
// chomsky_hierarchy.md §3): the L input tokens, then output_length(L) copies of an empty token;
// the answer is read at those last positions and scored by per-token accuracy (the paper's
// A(x, y), §4), the argmax taken over the output classes as the reference's readout does.
//
// Vocabulary: the reference's input ids 0..I−1, then the empty token I, then its output classes
// 0..K−1 as I+1..I+K. Every output position carries a one-hot target and weight 1 (the
// reference's loss is not masked).
//
// Letters: L task length, N = input_length(L) input tokens, O = output_length(N), T = N + O,
// I input ids, K output classes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "normlab/tasks/task.hpp"

namespace normlab {

class ChomskyTask : public Task {
 public:
  // termination: the class that ends the answer, after which the reference's accuracy mask
  // scores nothing (stack_manipulation, binary_addition, binary_multiplication); −1: none.
  ChomskyTask(std::string name, int input_ids, int output_classes, int32_t termination = -1)
      : name_(std::move(name)),
        input_ids_(input_ids),
        output_classes_(output_classes),
        termination_(termination) {}

  // The input's length for task length L (the reference's own rule; L for all but
  // modular_arithmetic), and the answer's length for input length N: 1 for a classification.
  virtual int64_t input_length(int64_t L) const { return L; }
  virtual int64_t output_length(int64_t N) const { return 1; }
  // One sample: input (N = input_length(L)) ids in 0..I−1 and output (output_length(N))
  // classes in 0..K−1, drawn as the reference draws them (the distribution, not its random
  // stream).
  virtual void sample(int64_t N, Rng& rng, std::vector<int32_t>& input,
                      std::vector<int32_t>& output) const = 0;

  std::string label() const override { return name_; }
  int vocab() const override { return input_ids_ + 1 + output_classes_; }
  LengthRange length_range() const override { return {1, LengthRange{}.max, 1}; }
  int64_t sequence_length(int64_t L) const override {
    return input_length(L) + output_length(input_length(L));
  }
  void generate(int64_t L, Rng& rng, Batch& batch, int64_t b) const override;
  // accuracy: whether the argmax over the K classes is the target's, one proportion per
  // scored position, pooled over all the sequences of a test length: right positions over
  // scored positions, so a sequence weighs by its scored positions (the reference's
  // sum(mask · correct) / sum(mask), experiments/example.py). The scored positions are all O
  // outputs; with a termination class, those up to and including the first whose target is it
  // (the reference's accuracy_mask). With every sequence of a length scoring the same O
  // positions (the twelve tasks without one) this is the mean of the per-sequence ratios.
  void score(const Batch& batch, int64_t b, const float* logits,
             MetricAccumulator& metrics) const override;
  std::vector<std::string> metric_names() const override { return {"accuracy"}; }
  // The K classes, ids I+1..I+K: the reference's readout has exactly their logits.
  std::optional<TokenBlock> class_block() const override {
    return TokenBlock{class_token(0), output_classes_};
  }

  int output_classes() const { return output_classes_; }
  int32_t empty_token() const { return input_ids_; }
  // The end class after which no position is scored; −1 for the tasks without one.
  int32_t termination_class() const { return termination_; }
  int32_t class_token(int32_t k) const { return input_ids_ + 1 + k; }

 private:
  std::string name_;
  int input_ids_;
  int output_classes_;
  int32_t termination_;
};

}  // namespace normlab
