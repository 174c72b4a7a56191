// ember::Cpu: the CPU backend (Ember's equivalent of Burn's NdArray/Flex backend).
//
// Strided storage with zero-copy views, f32/f64/i64/i32/u8/bool computed natively,
// f16/bf16 stored and computed through f32, multi-threaded kernels, BLAS-backed matmul.
// `cpu::Ops` declares the contract: the required functions are generated from the op
// registry (ember/ir/registry.hpp) and defined below (one-line forwarders to the family
// kernels) or in src/cpu/<family>*.cpp; the optional fast paths are declared by hand in
// `cpu::Ops` or its bases (activations, fused nn kernels, linalg).
#pragma once

#include "ember/backend/backend.hpp"
#include "ember/backend/declare.hpp"
#include "ember/cpu/ops_activation.hpp"
#include "ember/cpu/ops_conv.hpp"
#include "ember/cpu/ops_core.hpp"
#include "ember/cpu/ops_elementwise.hpp"
#include "ember/cpu/ops_indexing.hpp"
#include "ember/cpu/ops_layout.hpp"
#include "ember/cpu/ops_linalg.hpp"
#include "ember/cpu/ops_pool.hpp"
#include "ember/cpu/ops_quant.hpp"
#include "ember/cpu/ops_reduce.hpp"

namespace ember {

namespace cpu {

/// The CPU backend's functions (`ember::Cpu` adds the primitive types).
struct Ops : ActivationOps, LinalgOps, ElementwiseOps, QuantOps {
  EMBER_IR_TYPE_ALIASES(CpuTensor, CpuTensor, CpuTensor, CpuDevice);

  static std::string name() { return "cpu"; }
  static std::string device_name(const Dev&) { return "cpu"; }
  /// Seeds the random generator; the same seed gives the same values whatever the thread
  /// count.
  static void seed(std::uint64_t s) { CoreOps::seed(s); }
  static void sync(const Dev&) {}
  /// Number of threads used by kernels (default: EMBER_NUM_THREADS or the hardware
  /// concurrency).
  static void set_num_threads(int n) { CoreOps::set_num_threads(n); }
  static int num_threads() { return CoreOps::num_threads(); }
  /// Bytes of every live CPU tensor (cpu::memory_stats) and of the buffer pool.
  static ember::MemoryStats memory_stats(const Dev&) {
    const auto m = cpu::memory_stats();
    return {m.live_bytes, m.peak_bytes, cpu::buffer_pool_stats().cached_bytes};
  }
  static void reset_peak_memory(const Dev&) { cpu::reset_peak_memory(); }

  // ---- every required function of the registry ------------------------------------------
  EMBER_IR_OPS(EMBER_BACKEND_DECLARE, EMBER_BACKEND_DECLARE_N)

