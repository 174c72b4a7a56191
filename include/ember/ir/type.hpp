// The vocabulary of op descriptions (ember/ir): the type of a tensor operand as `infer` sees
// it, and how an op is treated under checkpointing.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"

namespace ember::ir {

/// What `infer` knows of a tensor: its shape and dtype (Burn's TensorIr without the id).
struct TensorType {
  Shape shape;
  DType dtype = DType::F32;

  bool operator==(const TensorType&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const TensorType& t) {
  return os << t.shape << " " << t.dtype;
}

/// Whether an op is limited by memory traffic or by arithmetic. Autodiff's checkpointing
/// recomputes memory-bound ops in backward instead of keeping their outputs; Fusion fuses
/// memory-bound ops into their neighbours.
enum class Bound : std::uint8_t {
  Memory,   ///< cheap to recompute (element-wise, layout, indexing)
  Compute,  ///< expensive (matmul, conv, reductions, sort): output kept
};

}  // namespace ember::ir
