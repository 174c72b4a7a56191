// Backend contract: convolution functions (Burn's ModuleOps conv part). See core.hpp for the
// conventions. The front end (ember/tensor/module/conv.hpp) validates every argument, so
// backends may assume valid shapes, options and matching float dtypes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "ember/backend/core.hpp"

namespace ember {

/// Options of conv1d/2d/3d (Burn's ConvOptions): per spatial dim stride, zero padding on
/// both sides and dilation, plus the number of groups.
template <std::size_t N>
struct ConvOptions {
  std::array<std::int64_t, N> stride = filled(1);
  std::array<std::int64_t, N> padding = filled(0);
  std::array<std::int64_t, N> dilation = filled(1);
  std::int64_t groups = 1;

  static constexpr std::array<std::int64_t, N> filled(std::int64_t v) {
    std::array<std::int64_t, N> a{};
    a.fill(v);
    return a;
  }
};

/// Options of conv_transpose1d/2d/3d (Burn's ConvTransposeOptions). `padding_out` adds
/// that many rows/cols at the end of each output dim (PyTorch's output_padding).
template <std::size_t N>
struct ConvTransposeOptions {
  std::array<std::int64_t, N> stride = ConvOptions<N>::filled(1);
  std::array<std::int64_t, N> padding = ConvOptions<N>::filled(0);
  std::array<std::int64_t, N> padding_out = ConvOptions<N>::filled(0);
  std::array<std::int64_t, N> dilation = ConvOptions<N>::filled(1);
  std::int64_t groups = 1;
};

/// Options of deform_conv2d (Burn's DeformConvOptions).
struct DeformConvOptions {
  std::array<std::int64_t, 2> stride = {1, 1};
  std::array<std::int64_t, 2> padding = {0, 0};
  std::array<std::int64_t, 2> dilation = {1, 1};
  std::int64_t weight_groups = 1;
  std::int64_t offset_groups = 1;
};

/// Options of unfold4d/fold4d (Burn's UnfoldOptions).
struct UnfoldOptions {
  std::array<std::int64_t, 2> stride = {1, 1};
  std::array<std::int64_t, 2> padding = {0, 0};
  std::array<std::int64_t, 2> dilation = {1, 1};
};

// Required functions (P = B::FloatTensor, all operands of one float dtype):
//   convKd(x [N, C_in, *S], weight [C_out, C_in/groups, *k], optional<P> bias [C_out],
//          ConvOptions<K>) -> [N, C_out, *S_out]           (K = 1, 2, 3)
//   conv_transposeKd(x [N, C_in, *S], weight [C_in, C_out/groups, *k], optional<P> bias,
//          ConvTransposeOptions<K>) -> [N, C_out, *S_out]
//   deform_conv2d(x [N, C_in, H, W], offset [N, 2*og*kh*kw, Ho, Wo], weight
//          [C_out, C_in/wg, kh, kw], optional<P> mask [N, og*kh*kw, Ho, Wo], optional<P> bias,
//          DeformConvOptions) -> [N, C_out, Ho, Wo]
//   unfold4d(x [N, C, H, W], array<int64, 2> kernel, UnfoldOptions) -> [N, C*kh*kw, L]
//   fold4d(x [N, C*kh*kw, L], array<int64, 2> output_size, array<int64, 2> kernel,
//          UnfoldOptions) -> [N, C, H, W]
template <class B>
concept ConvBackend = CoreBackend<B> &&
    requires(const typename B::FloatTensor& f, const std::optional<typename B::FloatTensor>& o,
             const ConvOptions<1>& c1, const ConvOptions<2>& c2, const ConvOptions<3>& c3,
             const ConvTransposeOptions<1>& t1, const ConvTransposeOptions<2>& t2,
             const ConvTransposeOptions<3>& t3, const DeformConvOptions& dc,
             const UnfoldOptions& uo, const std::array<std::int64_t, 2>& k2) {
  { B::conv1d(f, f, o, c1) } -> std::same_as<typename B::FloatTensor>;
  { B::conv2d(f, f, o, c2) } -> std::same_as<typename B::FloatTensor>;
  { B::conv3d(f, f, o, c3) } -> std::same_as<typename B::FloatTensor>;
  { B::conv_transpose1d(f, f, o, t1) } -> std::same_as<typename B::FloatTensor>;
  { B::conv_transpose2d(f, f, o, t2) } -> std::same_as<typename B::FloatTensor>;
  { B::conv_transpose3d(f, f, o, t3) } -> std::same_as<typename B::FloatTensor>;
  { B::deform_conv2d(f, f, f, o, o, dc) } -> std::same_as<typename B::FloatTensor>;
  { B::unfold4d(f, k2, uo) } -> std::same_as<typename B::FloatTensor>;
  { B::fold4d(f, k2, k2, uo) } -> std::same_as<typename B::FloatTensor>;
};

}  // namespace ember
