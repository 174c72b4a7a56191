// Fusion<B>: the backend decorator that records element-wise work instead of running it and
// runs each chain as one fused pass (Burn's burn-fusion).
//
//   using B = ember::Fusion<ember::Cpu>;          // or Autodiff<Fusion<Cpu>>
//   auto y = x * ((x / std::sqrt(2.0)).erf() + 1.0) / 2.0;  // recorded: nothing runs
//   auto v = y.into_data();                                 // one pass over x
//
// Float tensors are lazy: a float element-wise function (float_unary, float_binary,
// float_binary_scalar, float_clamp) returns a handle to a pending node that names the row of
// the element-wise table and its operands. The value is computed when it is read
// (into_data), when any other function needs it (matmul, a reduction, a cast, ...), or when
// a chain grows past kMaxChain operations or kMaxChainOperands operand values. Then every
// pending node that the value depends on
// becomes one ir::FusedBlock (ember/ir/fused.hpp) and runs through B's
// `float_fused_elementwise` when B has it (the CPU backend: cache-sized tiles through its own
// vectorised element loops, so fused values are the unfused ones). A pending value that is
// still referenced from outside the chain (a user's handle, a tensor saved for backward) is
// written as a second output of the same pass; values used only inside the chain never reach
// memory. Without the backend function, or for a dtype it does not take (f16, bf16), the
// chain runs function by function on B (the same values, no saving).
//
// Int and bool tensors, and every function other than the four above, are B's own: they run
// at once through the generated pass-through (ember/backend/forward.hpp).
//
// sync(device) computes every pending value still held, then waits for the device.
//
// Switches: EMBER_FUSION=0 (or fusion::set_enabled(false)) runs every function at once, to
// bisect; EMBER_FUSION_LOG=1 prints each new pattern of fused block (its steps, inputs and
// outputs) once. fusion::stats() counts blocks and operations.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/backend/forward.hpp"
#include "ember/ir/fused.hpp"

namespace ember {

namespace fusion {

/// Whether T is a std::optional (lift wraps the value of an optional result).
template <class T>
inline constexpr bool kIsOptional = false;
template <class T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

/// Whether functions are recorded (EMBER_FUSION unset or not "0"), unless set_enabled said.
bool enabled();
/// Overrides EMBER_FUSION for this process (tests, benchmarks). Pending chains stay pending.
void set_enabled(bool on);

struct Stats {
  std::uint64_t blocks = 0;        // fused blocks run by the backend in one pass
  std::uint64_t fused_ops = 0;     // operations inside those blocks
  std::uint64_t replayed_ops = 0;  // recorded operations run one by one (no fused path)
};
Stats stats();
void reset_stats();
/// Counts a block run in one pass; prints it when EMBER_FUSION_LOG=1 and its pattern is new.
void note_block(const ir::FusedBlock& block);
void note_replayed(std::uint64_t ops);

/// A chain longer than this many recorded operations is computed at once (bounds the memory
/// a pending chain holds and the size of a block).
inline constexpr std::uint32_t kMaxChain = 64;
/// A chain over more than this many computed operand values (counted with repeats) is
/// computed at once. A value updated every training step and never read in between (batch
/// norm's running statistics: one new operand a step) is then computed at the operation that
/// brings in the new operand, the same point of every step, so its block has one pattern (cut
/// by the operation count, the cut moved from step to step: a new pattern, compiled anew).
inline constexpr std::uint32_t kMaxChainOperands = 12;

template <class B>
struct Node {
  using P = typename B::FloatTensor;
  using Eager = P (*)(const Node&, P, std::optional<P>);