  // ---- optional fast paths (OPT / EXT rows) ------------------------------------------------
  // Activations, softmax family and the fused nn kernels come from ActivationOps; vector_norm
  // and cosine_similarity from LinalgOps; quantize, dequantize and the int8 linear
  // (the OPT rows of ember/ir/quant.hpp) from QuantOps.
  static F float_sum(const F& x) { return ReduceOps::sum_all(x); }
  static I int_sum(const I& x) { return ReduceOps::sum_all(x); }
  static F float_max_dim(const F& x, i64 d) { return ReduceOps::max_dim(x, d); }
  static I int_max_dim(const I& x, i64 d) { return ReduceOps::max_dim(x, d); }
  static F float_min_dim(const F& x, i64 d) { return ReduceOps::min_dim(x, d); }
  static I int_min_dim(const I& x, i64 d) { return ReduceOps::min_dim(x, d); }
  static I float_argmax(const F& x, i64 d) { return ReduceOps::argmax(x, d); }
  static I int_argmax(const I& x, i64 d) { return ReduceOps::argmax(x, d); }
  static I float_argmin(const F& x, i64 d) { return ReduceOps::argmin(x, d); }
  static I int_argmin(const I& x, i64 d) { return ReduceOps::argmin(x, d); }
  static F float_diag(const F& t) { return LinalgOps::diag(t); }
  static I int_diag(const I& t) { return LinalgOps::diag(t); }
  static F float_cross(const F& a, const F& b, usize dim) { return LinalgOps::cross(a, b, dim); }
  static I int_cross(const I& a, const I& b, usize dim) { return LinalgOps::cross(a, b, dim); }
  static F float_unfold(F t, usize dim, i64 size, i64 step) {
    return unfold_view(std::move(t), dim, size, step);
  }
  static F float_squeeze_dims(F t, const Axes& d) { return squeeze_view(std::move(t), d); }
  static F float_unsqueeze_dims(F t, const Axes& d) { return unsqueeze_view(std::move(t), d); }
  static F float_pad(const F& t, const Pads& p, PadMode m, double v) {
    return pad_copy(t, p, m, v);
  }
  static I int_unfold(I t, usize dim, i64 size, i64 step) {
    return unfold_view(std::move(t), dim, size, step);
  }
  static I int_squeeze_dims(I t, const Axes& d) { return squeeze_view(std::move(t), d); }
  static I int_unsqueeze_dims(I t, const Axes& d) { return unsqueeze_view(std::move(t), d); }
  static I int_pad(const I& t, const Pads& p, PadMode m, double v) { return pad_copy(t, p, m, v); }
  static Bo bool_unfold(Bo t, usize dim, i64 size, i64 step) {
    return unfold_view(std::move(t), dim, size, step);
  }
  static Bo bool_squeeze_dims(Bo t, const Axes& d) { return squeeze_view(std::move(t), d); }
  static Bo bool_unsqueeze_dims(Bo t, const Axes& d) { return unsqueeze_view(std::move(t), d); }
  static Bo bool_pad(const Bo& t, const Pads& p, PadMode m, double v) {
    return pad_copy(t, p, m, v);
  }
  /// Gradients of y = conv<N>(x, w): dx from dy and w (-> x_shape), dw from x and dy (-> w_shape)
  /// (oneDNN's backward-data / backward-weights primitives for f32, GEMM otherwise).
  template <std::size_t N>
  static F conv_x_backward(const F& dy, const F& w, const Shape& x_shape,
                           const ConvOptions<N>& opt);
  template <std::size_t N>
  static F conv_weight_backward(const F& x, const F& dy, const Shape& w_shape,
                                const ConvOptions<N>& opt);
  /// Gradient of max pooling: grad added at indices into zeros of x_shape.
  template <std::size_t N>
  static F float_max_pool_backward(const F& grad, const I& indices, const Shape& x_shape);
};

// ---- definitions of the required functions that forward to the family kernels ----------
// clang-format off
inline CpuTensor Ops::float_from_data(const TensorData& d, const Dev& dev) { return CoreOps::from_data(d, dev); }
inline TensorData Ops::float_into_data(const F& t) { return CoreOps::into_data(t); }
inline Shape Ops::float_shape(const F& t) { return t.shape; }
inline DType Ops::float_dtype(const F& t) { return t.dtype; }
inline CpuDevice Ops::float_device(const F&) { return {}; }
inline CpuTensor Ops::float_to_device(F t, const Dev&) { return t; }
inline CpuTensor Ops::float_reshape(F t, const Shape& s) { return CoreOps::reshape(std::move(t), s); }
inline CpuTensor Ops::int_from_data(const TensorData& d, const Dev& dev) { return CoreOps::from_data(d, dev); }
inline TensorData Ops::int_into_data(const I& t) { return CoreOps::into_data(t); }
inline Shape Ops::int_shape(const I& t) { return t.shape; }
inline DType Ops::int_dtype(const I& t) { return t.dtype; }
inline CpuDevice Ops::int_device(const I&) { return {}; }
inline CpuTensor Ops::int_to_device(I t, const Dev&) { return t; }
inline CpuTensor Ops::int_reshape(I t, const Shape& s) { return CoreOps::reshape(std::move(t), s); }
inline CpuTensor Ops::bool_from_data(const TensorData& d, const Dev& dev) { return CoreOps::from_data(d, dev); }
inline TensorData Ops::bool_into_data(const Bo& t) { return CoreOps::into_data(t); }
inline Shape Ops::bool_shape(const Bo& t) { return t.shape; }
inline DType Ops::bool_dtype(const Bo& t) { return t.dtype; }
inline CpuDevice Ops::bool_device(const Bo&) { return {}; }
inline CpuTensor Ops::bool_to_device(Bo t, const Dev&) { return t; }
inline CpuTensor Ops::bool_reshape(Bo t, const Shape& s) { return CoreOps::reshape(std::move(t), s); }
inline CpuTensor Ops::float_empty(const Shape& s, const Dev& d, DType dt) { return CoreOps::empty(s, d, dt); }
inline CpuTensor Ops::int_empty(const Shape& s, const Dev& d, DType dt) { return CoreOps::empty(s, d, dt); }
inline CpuTensor Ops::bool_empty(const Shape& s, const Dev& d, DType) { return CoreOps::empty(s, d, DType::Bool); }
inline CpuTensor Ops::float_full(const Shape& s, double v, const Dev& d, DType dt) { return CoreOps::full(s, v, d, dt); }
inline CpuTensor Ops::int_full(const Shape& s, double v, const Dev& d, DType dt) { return CoreOps::full(s, v, d, dt); }
inline CpuTensor Ops::bool_full(const Shape& s, double v, const Dev& d, DType) { return CoreOps::full(s, v, d, DType::Bool); }
inline CpuTensor Ops::float_random(const Shape& s, Distribution dist, const Dev& d, DType dt) { return CoreOps::float_random(s, dist, d, dt); }
inline CpuTensor Ops::int_arange(i64 start, i64 end, i64 step, const Dev& d, DType dt) { return CoreOps::int_arange(start, end, step, d, dt); }
inline CpuTensor Ops::float_cast(F t, DType dt) { return CoreOps::cast(std::move(t), dt); }
inline CpuTensor Ops::int_cast(I t, DType dt) { return CoreOps::cast(std::move(t), dt); }
inline CpuTensor Ops::float_into_int(const F& t, DType dt) { return CoreOps::cast(t, dt); }
inline CpuTensor Ops::int_into_float(const I& t, DType dt) { return CoreOps::cast(t, dt); }
inline CpuTensor Ops::bool_into_int(const Bo& t, DType dt) { return CoreOps::cast(t, dt); }
inline CpuTensor Ops::bool_into_float(const Bo& t, DType dt) { return CoreOps::cast(t, dt); }
inline CpuTensor Ops::float_into_bool(const F& t) { return CoreOps::cast(t, DType::Bool); }
inline CpuTensor Ops::int_into_bool(const I& t) { return CoreOps::cast(t, DType::Bool); }
inline CpuTensor Ops::float_permute(F t, const Axes& a) { return permute_view(std::move(t), a); }
inline CpuTensor Ops::float_expand(F t, const Shape& s) { return expand_view(std::move(t), s); }
inline CpuTensor Ops::float_slice(F t, const Ranges& r) { return slice_view(std::move(t), r); }
inline CpuTensor Ops::float_flip(F t, const Axes& a) { return flip_view(std::move(t), a); }
inline CpuTensor Ops::float_cat(const VecF& ts, usize dim) { return cat_copy(ts, dim); }
inline CpuTensor Ops::float_slice_assign(F t, const Ranges& r, F v) { return IndexingOps::slice_assign(std::move(t), r, v); }
inline CpuTensor Ops::float_select(const F& t, usize d, const I& i) { return IndexingOps::select(t, d, i); }
inline CpuTensor Ops::float_select_assign(F t, usize d, const I& i, const F& v, IndexUpdate u) { return IndexingOps::select_assign(std::move(t), d, i, v, u); }
inline CpuTensor Ops::float_gather(usize d, const F& t, const I& i) { return IndexingOps::gather(d, t, i); }
inline CpuTensor Ops::float_scatter(usize d, F t, const I& i, const F& v, IndexUpdate u) { return IndexingOps::scatter(d, std::move(t), i, v, u); }
inline CpuTensor Ops::float_mask_where(F t, const Bo& m, const F& v) { return IndexingOps::mask_where(std::move(t), m, v); }
inline CpuTensor Ops::float_mask_fill(F t, const Bo& m, double v) { return IndexingOps::mask_fill(std::move(t), m, v); }
inline CpuTensor Ops::int_permute(I t, const Axes& a) { return permute_view(std::move(t), a); }
inline CpuTensor Ops::int_expand(I t, const Shape& s) { return expand_view(std::move(t), s); }
inline CpuTensor Ops::int_slice(I t, const Ranges& r) { return slice_view(std::move(t), r); }
inline CpuTensor Ops::int_flip(I t, const Axes& a) { return flip_view(std::move(t), a); }
inline CpuTensor Ops::int_cat(const VecI& ts, usize dim) { return cat_copy(ts, dim); }
inline CpuTensor Ops::int_slice_assign(I t, const Ranges& r, I v) { return IndexingOps::slice_assign(std::move(t), r, v); }
inline CpuTensor Ops::int_select(const I& t, usize d, const I& i) { return IndexingOps::select(t, d, i); }
inline CpuTensor Ops::int_select_assign(I t, usize d, const I& i, const I& v, IndexUpdate u) { return IndexingOps::select_assign(std::move(t), d, i, v, u); }
inline CpuTensor Ops::int_gather(usize d, const I& t, const I& i) { return IndexingOps::gather(d, t, i); }
inline CpuTensor Ops::int_scatter(usize d, I t, const I& i, const I& v, IndexUpdate u) { return IndexingOps::scatter(d, std::move(t), i, v, u); }
inline CpuTensor Ops::int_mask_where(I t, const Bo& m, const I& v) { return IndexingOps::mask_where(std::move(t), m, v); }
inline CpuTensor Ops::int_mask_fill(I t, const Bo& m, double v) { return IndexingOps::mask_fill(std::move(t), m, v); }
inline CpuTensor Ops::bool_permute(Bo t, const Axes& a) { return permute_view(std::move(t), a); }
inline CpuTensor Ops::bool_expand(Bo t, const Shape& s) { return expand_view(std::move(t), s); }
inline CpuTensor Ops::bool_slice(Bo t, const Ranges& r) { return slice_view(std::move(t), r); }
inline CpuTensor Ops::bool_flip(Bo t, const Axes& a) { return flip_view(std::move(t), a); }
inline CpuTensor Ops::bool_cat(const VecBo& ts, usize dim) { return cat_copy(ts, dim); }
inline CpuTensor Ops::bool_slice_assign(Bo t, const Ranges& r, Bo v) { return IndexingOps::slice_assign(std::move(t), r, v); }
inline CpuTensor Ops::bool_select(const Bo& t, usize d, const I& i) { return IndexingOps::select(t, d, i); }
inline CpuTensor Ops::bool_select_assign(Bo t, usize d, const I& i, const Bo& v, IndexUpdate u) { return IndexingOps::select_assign(std::move(t), d, i, v, u); }
inline CpuTensor Ops::bool_gather(usize d, const Bo& t, const I& i) { return IndexingOps::gather(d, t, i); }
inline CpuTensor Ops::bool_scatter(usize d, Bo t, const I& i, const Bo& v, IndexUpdate u) { return IndexingOps::scatter(d, std::move(t), i, v, u); }
inline CpuTensor Ops::bool_mask_where(Bo t, const Bo& m, const Bo& v) { return IndexingOps::mask_where(std::move(t), m, v); }
inline CpuTensor Ops::bool_mask_fill(Bo t, const Bo& m, double v) { return IndexingOps::mask_fill(std::move(t), m, v); }
inline CpuTensor Ops::bool_argwhere(const Bo& m, DType dt) { return IndexingOps::argwhere(m, dt); }
inline CpuTensor Ops::float_sum_dim(const F& x, i64 d) { return ReduceOps::sum_dim(x, d); }
inline CpuTensor Ops::float_prod_dim(const F& x, i64 d) { return ReduceOps::prod_dim(x, d); }
inline CpuTensor Ops::float_mean_dim(const F& x, i64 d) { return ReduceOps::mean_dim(x, d); }
inline CpuTensor Ops::float_max_abs_dim(const F& x, i64 d) { return ReduceOps::max_abs_dim(x, d); }
inline CpuTensor Ops::float_cumsum(const F& x, i64 d) { return ReduceOps::cumsum(x, d); }
inline CpuTensor Ops::float_cumprod(const F& x, i64 d) { return ReduceOps::cumprod(x, d); }
inline CpuTensor Ops::float_cummax(const F& x, i64 d) { return ReduceOps::cummax(x, d); }
inline CpuTensor Ops::float_cummin(const F& x, i64 d) { return ReduceOps::cummin(x, d); }
inline Ops::FI Ops::float_max_dim_with_indices(const F& x, i64 d) { return ReduceOps::max_dim_with_indices(x, d); }
inline Ops::FI Ops::float_min_dim_with_indices(const F& x, i64 d) { return ReduceOps::min_dim_with_indices(x, d); }
inline Ops::FI Ops::float_median_dim_with_indices(const F& x, i64 d) { return ReduceOps::median_dim_with_indices(x, d); }
inline Ops::FI Ops::float_sort_with_indices(const F& x, i64 d, bool desc) { return ReduceOps::sort_with_indices(x, d, desc); }
inline Ops::FI Ops::float_topk_with_indices(const F& x, i64 k, i64 d) { return ReduceOps::topk_with_indices(x, k, d); }
inline CpuTensor Ops::int_sum_dim(const I& x, i64 d) { return ReduceOps::sum_dim(x, d); }
inline CpuTensor Ops::int_prod_dim(const I& x, i64 d) { return ReduceOps::prod_dim(x, d); }
inline CpuTensor Ops::int_mean_dim(const I& x, i64 d) { return ReduceOps::mean_dim(x, d); }
inline CpuTensor Ops::int_max_abs_dim(const I& x, i64 d) { return ReduceOps::max_abs_dim(x, d); }
inline CpuTensor Ops::int_cumsum(const I& x, i64 d) { return ReduceOps::cumsum(x, d); }
inline CpuTensor Ops::int_cumprod(const I& x, i64 d) { return ReduceOps::cumprod(x, d); }
inline CpuTensor Ops::int_cummax(const I& x, i64 d) { return ReduceOps::cummax(x, d); }
inline CpuTensor Ops::int_cummin(const I& x, i64 d) { return ReduceOps::cummin(x, d); }
inline Ops::II Ops::int_max_dim_with_indices(const I& x, i64 d) { return ReduceOps::max_dim_with_indices(x, d); }
inline Ops::II Ops::int_min_dim_with_indices(const I& x, i64 d) { return ReduceOps::min_dim_with_indices(x, d); }
inline Ops::II Ops::int_median_dim_with_indices(const I& x, i64 d) { return ReduceOps::median_dim_with_indices(x, d); }
inline Ops::II Ops::int_sort_with_indices(const I& x, i64 d, bool desc) { return ReduceOps::sort_with_indices(x, d, desc); }
inline Ops::II Ops::int_topk_with_indices(const I& x, i64 k, i64 d) { return ReduceOps::topk_with_indices(x, k, d); }
inline CpuTensor Ops::float_any_dim(const F& x, i64 d) { return ReduceOps::any_dim(x, d); }
inline CpuTensor Ops::float_all_dim(const F& x, i64 d) { return ReduceOps::all_dim(x, d); }
inline CpuTensor Ops::int_any_dim(const I& x, i64 d) { return ReduceOps::any_dim(x, d); }
inline CpuTensor Ops::int_all_dim(const I& x, i64 d) { return ReduceOps::all_dim(x, d); }
inline CpuTensor Ops::bool_any_dim(const Bo& x, i64 d) { return ReduceOps::any_dim(x, d); }
inline CpuTensor Ops::bool_all_dim(const Bo& x, i64 d) { return ReduceOps::all_dim(x, d); }
inline Ops::FF Ops::float_var_mean(const F& x, i64 d, i64 correction) { return ReduceOps::var_mean(x, d, correction); }
inline CpuTensor Ops::float_matmul(const F& a, const F& b) { return LinalgOps::float_matmul(a, b); }
inline CpuTensor Ops::int_matmul(const I& a, const I& b) { return LinalgOps::int_matmul(a, b); }
inline CpuTensor Ops::deform_conv2d(const F& x, const F& offset, const F& w, const OptF& mask, const OptF& bias, const DeformConvOptions& opt) { return ConvOps::deform_conv2d(x, offset, w, mask, bias, opt); }
inline CpuTensor Ops::unfold4d(const F& x, const Arr2& k, const UnfoldOptions& opt) { return ConvOps::unfold4d(x, k, opt); }
inline CpuTensor Ops::fold4d(const F& x, const Arr2& out, const Arr2& k, const UnfoldOptions& opt) { return ConvOps::fold4d(x, out, k, opt); }
inline CpuTensor Ops::float_interpolate(const F& x, const Arr2& out, InterpolateOptions opt) { return PoolOps::float_interpolate(x, out, opt); }
inline CpuTensor Ops::float_grid_sample_2d(const F& x, const F& grid, GridSampleOptions opt) { return PoolOps::float_grid_sample_2d(x, grid, opt); }
// clang-format on

// ---- rank-generic convolution and pooling ------------------------------------------------
template <std::size_t N>
CpuTensor Ops::conv(const F& x, const F& w, const OptF& bias, const ConvOptions<N>& opt) {
  if constexpr (N == 1)
    return ConvOps::conv1d(x, w, bias, opt);
  else if constexpr (N == 2)
    return ConvOps::conv2d(x, w, bias, opt);
  else
    return ConvOps::conv3d(x, w, bias, opt);
}
template <std::size_t N>
CpuTensor Ops::conv_transpose(const F& x, const F& w, const OptF& bias,
                              const ConvTransposeOptions<N>& opt) {
  if constexpr (N == 1)
    return ConvOps::conv_transpose1d(x, w, bias, opt);
  else if constexpr (N == 2)
    return ConvOps::conv_transpose2d(x, w, bias, opt);
  else
    return ConvOps::conv_transpose3d(x, w, bias, opt);
}
template <std::size_t N>
CpuTensor Ops::conv_x_backward(const F& dy, const F& w, const Shape& x_shape,
                               const ConvOptions<N>& opt) {
  if constexpr (N == 1)
    return ConvOps::conv1d_x_backward(dy, w, x_shape, opt);
  else if constexpr (N == 2)
    return ConvOps::conv2d_x_backward(dy, w, x_shape, opt);
  else
    return ConvOps::conv3d_x_backward(dy, w, x_shape, opt);
}
template <std::size_t N>
CpuTensor Ops::conv_weight_backward(const F& x, const F& dy, const Shape& w_shape,
                                    const ConvOptions<N>& opt) {
  if constexpr (N == 1)
    return ConvOps::conv1d_weight_backward(x, dy, w_shape, opt);
  else if constexpr (N == 2)
    return ConvOps::conv2d_weight_backward(x, dy, w_shape, opt);
  else
    return ConvOps::conv3d_weight_backward(x, dy, w_shape, opt);
}
// Pooling runs the 2d kernels; 1d pools are the 2d pools of [B, C, 1, L].
template <std::size_t N>
CpuTensor Ops::float_max_pool(const F& x, const MaxPoolOptions<N>& o) {
  if constexpr (N == 2)
    return PoolOps::float_max_pool2d(x, o.kernel, o.stride, o.padding, o.dilation, o.ceil_mode);
  else
    return squeeze_view(
        PoolOps::float_max_pool2d(unsqueeze_view(x, {2}), {1, o.kernel[0]}, {1, o.stride[0]},
                                  {0, o.padding[0]}, {1, o.dilation[0]}, o.ceil_mode),
        {2});
}
template <std::size_t N>
Ops::FI Ops::float_max_pool_with_indices(const F& x, const MaxPoolOptions<N>& o) {
  if constexpr (N == 2) {
    return PoolOps::float_max_pool2d_with_indices(x, o.kernel, o.stride, o.padding, o.dilation,
                                                  o.ceil_mode);
  } else {
    auto [v, i] = PoolOps::float_max_pool2d_with_indices(unsqueeze_view(x, {2}), {1, o.kernel[0]},
                                                         {1, o.stride[0]}, {0, o.padding[0]},
                                                         {1, o.dilation[0]}, o.ceil_mode);
    return {squeeze_view(std::move(v), {2}), squeeze_view(std::move(i), {2})};
  }
}
template <std::size_t N>
CpuTensor Ops::float_max_pool_backward(const F& grad, const I& indices, const Shape& x_shape) {
  if constexpr (N == 2) {
    return PoolOps::float_max_pool2d_backward(grad, indices, x_shape);
  } else {
    const Shape x4{x_shape[0], x_shape[1], 1, x_shape[2]};
    return squeeze_view(PoolOps::float_max_pool2d_backward(unsqueeze_view(grad, {2}),
                                                           unsqueeze_view(indices, {2}), x4),
                        {2});
  }
}
template <std::size_t N>
CpuTensor Ops::float_avg_pool(const F& x, const AvgPoolOptions<N>& o) {
  if constexpr (N == 2)
    return PoolOps::float_avg_pool2d(x, o.kernel, o.stride, o.padding, o.count_include_pad,
                                     o.ceil_mode);
  else
    return squeeze_view(
        PoolOps::float_avg_pool2d(unsqueeze_view(x, {2}), {1, o.kernel[0]}, {1, o.stride[0]},
                                  {0, o.padding[0]}, o.count_include_pad, o.ceil_mode),
        {2});
}
template <std::size_t N>
CpuTensor Ops::float_adaptive_avg_pool(const F& x, const Dims<N>& out) {
  if constexpr (N == 2)
    return PoolOps::float_adaptive_avg_pool2d(x, out);
  else
    return squeeze_view(PoolOps::float_adaptive_avg_pool2d(unsqueeze_view(x, {2}), {1, out[0]}),
                        {2});
}

}  // namespace cpu

struct Cpu : cpu::Ops {
  using Device = CpuDevice;
  using FloatTensor = CpuTensor;
  using IntTensor = CpuTensor;
  using BoolTensor = CpuTensor;
};

static_assert(Backend<Cpu>, "Cpu must satisfy the Backend concept");

}  // namespace ember
