// CPU backend: element-wise functions of the contract (see ember/backend/elementwise.hpp),
// generic over the rows of ember/ir/elementwise.hpp. Defined in src/cpu/elementwise_{unary,
// binary,compare}.cpp over the strided/broadcast iterator of src/cpu/elementwise_kernel.hpp
// and instantiated there for every row of ir::ElementwiseOps.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ember/cpu/tensor.hpp"
#include "ember/ir/elementwise.hpp"
#include "ember/ir/fused.hpp"

namespace ember::cpu {

struct ElementwiseOps {
  template <class Op>
  static CpuTensor float_unary(CpuTensor x);
  template <class Op>
  static CpuTensor int_unary(CpuTensor x);
  template <class Op>
  static CpuTensor bool_unary(CpuTensor x);
  template <class Op>
  static CpuTensor float_binary(CpuTensor lhs, CpuTensor rhs);
  template <class Op>
  static CpuTensor int_binary(CpuTensor lhs, CpuTensor rhs);
  template <class Op>
  static CpuTensor bool_binary(CpuTensor lhs, CpuTensor rhs);
  template <class Op>
  static CpuTensor float_binary_scalar(CpuTensor lhs, double rhs);
  template <class Op>
  static CpuTensor int_binary_scalar(CpuTensor lhs, std::int64_t rhs);
  template <class Op>
  static CpuTensor float_compare(const CpuTensor& lhs, const CpuTensor& rhs);
  template <class Op>
  static CpuTensor int_compare(const CpuTensor& lhs, const CpuTensor& rhs);
  template <class Op>
  static CpuTensor bool_compare(const CpuTensor& lhs, const CpuTensor& rhs);
  template <class Op>
  static CpuTensor float_compare_scalar(const CpuTensor& lhs, double rhs);
  template <class Op>
  static CpuTensor int_compare_scalar(const CpuTensor& lhs, std::int64_t rhs);
  template <class Op>
  static CpuTensor float_predicate(const CpuTensor& x);

  static CpuTensor float_clamp(CpuTensor x, double min, double max);
  static CpuTensor int_clamp(CpuTensor x, std::int64_t min, std::int64_t max);

  /// Runs a fused block (ember/ir/fused.hpp; Fusion<Cpu>) in one pass: the index space in
  /// tiles of 1,024 elements per thread, each step one of the element-wise kernels' own
  /// vectorised loops over the tile (so the values are the unfused functions' values, up to
  /// the last bit of FMA contraction), only the outputs written to memory. `inputs` may be
  /// strided views broadcast to the block's shape. f32 and f64; other dtypes: nullopt, with
  /// `inputs` untouched (the caller runs the steps one by one). An input whose buffer is held
  /// by `inputs` alone may receive an output. Defined in src/cpu/fused.cpp.
  static std::optional<std::vector<CpuTensor>> float_fused_elementwise(
      const ir::FusedBlock& block, std::vector<CpuTensor>& inputs);
};

}  // namespace ember::cpu
