// The per-axis taps of interpolate (nearest / bilinear / bicubic) that the CPU backend blends
// (src/cpu/interpolate.cpp), shared with the GPU backends so that both use PyTorch's source
// indices and weights (aten/src/ATen/native/UpSample.h) computed the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/core/options.hpp"

namespace ember::cpu {

/// For each output index i of an axis: `n` source indices idx[i * n + j] (in [0, in)) and
/// weights w[i * n + j]; n is 1 (nearest), 2 (bilinear) or 4 (bicubic, A = -0.75).
template <class A>
struct InterpolateTaps {
  int n = 1;
  std::vector<std::int64_t> idx;
  std::vector<A> w;
};

/// The taps resampling an axis of `in` values to `out` (A: float for f32/f16/bf16, double
/// for f64, the CPU's compute types).
template <class A>
InterpolateTaps<A> interpolate_taps(std::int64_t in, std::int64_t out, InterpolateMode mode,
                                    bool align_corners);

extern template InterpolateTaps<float> interpolate_taps<float>(std::int64_t, std::int64_t,
                                                               InterpolateMode, bool);
extern template InterpolateTaps<double> interpolate_taps<double>(std::int64_t, std::int64_t,
                                                                 InterpolateMode, bool);

}  // namespace ember::cpu
