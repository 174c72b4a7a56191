// Row kernels of the GPU backends (src/gpu/rows.cpp): the softmax family along any dim,
// layer_norm over the last k dims and rms_norm over the last dim, each in one launch that
// reads its input once and writes its output once where a row fits the registers of a
// workgroup. Shapes and formulas as the contract's (ember/backend/activation.hpp) and the CPU
// backend's; results differ from the CPU's by rounding only (f32 accumulators for
// f32/f16/bf16, f64 for f64). Each returns nullopt when the device kernels do not serve the
// case (a dtype the device lacks, f64 transcendental functions on Vulkan, a column longer than
// the looped kernels allow); the caller then takes the host path.
#pragma once

#include <cstdint>
#include <optional>

#include "ember/gpu/tensor.hpp"

namespace ember::gpu {

enum class RowOp { Softmax, LogSoftmax, Softmin, QuietSoftmax, LayerNorm, RmsNorm, CrossEntropy };

/// softmax / log_softmax / softmin / quiet_softmax of a float tensor along `dim` (same shape
/// and dtype). The row's maximum m propagates NaN; a row of -inf gives NaN (as PyTorch).
///   softmax: exp(x - m) / sum exp(x - m); log_softmax: x - m - log(sum exp(x - m));
///   softmin: softmax(-x); quiet_softmax: exp(x - m) / (sum exp(x - m) + exp(-m)).
std::optional<GpuTensor> softmax(RowOp op, const GpuTensor& x, std::int64_t dim);

/// (x - mean) / sqrt(var + eps) * weight + bias over the last `k` dims (biased variance, from
/// the mean: two passes); weight / bias of those dims' shape, in x's dtype.
std::optional<GpuTensor> layer_norm(const GpuTensor& x, std::int64_t k,
                                    const std::optional<GpuTensor>& weight,
                                    const std::optional<GpuTensor>& bias, double eps);

/// x / sqrt(mean(x^2) + eps) * weight over the last dim; weight [d] in x's dtype.
std::optional<GpuTensor> rms_norm(const GpuTensor& x, const std::optional<GpuTensor>& weight,
                                  double eps);

/// Cross-entropy with class indices, mean over the batch: logits [N, C] (float), targets [N]
/// (an integer dtype, each in [0, C): the front end checks them) -> [1] in logits' dtype,
/// mean_n (log(sum_c exp(x[n, c])) - x[n, t_n]), each row's loss in one launch (f32
/// accumulators; f64 for f64), their mean by the reduction kernel.
std::optional<GpuTensor> cross_entropy(const GpuTensor& logits, const GpuTensor& targets);

}  // namespace ember::gpu