  Shape shape;
  DType dtype = DType::F32;
  typename B::Device device{};
  std::optional<P> value;          // set once computed (under Fusion<B>'s lock)
  std::atomic<bool> ready{false};  // value is set: read without the lock (acquire/release)
  // Pending: the operation and its operands (released once value is set).
  ir::FusedStep step{};
  std::shared_ptr<Node> a, b;
  Eager eager = nullptr;       // runs the operation alone on B
  std::uint32_t chain = 0;     // recorded operations below and including this one (an upper bound)
  std::uint32_t operands = 0;  // computed operand values below this one, with repeats
  // Set when running the step alone on B threw after its operands were given to B: reading
  // the value (or one computed from it) throws the same error again.
  std::exception_ptr error;
  // Scratch of one traversal (under the lock): the traversal that last saw this node, and how
  // many times it is an operand inside that traversal's chain.
  std::uint64_t seen = 0, counted = 0, slotted = 0;
  long uses = 0;
  std::uint32_t slot = 0;  // its slot in the block being built
};

/// Fusion<B>'s float primitive: a shared handle to a computed or pending node.
template <class B>
struct FusionTensor {
  std::shared_ptr<Node<B>> node;
};

template <class B>
struct Types {
  using FloatTensor = FusionTensor<B>;
  using IntTensor = typename B::IntTensor;
  using BoolTensor = typename B::BoolTensor;
  using Device = typename B::Device;
  static constexpr bool forward_float = true;
};

/// Whether B runs fused blocks itself: B::float_fused_elementwise(block, inputs) returns the
/// values of block.outputs, or nullopt (inputs untouched) for a block it does not take. An
/// input that `inputs` holds alone may give its buffer to an output.
template <class B>
concept FusedBackend = requires(const ir::FusedBlock& blk,
                                std::vector<typename B::FloatTensor>& v) {
  {
    B::float_fused_elementwise(blk, v)
    } -> std::same_as<std::optional<std::vector<typename B::FloatTensor>>>;
};

}  // namespace fusion

template <class B>
struct Fusion : Forward<B, fusion::Types<B>, Fusion<B>> {
  using InnerBackend = B;
  using Device = typename B::Device;
  using FloatTensor = fusion::FusionTensor<B>;
  using IntTensor = typename B::IntTensor;
  using BoolTensor = typename B::BoolTensor;
  using FT = FloatTensor;
  using P = typename B::FloatTensor;
  using NodeT = fusion::Node<B>;
  using NodePtr = std::shared_ptr<NodeT>;

  static std::string name() { return "fusion_" + B::name(); }

  // ---- unwrap / lift for the pass-through functions -----------------------------------------
  static P unwrap(const FT& t) { return value_of(t.node); }
  /// A handle held nowhere else gives its value away (B may then reuse the buffer).
  static P unwrap(FT&& t) {
    value_of(t.node);
    if (t.node.use_count() == 1) return std::move(*t.node->value);
    return *t.node->value;
  }
  static std::optional<P> unwrap(const std::optional<FT>& t) {
    if (!t) return std::nullopt;
    return value_of(t->node);
  }
  static std::vector<P> unwrap(const std::vector<FT>& ts) {
    std::vector<P> out;
    out.reserve(ts.size());
    for (const FT& t : ts) out.push_back(value_of(t.node));
    return out;
  }
  template <class T>
  static T&& unwrap(T&& x) {
    return std::forward<T>(x);
  }
  template <class R, class V>
  static R lift(V&& v) {
    if constexpr (std::is_same_v<R, FT>) {
      return wrap(std::forward<V>(v));
    } else if constexpr (std::is_same_v<R, std::vector<FT>>) {
      R out;
      out.reserve(v.size());
      for (auto& x : v) out.push_back(wrap(std::move(x)));
      return out;
    } else if constexpr (fusion::kIsOptional<R> && !std::is_same_v<std::remove_cvref_t<V>, R>) {
      if (!v) return std::nullopt;
      return lift<typename R::value_type>(std::move(*v));
    } else if constexpr (requires { typename std::tuple_size<R>::type; } &&
                         !std::is_same_v<std::remove_cvref_t<V>, R>) {
      return lift_each<R>(std::forward<V>(v), std::make_index_sequence<std::tuple_size_v<R>>{});
    } else {
      return R(std::forward<V>(v));
    }
  }

  // ---- metadata without computing -------------------------------------------------------------
  static Shape float_shape(const FT& t) { return t.node->shape; }
  static DType float_dtype(const FT& t) { return t.node->dtype; }
  static Device float_device(const FT& t) { return t.node->device; }

