// Dispatch: the optional activation overrides (ember/backend/activation.hpp).
//
// A Dispatch optional op must work on every stack: it calls the stack's fused kernel when the
// stack defines it, and otherwise runs the front end's function on the stack's own tensors
// (reshaped to a fixed rank: 1 for element-wise activations, 3 for the softmax family, 2 for
// linear, [N, C, rest] for training batch norm), which itself picks the stack's override or
// the composite.
#include "ember/tensor/activation.hpp"

#include <numeric>

#include "ember/tensor/module/nn.hpp"
#include "stacks.hpp"

namespace ember {

namespace {

using i64 = std::int64_t;

/// Runs `f` (Tensor<B, 1> -> Tensor<B, 1>) on p flattened to rank 1; the result has p's shape.
template <class B, class Fn>
typename B::FloatTensor flat_composite(typename B::FloatTensor p, Fn f) {
  const Shape s = B::float_shape(p);
  Tensor<B, 1> t(B::float_reshape(std::move(p), Shape{s.numel()}));
  return B::float_reshape(f(std::move(t)).into_primitive(), s);
}

/// Runs `f` (Tensor<B, 3>, dim 1 -> Tensor<B, 3>) on p viewed as [before, n, after] around
/// `dim`; the result has p's shape.
template <class B, class Fn>
typename B::FloatTensor dim_composite(const typename B::FloatTensor& p, std::size_t dim, Fn f) {
  const Shape s = B::float_shape(p);
  i64 before = 1, after = 1;
  for (std::size_t k = 0; k < dim; ++k) before *= s[k];
  for (std::size_t k = dim + 1; k < s.rank(); ++k) after *= s[k];
  Tensor<B, 3> t(B::float_reshape(p, Shape{before, s[dim], after}));
  return B::float_reshape(f(std::move(t)).into_primitive(), s);
}

}  // namespace

#define EMBER_DEF_ACT0(name)                                                                  \
  Dispatch::F Dispatch::float_##name(F x) {                                                   \
    return dispatch::forward<F>(                                                              \
        "float_" #name,                                                                       \
        []<class B>(typename B::FloatTensor p) {                                              \
          if constexpr (requires { B::float_##name(std::move(p)); }) {                        \
            return B::float_##name(std::move(p));                                             \
          } else {                                                                            \
            return flat_composite<B>(                                                         \
                std::move(p), [](Tensor<B, 1> t) { return activation::name(std::move(t)); }); \
          }                                                                                   \
        },                                                                                    \
        std::move(x));                                                                        \
  }
#define EMBER_DEF_ACT1(name)                                               \
  Dispatch::F Dispatch::float_##name(F x, double a) {                      \
    return dispatch::forward<F>(                                           \
        "float_" #name,                                                    \
        []<class B>(typename B::FloatTensor p, double a1) {                \
          if constexpr (requires { B::float_##name(std::move(p), a1); }) { \
            return B::float_##name(std::move(p), a1);                      \
          } else {                                                         \
            return flat_composite<B>(std::move(p), [a1](Tensor<B, 1> t) {  \
              return activation::name(std::move(t), a1);                   \
            });                                                            \
          }                                                                \
        },                                                                 \
        std::move(x), a);                                                  \
  }
#define EMBER_DEF_ACT2(name)                                                   \
  Dispatch::F Dispatch::float_##name(F x, double a, double b) {                \
    return dispatch::forward<F>(                                               \
        "float_" #name,                                                        \
        []<class B>(typename B::FloatTensor p, double a1, double a2) {         \
          if constexpr (requires { B::float_##name(std::move(p), a1, a2); }) { \
            return B::float_##name(std::move(p), a1, a2);                      \
          } else {                                                             \
            return flat_composite<B>(std::move(p), [a1, a2](Tensor<B, 1> t) {  \
              return activation::name(std::move(t), a1, a2);                   \
            });                                                                \
          }                                                                    \
        },                                                                     \
        std::move(x), a, b);                                                   \
  }
#define EMBER_DEF_SOFTMAX(name)                                                                    \
  Dispatch::F Dispatch::float_##name(const F& x, std::size_t dim) {                                \
    return dispatch::forward<F>(                                                                   \
        "float_" #name,                                                                            \
        []<class B>(const typename B::FloatTensor& p, std::size_t d) {                             \
          if constexpr (requires { B::float_##name(p, d); }) {                                     \
            return B::float_##name(p, d);                                                          \
          } else {                                                                                 \
            return dim_composite<B>(p, d,                                                          \
                                    [](const Tensor<B, 3>& t) { return activation::name(t, 1); }); \
          }                                                                                        \
        },                                                                                         \
        x, dim);                                                                                   \
  }

EMBER_DISPATCH_ACT0(EMBER_DEF_ACT0)
EMBER_DISPATCH_ACT1(EMBER_DEF_ACT1)
EMBER_DISPATCH_ACT2(EMBER_DEF_ACT2)
EMBER_DISPATCH_SOFTMAX(EMBER_DEF_SOFTMAX)

Dispatch::F Dispatch::float_linear(const F& x, const F& weight, const OptF& bias) {
  return dispatch::forward<F>(
      "float_linear",
      []<class B>(const typename B::FloatTensor& px, const typename B::FloatTensor& pw,
                  const std::optional<typename B::FloatTensor>& pb) {
        if constexpr (requires { B::float_linear(px, pw, pb); }) {
          return B::float_linear(px, pw, pb);
        } else {
          Shape s = B::float_shape(px);
          const i64 in = s[s.rank() - 1];
          const i64 rows =
              std::accumulate(s.dims.begin(), s.dims.end() - 1, i64{1}, std::multiplies<i64>());
          Tensor<B, 2> x2(B::float_reshape(px, Shape{rows, in}));
          std::optional<Tensor<B, 1>> b;
          if (pb) b.emplace(*pb);
          Tensor<B, 2> y = module::linear(x2, Tensor<B, 2>(pw), b);
          s[s.rank() - 1] = y.dim(1);
          return B::float_reshape(std::move(y).into_primitive(), s);
        }
      },
      x, weight, bias);
}

Dispatch::FF Dispatch::float_batch_norm_train(const F& x, const OptF& weight, const OptF& bias,
                                              double eps) {
  return dispatch::forward<FF>(
      "float_batch_norm_train",
      []<class B>(const typename B::FloatTensor& px,
                  const std::optional<typename B::FloatTensor>& pw,
                  const std::optional<typename B::FloatTensor>& pb, double e) {
        if constexpr (requires { B::float_batch_norm_train(px, pw, pb, e); }) {
          return B::float_batch_norm_train(px, pw, pb, e);
        } else {
          // The composite on the stack's tensors, viewed as [N, C, rest].
          const Shape s = B::float_shape(px);
          const i64 n = s[0], c = s[1], rest = s.numel() / (n * c);
          Tensor<B, 3> x3(B::float_reshape(px, Shape{n, c, rest}));
          std::optional<Tensor<B, 1>> w, b;
          if (pw) w.emplace(*pw);
          if (pb) b.emplace(*pb);
          auto r = module::batch_norm_train(x3, w, b, e);
          const std::array<i64, 2> row{1, c};
          auto stats = Tensor<B, 2>::cat(
              {r.mean.template reshape<2>(row), r.var.template reshape<2>(row)}, 0);
          return std::pair<typename B::FloatTensor, typename B::FloatTensor>(
              B::float_reshape(std::move(r.output).into_primitive(), s),
              std::move(stats).into_primitive());
        }
      },
      x, weight, bias, eps);
}

}  // namespace ember
