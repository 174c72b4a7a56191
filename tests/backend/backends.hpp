// The backend stacks every conformance test runs on. Adding a backend or decorator
// stack to the suite is one line here.
#pragma once

#include <gtest/gtest.h>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::test {

using ConformanceBackends = ::testing::Types<ember::Cpu>;

/// Calls f.template operator()<B>() for every backend of the suite (for registering
/// fixture-driven tests).
template <class F>
void for_each_backend(F&& f) {
  f.template operator()<ember::Cpu>();
}

/// GoogleTest name generator: the backend's name().
struct BackendNames {
  template <class B>
  static std::string GetName(int) {
    return B::name();
  }
};

}  // namespace ember::test
