// Checks of one parameter tensor in a model's layout, shared by the tests of the layouts that
// schemes and norm kinds add.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "normlab/model/model.hpp"

namespace normlab::testing {

// The tensor `name` exists with shape (size), every element exactly `value` after init, and no
// weight decay.
inline void expect_constant_tensor(const Model<float>& m, const std::string& name, int64_t size,
                                   float value) {
  const TensorSpec* t = m.layout().find(name);
  ASSERT_NE(t, nullptr) << name;
  EXPECT_EQ(t->shape, std::vector<int64_t>{size}) << name;
  EXPECT_FALSE(t->decay) << name;
  for (int64_t i = t->offset; i < t->offset + t->size; ++i) {
    EXPECT_EQ(m.params()[i], value) << name;
  }
}

// The layout's tensor `name`; throws std::logic_error when the layout has none.
inline const TensorSpec& tensor_named(const Model<double>& m, const std::string& name) {
  const TensorSpec* t = m.layout().find(name);
  if (t == nullptr) throw std::logic_error("no tensor " + name);
  return *t;
}

}  // namespace normlab::testing
