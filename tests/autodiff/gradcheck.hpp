// Finite-difference gradient checks for Autodiff<Cpu>.
//
// gradcheck<D>(f, inputs) builds f64 leaves from `inputs` (each of rank D; by default also
// as non-contiguous views: the values are stored transposed and swapped back), evaluates
// L = sum(f(leaves) * W) with fixed pseudo-random weights W (so every output element gets
// its own gradient), and compares dL/dx from backward() with central differences
// (L(x + eps) - L(x - eps)) / 2 eps per element:
//   |analytic - numeric| <= rtol * max(|analytic|, |numeric|) + atol.
// It also checks that the gradients are the same with gradient checkpointing on.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/tensor.hpp"
#ifdef EMBER_GRAD_DISPATCH
#include "ember/dispatch/dispatch.hpp"
#endif
#ifdef EMBER_GRAD_VULKAN
#include "ember/autodiff/vulkan.hpp"
#endif
#ifdef EMBER_GRAD_CUDA
#include "ember/autodiff/cuda.hpp"
#endif
#if defined(EMBER_GRAD_ON_FUSION) && defined(EMBER_GRAD_VULKAN)
#include "ember/autodiff/fusion_vulkan.hpp"
#endif
#if defined(EMBER_GRAD_ON_FUSION) && defined(EMBER_GRAD_CUDA)
#include "ember/autodiff/fusion_cuda.hpp"
#endif
#ifdef EMBER_GRAD_FUSION
#include "ember/autodiff/fusion_cpu.hpp"
#endif

namespace ember::test {

#if defined(EMBER_GRAD_ON_FUSION) && defined(EMBER_GRAD_VULKAN)
/// The gradient suite on Autodiff<Fusion<Vulkan>> / <Cuda> (ember_autodiff_fusion_vulkan_tests,
/// ..._cuda_tests): forward and backward element-wise chains as generated kernels.
using AD = Autodiff<Fusion<Vulkan>>;
using ADInner = Fusion<Vulkan>;
#elif defined(EMBER_GRAD_ON_FUSION) && defined(EMBER_GRAD_CUDA)
using AD = Autodiff<Fusion<Cuda>>;
using ADInner = Fusion<Cuda>;
#elif defined(EMBER_GRAD_VULKAN)
/// The gradient suite on the GPU backends (tests/gpu/: ember_autodiff_vulkan_tests, ...).
using AD = Autodiff<Vulkan>;
using ADInner = Vulkan;
#elif defined(EMBER_GRAD_CUDA)
using AD = Autodiff<Cuda>;
using ADInner = Cuda;
#elif defined(EMBER_GRAD_FUSION)
/// The gradient suite on Autodiff<Fusion<Cpu>> (ember_autodiff_fusion_tests): forward and
/// backward element-wise chains fused.
using AD = Autodiff<Fusion<Cpu>>;
using ADInner = Fusion<Cpu>;
#elif defined(EMBER_GRAD_DISPATCH)
/// The gradient suite over Dispatch: the ctest entry sets EMBER_DEVICE=cpu+autodiff, so
/// tensors are created on the Autodiff<Cpu> stack behind Dispatch.
using AD = Dispatch;
using ADInner = Dispatch;
#else
using AD = Autodiff<Cpu>;
using ADInner = Cpu;
#endif

struct GradCheckOptions {
  double eps = 1e-5;
  double rtol = 1e-6;
  double atol = 1e-9;
  /// Also run with the inputs as non-contiguous (transposed) views (rank >= 2).
  bool noncontiguous = true;
  /// Also check that checkpointing gives the same gradients.
  bool checkpointing = true;
  /// Inputs (by position) that are not differentiated (e.g. index-like values).
  std::vector<std::size_t> constant_inputs = {};
};

/// Deterministic values in [lo, hi) (splitmix64), as f64 data of `shape`.
inline TensorData random_data(const Shape& shape, std::uint64_t seed, double lo = -1.0,
                              double hi = 1.0) {
  std::vector<double> v(static_cast<std::size_t>(shape.numel()));
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    s += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x = lo + (hi - lo) * static_cast<double>(z >> 11) / 9007199254740992.0;
  }
  return TensorData(std::move(v), shape);
}

