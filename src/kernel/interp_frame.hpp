// The interpreter's per-thread state (see interp.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "eval.hpp"
#include "interp.hpp"

namespace ember::kernel::cpu {

/// Element e of a buffer in memory layout (f16/bf16 bits, bool bytes) as a register value.
template <Elem E>
eval::Reg<E> read_mem_elem(const std::byte* base, std::uint64_t e) {
  const std::byte* p = base + e * elem_bytes(E);
  if constexpr (E == Elem::F16 || E == Elem::BF16) {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return E == Elem::F16 ? f16::to_float(h) : bf16::to_float(h);
  } else if constexpr (E == Elem::Bool) {
    return *reinterpret_cast<const std::uint8_t*>(p) != 0 ? 1 : 0;
  } else {
    eval::Reg<E> v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
}

template <Elem E>
void write_mem_elem(std::byte* base, std::uint64_t e, eval::Reg<E> v) {
  std::byte* p = base + e * elem_bytes(E);
  if constexpr (E == Elem::F16 || E == Elem::BF16) {
    const std::uint16_t h = E == Elem::F16 ? f16::from_float(v) : bf16::from_float(v);
    std::memcpy(p, &h, 2);
  } else if constexpr (E == Elem::Bool) {
    *reinterpret_cast<std::uint8_t*>(p) = v != 0 ? 1 : 0;
  } else {
    std::memcpy(p, &v, sizeof(v));
  }
}

class Frame {
 public:
  Frame(const Program& p, const RunArgs& args);
  /// Runs the workgroups [w0, w0 + count).
  void run_chunk(std::uint64_t w0);

  // ---- used by the instruction implementations ----
  template <class T>
  T* reg(VarId v) {
    return reinterpret_cast<T*>(arena_.data() + p_.offset_[v]);
  }
  bool uniform(VarId v) const { return p_.uniform_[v] != 0; }
  const VarInfo& info(VarId v) const { return p_.k_.vars[v]; }
  /// Register entries of v: lanes (uniform) or N * lanes.
  std::size_t count(VarId v) const {
    return (uniform(v) ? 1u : n_) * static_cast<std::size_t>(info(v).type.lanes);
  }
  std::uint32_t n() const { return n_; }
  [[noreturn]] void out_of_bounds(const char* what, std::int64_t index, std::uint64_t len) const;

  void exec_pure(const Inst& i);  // interp_ops.cpp

 private:
  using Mask = std::vector<std::uint8_t>;
  void exec_block(const Block& b, Mask& mask);
  void exec(const Inst& i, Mask& mask);
  void exec_if(const Inst& i, Mask& mask, bool bounds);
  void exec_loop(const Inst& i, Mask& mask);
  void exec_for(const Inst& i, Mask& mask);
  void exec_load(const Inst& i, const Mask& mask);
  void exec_store(const Inst& i, const Mask& mask);
  void exec_assign(const Inst& i, const Mask& mask);
  void exec_atomic(const Inst& i, const Mask& mask);
  void exec_builtin(const Inst& i);
  void exec_metadata(const Inst& i);
  void exec_subgroup(const Inst& i);
  void exec_matrix(const Inst& i, const Mask& mask);
  /// Index operand as int64 per thread (into idx_).
  void load_index(VarId v);
  /// The memory a Load/Store/Atomic addresses for thread t: base pointer and length in
  /// elements (buffers: memory layout; shared/local: register layout).
  std::byte* mem_base(VarId m, std::uint32_t t, std::uint64_t& len);
  void refresh(Mask& mask) const {
    for (std::uint32_t t = 0; t < n_; ++t) mask[t] &= exited_[t] == 0;
  }
  static bool any(const Mask& m) {
    for (std::uint8_t x : m)
      if (x) return true;
    return false;
  }

  const Program& p_;
  const RunArgs& a_;
  std::uint32_t n_;
  std::vector<std::byte> arena_;
  std::vector<std::uint8_t> exited_;  // bit 0: returned, bit 1: left the current loop
  std::vector<std::int64_t> idx_;
  std::vector<std::byte> tmp_;
  std::uint64_t w0_ = 0;
};

}  // namespace ember::kernel::cpu
