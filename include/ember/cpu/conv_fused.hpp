// CPU backend: the inference fast path of convolutions (used by ember::onnx): one oneDNN
// primitive for conv + bias + residual add + ReLU, with the weight packed once. Not part of
// the backend contract (ember/backend/conv.hpp); f32 with oneDNN only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

/// The weight of one inference convolution reordered once into the layout oneDNN's kernel
/// wants, reused by every conv_fused call given this pack. The pack keeps a reference to the
/// weight's storage and repacks when called with another storage or offset; the owner
/// promises the weight's values do not change while the pack is in use (an ONNX session's
/// initializers). Thread-safe.
class ConvWeightPack {
 public:
  ConvWeightPack();
  ~ConvWeightPack();
  ConvWeightPack(const ConvWeightPack&) = delete;
  ConvWeightPack& operator=(const ConvWeightPack&) = delete;
  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// Options of conv_fused: per spatial dim stride, (symmetric) padding and dilation.
struct ConvFusedOptions {
  std::vector<std::int64_t> stride, padding, dilation;
  std::int64_t groups = 1;
  bool relu = false;  ///< max(0, .) after the bias and the residual
  /// Return the result in the kernel's layout (a ConvActivation) when that is not plain, for
  /// the next conv_fused to read without reorders.
  bool keep_blocked = false;
  /// The residual is the caller's to give up: when it is blocked in the kernel's layout its
  /// buffer becomes the result's (no copy). Its values are then overwritten.
  bool reuse_residual = false;
};

/// A conv_fused result left in the layout the kernel wrote (oneDNN's blocked nChw16c, ...).
struct ConvActivation {
  Shape shape;                         ///< logical [N, C, *S]
  CpuTensor buffer;                    ///< the data (1-d, f32)
  std::shared_ptr<const void> layout;  ///< the oneDNN memory descriptor (opaque)
};
/// The plain, row-major [N, C, *S] tensor of `a`.
CpuTensor to_plain(const ConvActivation& a);

/// Max pooling of a blocked activation in its layout (oneDNN pooling): windows `kernel`,
/// `stride`, symmetric `padding` (padding never wins), floor output sizes, 2 or 3 spatial
/// dims. std::nullopt when oneDNN declines.
std::optional<ConvActivation> max_pool_blocked(const ConvActivation& x,
                                               const std::vector<std::int64_t>& kernel,
                                               const std::vector<std::int64_t>& stride,
                                               const std::vector<std::int64_t>& padding);

/// An operand of conv_fused: plain (any strides) or blocked.
using ConvOperand = std::variant<CpuTensor, ConvActivation>;

/// conv_fused on operands that may be blocked (x and residual); the result is blocked only
/// when opt.keep_blocked and the kernel's layout is not plain. A blocked operand in another
/// layout than the kernel's goes through to_plain.
std::optional<ConvOperand> conv_fused(const ConvOperand& x, const CpuTensor& weight,
                                      const std::optional<CpuTensor>& bias,
                                      const ConvOperand* residual, const ConvFusedOptions& opt,
                                      ConvWeightPack* pack = nullptr);

/// f32 y = relu?(conv(x, weight) + bias + residual) for 1-3 spatial dims in one oneDNN
/// primitive (bias, a `sum` post-op for the residual and an `eltwise_relu` post-op).
/// `x` [N, C_in, *S], `weight` [C_out, C_in/g, *k], `bias` [C_out], `residual` the output's
/// shape [N, C_out, *S_out]. `pack`: optional cache of the reordered weight (see
/// ConvWeightPack). Returns std::nullopt, having done nothing, when the fast path does not
/// apply (not f32, oneDNN not built in or disabled with EMBER_CONV_IMPL=gemm, depthwise,
/// shapes that do not fit, oneDNN declines): the caller then runs the unfused ops.
std::optional<CpuTensor> conv_fused(const CpuTensor& x, const CpuTensor& weight,
                                    const std::optional<CpuTensor>& bias,
                                    const std::optional<CpuTensor>& residual,
                                    const ConvFusedOptions& opt, ConvWeightPack* pack = nullptr);

}  // namespace ember::cpu
