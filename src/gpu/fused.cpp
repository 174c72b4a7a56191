// Fused element-wise blocks on the GPU backends (Fusion<Vulkan>, Fusion<Cuda>; the block is
// ember/ir/fused.hpp): one generated kernel per block pattern.
//
// A block becomes one element-wise kernel (the generator of src/gpu/map.cpp, several outputs):
// each thread loads its element of every input, computes the steps in registers with the
// rows' kernel expressions (gpu::expr::Of, the unfused kernels' own), and stores only the
// block's outputs. Everything that changes the code is the kernel's key: dtype, the steps
// (kind, row, operand slots), the outputs, the inputs' layout (flat or strided, rank) and
// the vector width. The steps' scalars (s0, s1) are run-time arguments, so a chain whose
// constants change from call to call (an optimizer's step size and bias corrections) compiles
// once. A division by a power of two becomes the multiplication by its exact reciprocal.
// Values are the unfused functions' values: the same expressions in the same compute
// type (f32 for f16/bf16/f32, f64 for f64), and for f16/bf16 each step's value is rounded to
// the dtype as the unfused function stores it. A block with more than 30 inputs and outputs
// together (the buffers a Vulkan kernel can bind), or more arguments than a launch carries,
// runs step by step.
#include "ember/ir/fused.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ember/gpu/expr.hpp"
#include "ember/gpu/ops.hpp"
#include "ember/ir/fused_rewrite.hpp"
#include "ember/kernel/launch.hpp"
#include "map.hpp"

