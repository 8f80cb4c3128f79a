// A kernel's gradient check as a declaration, one struct per case (as ggml's
// tests/test-backend-ops.cpp declares its op cases):
//
//   const auto forward = [&] {  // y = gelu(x), x (n)
//     activation_forward(Activation::gelu, x.data(), y.data(), n);
//     return y;
//   };
//   const auto backward = [&](const std::vector<double>& dy) {  // dx = gelu'(x) ⊙ dy
//     activation_backward(Activation::gelu, x.data(), dy.data(), dx.data(), n);
//   };
//   check_gradients({.name = "gelu n64",
//                    .tensors = {{"x", &x, &dx}},
//                    .forward = forward,
//                    .backward = backward});
//
// check_gradients runs the forward once on the tensors as they are, draws w ~ N(0, 1) of the
// output's size, runs the backward with dL/dy = w for L = Σ w ⊙ y, and then, tensor by tensor,
// bounds relative_error(analytic, central differences of L) over the checked elements by
// kGradTolerance, the failure naming the case and the tensor.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "normlab/base/rng.hpp"
#include "support/gradcheck.hpp"

namespace normlab::testing {

// One input or parameter of the kernel.
struct KernelTensor {
  std::string name;
  std::vector<double>* values;          // perturbed in place by the central differences, restored
  const std::vector<double>* gradient;  // the analytic dL/d values, laid out as *values
  std::vector<int64_t> checked = {};    // the indices compared (gradcheck.hpp); empty: all
  // The gradient is zero by construction (attention's q and k with one key): the analytic one
  // exactly, ‖a‖ < 1e-14, and the central differences' to their rounding, ‖n‖ < 1e-9.
  bool zero = false;
};

struct KernelCase {
  std::string name;
  std::vector<KernelTensor> tensors;
  // y, computed from the tensors' current values.
  std::function<std::vector<double>()> forward;
  // Given dL/dy (y's size), fills every tensor's `gradient`. It runs right after the forward of
  // the unperturbed tensors, so it may read what that forward kept (statistics, probabilities).
  std::function<void(const std::vector<double>& dy)> backward;
};

// What a backward that adds ("+=") added: after − before, elementwise.
inline std::vector<double> added(const std::vector<double>& after,
                                 const std::vector<double>& before) {
  std::vector<double> out(after.size());
  for (size_t i = 0; i < after.size(); ++i) out[i] = after[i] - before[i];
  return out;
}

inline void check_gradients(const KernelCase& c) {
  constexpr uint64_t kWeightSeed = 0x6772616463686b;  // "gradchk"
  Rng rng(kWeightSeed);
  const std::vector<double> w =
      random_normal(rng, static_cast<int64_t>(c.forward().size()));  // dL/dy
  c.backward(w);
  const std::function<double()> loss = [&] { return weighted_sum(w, c.forward()); };
  for (const KernelTensor& t : c.tensors) {
    ASSERT_EQ(t.gradient->size(), t.values->size()) << c.name << ": gradient of " << t.name;
    const std::vector<int64_t> checked =
        t.checked.empty() ? all_elements(static_cast<int64_t>(t.values->size())) : t.checked;
    std::vector<double> analytic;
    for (const int64_t i : checked) analytic.push_back((*t.gradient)[i]);
    const std::vector<double> numeric = numeric_gradient(*t.values, loss, checked);
    if (t.zero) {
      EXPECT_LT(norm2(analytic), 1e-14) << c.name << ": gradient of " << t.name;
      EXPECT_LT(norm2(numeric), 1e-9) << c.name << ": central differences of " << t.name;
    } else {
      EXPECT_LT(relative_error(analytic, numeric), kGradTolerance)
          << c.name << ": gradient of " << t.name;
    }
  }
}

}  // namespace normlab::testing
