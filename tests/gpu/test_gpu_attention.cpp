// Scaled dot-product attention on the GPU backends (module::scaled_dot_product_attention; the
// fused kernels of src/gpu/attention.cpp where they serve the case, another path where not):
// the forward pass and, under Autodiff, the gradients of q, k, v (and of a bias) against the
// CPU backend, for ranks 3 and 4, Bool masks and additive biases of lower rank, causal masks
// with L < S and L > S, sequences of several tiles, fully masked rows, strided views, head
// dims up to 128 and beyond, f16/bf16/f64, a second derivative, with no call through the host;
// and the forward pass's peak memory below that of an [L, S] score matrix.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/module/nn.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "gpu_backends.hpp"
#include "gpu_test_util.hpp"
#ifdef EMBER_HAVE_VULKAN
#include "ember/autodiff/vulkan.hpp"
#endif
#ifdef EMBER_HAVE_CUDA
#include "ember/autodiff/cuda.hpp"
#endif

using namespace ember;
using ember::test::expect_approx;
using ember::test::host_calls;

template <class B>
class GpuAttentionTest : public ::testing::Test {};
TYPED_TEST_SUITE(GpuAttentionTest, ember::test::GpuConformanceBackends, ember::test::GpuNames);

namespace {

/// Outputs: convex combinations of v's values (|v| <= 1) by softmax weights of scores up to
/// ~10 that each sum E <= 200 products, so f32 differs from the CPU by summation order and
/// exp's last bits (llvmpipe's composite: 3e-7); f16/bf16: the GPU's composite rounds the
/// scores and weights to 11 / 8 significant bits (half an ulp of 8: 4e-3 / 3e-2), measured
/// 1.1e-3 / 1.0e-2 from the CPU (which accumulates in f32 and rounds once); f64: summation
/// order.
Tolerance tolerance(DType dt) {
  return ember::test::sum_tolerance(dt);
}

/// Gradients: dq = scale * sum_s P (dP - D) k and dk alike sum products of terms up to ~3
/// with cancellation in dP - D: f32 to twice the outputs' bound (llvmpipe's composite: 1e-6);
/// f16/bf16 as the outputs: against f64 on the same values, the composite backward of both
/// sides (every step rounded) is 1.3e-3 / 1.4e-2 off, one f32-accumulating kernel less.
Tolerance grad_tolerance(DType dt) {
  return dt == DType::F32 ? Tolerance::rel_abs(2e-4, 2e-4) : tolerance(dt);
}

/// Deterministic values in [lo, hi) (splitmix64) as f32 data of `shape`.
TensorData rnd(const Shape& shape, std::uint64_t seed, float lo, float hi) {
  std::vector<float> v(static_cast<std::size_t>(shape.numel()));
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x = lo + (hi - lo) * static_cast<float>(z >> 40) / static_cast<float>(1u << 24);
  }
  return TensorData(std::move(v), shape);
}

/// A Bool mask of `shape` with about 70 % of the keys taking part, and the rows listed in
/// `dead` (as flat [.., L] row indices) fully masked.
TensorData bool_mask(const Shape& shape, std::uint64_t seed, std::vector<std::int64_t> dead = {}) {
  const auto r = rnd(shape, seed, 0, 1).to_vec<float>();
  std::vector<bool> m(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) m[i] = r[i] < 0.7f;
  const std::int64_t s = shape[shape.rank() - 1];
  for (std::int64_t row : dead)
    for (std::int64_t j = 0; j < s; ++j) m[static_cast<std::size_t>(row * s + j)] = false;
  return TensorData(std::move(m), shape);
}

/// One call of scaled_dot_product_attention: q [.., L, E], k [.., S, E], v [.., S, Ev] (q, k in
/// [-2, 2), v in [-1, 1)), an optional mask or bias (rank 2..4), is_causal, scale; with
/// `view`, q, k and v are swap_dims(1, 2) of [B, L, H, E] storage (as MultiHeadAttention).
struct Attn {
  Shape q, k, v;
  std::optional<TensorData> mask, bias;
  bool causal = false;
  std::optional<double> scale;
  bool view = false;
  bool bias_grad = false;
};

