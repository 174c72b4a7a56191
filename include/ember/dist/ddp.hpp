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
// with bitwise the same mean, so their models stay identical.
#pragma once

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
  struct Slot {
    nn::ParamId id;
    Shape shape;
    std::size_t offset, numel;
    Device device;
  };
  std::vector<float> bucket;
  std::vector<Slot> slots;
  const std::size_t cap = std::max<std::size_t>(bucket_bytes / sizeof(float), 1);
  const auto flush = [&](auto tag) {
    using I = typename decltype(tag)::type;
    if (slots.empty()) return;
    pg.all_reduce(std::span<float>(bucket), ReduceOp::Mean);
    for (const Slot& s : slots) {
      std::vector<float> part(bucket.begin() + static_cast<std::ptrdiff_t>(s.offset),
                              bucket.begin() + static_cast<std::ptrdiff_t>(s.offset + s.numel));
      const auto n = static_cast<std::int64_t>(s.numel);
      grads.insert_flat(s.id,
                        Tensor<I, 1>::from_data(TensorData(std::move(part), Shape({n})), s.device),
                        s.shape);
    }
    bucket.clear();
    slots.clear();
  };
  nn::visit(model, [&](const std::string&, const auto& leaf) {
    if constexpr (optim::detail::is_float_param<decltype(leaf)>()) {
      using T = optim::detail::LeafTensor<decltype(leaf)>;
      using I = optim::detail::Inner<typename T::Backend>;
      if (!leaf.has_value() || !leaf.require_grad()) return;
      const auto g = grads.get_flat<I>(leaf.id());
      const Shape shape = leaf.val().shape();
      const auto numel = static_cast<std::size_t>(shape.numel());
      TensorData data =
          g ? g->into_data() : TensorData::full(Shape({shape.numel()}), 0.0, leaf.val().dtype());
      const Device device = g ? g->device() : optim::detail::to_inner(leaf.val()).device();
      if (data.dtype() != DType::F32) {
        pg.all_reduce(data, ReduceOp::Mean);
        grads.insert_flat(leaf.id(), Tensor<I, 1>::from_data(data, device), shape);
        return;
      }
      if (!bucket.empty() && bucket.size() + numel > cap) flush(std::type_identity<I>{});
      const auto values = data.as_span<float>();
      slots.push_back({leaf.id(), shape, bucket.size(), numel, device});
      bucket.insert(bucket.end(), values.begin(), values.end());
      // The model's float parameters share one backend, so I is the same for every leaf.
      if (bucket.size() >= cap) flush(std::type_identity<I>{});
    }
  });
  // Flush what is left with the backend of the model's parameters.
  if (!slots.empty()) {
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
