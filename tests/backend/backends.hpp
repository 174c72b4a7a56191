// The backend stacks every conformance test runs on. Adding a backend or decorator
// stack to the suite is one line here.
#pragma once

#include <gtest/gtest.h>

#include "ember/autodiff/cpu.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::test {

using ConformanceBackends = ::testing::Types<ember::Cpu, ember::Autodiff<ember::Cpu>>;

/// Calls f.template operator()<B>() for every backend of the suite (for registering
/// fixture-driven tests).
template <class F>
void for_each_backend(F&& f) {
  f.template operator()<ember::Cpu>();
  f.template operator()<ember::Autodiff<ember::Cpu>>();
}

/// The CpuTensor under a primitive of a CPU-based stack (Cpu, Autodiff<Cpu>), for tests that
/// build strided views by hand or inspect storage.
template <class P>
const CpuTensor& cpu_prim(const P& p) {
  if constexpr (std::is_same_v<P, CpuTensor>)
    return p;
  else
    return cpu_prim(p.inner);
}
/// `like` with its CpuTensor replaced by `c` (an untracked constant for Autodiff).
template <class P>
P with_cpu_prim(const P& like, CpuTensor c) {
  if constexpr (std::is_same_v<P, CpuTensor>) {
    return c;
  } else {
    P out = like;
    out.inner = with_cpu_prim(like.inner, std::move(c));
    out.node = nullptr;
    return out;
  }
}

/// GoogleTest name generator: the backend's name().
struct BackendNames {
  template <class B>
  static std::string GetName(int) {
    return B::name();
  }
};

}  // namespace ember::test