Attn qkv(std::vector<std::int64_t> batch, std::int64_t L, std::int64_t S, std::int64_t E,
         std::int64_t Ev) {
  auto shape = [&](std::int64_t a, std::int64_t b) {
    std::vector<std::int64_t> d = batch;
    d.push_back(a);
    d.push_back(b);
    return Shape(d);
  };
  Attn c;
  c.q = shape(L, E);
  c.k = shape(S, E);
  c.v = shape(S, Ev);
  return c;
}

template <class B, std::size_t D>
Tensor<B, D> input(const Shape& s, std::uint64_t seed, float lo, float hi, DType dt, bool view) {
  Shape stored = s;
  if (view) std::swap(stored.dims[1], stored.dims[2]);
  const auto t = Tensor<B, D>::from_data(rnd(stored, seed, lo, hi).convert(dt));
  return view ? t.swap_dims(1, 2) : t;
}

/// Calls f(integral_constant<M>) for a mask/bias rank M in 2..min(4, D).
template <std::size_t D, class F>
auto by_rank(std::size_t r, F&& f) {
  if constexpr (D >= 4)
    if (r == 4) return f(std::integral_constant<std::size_t, 4>{});
  if (r == 3) return f(std::integral_constant<std::size_t, 3>{});
  return f(std::integral_constant<std::size_t, 2>{});
}

/// {out} on a plain backend; {out, dq, dk, dv[, dbias]} of sum(out * w) (a fixed w) on an
/// autodiff backend. Inputs in dtype dt.
template <class B, std::size_t D>
std::vector<TensorData> compute(const Attn& c, DType dt) {
  constexpr bool ad = AutodiffBackend<B>;
  const auto leaf = [](const Tensor<B, D>& t) {
    if constexpr (ad)
      return t.require_grad();
    else
      return t;
  };
  const auto q = leaf(input<B, D>(c.q, 1, -2, 2, dt, c.view));
  const auto k = leaf(input<B, D>(c.k, 2, -2, 2, dt, c.view));
  const auto v = leaf(input<B, D>(c.v, 3, -1, 1, dt, c.view));
  std::vector<TensorData> res;
  const auto finish = [&](const Tensor<B, D>& out, const auto&... extra) {
    res.push_back(out.into_data());
    if constexpr (ad) {
      const auto w = Tensor<B, D>::from_data(rnd(out.shape(), 4, -1, 1).convert(dt));
      const auto g = (out * w).sum().backward();
      const auto push = [&](const auto& t) {
        const auto d = t.grad(g);
        EXPECT_TRUE(d.has_value()) << "no gradient";
        res.push_back(d ? d->into_data() : TensorData());
      };
      push(q), push(k), push(v), (push(extra), ...);
    }
  };
  namespace m = module;
  if (c.mask) {
    by_rank<D>(c.mask->shape().rank(), [&](auto r) {
      constexpr std::size_t M = decltype(r)::value;
      const auto mask = Tensor<B, M, Bool>::from_data(*c.mask);
      if (!c.causal && M < D)  // the overload that takes a lower-rank mask
        return finish(m::scaled_dot_product_attention<B, D, M>(q, k, v, mask, c.scale));
      finish(m::scaled_dot_product_attention<B, D, M, D>(q, k, v, mask, std::nullopt, c.causal,
                                                         c.scale));
    });
  } else if (c.bias) {
    by_rank<D>(c.bias->shape().rank(), [&](auto r) {
      constexpr std::size_t M = decltype(r)::value;
      const auto bias = Tensor<B, M>::from_data(c.bias->convert(dt));
      const auto call = [&](const Tensor<B, M>& b) {
        return m::scaled_dot_product_attention<B, D, D, M>(q, k, v, std::nullopt, b, c.causal,
                                                           c.scale);
      };
      if constexpr (ad)
        if (c.bias_grad) {
          const auto b = bias.require_grad();
          return finish(call(b), b);
        }
      finish(call(bias));
    });
  } else {
    finish(m::scaled_dot_product_attention<B, D>(q, k, v, std::nullopt, std::nullopt, c.causal,
                                                 c.scale));
  }
  return res;
}

