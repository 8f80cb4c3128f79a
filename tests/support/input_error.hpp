// The message of the InputError a call throws, for tests of normlab's error messages.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "normlab/base/errors.hpp"

namespace normlab::testing {

// The message of the InputError `f` throws; fails the test when it throws nothing.
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

}  // namespace normlab::testing
