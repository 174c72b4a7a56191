// Data-parallel helpers over a ProcessGroup (PyTorch's DistributedDataParallel, as functions
// the Learner and custom training loops call):
//
//   dist::broadcast_module(*pg, model);            // at start: every rank gets rank 0's weights
//   auto grads = optim::GradientsParams::from_grads(loss.backward(), model);
//   dist::all_reduce_gradients(*pg, model, grads); // after backward: the mean over ranks
//   optimizer.step(lr, model, grads);              // the same step on every rank
//
// Gradients are reduced after backward, not overlapped with it: Ember's Autodiff computes all
// gradients in one backward() call and has no per-parameter hook yet, so there is no point
// at which a bucket is known to be complete before the pass ends. The gradients are packed
// into buckets of about `bucket_bytes` (f32, in the model's parameter order, which is the same
// on every rank) and each bucket is one all_reduce; with the ring algorithm all ranks end
// with bitwise the same mean, so their models stay identical. A bucket is concatenated on the
// device (Tensor::cat), read back once, reduced, written back once, and each parameter gets a
// view (narrow) of the result.
#pragma once

#include <any>
#include <chrono>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/dist/process_group.hpp"
#include "ember/module/module.hpp"
#include "ember/optim/gradients.hpp"

namespace ember::dist {

/// PyTorch's default bucket size (bucket_cap_mb = 25).
inline constexpr std::size_t kDefaultBucketBytes = std::size_t{25} << 20;

/// Replaces every parameter and buffer of `model` by `root`'s (one broadcast per tensor, in
/// the model's visiting order). Throws DistError when the ranks' models differ in a tensor's
/// shape or dtype (the message names both), or when a collective fails.
template <class M>
void broadcast_module(ProcessGroup& pg, M& model, int root = 0) {
  if (pg.world_size() == 1) return;
  nn::visit_mut(model, [&](const std::string&, auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (nn::is_param_v<L> || nn::is_buffer_v<L>) {
      if (!leaf.has_value()) return;
      using T = typename L::Value;
      const T& value = leaf.val();
      TensorData data = value.into_data();
      pg.broadcast(data, root);
      leaf.set(T::from_data(data, value.device()));
    }
  });
}

/// Replaces the gradient of every float parameter of `model` that requires grad by its mean
/// over all ranks (see the file comment). A parameter without a gradient on this rank (not
/// used by its loss) counts as zeros, so every rank ends with the same set of gradients.
/// f32 gradients travel in buckets of about `bucket_bytes`; others one all_reduce each.
/// Throws DistError when a collective fails.
template <class M>
void all_reduce_gradients(ProcessGroup& pg, const M& model, optim::GradientsParams& grads,
                          std::size_t bucket_bytes = kDefaultBucketBytes) {
  if (pg.world_size() == 1) return;
  const std::size_t cap = std::max<std::size_t>(bucket_bytes / sizeof(float), 1);
  std::size_t filled = 0;
  std::vector<nn::ParamId> ids;
  std::vector<Shape> shapes;
  std::vector<std::any> parts;  // Tensor<I, 1> of the model's inner backend I
  // One bucket: the flat gradients concatenated on their device (one copy), read back (one
  // copy), reduced, written back (one copy) and handed out as views of the result.
  const auto flush = [&](auto tag) {
    using I = typename decltype(tag)::type;
    if (ids.empty()) return;
    std::vector<Tensor<I, 1>> flat;
    flat.reserve(parts.size());
    for (auto& p : parts) flat.push_back(std::any_cast<Tensor<I, 1>>(std::move(p)));
    const auto device = flat.front().device();
    TensorData data = (flat.size() == 1 ? flat.front() : Tensor<I, 1>::cat(flat, 0)).into_data();
    pg.all_reduce(data.as_mut_span<float>(), ReduceOp::Mean);
    const auto reduced = Tensor<I, 1>::from_data(data, device);
    std::int64_t offset = 0;
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const std::int64_t n = shapes[k].numel();
      grads.insert_flat(ids[k], reduced.narrow(0, offset, n), shapes[k]);
      offset += n;
    }
    ids.clear();
    shapes.clear();
    parts.clear();
    filled = 0;
  };
  nn::visit(model, [&](const std::string&, const auto& leaf) {
    if constexpr (optim::detail::is_float_param<decltype(leaf)>()) {
      using T = optim::detail::LeafTensor<decltype(leaf)>;
      using I = optim::detail::Inner<typename T::Backend>;
      if (!leaf.has_value() || !leaf.require_grad()) return;
      const Shape shape = leaf.val().shape();
      const auto numel = static_cast<std::size_t>(shape.numel());
      auto g = grads.get_flat<I>(leaf.id());
      if (!g) {
        g = Tensor<I, 1>::zeros(Shape({shape.numel()}),
                                optim::detail::to_inner(leaf.val()).device(), leaf.val().dtype());
      }
      if (g->dtype() != DType::F32) {
        TensorData data = g->into_data();
        pg.all_reduce(data, ReduceOp::Mean);
        grads.insert_flat(leaf.id(), Tensor<I, 1>::from_data(data, g->device()), shape);
        return;
      }
      if (!ids.empty() && filled + numel > cap) flush(std::type_identity<I>{});
      ids.push_back(leaf.id());
      shapes.push_back(shape);
      parts.emplace_back(*g);
      filled += numel;
      // The model's float parameters share one backend, so I is the same for every leaf.
      if (filled >= cap) flush(std::type_identity<I>{});
    }
  });
  // Flush what is left with the backend of the model's parameters.
  if (!ids.empty()) {
    bool done = false;
    nn::visit(model, [&](const std::string&, const auto& leaf) {
      if constexpr (optim::detail::is_float_param<decltype(leaf)>()) {
        using T = optim::detail::LeafTensor<decltype(leaf)>;
        if (!done) flush(std::type_identity<optim::detail::Inner<typename T::Backend>>{});
        done = true;
      }
    });
  }
}

}  // namespace ember::dist