/// Expects G's attention (with `grads`, Autodiff<G>'s gradients too) of case c in dtype dt to
/// give the CPU's values within the dtype's tolerances, in dtype dt; with `on_device`, with no
/// call through the host. Returns G's results.
template <class G, std::size_t D>
std::vector<TensorData> expect_like_cpu(const Attn& c, DType dt, bool grads,
                                        bool on_device = true) {
  const std::uint64_t before = host_calls();
  const auto got = grads ? compute<Autodiff<G>, D>(c, dt) : compute<G, D>(c, dt);
  if (on_device) {
    EXPECT_EQ(host_calls(), before) << "a call went through the host";
  }
  const auto want = grads ? compute<Autodiff<Cpu>, D>(c, dt) : compute<Cpu, D>(c, dt);
  EXPECT_EQ(got.size(), want.size());
  const char* names[] = {"out", "dq", "dk", "dv", "dbias"};
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
    SCOPED_TRACE(names[i]);
    EXPECT_EQ(got[i].dtype(), dt);
    expect_approx(got[i], want[i], i == 0 ? tolerance(dt) : grad_tolerance(dt));
  }
  return got;
}

template <class G>
bool device_has(DType dt) {
  const auto probe = Tensor<G, 1>::from_data(TensorData(std::vector<float>{0}, Shape{1}));
  return gpu::native_dtype(dt, probe.primitive().compute());
}

Attn with_mask(Attn c, TensorData m) {
  c.mask = std::move(m);
  return c;
}
Attn with_bias(Attn c, TensorData b, bool grad = false) {
  c.bias = std::move(b);
  c.bias_grad = grad;
  return c;
}
Attn causal(Attn c) {
  c.causal = true;
  return c;
}

// B=2, H=3, L=37, S=45, E=16, Ev=24: sizes that fill no tile or warp evenly.
const Attn kBase = qkv({2, 3}, 37, 45, 16, 24);

}  // namespace

// Rank 4 with no mask, causal, Bool masks [L, S] and [B, 1, L, S] (padding-style), additive
// biases [H, L, S] and [1, 1, L, S], a custom scale, one query, several key tiles.
TYPED_TEST(GpuAttentionTest, ForwardMatchesTheCpu) {
  using G = TypeParam;
  const DType f = DType::F32;
  const auto run = [&](const char* what, const Attn& c) {
    SCOPED_TRACE(what);
    expect_like_cpu<G, 4>(c, f, false);
  };
  run("plain", kBase);
  run("causal", causal(kBase));
  run("mask [L, S]", with_mask(kBase, bool_mask(Shape{37, 45}, 11)));
  run("mask [B, 1, L, S]", with_mask(kBase, bool_mask(Shape{2, 1, 37, 45}, 12)));
  run("bias [H, L, S]", with_bias(kBase, rnd(Shape{3, 37, 45}, 13, -3, 3)));
  run("bias [1, 1, L, S]", with_bias(kBase, rnd(Shape{1, 1, 37, 45}, 14, -3, 3)));
  Attn scaled = kBase;
  scaled.scale = 0.3;
  run("scale 0.3", scaled);
  run("L = 1", qkv({2, 3}, 1, 45, 16, 24));
  run("S = 150", qkv({2, 3}, 37, 150, 16, 24));
  run("S = 150, causal", causal(qkv({2, 3}, 37, 150, 16, 24)));
  run("L = S = 130, causal", causal(qkv({2, 3}, 130, 130, 16, 24)));
  run("L = S = 130, mask [L, S]",
      with_mask(qkv({2, 3}, 130, 130, 16, 24), bool_mask(Shape{130, 130}, 15)));
}

