// A C++ builder for kernels: write the kernel body as ordinary C++ over `Val` handles.
//
//   KernelBuilder kb("scale", {256, 1, 1});
//   Mem x = kb.buffer("x", Elem::F32, Access::Read);
//   Mem y = kb.buffer("y", Elem::F32, Access::Write);
//   Val a = kb.scalar("a", Elem::F32);
//   Val i = kb.absolute_pos();
//   kb.if_in_bounds(i, y.len(), [&] { y[i] = x[i] * a + 1.0f; });
//   Kernel k = kb.build();
//
// Operands of an instruction must have one element type (cast explicitly); a scalar operand
// next to a vector one is splat to every lane; C++ literals take the other operand's type.
// Values defined inside a lambda of if_/for_/loop must not be used after it: carry results
// out through a `Var` (a mutable local). Misuse throws ValueError or DTypeError
// "[kernel <name>] <op>: ...".
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/kernel/ir.hpp"

namespace ember::kernel {

class KernelBuilder;

/// A value in a kernel being built (SSA value, constant or run-time scalar).
class Val {
 public:
  Val() = default;
  Val(KernelBuilder* b, VarId id) : b_(b), id_(id) {}
  VarId id() const { return id_; }
  Type type() const;
  Elem elem() const { return type().elem; }
  int lanes() const { return type().lanes; }
  KernelBuilder& builder() const;
  bool valid() const { return b_ != nullptr; }

 private:
  KernelBuilder* b_ = nullptr;
  VarId id_ = kNoVar;
};

template <class T>
concept Literal = std::is_arithmetic_v<T>;

/// A mutable local variable. Assigning to it emits an Assign; reading it (conversion to
/// Val, or get()) emits a Read. Copying a Var copies the handle, not the variable.
class Var {
 public:
  Var(KernelBuilder* b, VarId id) : b_(b), id_(id) {}
  Var(const Var&) = default;
  Var& operator=(const Val& v);
  Var& operator=(const Var& v) { return *this = v.get(); }
  template <Literal T>
  Var& operator=(T v);
  Val get() const;
  operator Val() const { return get(); }  // NOLINT: reads are implicit
  VarId id() const { return id_; }

 private:
  KernelBuilder* b_;
  VarId id_;
};

class Mem;
/// `mem[i]`: reads as a Val, assignment stores.
class ElemRef {
 public:
  ElemRef(const Mem& m, Val index) : m_(m), i_(index) {}
  operator Val() const;  // NOLINT
  Val get() const { return *this; }
  const ElemRef& operator=(const Val& v) const;
  const ElemRef& operator=(const ElemRef& v) const { return *this = v.get(); }
  template <Literal T>
  const ElemRef& operator=(T v) const;

 private:
  const Mem& m_;
  Val i_;
};

/// A buffer argument, a shared array or a local array. Indices count vectors of `lanes`
/// elements: load(i, 4) reads elements 4i..4i+3.
class Mem {
 public:
  Mem(KernelBuilder* b, VarId id) : b_(b), id_(id) {}
  VarId id() const { return id_; }
  Elem elem() const;
  Val load(Val index, int lanes = 1) const;
  void store(Val index, Val value) const;
  ElemRef operator[](Val index) const { return ElemRef(*this, index); }
  ElemRef operator[](std::uint32_t index) const;
  /// Buffers only: elements in the buffer, size of dim d, stride of dim d (elements), u32.
  Val len() const;
  Val shape(Val dim) const;
  Val shape(std::uint32_t dim) const;
  Val stride(Val dim) const;
  Val stride(std::uint32_t dim) const;
  /// Atomic read-modify-write of element `index` (scalar); returns the old value.
  Val atomic_add(Val index, Val v) const;
  Val atomic_min(Val index, Val v) const;
  Val atomic_max(Val index, Val v) const;
  Val atomic_exchange(Val index, Val v) const;
  /// Stores v if the element equals cmp; returns the old value.
  Val atomic_compare_exchange(Val index, Val cmp, Val v) const;
  KernelBuilder& builder() const { return *b_; }

 private:
  Val atomic(AtomicOp op, Val index, Val v, Val cmp) const;
  KernelBuilder* b_;
  VarId id_;
};

/// A matrix-unit fragment (one tile per subgroup).
class Fragment {
 public:
  Fragment(KernelBuilder* b, VarId id) : b_(b), id_(id) {}
  VarId id() const { return id_; }
  KernelBuilder& builder() const { return *b_; }

 private:
  KernelBuilder* b_;
  VarId id_;
};

class KernelBuilder {
 public:
  /// `workgroup`: threads per workgroup in x, y, z.
  explicit KernelBuilder(std::string name, std::array<std::uint32_t, 3> workgroup = {64, 1, 1});
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;

  // ---- arguments, in launch order ------------------------------------------------------
  /// A global buffer of `elem` with a shape of `rank` dims (given at launch).
  Mem buffer(const std::string& name, Elem elem, Access access = Access::ReadWrite,
             std::uint32_t rank = 1);
  /// A run-time scalar argument.
  Val scalar(const std::string& name, Elem elem);

