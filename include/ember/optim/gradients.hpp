// Gradients of a module's parameters, keyed by ParamId (Burn's GradientsParams), and their
// accumulation over several backward passes (Burn's GradientsAccumulator).
//
//   auto grads = loss.backward();
//   auto gp = optim::GradientsParams::from_grads(grads, model);
//   optimizer.step(lr, model, gp);
#pragma once

#include <any>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/backend/autodiff.hpp"
#include "ember/core/error.hpp"
#include "ember/module/module.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::optim {

namespace detail {

/// The backend the optimizers compute on: B::InnerBackend for an autodiff backend, else B.
template <class B>
using Inner = typename nn::detail::InnerOf<B>::type;

/// A parameter's value on the inner backend, untracked.
template <class B, std::size_t D>
Tensor<Inner<B>, D> to_inner(const Tensor<B, D>& t) {
  if constexpr (AutodiffBackend<B>) {
    return t.inner();
  } else {
    return t;
  }
}

/// The inverse of to_inner for a value that replaces `like`: Dispatch puts it on like's
/// device (an autodiff device keeps its +checkpointing; a device without autodiff stays).
template <class B, std::size_t D>
Tensor<B, D> from_inner(Tensor<Inner<B>, D> t, const Tensor<B, D>& like) {
  if constexpr (!AutodiffBackend<B>) {
    return t;
  } else if constexpr (std::is_same_v<Inner<B>, B>) {
    return nn::detail::can_track(like) ? t.to_device(like.device()) : t;
  } else {
    return Tensor<B, D>::from_inner(t);
  }
}

template <class L>
using LeafTensor = typename std::remove_cvref_t<L>::Value;

/// Whether a visited leaf is a float Param (the only leaves optimizers touch).
template <class L>
constexpr bool is_float_param() {
  using P = std::remove_cvref_t<L>;
  if constexpr (nn::is_param_v<P>) {
    return std::is_same_v<typename P::Value::Kind, Float>;
  } else {
    return false;
  }
}

}  // namespace detail

/// The gradient of each parameter, by ParamId, on the inner backend (Autodiff<Cpu> -> Cpu;
/// Dispatch -> Dispatch on the device without autodiff). Held flattened (rank 1) with the
/// parameter's shape; get<B, D>() gives it back in that shape.
class GradientsParams {
 public:
  GradientsParams() = default;

  /// The gradients in `grads` of every parameter of `model` that requires grad (Burn's
  /// GradientsParams::from_grads). Parameters without a gradient in `grads` (unused in the
  /// loss, frozen) are left out. `grads` is not modified.
  template <class G, class M>
  static GradientsParams from_grads(const G& grads, const M& model) {
    nn::check_unique_ids(model, "GradientsParams::from_grads");
    GradientsParams out;
    nn::visit(model, [&](const std::string&, const auto& leaf) {
      if constexpr (detail::is_float_param<decltype(leaf)>()) {
        using T = detail::LeafTensor<decltype(leaf)>;
        if constexpr (AutodiffBackend<typename T::Backend>) {
          if (!leaf.has_value() || !leaf.require_grad()) return;
          if (auto g = leaf.val().grad(grads)) out.insert(leaf.id(), *g);
        }
      }
    });
    return out;
  }

  /// Adds (or replaces) the gradient of parameter `id` (Burn's register).
  template <class B, std::size_t D>
  void insert(nn::ParamId id, const Tensor<B, D>& grad) {
    const Shape shape = grad.shape();
    insert_flat(id, grad.reshape({shape.numel()}), shape);
  }

  /// Adds (or replaces) the gradient of parameter `id`, given flattened with its shape.
  /// Throws ShapeError if the element counts differ.
  template <class B>
  void insert_flat(nn::ParamId id, const Tensor<B, 1>& flat, const Shape& shape) {
    if (flat.numel() != shape.numel()) {
      ember::detail::fail<ShapeError>("GradientsParams::insert_flat", "gradient of ", flat.numel(),
                                      " elements for shape ", shape);
    }
    grads_.insert_or_assign(id, Entry{std::any(flat), shape});
  }

