// A fused block of element-wise operations: the unit of work that Fusion<B>
// (ember/fusion/fusion.hpp) hands to a backend that can run several operations in one pass.
//
// The block computes in one float dtype over one index space (`shape`). Its values live in
// slots: slots [0, inputs) are the block's inputs, each broadcast to `shape` (same rank, dims
// of size 1 or equal); slot inputs + i is the value of step i. Each step applies one row of
// the element-wise table (ember/ir/elementwise.hpp) to earlier slots. `outputs` lists the
// steps whose values leave the block (each of `shape`); every other value lives only inside
// the block (a backend keeps it in registers or cache-sized tiles, never in memory).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"
#include "ember/ir/elementwise.hpp"

namespace ember::ir {

enum class FusedKind : std::uint8_t {
  Unary,   // slot a -> row(a)                        (float_unary)
  Binary,  // slots a, b -> row(a, b)                 (float_binary)
  Scalar,  // slot a, s0 -> row(a, s0)                (float_binary_scalar)
  Clamp,   // slot a -> min(max(a, s0), s1)            (float_clamp; row unused)
};

struct FusedStep {
  FusedKind kind = FusedKind::Unary;
  std::uint16_t row = 0;  // ir::op_index of the row in ElementwiseOps
  std::uint32_t a = 0, b = 0;
  double s0 = 0.0, s1 = 0.0;

  bool operator==(const FusedStep&) const = default;
};

struct FusedBlock {
  DType dtype = DType::F32;
  Shape shape;
  std::uint32_t inputs = 0;
  std::vector<FusedStep> steps;
  std::vector<std::uint32_t> outputs;  // step indices, in the order results are returned

  /// One line naming the steps, e.g. "f32 [32, 512] in=1: s1=div(s0, 1.41) s2=erf(s1) ...
  /// out=s5" (Fusion's log, EMBER_FUSION_LOG=1).
  std::string describe() const;
};

/// The row name of op index `row` ("erf", "add", ...).
const char* row_name(std::uint16_t row);

}  // namespace ember::ir