  // ---- recorded: the element-wise table and clamp ---------------------------------------------
  template <class Op>
  static FT float_unary(FT x) {
    ir::FusedStep s{ir::FusedKind::Unary, static_cast<std::uint16_t>(ir::op_index<Op>)};
    return record(s, std::move(x.node), nullptr, Shape{}, &eager_unary<Op>);
  }
  template <class Op>
  static FT float_binary(FT a, FT b) {
    ir::FusedStep s{ir::FusedKind::Binary, static_cast<std::uint16_t>(ir::op_index<Op>)};
    Shape shape = a.node->shape;
    for (std::size_t d = 0; d < shape.rank(); ++d)
      if (shape[d] == 1) shape[d] = b.node->shape[d];
    return record(s, std::move(a.node), std::move(b.node), std::move(shape), &eager_binary<Op>);
  }
  template <class Op>
  static FT float_binary_scalar(FT x, double scalar) {
    ir::FusedStep s{ir::FusedKind::Scalar, static_cast<std::uint16_t>(ir::op_index<Op>)};
    s.s0 = scalar;
    return record(s, std::move(x.node), nullptr, Shape{}, &eager_scalar<Op>);
  }
  static FT float_clamp(FT x, double min, double max) {
    ir::FusedStep s{ir::FusedKind::Clamp, 0};
    s.s0 = min;
    s.s1 = max;
    return record(s, std::move(x.node), nullptr, Shape{}, &eager_clamp);
  }

  /// Computes every pending value still held (by tensors, saved for backward, ...), then waits
  /// for device `d` (PyTorch's torch.cuda.synchronize; Burn's stream flush): after sync the
  /// device has run all the work recorded so far. Pending values of every device are computed.
  static void sync(const Device& d) {
    flush();
    B::sync(d);
  }
  /// Computes every pending value still held, newest first: a chain runs as one block, and an
  /// older value it depends on that is still held elsewhere is that block's extra output.
  /// One flush at a time: a second thread's flush waits for the first to finish. A value that
  /// throws (out of memory, or a step that failed before) does not stop the others: the flush
  /// computes the rest, then throws the first error. A value that failed without recording
  /// its error (out of memory) stays registered, so the next flush tries it again; one that
  /// recorded it (a failed step) rethrows it when read.
  static void flush() {
    std::lock_guard<std::recursive_mutex> lock(mutex());
    std::vector<std::weak_ptr<NodeT>> nodes;
    {
      std::lock_guard<std::mutex> reg(registry().mu);
      nodes.swap(registry().nodes);
      registry().live = 0;
    }
    std::exception_ptr first;
    std::vector<std::weak_ptr<NodeT>> failed;  // newest first
    for (std::size_t i = nodes.size(); i-- > 0;) {
      NodePtr n = nodes[i].lock();
      if (!n || computed(*n) || n->error) continue;
      try {
        value_of(n);
      } catch (...) {
        if (!first) first = std::current_exception();
        if (!n->error) failed.push_back(nodes[i]);
      }
    }
    if (!failed.empty()) {
      std::lock_guard<std::mutex> reg(registry().mu);
      std::vector<std::weak_ptr<NodeT>>& r = registry().nodes;
      r.insert(r.begin(), failed.rbegin(), failed.rend());  // oldest first, before newer ones
    }
    if (first) std::rethrow_exception(first);
  }

  /// The computed value of `t` (runs its pending chain).
  static const P& float_value(const FT& t) { return value_of(t.node); }
  /// Whether `t` is still pending.
  static bool float_is_pending(const FT& t) { return !computed(*t.node); }

 private:
  template <class R, class V, std::size_t... K>
  static R lift_each(V&& v, std::index_sequence<K...>) {
    return R(lift<std::tuple_element_t<K, R>>(std::get<K>(std::forward<V>(v)))...);
  }

  static FT wrap(P v) {
    auto n = std::make_shared<NodeT>();
    n->shape = B::float_shape(v);
    n->dtype = B::float_dtype(v);
    n->device = B::float_device(v);
    n->value = std::move(v);
    n->ready.store(true, std::memory_order_release);
    return FT{std::move(n)};
  }

  template <class Op>
  static P eager_unary(const NodeT&, P a, std::optional<P>) {
    return B::template float_unary<Op>(std::move(a));
  }
  template <class Op>
  static P eager_binary(const NodeT&, P a, std::optional<P> b) {
    return B::template float_binary<Op>(std::move(a), std::move(*b));
  }
  template <class Op>
  static P eager_scalar(const NodeT& n, P a, std::optional<P>) {
    return B::template float_binary_scalar<Op>(std::move(a), n.step.s0);
  }
  static P eager_clamp(const NodeT& n, P a, std::optional<P>) {
    return B::float_clamp(std::move(a), n.step.s0, n.step.s1);
  }