// Rank 3 [N, L, E] (plain, causal, a rank-2 mask, a rank-3 bias) and head dims 128 (E and Ev),
// 64/32 and 200 (beyond the fused kernel: another path, maybe through the host).
TYPED_TEST(GpuAttentionTest, ForwardOfRank3AndHeadDims) {
  using G = TypeParam;
  const DType f = DType::F32;
  const Attn r3 = qkv({5}, 37, 45, 16, 24);
  {
    SCOPED_TRACE("rank 3");
    expect_like_cpu<G, 3>(r3, f, false);
    expect_like_cpu<G, 3>(causal(r3), f, false);
    expect_like_cpu<G, 3>(with_mask(r3, bool_mask(Shape{37, 45}, 21)), f, false);
    expect_like_cpu<G, 3>(with_bias(r3, rnd(Shape{5, 37, 45}, 22, -3, 3)), f, false);
  }
  {
    SCOPED_TRACE("E = Ev = 128");
    const Attn c = qkv({2, 2}, 37, 70, 128, 128);
    expect_like_cpu<G, 4>(c, f, false);
    expect_like_cpu<G, 4>(causal(c), f, false);
  }
  {
    SCOPED_TRACE("E = 64, Ev = 32");
    expect_like_cpu<G, 4>(with_mask(qkv({2, 2}, 37, 70, 64, 32), bool_mask(Shape{37, 70}, 23)), f,
                          false);
  }
  {
    SCOPED_TRACE("E = Ev = 200");
    const Attn c = qkv({2, 2}, 21, 33, 200, 200);
    expect_like_cpu<G, 4>(c, f, false, false);
    expect_like_cpu<G, 4>(causal(c), f, false, false);
  }
}

// Fully masked query rows (by a mask [L, S], by a mask [B, 1, L, S] in one batch only, by a
// bias of -inf) give zeros, not NaN (torch >= 2.5); causal with more queries than keys.
TYPED_TEST(GpuAttentionTest, FullyMaskedRowsAndCausalWithMoreQueries) {
  using G = TypeParam;
  const DType f = DType::F32;
  const auto zero_rows = [](const TensorData& out, std::vector<std::int64_t> rows,
                            std::int64_t per_row) {
    const auto o = out.to_vec<float>();
    for (std::int64_t r : rows)
      for (std::int64_t j = 0; j < per_row; ++j)
        EXPECT_EQ(o[static_cast<std::size_t>(r * per_row + j)], 0.0f) << "row " << r;
  };
  {
    SCOPED_TRACE("mask [L, S], rows 0, 5 and 36 dead");
    const auto out = expect_like_cpu<G, 4>(
        with_mask(kBase, bool_mask(Shape{37, 45}, 31, {0, 5, 36})), f, false)[0];
    for (std::int64_t bh = 0; bh < 6; ++bh)
      zero_rows(out, {bh * 37, bh * 37 + 5, bh * 37 + 36}, 24);
  }
  {
    SCOPED_TRACE("mask [B, 1, L, S], row 7 of batch 1 dead");
    const auto out = expect_like_cpu<G, 4>(
        with_mask(kBase, bool_mask(Shape{2, 1, 37, 45}, 32, {37 + 7})), f, false)[0];
    for (std::int64_t h = 0; h < 3; ++h) zero_rows(out, {(3 + h) * 37 + 7}, 24);
  }
  {
    SCOPED_TRACE("bias [L, S] of -inf on row 2");
    auto b = rnd(Shape{37, 45}, 33, -3, 3).to_vec<float>();
    for (std::size_t j = 0; j < 45; ++j) b[2 * 45 + j] = -std::numeric_limits<float>::infinity();
    const auto out =
        expect_like_cpu<G, 4>(with_bias(kBase, TensorData(b, Shape{37, 45})), f, false)[0];
    for (std::int64_t bh = 0; bh < 6; ++bh) zero_rows(out, {bh * 37 + 2}, 24);
  }
  {
    SCOPED_TRACE("causal, L = 50 > S = 20");
    expect_like_cpu<G, 4>(causal(qkv({2, 3}, 50, 20, 16, 24)), f, false);
  }
}