  /// The gradient of `id` in its parameter's shape; nullopt if absent. Throws ValueError if it
  /// is held for another backend, ShapeError if the parameter's rank is not D.
  template <class B, std::size_t D>
  std::optional<Tensor<B, D>> get(nn::ParamId id) const {
    auto flat = get_flat<B>(id);
    if (!flat) return std::nullopt;
    const Shape& s = grads_.at(id).shape;
    if (s.rank() != D) {
      ember::detail::fail<ShapeError>("GradientsParams::get", "gradient of param ", id.value,
                                      " has shape ", s, ", not rank ", D);
    }
    return flat->template reshape<D>(s);
  }

  /// The gradient of `id` flattened to rank 1; nullopt if absent. Throws ValueError if it is
  /// held for another backend.
  template <class B>
  std::optional<Tensor<B, 1>> get_flat(nn::ParamId id) const {
    const auto it = grads_.find(id);
    if (it == grads_.end()) return std::nullopt;
    const auto* t = std::any_cast<Tensor<B, 1>>(&it->second.flat);
    if (t == nullptr) {
      ember::detail::fail<ValueError>("GradientsParams::get", "the gradient of param ", id.value,
                                      " is held for another backend");
    }
    return *t;
  }

  /// The shape of `id`'s gradient; nullopt if absent.
  std::optional<Shape> shape(nn::ParamId id) const {
    const auto it = grads_.find(id);
    return it == grads_.end() ? std::nullopt : std::optional<Shape>(it->second.shape);
  }

  /// Removes and returns the gradient of `id` (as get()).
  template <class B, std::size_t D>
  std::optional<Tensor<B, D>> remove(nn::ParamId id) {
    auto g = get<B, D>(id);
    grads_.erase(id);
    return g;
  }

  bool contains(nn::ParamId id) const { return grads_.count(id) != 0; }
  std::size_t size() const { return grads_.size(); }
  bool empty() const { return grads_.empty(); }
  /// The ids held (unordered).
  std::vector<nn::ParamId> ids() const {
    std::vector<nn::ParamId> out;
    out.reserve(grads_.size());
    for (const auto& [id, e] : grads_) out.push_back(id);
    return out;
  }

 private:
  struct Entry {
    std::any flat;  // Tensor<Inner, 1>
    Shape shape;
  };
  std::unordered_map<nn::ParamId, Entry> grads_;
};

/// Sums the GradientsParams of several backward passes (Burn's GradientsAccumulator): step
/// the optimizer with grads() once every N micro-batches. The result is the SUM (Burn's and
/// torch's behaviour when backward() runs N times without zero_grad); for the mean, divide
/// each micro-batch loss by N or scale the learning rate by 1/N.
class GradientsAccumulator {
 public:
  /// Adds `grads` to the running sum, for the parameters of `model` (gradients of ids that
  /// are not parameters of `model` are ignored). Throws ShapeError if a gradient's shape
  /// differs from the one already accumulated for its parameter.
  template <class M>
  void accumulate(const M& model, const GradientsParams& grads) {
    nn::visit(model, [&](const std::string& path, const auto& leaf) {
      if constexpr (detail::is_float_param<decltype(leaf)>()) {
        using T = detail::LeafTensor<decltype(leaf)>;
        using I = detail::Inner<typename T::Backend>;
        const auto g = grads.get_flat<I>(leaf.id());
        if (!g) return;
        const auto acc = sum_.get_flat<I>(leaf.id());
        if (!acc) {
          sum_.insert_flat(leaf.id(), *g, *grads.shape(leaf.id()));
          return;
        }
        if (!(*sum_.shape(leaf.id()) == *grads.shape(leaf.id()))) {
          ember::detail::fail<ShapeError>(
              "GradientsAccumulator::accumulate", "gradient of '", path, "' has shape ",
              *grads.shape(leaf.id()), ", accumulated so far with shape ", *sum_.shape(leaf.id()));
        }
        sum_.insert_flat(leaf.id(), acc->add(*g), *grads.shape(leaf.id()));
      }
    });
    ++count_;
  }

  /// The accumulated sum; resets the accumulator (Burn's grads()).
  GradientsParams grads() {
    GradientsParams out = std::move(sum_);
    sum_ = GradientsParams();
    count_ = 0;
    return out;
  }

  /// How many accumulate() calls the current sum holds.
  std::size_t count() const { return count_; }

 private:
  GradientsParams sum_;
  std::size_t count_ = 0;
};

}  // namespace ember::optim