  /// A new node for `step` over a (and b); `shape` is the result's when b is given.
  static FT record(ir::FusedStep step, NodePtr a, NodePtr b, Shape shape,
                   typename NodeT::Eager eager) {
    auto n = std::make_shared<NodeT>();
    n->shape = b ? std::move(shape) : a->shape;
    n->dtype = a->dtype;
    n->device = a->device;
    n->step = step;
    n->eager = eager;
    n->chain = 1 + (computed(*a) ? 0 : a->chain) + (b && !computed(*b) ? b->chain : 0);
    n->operands = (computed(*a) ? 1 : a->operands) + (b ? (computed(*b) ? 1 : b->operands) : 0);
    n->a = std::move(a);
    n->b = std::move(b);
    if (!fusion::enabled()) {
      std::lock_guard<std::recursive_mutex> lock(mutex());
      replay(n);  // at once, on B (operands may still be pending from before the switch)
    } else if (n->chain > fusion::kMaxChain || n->operands > fusion::kMaxChainOperands) {
      value_of(n);
    } else {
      remember(n);
    }
    return FT{std::move(n)};
  }

  /// The pending nodes recorded since the last flush (weak: they do not keep a value alive
  /// or count as holders), pruned of those computed or gone as it grows.
  struct Registry {
    std::mutex mu;  // guards nodes and live (not the nodes themselves)
    std::vector<std::weak_ptr<NodeT>> nodes;
    std::size_t live = 0;  // entries left after the last pruning
  };
  static Registry& registry() {
    static Registry r;
    return r;
  }
  static void remember(const NodePtr& n) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.nodes.push_back(n);
    if (r.nodes.size() < 2 * r.live + 256) return;
    std::erase_if(r.nodes, [](const std::weak_ptr<NodeT>& w) {
      const NodePtr x = w.lock();
      return !x || computed(*x);
    });
    r.live = r.nodes.size();
  }

  static bool computed(const NodeT& n) { return n.ready.load(std::memory_order_acquire); }

  static std::recursive_mutex& mutex() {
    static std::recursive_mutex m;
    return m;
  }

  /// The value of node n, running its pending chain first.
  static const P& value_of(const NodePtr& n) {
    if (computed(*n)) return *n->value;
    std::lock_guard<std::recursive_mutex> lock(mutex());
    if (!n->value) {
      if constexpr (fusion::FusedBackend<B>) run_fused(n);
      if (!n->value) replay(n);
    }
    return *n->value;
  }
  /// Stores the computed value of pending node x.
  static void set_value(NodeT& x, P v) {
    x.value = std::move(v);
    x.ready.store(true, std::memory_order_release);
  }

  /// A number for each traversal (under the lock).
  static std::uint64_t next_traversal() {
    static std::uint64_t t = 0;
    return ++t;
  }

  /// The pending nodes n depends on, operands before users (n last); each entry holds one
  /// extra reference. Each node's `uses` counts its uses as an operand inside the chain
  /// (computed operands too). Rethrows the error of a node that failed before, which n then
  /// keeps as its own (so a flush skips n, as it skips the failed node).
  static std::vector<NodePtr> pending_order(const NodePtr& n) {
    const std::uint64_t t = next_traversal();
    std::vector<NodePtr> order;
    std::vector<std::pair<NodePtr, bool>> stack{{n, false}};
    while (!stack.empty()) {
      auto [x, expanded] = std::move(stack.back());
      stack.pop_back();
      if (expanded) {
        order.push_back(std::move(x));
        continue;
      }
      if (x->seen == t) continue;  // expanded already (an operand reached twice)
      x->seen = t;
      if (x->error) {
        n->error = x->error;  // computed from a failed step: n fails the same way, for good
        std::rethrow_exception(x->error);
      }
      stack.push_back({x, true});
      for (const NodePtr* o : {&x->b, &x->a}) {
        if (!*o) continue;
        NodeT& op = **o;
        if (op.counted != t) {
          op.counted = t;
          op.uses = 0;
        }
        ++op.uses;
        if (!op.value && op.seen != t) stack.push_back({*o, false});
      }
    }
    return order;
  }