// q, k and v as swap_dims(1, 2) of [B, L, H, E] tensors (MultiHeadAttention's layout), plain,
// causal and with a mask; and their gradients.
TYPED_TEST(GpuAttentionTest, StridedViews) {
  using G = TypeParam;
  Attn c = kBase;
  c.view = true;
  expect_like_cpu<G, 4>(c, DType::F32, false);
  expect_like_cpu<G, 4>(causal(c), DType::F32, false);
  expect_like_cpu<G, 4>(with_mask(c, bool_mask(Shape{2, 1, 37, 45}, 41)), DType::F32, false);
  expect_like_cpu<G, 4>(causal(c), DType::F32, true);
}

// f16 and bf16 (inputs cast from f32; the CPU on the same values) and f64, forward and
// gradients, where the device has the dtype. f64 may take another path (the fused kernels
// leave f64 to it on Vulkan).
TYPED_TEST(GpuAttentionTest, HalfAndDouble) {
  using G = TypeParam;
  for (DType dt : {DType::F16, DType::BF16, DType::F64}) {
    if (!device_has<G>(dt)) continue;  // the host path serves it
    SCOPED_TRACE(dtype_name(dt));
    const bool on_device = dt != DType::F64;
    for (bool grads : {false, true}) {
      SCOPED_TRACE(grads ? "gradients" : "forward");
      expect_like_cpu<G, 4>(kBase, dt, grads, on_device);
      expect_like_cpu<G, 4>(causal(qkv({2, 3}, 130, 130, 16, 24)), dt, grads, on_device);
      expect_like_cpu<G, 4>(with_mask(kBase, bool_mask(Shape{37, 45}, 51, {4})), dt, grads,
                            on_device);
      expect_like_cpu<G, 4>(with_bias(kBase, rnd(Shape{3, 37, 45}, 52, -3, 3)), dt, grads,
                            on_device);
    }
  }
}

// dq, dk, dv of sum(out * w) under Autodiff<G> against Autodiff<Cpu>: plain, causal
// (L = S = 130 and L = 70 < S = 90), a mask [L, S] with a dead row, a bias [H, L, S] (not
// tracked), head dims 128 and 64/32, rank 3.
TYPED_TEST(GpuAttentionTest, GradientsMatchTheCpu) {
  using G = TypeParam;
  const DType f = DType::F32;
  const auto run = [&](const char* what, const Attn& c) {
    SCOPED_TRACE(what);
    expect_like_cpu<G, 4>(c, f, true);
  };
  run("plain", kBase);
  run("causal, L = S = 130", causal(qkv({2, 3}, 130, 130, 16, 24)));
  run("causal, L = 70, S = 90", causal(qkv({2, 3}, 70, 90, 16, 24)));
  run("mask [L, S]", with_mask(kBase, bool_mask(Shape{37, 45}, 61, {9})));
  run("bias [H, L, S]", with_bias(kBase, rnd(Shape{3, 37, 45}, 62, -3, 3)));
  run("E = Ev = 128", qkv({1, 2}, 40, 70, 128, 128));
  run("E = 64, Ev = 32, S = 150", causal(qkv({1, 2}, 40, 150, 64, 32)));
  SCOPED_TRACE("rank 3");
  expect_like_cpu<G, 3>(qkv({5}, 37, 45, 16, 24), f, true);
}