  // ---- compile-time parameters and constants --------------------------------------------
  /// A constant recorded as a compile-time parameter of the kernel (printed, part of its
  /// identity: kernels built with other values are other kernels).
  Val define(const std::string& name, Elem elem, double value);
  Val constant(Elem elem, double value, int lanes = 1);
  Val f32(double v) { return constant(Elem::F32, v); }
  Val u32(std::uint32_t v) { return constant(Elem::U32, v); }
  Val i32(std::int32_t v) { return constant(Elem::I32, v); }
  Val boolean(bool v) { return constant(Elem::Bool, v ? 1 : 0); }

  // ---- storage -----------------------------------------------------------------------------
  Mem shared(Elem elem, std::uint32_t length);
  Mem local(Elem elem, std::uint32_t length);
  Var var(Val init);
  Var var(Type type);  // zero-initialised
  Fragment fragment(MatrixInfo info, Elem elem);

  // ---- builtins (u32) -------------------------------------------------------------------------
  Val thread_idx(int axis = 0);
  Val block_idx(int axis = 0);
  Val block_dim(int axis = 0);
  Val grid_dim(int axis = 0);
  Val global_idx(int axis = 0);  // block_idx * block_dim + thread_idx
  Val local_linear_idx();
  Val absolute_pos();  // linear index of the thread in the whole grid
  Val subgroup_size();
  Val lane_id();

  // ---- control flow ---------------------------------------------------------------------------
  template <class F>
  void if_(Val cond, F&& then) {
    Inst& inst = open(Op::If, {cond.id()}, 2);
    body(inst, 0, then);
  }
  template <class F, class G>
  void if_else(Val cond, F&& then, G&& otherwise) {
    Inst& inst = open(Op::If, {cond.id()}, 2);
    body(inst, 0, then);
    body(inst, 1, otherwise);
  }
  /// for (i = start; i < end; i += step) body(i); step > 0.
  template <class F>
  void for_(Val start, Val end, Val step, F&& f) {
    Inst& inst = open_for(start, end, step);
    const Val i(this, inst.out);
    body(inst, 0, [&] { f(i); });
  }
  template <class F>
  void for_(std::uint32_t start, Val end, std::uint32_t step, F&& f) {
    for_(constant(end.elem(), start), end, constant(end.elem(), step), f);
  }
  /// Repeats body until break_().
  template <class F>
  void loop(F&& f) {
    Inst& inst = open(Op::Loop, {}, 1);
    body(inst, 0, f);
  }
  /// Runs body only where pos < len; a pass removes the test when the launch covers the
  /// shape exactly (see passes.hpp).
  template <class F>
  void if_in_bounds(Val pos, Val len, F&& f) {
    Inst& inst = open(Op::IfInBounds, {pos.id(), len.id()}, 1);
    body(inst, 0, f);
  }
  void break_();
  void return_();
  void barrier();

  /// Lets the compilers contract a * b + c into FMAs (see Kernel::contract).
  void allow_contraction(bool on = true) { k_.contract = on; }

  /// The finished kernel (verified). The builder is left empty.
  Kernel build();

  // ---- low level (used by Val operators and the free functions) -------------------------------
  /// Appends an instruction with a result of `type`; returns the result.
  Val emit(Op op, Type type, std::initializer_list<VarId> in, std::uint32_t aux = 0);
  /// Appends an instruction without result.
  void emit_void(Op op, std::initializer_list<VarId> in, std::uint32_t aux = 0);
  /// Makes a and b one type (splats a scalar, turns a literal's placeholder into a's type);
  /// DTypeError when element types differ.
  void unify(const char* op, Val& a, Val& b);
  const VarInfo& info(VarId id) const { return k_.vars.at(id); }
  const std::string& name() const { return k_.name; }
  VarId new_var(VarInfo v);
  [[noreturn]] void fail_type(const char* op, const std::string& what) const;
  [[noreturn]] void fail_value(const char* op, const std::string& what) const;

 private:
  Inst& open(Op op, std::initializer_list<VarId> in, int nblocks);
  Inst& open_for(Val start, Val end, Val step);
  template <class F>
  void body(Inst& inst, int block, F&& f) {
    // `inst` lives in the parent block, which does not grow while its child is built.
    stack_.push_back(&inst.blocks[block]);
    try {
      f();
    } catch (...) {
      stack_.pop_back();
      throw;
    }
    stack_.pop_back();
  }

