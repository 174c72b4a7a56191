// The autodiff graph: nodes, gradient mode, checkpointing scopes and Gradients.
//
// There is no global tape. Every float tensor of Autodiff<B> that requires a gradient holds
// a shared pointer to the Node that produced it; a node holds its parents. The graph of a
// loss is therefore owned by the loss tensor and freed with it (or by backward()), and two
// threads that train two models never share state. Leaves (tensors marked with
// require_grad) have a node without parents; their gradients are the ones kept.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/ir/type.hpp"

namespace ember::autodiff {

// ---- thread-local modes ------------------------------------------------------------------

namespace detail {
inline bool& grad_enabled_flag() {
  thread_local bool enabled = true;
  return enabled;
}
inline int& checkpointing_depth() {
  thread_local int depth = 0;
  return depth;
}
}  // namespace detail

/// Whether operations on this thread are recorded (false inside NoGrad and during a
/// backward pass without create_graph).
inline bool grad_enabled() {
  return detail::grad_enabled_flag();
}

/// RAII: operations on this thread are not recorded while it lives (torch.no_grad()).
class NoGrad {
 public:
  NoGrad() : saved_(detail::grad_enabled_flag()) { detail::grad_enabled_flag() = false; }
  ~NoGrad() { detail::grad_enabled_flag() = saved_; }
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool saved_;
};

/// RAII: sets whether operations are recorded (used by backward with create_graph).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : saved_(detail::grad_enabled_flag()) {
    detail::grad_enabled_flag() = enabled;
  }
  ~GradModeGuard() { detail::grad_enabled_flag() = saved_; }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool saved_;
};

/// RAII: operations recorded on this thread while it lives use gradient checkpointing
/// (Burn's balanced strategy), whatever the backend's strategy. See `Bound`.
class Checkpointing {
 public:
  Checkpointing() { ++detail::checkpointing_depth(); }
  ~Checkpointing() { --detail::checkpointing_depth(); }
  Checkpointing(const Checkpointing&) = delete;
  Checkpointing& operator=(const Checkpointing&) = delete;
};
inline bool checkpointing_scope_active() {
  return detail::checkpointing_depth() > 0;
}

/// Checkpointing strategies, the second parameter of Autodiff<B, S> (Burn's
/// CheckpointStrategy). NoCheckpointing keeps what each backward rule needs;
/// BalancedCheckpointing keeps the outputs of compute-bound ops only and recomputes the
/// memory-bound ones (element-wise math, layout) in backward from their parents.
struct NoCheckpointing {
  static constexpr bool enabled = false;
};
struct BalancedCheckpointing {
  static constexpr bool enabled = true;
};

/// How an op is treated under checkpointing (the op description's `bound`, ember/ir).
using ir::Bound;

inline std::uint64_t next_node_id() {
  static std::atomic<std::uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

template <class B>
struct BackwardContext;

/// One recorded operation (or a leaf). `IP` is the inner backend's float primitive.
template <class B>
struct Node {
  using IP = typename B::FloatTensor;

  std::uint64_t id = next_node_id();
  const char* op = "leaf";
  bool leaf = false;
  bool released = false;
  Bound bound = Bound::Memory;
  /// One entry per input; null for inputs that do not require a gradient.
  std::vector<std::shared_ptr<Node>> parents;
  /// Input values kept for the backward rule (or, under checkpointing, the values of
  /// untracked inputs needed to recompute this node).
  std::vector<std::optional<IP>> saved_inputs;
  /// Output value kept (leaves, the rules that need it, compute-bound ops under
  /// checkpointing).
  std::optional<IP> saved_output;
  /// Under checkpointing: recomputes the output from the input values.
  std::function<IP(std::vector<IP>&)> recompute;
  /// The backward rule; empty for leaves.
  std::function<void(BackwardContext<B>&)> backward;
  /// Output value recomputed during the current backward pass (checkpointing).
  std::optional<IP> memo;
  /// How many backward rules read this node's value (its consumers' saved inputs, and its
  /// own rule if it reads its output). Under checkpointing a recomputed value is memoised
  /// only when a rule will read it; intermediates needed only to recompute others are
  /// dropped at once (recomputed again in the rare case a second consumer needs them).
  int rule_uses = 0;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// Frees parents iteratively so that dropping a long chain does not recurse deeply.
  ~Node() {
    std::vector<std::shared_ptr<Node>> stack = std::move(parents);
    while (!stack.empty()) {
      std::shared_ptr<Node> p = std::move(stack.back());
      stack.pop_back();
      if (p && p.use_count() == 1) {
        for (auto& q : p->parents) stack.push_back(std::move(q));
        p->parents.clear();
      }
    }
  }

  /// Drops what backward needed (after a pass without create_graph).
  void release() {
    if (leaf) return;
    released = true;
    saved_inputs.clear();
    saved_output.reset();
    recompute = nullptr;
    backward = nullptr;
    memo.reset();
  }

  /// The node's output value: kept, memoised, or recomputed from the parents' values.
  IP value() {
    if (saved_output) return *saved_output;
    if (memo) return *memo;
    if (!recompute) {
      ember::detail::fail<Error>("backward", "the value of '", op,
                                 "' is no longer available (graph already freed: run backward "
                                 "with create_graph to backpropagate twice)");
    }
    std::vector<IP> in;
    in.reserve(parents.size());
    for (std::size_t i = 0; i < parents.size(); ++i) {
      if (saved_inputs.size() > i && saved_inputs[i])
        in.push_back(*saved_inputs[i]);
      else
        in.push_back(parents[i]->value());
    }
    IP out = recompute(in);
    if (rule_uses > 0) memo = out;
    return out;
  }
};

}  // namespace ember::autodiff
