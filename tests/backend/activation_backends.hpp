// Backends for the activation family's tests: the conformance backends, plus (once the
// element-wise / reduce / layout / linalg families are merged) `CpuComposite`, a test-only
// CPU backend whose fused activation kernels are deleted, so the front end's composite
// defaults run. A deleted function makes the front end's requires-check false.
// A static_assert keeps the composite run from silently dropping out.
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include "backends.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::test {

/// True when the front-end ops the composites use exist.
template <class B>
constexpr bool kHasCompositeOps = requires(Tensor<B, 2> t, Tensor<B, 2, Bool> m,
                                           Tensor<B, 2, Int> i, Tensor<B, 1, Int> i1) {
  t.clamp_min(0.0);
  t.clamp_max(0.0);
  t.clamp(0.0, 1.0);
  t.lower_elem(0.0);
  t.lower_equal_elem(0.0);
  t.greater_elem(0.0);
  t.equal_elem(0.0);
  t.mul_scalar(1.0);
  t.add_scalar(1.0);
  t.sub_scalar(1.0);
  t.div_scalar(1.0);
  t.mask_where(m, t);
  t.mask_fill(m, 0.0);
  t.mul(t);
  t.add(t);
  t.sub(t);
  t.div(t);
  t.neg();
  t.exp();
  t.log();
  t.log1p();
  t.recip();
  t.erf();
  t.tanh();
  t.abs();
  t.sqrt();
  t.narrow(0, 0, 1);
  t.max_dim(0);
  t.sum_dim(0);
  t.mean_dim(0);
  t.mean();
  t.var_mean_bias(0);
  t.matmul(t);
  t.transpose();
  t.swap_dims(0, 1);
  t.select(0, i1);
  t.gather(1, i);
  m.bool_not();
  m.all_dim(0);
  m.template expand<2>(Shape{1, 1});
  i.greater(i);
};

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
  static P float_batch_norm(const P&, const P&, const P&, const OptP&, const OptP&,
                            double) = delete;
  static P float_linear(const P&, const P&, const OptP&) = delete;
  static P float_embedding(const P&, const P&) = delete;
  static P float_scaled_dot_product_attention(const P&, const P&, const P&, const OptP&,
                                              const OptP&, bool, double) = delete;
  static P float_cross_entropy_with_logits(const P&, const P&) = delete;
  static P float_cross_entropy_with_indices(const P&, const P&) = delete;
};
template <class B>
constexpr bool kHasFastSoftmax = requires(typename B::FloatTensor p) {
  B::float_softmax(p, std::size_t{0});
};
static_assert(kHasFastSoftmax<ember::Cpu> && !kHasFastSoftmax<CpuComposite>,
              "a deleted override must switch the fast kernel off");

// Every family has landed: the composite paths must always be tested.
static_assert(kHasCompositeOps<ember::Cpu>,
              "an op used by the activation composites is missing from the front end");

using ActivationBackends =
    ::testing::Types<ember::Cpu, CpuComposite, ember::Autodiff<ember::Cpu>, ember::Dispatch>;
template <class F>
void for_each_activation_backend(F&& f) {
  for_each_backend(f);
  f.template operator()<CpuComposite>();
}

}  // namespace ember::test
