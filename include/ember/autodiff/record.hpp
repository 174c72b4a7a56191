// Recording operations and running the graph backwards. Included by the op
// implementations (ember/autodiff/*_impl.hpp), not by users.
#pragma once

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ember/autodiff/tensor.hpp"

namespace ember::autodiff {

template <class B>
struct AdOps;

template <class B>
struct Recorder {
  using IP = typename B::FloatTensor;
  using AP = AdTensor<B>;
  using NodeP = std::shared_ptr<Node<B>>;

  /// Records `op` on `ins` (float inputs, some maybe untracked). `fwd(std::vector<IP>&)`
  /// computes the output from the inputs' values (called once now, and again in backward
  /// for memory-bound ops under checkpointing, so it must be pure; it may move from the
  /// vector, and B may then reuse a uniquely owned value's buffer); `bwd(BackwardContext&)`
  /// sets the inputs' gradients. `saves` says which values `bwd` reads.
  template <class Fwd, class Bwd>
  static AP record(const char* op, Bound bound, Saves saves, std::vector<AP> ins, Fwd fwd,
                   Bwd bwd) {
    bool any_tracked = false;
    bool ckpt = checkpointing_scope_active();
    for (const AP& a : ins) {
      any_tracked = any_tracked || a.node != nullptr;
      ckpt = ckpt || a.checkpointing;
    }
    std::vector<IP> vals;
    vals.reserve(ins.size());
    if (!any_tracked || !grad_enabled()) {
      for (AP& a : ins) vals.push_back(std::move(a.inner));
      return AP{fwd(vals), nullptr, ckpt};
    }
    // Values the node keeps are shared with it; the others are handed to `fwd`, so that a
    // uniquely owned temporary can be reused in place by B's kernel.
    for (std::size_t i = 0; i < ins.size(); ++i) {
      const bool keep = ckpt || ((saves.inputs >> i) & 1u);
      vals.push_back(keep ? ins[i].inner : std::move(ins[i].inner));
    }
    IP out = fwd(vals);
    auto node = std::make_shared<Node<B>>();
    node->op = op;
    node->bound = bound;
    const std::size_t n = ins.size();
    node->parents.resize(n);
    node->saved_inputs.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      node->parents[i] = ins[i].node;
      if (ins[i].node && ((saves.inputs >> i) & 1u)) ++ins[i].node->rule_uses;
    }
    if (saves.output) ++node->rule_uses;
    if (!ckpt) {
      for (std::size_t i = 0; i < n; ++i) {
        if ((saves.inputs >> i) & 1u) node->saved_inputs[i] = std::move(ins[i].inner);
      }
      if (saves.output) node->saved_output = out;
    } else {
      // Keep only what cannot be recomputed: values of inputs without a node able to
      // produce them (constants, or nodes recorded without checkpointing).
      for (std::size_t i = 0; i < n; ++i) {
        const auto& p = ins[i].node;
        const bool recomputable = p && (p->saved_output || p->recompute);
        const bool needed = ((saves.inputs >> i) & 1u) || bound == Bound::Memory;
        if (needed && !recomputable) node->saved_inputs[i] = std::move(ins[i].inner);
      }
      if (bound == Bound::Compute)
        node->saved_output = out;
      else
        node->recompute = std::move(fwd);
    }
    node->backward = std::move(bwd);
    return AP{std::move(out), std::move(node), ckpt};
  }

  /// Unary shorthand: fwd(IP) -> IP.
  template <class Fwd, class Bwd>
  static AP unary(const char* op, Bound bound, Saves saves, AP x, Fwd fwd, Bwd bwd) {
    if (!x.node || !grad_enabled()) {
      const bool ckpt = x.checkpointing || checkpointing_scope_active();
      return AP{fwd(std::move(x.inner)), nullptr, ckpt};
    }
    std::vector<AP> ins;
    ins.push_back(std::move(x));
    return record(
        op, bound, saves, std::move(ins),
        [fwd](std::vector<IP>& v) { return fwd(std::move(v[0])); }, std::move(bwd));
  }