// A bias that requires grad (its gradient, reduced over the broadcast dims for [H, L, S] and
// [1, 1, L, S]), and a second derivative: d/d(q, k, v) of sum(dq^2) with dq from
// backward(create_graph).
TYPED_TEST(GpuAttentionTest, BiasGradientAndDoubleBackward) {
  using G = TypeParam;
  const DType f = DType::F32;
  {
    SCOPED_TRACE("bias [H, L, S] requires grad");
    expect_like_cpu<G, 4>(with_bias(kBase, rnd(Shape{3, 37, 45}, 71, -3, 3), true), f, true);
  }
  {
    SCOPED_TRACE("bias [1, 1, L, S] requires grad, causal");
    expect_like_cpu<G, 4>(causal(with_bias(kBase, rnd(Shape{1, 1, 37, 45}, 72, -3, 3), true)), f,
                          true);
  }
  SCOPED_TRACE("double backward");
  const auto second = [&]<class B>() {
    const Attn c = qkv({1, 2}, 19, 23, 8, 12);
    auto q = input<B, 4>(c.q, 1, -2, 2, f, false).require_grad();
    auto k = input<B, 4>(c.k, 2, -2, 2, f, false).require_grad();
    auto v = input<B, 4>(c.v, 3, -1, 1, f, false).require_grad();
    const auto out =
        module::scaled_dot_product_attention<B, 4>(q, k, v, std::nullopt, std::nullopt, true);
    const auto w = Tensor<B, 4>::from_data(rnd(out.shape(), 4, -1, 1));
    const auto g1 = (out * w).sum().backward(/*create_graph=*/true);
    const auto dq = q.grad_graph(g1);
    EXPECT_TRUE(dq && dq->is_require_grad());
    const auto g2 = (*dq * *dq).sum().backward();
    std::vector<TensorData> r{dq->into_data()};
    for (const auto* t : {&q, &k, &v}) r.push_back(t->grad(g2)->into_data());
    return r;
  };
  const std::uint64_t before = host_calls();
  const auto got = second.template operator()<Autodiff<G>>();
  EXPECT_EQ(host_calls(), before) << "a call went through the host";
  const auto want = second.template operator()<Autodiff<Cpu>>();
  const char* names[] = {"dq", "d/dq sum(dq^2)", "d/dk sum(dq^2)", "d/dv sum(dq^2)"};
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(names[i]);
    expect_approx(got[i], want[i], Tolerance::rel_abs(1e-4, 1e-4));  // f32: measured 3e-7
  }
}

// The fused forward pass never holds the [L, S] scores: q, k, v [1, 2, 1024, 32] in f32 grow
// the device's peak memory by less than the 2 x 1024 x 1024 x 4 bytes (8 MiB) of the scores
// (the output is 256 KiB, lse 8 KiB). Fails on the composite (it writes scores and weights).
TYPED_TEST(GpuAttentionTest, ForwardPeakMemoryBelowTheScores) {
  using G = TypeParam;
  const Shape s{1, 2, 1024, 32};
  const auto q = Tensor<G, 4>::from_data(rnd(s, 1, -2, 2));
  const auto k = Tensor<G, 4>::from_data(rnd(s, 2, -2, 2));
  const auto v = Tensor<G, 4>::from_data(rnd(s, 3, -1, 1));
  const auto dev = q.device();
  G::sync(dev);
  const std::uint64_t before = host_calls();
  const std::uint64_t in_use = G::memory_stats(dev).live_bytes;
  G::reset_peak_memory(dev);
  const auto out = module::scaled_dot_product_attention(q, k, v);
  G::sync(dev);
  const std::uint64_t growth = G::memory_stats(dev).peak_bytes - in_use;
  EXPECT_LT(growth, std::uint64_t{2} * 1024 * 1024 * 4) << "peak memory grew by " << growth;
  EXPECT_EQ(host_calls(), before);
  EXPECT_EQ(out.shape(), s);
}

