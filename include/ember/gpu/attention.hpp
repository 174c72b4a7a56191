// Fused scaled dot-product attention on the GPU backends (src/gpu/attention.cpp): the
// flash-attention scheme (Dao et al. 2022, "FlashAttention"; the backward pass of Dao 2023,
// "FlashAttention-2", section 3.1), one kernel for the forward pass and two for the backward,
// none of which writes the [L, S] score matrix to memory.
//
// Shapes as the contract's float_scaled_dot_product_attention (ember/backend/activation.hpp):
// q [..., L, E], k [..., S, E], v [..., S, Ev] with equal batch dims, mask (Bool) and bias
// (q's dtype) of q's rank and broadcastable to [..., L, S]; `is_causal`: query l sees keys
// s <= l. A query row whose keys are all masked gives zeros (torch's _safe_softmax). f16 and
// bf16 accumulate in f32, f64 in f64.
//
// Each function returns nullopt when the kernels do not serve the case: a dtype the device
// lacks (or f64's exp on Vulkan), a head dim E or Ev above 128, more sequence tiles than the
// grid's x holds or batch rows than its y times z, sizes beyond 32-bit indices, or on a software
// device a walk past its loop limit. The caller then takes another path.
//
// Precision: the saved log-sum-exp is one f32 value per row, so at scores beyond about 1e5 the
// backward's probabilities lose digits (as FlashAttention's). A key that a row cannot see
// still multiplies its probability 0 into that row inside the row's 64-query block: an inf or
// NaN in such a key's value reaches some rows of the block.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "ember/gpu/tensor.hpp"

namespace ember::gpu {

/// Forward: {out [..., L, Ev] in q's dtype, lse [..., L]}: lse is each query row's
/// log-sum-exp of its scaled, masked scores (f32; f64 for f64; -inf for a row with no key),
/// which the backward pass needs; computed only when `with_lse` (else an empty tensor).
std::optional<std::pair<GpuTensor, GpuTensor>> attention(const GpuTensor& q, const GpuTensor& k,
                                                         const GpuTensor& v,
                                                         const std::optional<GpuTensor>& mask,
                                                         const std::optional<GpuTensor>& bias,
                                                         bool is_causal, double scale,
                                                         bool with_lse);

/// Backward: {dq, dk, dv} (shapes and dtype of q, k, v) from the forward's inputs, its output
/// `out`, the output's gradient `dout` and `lse`. Deterministic (no atomics): one kernel
/// computes dq and each row's D = sum(dout * out) with a thread per query row, the other dk
/// and dv with a thread per key row. Serves every case `attention` served.
std::optional<std::vector<GpuTensor>> attention_backward(
    const GpuTensor& q, const GpuTensor& k, const GpuTensor& v, const GpuTensor& out,
    const GpuTensor& dout, const GpuTensor& lse, const std::optional<GpuTensor>& mask,
    const std::optional<GpuTensor>& bias, bool is_causal, double scale);

}  // namespace ember::gpu