  /// Binary shorthand: fwd(IP, IP) -> IP.
  template <class Fwd, class Bwd>
  static AP binary(const char* op, Bound bound, Saves saves, AP a, AP b, Fwd fwd, Bwd bwd) {
    if ((!a.node && !b.node) || !grad_enabled()) {
      const bool ckpt = a.checkpointing || b.checkpointing || checkpointing_scope_active();
      return AP{fwd(std::move(a.inner), std::move(b.inner)), nullptr, ckpt};
    }
    std::vector<AP> ins;
    ins.reserve(2);
    ins.push_back(std::move(a));
    ins.push_back(std::move(b));
    return record(
        op, bound, saves, std::move(ins),
        [fwd](std::vector<IP>& v) { return fwd(std::move(v[0]), std::move(v[1])); },
        std::move(bwd));
  }

  /// Runs the graph of `root` backwards, seeding its gradient with ones.
  static Gradients<B> backward(const AP& root, bool create_graph) {
    if (!root.node) {
      ember::detail::fail<Error>("backward",
                                 "the tensor does not require grad and has no graph (call "
                                 "require_grad() on a leaf it depends on)");
    }
    // Reverse topological order, iteratively (graphs may be long chains).
    std::vector<NodeP> order;
    {
      std::unordered_set<const Node<B>*> seen;
      std::vector<std::pair<Node<B>*, std::size_t>> stack;
      std::vector<NodeP> owners;
      seen.insert(root.node.get());
      stack.emplace_back(root.node.get(), 0);
      std::unordered_map<const Node<B>*, NodeP> keep;
      keep.emplace(root.node.get(), root.node);
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < node->parents.size()) {
          const NodeP& p = node->parents[next++];
          if (p && seen.insert(p.get()).second) {
            keep.emplace(p.get(), p);
            stack.emplace_back(p.get(), 0);
          }
        } else {
          order.push_back(keep.at(node));
          stack.pop_back();
        }
      }
    }
    std::reverse(order.begin(), order.end());

    const IP& rv = root.inner;
    std::unordered_map<const Node<B>*, AP> grads;
    grads.emplace(root.node.get(), AP{B::float_full(B::float_shape(rv), 1.0, B::float_device(rv),
                                                    B::float_dtype(rv)),
                                      nullptr, root.checkpointing});
    GradModeGuard mode(create_graph);
    Gradients<B> out;
    for (const NodeP& node : order) {
      auto it = grads.find(node.get());
      if (it == grads.end()) {
        if (!create_graph) node->release();
        continue;
      }
      AP g = std::move(it->second);
      grads.erase(it);
      if (node->leaf) {
        out.put(node->id, std::move(g));
        continue;
      }
      if (node->released || !node->backward) {
        ember::detail::fail<Error>("backward", "the graph through '", node->op,
                                   "' was already freed by an earlier backward (pass "
                                   "create_graph = true to backpropagate twice)");
      }
      BackwardContext<B> ctx{node, std::move(g), {}};
      ctx.input_grads.resize(node->parents.size());
      node->backward(ctx);
      for (std::size_t i = 0; i < node->parents.size(); ++i) {
        if (!ctx.input_grads[i] || !node->parents[i]) continue;
        const Node<B>* p = node->parents[i].get();
        auto pit = grads.find(p);
        if (pit == grads.end()) {
          grads.emplace(p, std::move(*ctx.input_grads[i]));
        } else {
          pit->second = AdOps<B>::template float_binary<ir::op::Add>(
              std::move(pit->second), std::move(*ctx.input_grads[i]));
        }
      }
      if (create_graph)
        node->memo.reset();
      else
        node->release();
    }
    return out;
  }
};

}  // namespace ember::autodiff