namespace detail_gc {

template <std::size_t D>
Tensor<AD, D> make_input(const TensorData& data, bool noncontiguous) {
  if (!noncontiguous || D < 2) return Tensor<AD, D>::from_data(data);
  // Store the values transposed (last two dims swapped), then view them back.
  auto stored = Tensor<ADInner, D>::from_data(data).swap_dims(-2, -1);
  auto copy = Tensor<ADInner, D>::from_data(stored.into_data());  // contiguous, transposed layout
  return Tensor<AD, D>::from_inner(copy.swap_dims(-2, -1));
}

template <std::size_t D, class F>
double loss_value(F& f, const std::vector<Tensor<AD, D>>& xs, const TensorData& w) {
  auto out = f(xs);
  constexpr std::size_t E = decltype(out)::rank;
  auto wt = Tensor<AD, E>::from_data(w);
  return (out * wt).sum().into_scalar();
}

}  // namespace detail_gc

/// See the file comment. `f` maps std::vector<Tensor<AD, D>> to a float Tensor<AD, E>.
template <std::size_t D, class F>
void gradcheck(const std::string& what, F f, const std::vector<TensorData>& inputs_in,
               GradCheckOptions opt = {}) {
  SCOPED_TRACE(what);
  std::vector<TensorData> inputs;
  for (const auto& d : inputs_in) inputs.push_back(d.convert(DType::F64));
  auto is_const = [&](std::size_t i) {
    for (auto c : opt.constant_inputs)
      if (c == i) return true;
    return false;
  };
  for (bool nc : {false, true}) {
    if (nc && (!opt.noncontiguous || D < 2)) continue;
    SCOPED_TRACE(nc ? "non-contiguous inputs" : "contiguous inputs");
    std::vector<Tensor<AD, D>> xs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      auto x = detail_gc::make_input<D>(inputs[i], nc);
      xs.push_back(is_const(i) ? x : x.require_grad());
    }
    auto out = f(xs);
    constexpr std::size_t E = decltype(out)::rank;
    const TensorData w = random_data(out.shape(), 977);
    auto loss = (out * Tensor<AD, E>::from_data(w)).sum();
    auto grads = loss.backward();
    std::vector<std::vector<double>> analytic(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (is_const(i)) continue;
      auto g = xs[i].grad(grads);
      if (g) {
        ASSERT_EQ(g->shape(), inputs[i].shape()) << "gradient shape of input " << i;
        analytic[i] = g->template to_vec<double>();
      } else {
        analytic[i].assign(static_cast<std::size_t>(inputs[i].shape().numel()), 0.0);
      }
    }
    if (opt.checkpointing) {
      std::vector<Tensor<AD, D>> ys;
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        auto x = detail_gc::make_input<D>(inputs[i], nc);
        ys.push_back(is_const(i) ? x : x.require_grad());
      }
      autodiff::Checkpointing scope;
      auto out2 = f(ys);
      auto grads2 = (out2 * Tensor<AD, E>::from_data(w)).sum().backward();
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (is_const(i)) continue;
        auto g = ys[i].grad(grads2);
        const auto v =
            g ? g->template to_vec<double>() : std::vector<double>(analytic[i].size(), 0.0);
        for (std::size_t j = 0; j < v.size(); ++j) {
          ASSERT_NEAR(v[j], analytic[i][j], 1e-12 * (1 + std::abs(analytic[i][j])))
              << "checkpointing changed the gradient of input " << i << " at " << j;
        }
      }
    }
    // Central differences, one element at a time, on constants.
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (is_const(i)) continue;
      std::vector<double> base = inputs[i].to_vec<double>();
      for (std::size_t j = 0; j < base.size(); ++j) {
        auto eval = [&](double delta) {
          std::vector<Tensor<AD, D>> cs;
          for (std::size_t k = 0; k < inputs.size(); ++k) {
            if (k != i) {
              cs.push_back(detail_gc::make_input<D>(inputs[k], nc));
              continue;
            }
            std::vector<double> v = base;
            v[j] += delta;
            cs.push_back(detail_gc::make_input<D>(TensorData(std::move(v), inputs[i].shape()), nc));
          }
          return detail_gc::loss_value<D>(f, cs, w);
        };
        const double numeric = (eval(opt.eps) - eval(-opt.eps)) / (2 * opt.eps);
        const double a = analytic[i][j];
        const double tol = opt.rtol * std::max(std::abs(a), std::abs(numeric)) + opt.atol;
        ASSERT_LE(std::abs(a - numeric), tol)
            << "input " << i << " element " << j << ": analytic " << a << " numeric " << numeric;
      }
    }
  }
}

}  // namespace ember::test
