// Backends for the activation family's tests: the conformance backends, plus (once the
// element-wise / reduce / layout / linalg families are merged) `CpuComposite`, a test-only
// CPU backend whose fused activation kernels are deleted, so the front end's composite
// defaults run. A deleted function makes the front end's requires-check false.
#pragma once

#include "backends.hpp"
#include "ember/cpu/cpu.hpp"

namespace ember::test {

// Set to 1 when the families the composites use are merged.
#ifndef EMBER_ACTIVATION_COMPOSITE_TESTS
#define EMBER_ACTIVATION_COMPOSITE_TESTS 0
#endif

#if EMBER_ACTIVATION_COMPOSITE_TESTS
struct CpuComposite : ember::Cpu {
  using P = CpuTensor;
  using OptP = std::optional<CpuTensor>;
  static std::string name() { return "cpu_composite"; }
  static P float_relu(P) = delete;
  static P float_relu6(P) = delete;
  static P float_leaky_relu(P, double) = delete;
  static P float_gelu(P) = delete;
  static P float_gelu_tanh(P) = delete;
  static P float_silu(P) = delete;
  static P float_mish(P) = delete;
  static P float_sigmoid(P) = delete;
  static P float_hard_sigmoid(P, double, double) = delete;
  static P float_hard_swish(P) = delete;
  static P float_log_sigmoid(P) = delete;
  static P float_softplus(P, double, double) = delete;
  static P float_softsign(P) = delete;
  static P float_elu(P, double) = delete;
  static P float_celu(P, double) = delete;
  static P float_selu(P) = delete;
  static P float_tanhshrink(P) = delete;
  static P float_hard_shrink(P, double) = delete;
  static P float_soft_shrink(P, double) = delete;
  static P float_prelu(const P&, const P&) = delete;
  static P float_glu(const P&, std::size_t) = delete;
  static P float_softmax(const P&, std::size_t) = delete;
  static P float_log_softmax(const P&, std::size_t) = delete;
  static P float_softmin(const P&, std::size_t) = delete;
  static P float_quiet_softmax(const P&, std::size_t) = delete;
  static P float_layer_norm(const P&, std::size_t, const OptP&, const OptP&, double) = delete;
  static P float_rms_norm(const P&, const OptP&, double) = delete;
  static P float_group_norm(const P&, std::int64_t, const OptP&, const OptP&, double) = delete;
  static P float_batch_norm(const P&, const P&, const P&, const OptP&, const OptP&, double) = delete;
  static P float_linear(const P&, const P&, const OptP&) = delete;
  static P float_embedding(const P&, const P&) = delete;
  static P float_scaled_dot_product_attention(const P&, const P&, const P&, const OptP&, const OptP&, bool,
                                              double) = delete;
  static P float_cross_entropy_with_logits(const P&, const P&) = delete;
  static P float_cross_entropy_with_indices(const P&, const P&) = delete;
};
using ActivationBackends = ::testing::Types<ember::Cpu, CpuComposite>;
template <class F>
void for_each_activation_backend(F&& f) {
  f.template operator()<ember::Cpu>();
  f.template operator()<CpuComposite>();
}
#else
using ActivationBackends = ConformanceBackends;
template <class F>
void for_each_activation_backend(F&& f) {
  for_each_backend(f);
}
#endif

}  // namespace ember::test