  Kernel k_;
  std::vector<Block*> stack_;
};

// ---- arithmetic on values (element-wise per lane) --------------------------------------------
Val operator+(Val a, Val b);
Val operator-(Val a, Val b);
Val operator*(Val a, Val b);
/// Floats: IEEE division. Integers: floor division, 0 for a zero divisor (PyTorch).
Val operator/(Val a, Val b);
/// Remainder with the divisor's sign (PyTorch's remainder); integers: 0 for a zero divisor.
Val operator%(Val a, Val b);
Val operator-(Val a);
/// Bool: logical and/or/xor/not. Integers: bitwise.
Val operator&(Val a, Val b);
Val operator|(Val a, Val b);
Val operator^(Val a, Val b);
Val operator!(Val a);
Val operator~(Val a);
/// Shifts by a negative count or >= the bit width give 0 (>> of a negative value: -1).
Val operator<<(Val a, Val b);
Val operator>>(Val a, Val b);
Val operator==(Val a, Val b);
Val operator!=(Val a, Val b);
Val operator<(Val a, Val b);
Val operator<=(Val a, Val b);
Val operator>(Val a, Val b);
Val operator>=(Val a, Val b);

/// A literal as a constant of v's element type.
template <Literal T>
Val lit(const Val& v, T x) {
  return v.builder().constant(v.elem(), static_cast<double>(x));
}
#define EMBER_KERNEL_LITERAL_OP(op) \
  template <Literal T>              \
  Val operator op(Val a, T b) {     \
    return a op lit(a, b);          \
  }                                 \
  template <Literal T>              \
  Val operator op(T a, Val b) {     \
    return lit(b, a) op b;          \
  }
EMBER_KERNEL_LITERAL_OP(+)
EMBER_KERNEL_LITERAL_OP(-)
EMBER_KERNEL_LITERAL_OP(*)
EMBER_KERNEL_LITERAL_OP(/)
EMBER_KERNEL_LITERAL_OP(%)
EMBER_KERNEL_LITERAL_OP(&)
EMBER_KERNEL_LITERAL_OP(|)
EMBER_KERNEL_LITERAL_OP(^)
EMBER_KERNEL_LITERAL_OP(<<)
EMBER_KERNEL_LITERAL_OP(>>)
EMBER_KERNEL_LITERAL_OP(==)
EMBER_KERNEL_LITERAL_OP(!=)
EMBER_KERNEL_LITERAL_OP(<)
EMBER_KERNEL_LITERAL_OP(<=)
EMBER_KERNEL_LITERAL_OP(>)
EMBER_KERNEL_LITERAL_OP(>=)
#undef EMBER_KERNEL_LITERAL_OP

// ---- math (the shared scalar functions of ember::scalar; f16/bf16 computed in f32) ------------
Val abs(Val a);
Val sqrt(Val a);
Val exp(Val a);
Val log(Val a);
Val log1p(Val a);
Val tanh(Val a);
Val erf(Val a);
Val sin(Val a);
Val cos(Val a);
Val floor(Val a);
Val ceil(Val a);
Val round(Val a);  // half to even
Val trunc(Val a);
Val recip(Val a);
Val is_nan(Val a);
Val is_inf(Val a);
/// NaN-propagating minimum/maximum (torch.minimum/maximum).
Val min(Val a, Val b);
Val max(Val a, Val b);
Val pow(Val a, Val b);
Val fma(Val a, Val b, Val c);
/// cond ? a : b, per lane.
Val select(Val cond, Val a, Val b);
template <Literal T>
Val min(Val a, T b) {
  return min(a, lit(a, b));
}
template <Literal T>
Val max(Val a, T b) {
  return max(a, lit(a, b));
}
template <Literal T>
Val pow(Val a, T b) {
  return pow(a, lit(a, b));
}

/// Value conversion (float -> int truncates toward zero, saturating as C casts do not:
/// NaN gives 0, out of range gives the nearest bound); keeps the lanes.
Val cast(Val a, Elem to);
/// Reinterprets the bits (same element size).
Val bitcast(Val a, Elem to);
Val splat(Val a, int lanes);
Val extract(Val v, int lane);
Val insert(Val v, int lane, Val x);

// ---- subgroups (every lane of the subgroup must execute these) --------------------------------
Val subgroup_sum(Val a);
Val subgroup_min(Val a);
Val subgroup_max(Val a);
Val subgroup_all(Val a);
Val subgroup_any(Val a);
/// The value of lane `lane` (uniform across the subgroup) in every lane.
Val subgroup_broadcast(Val a, Val lane);
/// The value of lane `src` (per lane).
Val shuffle(Val a, Val src);
/// The value of lane (lane_id ^ mask).
Val shuffle_xor(Val a, Val mask);

// ---- matrix units ------------------------------------------------------------------------------
void mat_fill(const Fragment& f, Val v);
/// Loads the fragment's tile from `mem` at element `offset` with row stride `stride`
/// (elements); layout as the fragment's (A, B) or `layout` (Acc).
void mat_load(const Fragment& f, const Mem& mem, Val offset, Val stride,
              MatrixLayout layout = MatrixLayout::RowMajor);
void mat_store(const Mem& mem, Val offset, Val stride, const Fragment& f,
               MatrixLayout layout = MatrixLayout::RowMajor);
/// d = a b + c.
void mat_mma(const Fragment& d, const Fragment& a, const Fragment& b, const Fragment& c);

template <Literal T>
Var& Var::operator=(T v) {
  return *this = b_->constant(b_->info(id_).type.elem, static_cast<double>(v));
}
template <Literal T>
const ElemRef& ElemRef::operator=(T v) const {
  return *this = m_.builder().constant(m_.elem(), static_cast<double>(v));
}

}  // namespace ember::kernel