  /// An operand's value for one use: moved out when that use is its last holder.
  static P take(NodePtr& operand) {
    if (operand.use_count() == 1) return std::move(*operand->value);
    return *operand->value;
  }

  /// Runs the chain of n function by function on B.
  static void replay(const NodePtr& n) {
    std::vector<NodeT*> order;
    {
      const std::vector<NodePtr> held = pending_order(n);
      for (const NodePtr& x : held) order.push_back(x.get());
    }
    // Each pending node stays alive until its users (later in `order`) have run.
    for (NodeT* x : order) {
      std::optional<P> bv;
      if (x->b) bv = take(x->b);
      P av = take(x->a);
      try {
        set_value(*x, x->eager(*x, std::move(av), std::move(bv)));
      } catch (...) {
        x->error = std::current_exception();  // its operands may be gone: it fails again
        n->error = x->error;                  // and so does the value asked for
        throw;
      }
      x->a.reset();
      x->b.reset();
    }
    fusion::note_replayed(order.size());
  }

  /// Whether pending node x (held once by `order`) is also held from outside the chain.
  static bool external(const NodePtr& x, std::uint64_t t) {
    const long inner = x->counted == t ? x->uses : 0;
    return x.use_count() - 1 > inner;
  }

  /// Runs the chain of n as one block through B::float_fused_elementwise; leaves n pending
  /// when B declines the block.
  static void run_fused(const NodePtr& root) requires fusion::FusedBackend<B> {
    // A pending value used outside the chain is an output of the block; one of another shape
    // (a broadcast operand) is computed first, as a block of its own.
    std::vector<NodePtr> order;
    std::uint64_t t = 0;
    for (;;) {
      order = pending_order(root);
      t = root->seen;
      NodePtr first;
      for (const NodePtr& x : order)
        if (x != root && x->shape != root->shape && external(x, t)) {
          first = x;
          break;
        }
      if (!first) break;
      order.clear();  // the chain changes: traverse it again after `first` is computed
      value_of(first);
    }

    ir::FusedBlock blk;
    blk.dtype = root->dtype;
    blk.shape = root->shape;
    std::vector<NodeT*> inputs;
    std::vector<bool> dies;  // held only by the chain: its value may be moved in
    for (const NodePtr& x : order)
      for (const NodePtr* o : {&x->a, &x->b})
        if (*o && (*o)->value && (*o)->slotted != t) {
          (*o)->slotted = t;
          (*o)->slot = static_cast<std::uint32_t>(inputs.size());
          inputs.push_back(o->get());
          dies.push_back(o->use_count() == (*o)->uses);
        }
    blk.inputs = static_cast<std::uint32_t>(inputs.size());
    std::vector<NodeT*> outs;
    for (std::size_t i = 0; i < order.size(); ++i) {
      NodeT* x = order[i].get();
      ir::FusedStep s = x->step;
      s.a = x->a->slot;  // operands come earlier in `order`, or are inputs
      if (x->b) s.b = x->b->slot;
      x->slotted = t;
      x->slot = blk.inputs + static_cast<std::uint32_t>(i);
      blk.steps.push_back(s);
      if (order[i] == root || external(order[i], t)) {
        blk.outputs.push_back(static_cast<std::uint32_t>(i));
        outs.push_back(x);
      }
    }
    // An input held only by the chain gives its value to the block (B may write an output
    // into its buffer); it is restored when B declines the block.
    std::vector<P> in_values;
    in_values.reserve(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k)
      in_values.push_back(dies[k] ? std::move(*inputs[k]->value) : *inputs[k]->value);
    const auto restore = [&] {
      for (std::size_t k = 0; k < inputs.size(); ++k)
        if (dies[k]) inputs[k]->value = std::move(in_values[k]);
    };
    std::optional<std::vector<P>> results;
    try {
      results = B::float_fused_elementwise(blk, in_values);
    } catch (...) {
      restore();  // e.g. out of memory: every value stays as it was
      throw;
    }
    if (!results) {
      restore();
      return;
    }
    in_values.clear();
    fusion::note_block(blk);
    for (std::size_t k = 0; k < outs.size(); ++k) set_value(*outs[k], std::move((*results)[k]));
    // Release the operands: values used only inside the block die with their users.
    for (NodeT* x : outs) {
      x->a.reset();
      x->b.reset();
    }
  }
};

}  // namespace ember
