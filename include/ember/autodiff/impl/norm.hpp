// Autodiff<B>: backward rule of the fused training batch norm (B's float_batch_norm_train).
//
// Formulas (Ioffe & Szegedy 2015, section 3; PyTorch's batch_norm_backward), per channel over
// M = N * spatial values, xhat = (x - mean) / sqrt(var + eps):
//   dbias = sum dy, dweight = sum dy * xhat,
//   dx = weight / sqrt(var + eps) * (dy - dbias / M - xhat * dweight / M).
// A plain backward pass calls B's float_batch_norm_train_backward. When the pass is recorded
// (create_graph) the same formulas run with Autodiff's ops on the statistics recomputed from
// x, so the result differentiates again through x, weight and dy.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

namespace rules {

/// Sum of g [N, C, S] over dims 0 and 2 -> [1, C, 1].
template <class B>
AP<B> sum_channels(AP<B> g) {
  return O<B>::float_sum_dim(O<B>::float_sum_dim(std::move(g), 2), 0);
}

/// The rule's formulas with Autodiff's ops (differentiable): x, dy [N, C, S] (as [N, C, ...]
/// of shape xs), weight [C] or none -> {dx, dweight [C], dbias [C]}.
template <class B>
std::vector<AP<B>> batch_norm_train_grads_composite(const AP<B>& x, const AP<B>& dy,
                                                    const std::optional<AP<B>>& weight,
                                                    const Shape& xs, double eps) {
  using Ops = O<B>;
  const std::int64_t n = xs[0], c = xs[1], s = xs.numel() / (n * c);
  const double m = static_cast<double>(n * s);
  const Shape s3{n, c, s}, cv{1, c, 1};
  AP<B> x3 = Ops::float_reshape(x, s3), g3 = Ops::float_reshape(dy, s3);
  AP<B> mean = Ops::template float_binary_scalar<ir::op::Div>(sum_channels<B>(x3), m);
  AP<B> xc = Ops::template float_binary<ir::op::Sub>(x3, mean);
  AP<B> var = Ops::template float_binary_scalar<ir::op::Div>(
      sum_channels<B>(Ops::template float_binary<ir::op::Mul>(xc, xc)), m);
  AP<B> invstd = Ops::template float_binary_scalar<ir::op::Pow>(
      Ops::template float_binary_scalar<ir::op::Add>(var, eps), -0.5);
  AP<B> xhat = Ops::template float_binary<ir::op::Mul>(xc, invstd);
  AP<B> db = sum_channels<B>(g3);
  AP<B> dw = sum_channels<B>(Ops::template float_binary<ir::op::Mul>(g3, xhat));
  AP<B> k = weight
                ? Ops::template float_binary<ir::op::Mul>(invstd, Ops::float_reshape(*weight, cv))
                : invstd;
  AP<B> inner = Ops::template float_binary<ir::op::Sub>(
      Ops::template float_binary<ir::op::Sub>(
          g3, Ops::template float_binary_scalar<ir::op::Div>(db, m)),
      Ops::template float_binary<ir::op::Mul>(
          xhat, Ops::template float_binary_scalar<ir::op::Div>(dw, m)));
  AP<B> dx = Ops::float_reshape(Ops::template float_binary<ir::op::Mul>(k, inner), xs);
  return {std::move(dx), Ops::float_reshape(dw, Shape{c}), Ops::float_reshape(db, Shape{c})};
}

}  // namespace rules

template <class B>
std::pair<AdTensor<B>, AdTensor<B>> AdOps<B>::float_batch_norm_train(
    const AP& x, const OptAP& weight, const OptAP& bias, double eps) requires HasBatchNormTrain<B> {
  using IP = typename B::FloatTensor;
  std::pair<IP, IP> fwd = B::float_batch_norm_train(x.inner, rules::inner_opt<B>(weight),
                                                    rules::inner_opt<B>(bias), eps);
  const IP y = std::move(fwd.first);
  const bool ckpt = x.checkpointing || checkpointing_scope_active();
  AP st{std::move(fwd.second), nullptr, ckpt};
  const Shape xs = B::float_shape(x.inner);
  const bool has_w = weight.has_value(), has_b = bias.has_value();
  // Inputs: x, then weight and bias when present.
  const std::size_t wi = 1, bi = has_w ? 2 : 1;
  const IP stats_v = st.inner;
  AP out = Recorder<B>::record(
      "batch_norm_train", Bound::Compute, save_inputs(has_w ? 3u : 1u),
      rules::with_opt<B>(rules::with_opt<B>({x}, weight), bias),
      [y](std::vector<IP>&) { return y; },
      [xs, eps, has_w, has_b, wi, bi, stats_v](BackwardContext<B>& c) {
        const AP xv = c.input(0);
        std::optional<AP> w;
        if (has_w) w = c.input(wi);
        const bool direct = !grad_enabled() || (!c.grad.node && !xv.node && !(w && w->node));
        std::vector<AP> g;
        if (direct) {
          std::pair<IP, IP> r = B::float_batch_norm_train_backward(xv.inner, c.grad.inner, stats_v,
                                                                   rules::inner_opt<B>(w), eps);
          const IP& dp = r.second;
          const std::int64_t ch = xs[1];
          const auto row = [&](std::int64_t r) {
            return AP{
                B::float_reshape(B::float_slice(dp, {SliceRange{r, 1, 1}, SliceRange{0, ch, 1}}),
                                 Shape{ch}),
                nullptr, c.grad.checkpointing};
          };
          g = {AP{std::move(r.first), nullptr, c.grad.checkpointing}, row(0), row(1)};
        } else {
          g = rules::batch_norm_train_grads_composite<B>(xv, c.grad, w, xs, eps);
        }
        c.set(0, std::move(g[0]));
        if (has_w) c.set(wi, std::move(g[1]));
        if (has_b) c.set(bi, std::move(g[2]));
      });
  return {std::move(out), std::move(st)};
}

}  // namespace ember::autodiff
