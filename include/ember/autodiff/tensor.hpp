// The float primitive of Autodiff<B>, the Gradients of a backward pass, and the context
// a backward rule runs with.
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/autodiff/graph.hpp"
#include "ember/backend/backend.hpp"

namespace ember::autodiff {

/// Float primitive of Autodiff<B>: the inner primitive plus the node that produced it (null
/// for constants, i.e. tensors that do not require a gradient). `checkpointing` marks
/// tensors of a checkpointing stack; ops propagate it to their outputs.
template <class B>
struct AdTensor {
  typename B::FloatTensor inner;
  std::shared_ptr<Node<B>> node;
  bool checkpointing = false;

  bool tracked() const { return node != nullptr; }
};

/// The gradients of one backward pass: leaf node id -> gradient (Burn's Gradients).
/// Gradients are Autodiff tensors: constants after a plain backward, tracked after a pass
/// with create_graph (so they can be differentiated again).
template <class B>
class Gradients {
 public:
  /// Number of gradients held.
  std::size_t size() const { return grads_.size(); }
  bool empty() const { return grads_.empty(); }

  const AdTensor<B>* find(std::uint64_t id) const {
    auto it = grads_.find(id);
    return it == grads_.end() ? nullptr : &it->second;
  }
  std::optional<AdTensor<B>> remove(std::uint64_t id) {
    auto it = grads_.find(id);
    if (it == grads_.end()) return std::nullopt;
    AdTensor<B> g = std::move(it->second);
    grads_.erase(it);
    return g;
  }
  void put(std::uint64_t id, AdTensor<B> g) { grads_.insert_or_assign(id, std::move(g)); }

 private:
  std::unordered_map<std::uint64_t, AdTensor<B>> grads_;
};

/// What a backward rule sees: the gradient of the node's output, the node's input and
/// output values (as Autodiff tensors, so that rules recorded under create_graph are
/// differentiable), and where to add the inputs' gradients.
template <class B>
struct BackwardContext {
  using AP = AdTensor<B>;
  std::shared_ptr<Node<B>> node;
  AP grad;
  /// One slot per input; rules add into it with `add`.
  std::vector<std::optional<AP>> input_grads;

  /// Whether input i needs a gradient (a rule may skip work for the others).
  bool needs(std::size_t i) const { return node->parents[i] != nullptr; }
  /// The value of input i.
  AP input(std::size_t i) const {
    const auto& parent = node->parents[i];
    if (node->saved_inputs.size() > i && node->saved_inputs[i]) {
      return AP{*node->saved_inputs[i], parent, grad.checkpointing};
    }
    if (!parent) {
      ember::detail::fail<Error>("backward", "rule of '", node->op, "' asked for input ", i,
                                 " that was not saved");
    }
    return AP{parent->value(), parent, grad.checkpointing};
  }
  /// The value of the node's output.
  AP output() const { return AP{node->value(), node, grad.checkpointing}; }
  /// Sets the gradient of input i (a rule calls it at most once per input).
  void set(std::size_t i, AP g) {
    if (needs(i)) input_grads[i] = std::move(g);
  }
};

/// Which inputs (bit i) and whether the output a backward rule reads.
struct Saves {
  unsigned inputs = 0;
  bool output = false;
};
inline constexpr Saves kSaveNothing{0, false};
inline constexpr Saves kSaveOutput{0, true};
inline constexpr Saves save_inputs(unsigned mask) {
  return Saves{mask, false};
}

}  // namespace ember::autodiff