namespace ember::gpu {

namespace {

using kernel::Elem;
using kernel::Val;

/// The most buffers (inputs and outputs) of a fused kernel.
constexpr std::size_t kMaxBuffers = 30;

using Fn1 = Val (*)(Val);
using Fn2 = Val (*)(Val, Val);

template <class Op>
constexpr Fn1 unary_fn() {
  if constexpr (ir::is_row<Op, ir::Family::Unary, ir::kFloat> && expr::native<Op, ir::kFloat>)
    return &expr::Of<Op>::f;
  return nullptr;
}
template <class Op>
constexpr Fn2 binary_fn() {
  if constexpr (ir::is_row<Op, ir::Family::Binary, ir::kFloat> && expr::native<Op, ir::kFloat>)
    return &expr::Of<Op>::f;
  return nullptr;
}
template <class Op>
constexpr Fn2 scalar_fn() {
  if constexpr (Op::family == ir::Family::Binary && ir::has_scalar_form<Op, ir::kFloat> &&
                expr::native<Op, ir::kFloat>)
    return &expr::Of<Op>::f;
  return nullptr;
}

/// The kernel expression of each row (null where the row has none for floats), indexed by
/// ir::op_index.
struct Rows {
  template <class... Ops>
  static constexpr std::array<Fn1, sizeof...(Ops)> unary(ir::TypeList<Ops...>) {
    return {unary_fn<Ops>()...};
  }
  template <class... Ops>
  static constexpr std::array<Fn2, sizeof...(Ops)> binary(ir::TypeList<Ops...>) {
    return {binary_fn<Ops>()...};
  }
  template <class... Ops>
  static constexpr std::array<Fn2, sizeof...(Ops)> scalar(ir::TypeList<Ops...>) {
    return {scalar_fn<Ops>()...};
  }
};
constexpr auto kUnary = Rows::unary(ir::ElementwiseOps{});
constexpr auto kBinary = Rows::binary(ir::ElementwiseOps{});
constexpr auto kScalar = Rows::scalar(ir::ElementwiseOps{});

/// Whether the GPU has a kernel expression for step `s`.
bool served(const ir::FusedStep& s) {
  if (s.kind == ir::FusedKind::Clamp) return true;
  if (s.row >= ir::ElementwiseOps::size) return false;
  switch (s.kind) {
    case ir::FusedKind::Unary:
      return kUnary[s.row] != nullptr;
    case ir::FusedKind::Binary:
      return kBinary[s.row] != nullptr;
    case ir::FusedKind::Scalar:
      return kScalar[s.row] != nullptr;
    default:
      return false;
  }
}

/// Scalars the block's steps take at run time, in step order.
std::size_t scalar_count(const ir::FusedStep& s) {
  if (s.kind == ir::FusedKind::Clamp) return 2;
  return s.kind == ir::FusedKind::Scalar ? 1 : 0;
}

/// The pattern: everything about the block that changes the generated code.
std::string pattern_key(const ir::FusedBlock& b) {
  std::string k =
      "fused|" + std::to_string(static_cast<int>(b.dtype)) + "|" + std::to_string(b.inputs) + "|";
  for (const ir::FusedStep& s : b.steps) {
    k += std::to_string(static_cast<int>(s.kind)) + ":" + std::to_string(s.row) + ":" +
         std::to_string(s.a) + ":" + std::to_string(s.b) + ";";
  }
  k += "|";
  for (std::uint32_t o : b.outputs) k += std::to_string(o) + ",";
  return k;
}

std::atomic<std::uint64_t> g_compiled{0};

}  // namespace

std::uint64_t fused_kernels_compiled() {
  return g_compiled.load();
}

std::optional<std::vector<GpuTensor>> fused_elementwise(const ir::FusedBlock& given,
                                                        std::vector<GpuTensor>& inputs) {
  ir::FusedBlock block = given;
  for (ir::FusedStep& s : block.steps) {
    if (block.dtype == DType::F64)
      ir::exact_reciprocal<double>(s);
    else
      ir::exact_reciprocal<float>(s);
  }
  if (inputs.empty() || inputs.size() != block.inputs || block.outputs.empty()) return std::nullopt;
  const DType dt = block.dtype;
  if (!(dt == DType::F32 || dt == DType::F64 || dt == DType::F16 || dt == DType::BF16))
    return std::nullopt;
  kernel::ComputeDevice& dev = inputs.front().compute();
  if (!native_dtype(dt, dev)) return std::nullopt;
  const std::size_t rank = block.shape.dims.size();
  if (std::max<std::size_t>(rank, 1) > kernel::kMaxRank ||
      block.shape.numel() > std::int64_t{0xffffffff})
    return std::nullopt;  // the steps run one by one and report it
  for (const GpuTensor& t : inputs)
    if (t.dtype != dt || t.shape.dims.size() != rank || &t.compute() != &dev) return std::nullopt;
  for (const ir::FusedStep& s : block.steps)
    if (!served(s)) return std::nullopt;
  for (std::uint32_t o : block.outputs)
    if (o >= block.steps.size()) return std::nullopt;
  // Buffers a kernel binds: Vulkan guarantees 32 push descriptors, one of them the launch's
  // own information (src/vulkan/device.cpp).
  if (inputs.size() + block.outputs.size() > kMaxBuffers) return std::nullopt;
  // The launch's information words (kernel::InfoLayout): each buffer 1 + 2 x its rank (rank 1
  // when every input is flat), a scalar 1 (2 for f64), an offset per input and the count.
  std::size_t scalar_args = 0;
  for (const ir::FusedStep& s : block.steps) scalar_args += scalar_count(s);
  const std::size_t view_rank = std::max<std::size_t>(rank, 1);
  const std::size_t words = (inputs.size() + block.outputs.size()) * (1 + 2 * view_rank) +
                            scalar_args * (dt == DType::F64 ? 2 : 1) + inputs.size() + 1;
  if (words > kernel::kMaxInfoWords) return std::nullopt;

  const Elem c = dt == DType::F64 ? Elem::F64 : Elem::F32;  // the compute type
  const bool half = dt == DType::F16 || dt == DType::BF16;
  const Elem stored = half ? elem_of(dt, "fused") : c;

  detail::MultiMapSpec spec;
  spec.key = pattern_key(block);
  spec.outs.assign(block.outputs.size(), dt);
  std::vector<ScalarArg> scalars;
  for (const ir::FusedStep& s : block.steps) {
    if (scalar_count(s) >= 1) scalars.push_back(ScalarArg{c, s.s0, 0});
    if (scalar_count(s) >= 2) scalars.push_back(ScalarArg{c, s.s1, 0});
  }
  spec.scalar_elems.assign(scalars.size(), c);
  spec.lanes = dt == DType::F64 ? 1 : 4;
  char name[32];
  std::snprintf(name, sizeof name, "fused_%zx", std::hash<std::string>{}(spec.key));
  spec.name = name;
  spec.compiles = &g_compiled;
  spec.expr = [block, c, half, stored](std::span<const Val> in, std::span<const Val> sc) {
    std::vector<Val> slot;
    slot.reserve(block.inputs + block.steps.size());
    for (const Val& v : in) slot.push_back(kernel::cast(v, c));
    std::size_t next = 0;  // the next run-time scalar
    for (const ir::FusedStep& s : block.steps) {
      Val r;
      switch (s.kind) {
        case ir::FusedKind::Unary:
          r = kUnary[s.row](slot[s.a]);
          break;
        case ir::FusedKind::Binary:
          r = kBinary[s.row](slot[s.a], slot[s.b]);
          break;
        case ir::FusedKind::Scalar:
          r = kScalar[s.row](slot[s.a], sc[next++]);
          break;
        case ir::FusedKind::Clamp:
          r = kernel::min(kernel::max(slot[s.a], sc[next]), sc[next + 1]);
          next += 2;
          break;
      }
      // f16/bf16: the value the unfused function would have stored and the next one loaded.
      if (half) r = kernel::cast(kernel::cast(r, stored), c);
      slot.push_back(r);
    }
    std::vector<Val> outs;
    for (std::uint32_t o : block.outputs) outs.push_back(slot[block.inputs + o]);
    return outs;
  };

  unsigned reusable = 0;
  for (std::size_t i = 0; i < inputs.size() && i < 32; ++i)
    if (inputs[i].buffer.use_count() == 1) reusable |= 1u << i;
  return detail::try_map_multi(spec, inputs, block.shape, scalars, reusable);
}

}  // namespace ember::gpu