// Training through the fused kernels: forward and backward under Autodiff<G> hold no [L, S]
// matrix (the composite's probabilities alone would be 8 MiB here), and the gradients match
// the CPU's.
TYPED_TEST(GpuAttentionTest, TrainingPeakMemoryBelowTheScores) {
  using G = TypeParam;
  using A = Autodiff<G>;
  const Shape s{1, 2, 1024, 32};
  const auto q = Tensor<A, 4>::from_data(rnd(s, 1, -2, 2)).require_grad();
  const auto k = Tensor<A, 4>::from_data(rnd(s, 2, -2, 2)).require_grad();
  const auto v = Tensor<A, 4>::from_data(rnd(s, 3, -1, 1)).require_grad();
  const auto w = Tensor<A, 4>::from_data(rnd(s, 4, -1, 1));
  const auto dev = q.device();
  G::sync(dev);
  const std::uint64_t before = host_calls();
  const std::uint64_t in_use = G::memory_stats(dev).live_bytes;
  G::reset_peak_memory(dev);
  const auto g =
      (module::scaled_dot_product_attention(q, k, v, std::nullopt, std::nullopt, true) * w)
          .sum()
          .backward();
  const auto dq = q.grad(g), dk = k.grad(g), dv = v.grad(g);
  G::sync(dev);
  const std::uint64_t growth = G::memory_stats(dev).peak_bytes - in_use;
  EXPECT_LT(growth, std::uint64_t{2} * 1024 * 1024 * 4) << "peak memory grew by " << growth;
  EXPECT_EQ(host_calls(), before);
  ASSERT_TRUE(dq && dk && dv);
  using C = Autodiff<Cpu>;
  const auto cq = Tensor<C, 4>::from_data(rnd(s, 1, -2, 2)).require_grad();
  const auto ck = Tensor<C, 4>::from_data(rnd(s, 2, -2, 2)).require_grad();
  const auto cv = Tensor<C, 4>::from_data(rnd(s, 3, -1, 1)).require_grad();
  const auto cw = Tensor<C, 4>::from_data(rnd(s, 4, -1, 1));
  const auto cg =
      (module::scaled_dot_product_attention(cq, ck, cv, std::nullopt, std::nullopt, true) * cw)
          .sum()
          .backward();
  expect_approx(dq->into_data(), cq.grad(cg)->into_data(), Tolerance::rel_abs(2e-4, 2e-4));
  expect_approx(dk->into_data(), ck.grad(cg)->into_data(), Tolerance::rel_abs(2e-4, 2e-4));
  expect_approx(dv->into_data(), cv.grad(cg)->into_data(), Tolerance::rel_abs(2e-4, 2e-4));
}

// More batch rows (B * H = 70,000) than a grid's y dimension holds (65,535): the batch rows
// continue in z. Forward and gradients against the CPU.
TYPED_TEST(GpuAttentionTest, BatchRowsBeyondTheGridsY) {
  using G = TypeParam;
  expect_like_cpu<G, 4>(qkv({7000, 10}, 3, 5, 4, 4), DType::F32, false);
  expect_like_cpu<G, 3>(causal(qkv({70000}, 3, 5, 4, 2)), DType::F32, true);
}

// A query over 60,000 keys: near llvmpipe's loop limit the kernels walk every key or hand the
// case to the composite, never stop early. q = 0 makes every weight equal, so the output is
// the mean of v's column (v = key index / S in every column).
TYPED_TEST(GpuAttentionTest, LongSequenceSeesEveryKey) {
  using G = TypeParam;
  for (const std::int64_t E : {4, 128}) {
    SCOPED_TRACE(E);
    const std::int64_t S = 60000;
    std::vector<float> vv(static_cast<std::size_t>(S * E));
    for (std::int64_t s = 0; s < S; ++s)
      for (std::int64_t e = 0; e < E; ++e)
        vv[static_cast<std::size_t>(s * E + e)] = static_cast<float>(s) / static_cast<float>(S);
    const auto q = Tensor<G, 3>::zeros(Shape{1, 1, E}, typename G::Device{});
    const auto k = Tensor<G, 3>::from_data(rnd(Shape{1, S, E}, 2, -1, 1));
    const auto v = Tensor<G, 3>::from_data(TensorData(std::move(vv), Shape{1, S, E}));
    const auto out = module::scaled_dot_product_attention(q, k, v).template to_vec<float>();
    const double mean = static_cast<double>(S - 1) / 2.0 / static_cast<double>(S);
    for (float x : out) EXPECT_NEAR(x, mean, 1e-5);
  }
}
