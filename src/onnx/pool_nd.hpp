// N-d pooling by strided slices (ops_pool.cpp), shared by MaxPool, AveragePool and LpPool.
#pragma once

#include "kernels.hpp"

namespace ember::onnx::detail {

struct PoolGeometry {
  Dims kernel, strides, dilations, begin, end;
  Dims out;    ///< output size per spatial dim
  Dims extra;  ///< padding beyond `end` that ceil mode's last window needs
};

enum class PoolMode { Max, AvgIncludePad, AvgExcludePad, Sum };

/// Output sizes (ONNX's formula; in ceil mode a last window starting in the end padding is
/// dropped). Throws ShapeError when the window is larger than the padded input.
PoolGeometry pool_geometry(const OpContext& ctx, const Dims& in, const Dims& kernel,
                           const Dims& strides, const Dims& dilations, const Dims& begin,
                           const Dims& end, bool ceil);

/// Pools x [N, C, spatial...] (Max: any numeric type; the others float).
Value pool_nd(const OpContext& ctx, const Value& x, const PoolGeometry& g, PoolMode mode);

}  // namespace ember::onnx::detail
