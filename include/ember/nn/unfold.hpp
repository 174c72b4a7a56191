// Unfold4d / Fold4d: sliding local blocks to columns and back (Burn's burn-nn Unfold4d;
// torch.nn.Unfold / torch.nn.Fold; Fold has no Burn layer and follows PyTorch).
//
//   auto unfold = nn::Unfold4dConfig{.kernel_size = {3, 3}, .padding = {1, 1}}.init();
//   DTensor<3> cols = unfold.forward(x);     // [N, C, H, W] -> [N, C * 9, H * W]
//   auto fold = nn::Fold4dConfig{.output_size = {H, W}, .kernel_size = {3, 3},
//                                .padding = {1, 1}}.init();
//   DTensor<4> back = fold.forward(cols);    // [N, C * 9, H * W] -> [N, C, H, W], overlaps summed
//
// Unfold rows are ordered channel-major, then kernel row, then kernel column; L (the number
// of blocks) is the product of the conv output sizes floor((S + 2p - d (k - 1) - 1) / s) + 1.
// Fold is Unfold's adjoint: it sums every column into its block. Both accept the unbatched
// forms ([C, H, W] -> [C k, L] and [C k, L] -> [C, H, W]) as PyTorch; another rank throws
// ShapeError naming the layer. No parameters: init() takes no device.
#pragma once

#include <array>
#include <cstdint>

#include "ember/module/config_fwd.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/padding.hpp"
#include "ember/tensor/module/conv.hpp"

namespace ember::nn {

namespace detail {
inline void check_unfold_config(const char* config, const std::array<std::int64_t, 2>& kernel,
                                const std::array<std::int64_t, 2>& stride,
                                const std::array<std::int64_t, 2>& dilation,
                                const std::array<std::int64_t, 2>& padding) {
  check_at_least<2>(config, "kernel_size", kernel, 1);
  check_at_least<2>(config, "stride", stride, 1);
  check_at_least<2>(config, "dilation", dilation, 1);
  check_at_least<2>(config, "padding", padding, 0);
}
}  // namespace detail

/// Extracts sliding blocks: [batch, C, H, W] -> [batch, C * kh * kw, L].
struct Unfold4d {
  std::array<std::int64_t, 2> kernel_size{1, 1};
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> dilation{1, 1};
  std::array<std::int64_t, 2> padding{0, 0};

  EMBER_MODULE(kernel_size, stride, dilation, padding)

  /// Rank 4 -> 3, or unbatched rank 3 -> 2. Throws ShapeError (rank, no block fits).
  template <class B, std::size_t D>
  Tensor<B, D - 1> forward(const Tensor<B, D>& x) const {
    const UnfoldOptions o{stride, padding, dilation};
    if constexpr (D == 4) {
      return module::unfold4d(x, kernel_size, o);
    } else if constexpr (D == 3) {
      return module::unfold4d(x.template unsqueeze_dim<4>(0), kernel_size, o)
          .template squeeze_dim<2>(0);
    } else {
      ember::detail::fail<ShapeError>("Unfold4d", "input of shape ", x.shape(), " has rank ", D,
                                      ", expected rank 4 [batch, channels, height, width] or 3 "
                                      "(unbatched)");
    }
  }
};

/// Config of Unfold4d (Burn's Unfold4dConfig). init() throws ValueError for kernel, stride
/// or dilation < 1 or padding < 0.
struct Unfold4dConfig {
  std::array<std::int64_t, 2> kernel_size{};
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> dilation{1, 1};
  std::array<std::int64_t, 2> padding{0, 0};

  Unfold4d init() const {
    detail::check_unfold_config("Unfold4dConfig", kernel_size, stride, dilation, padding);
    return Unfold4d{kernel_size, stride, dilation, padding};
  }
};
EMBER_CONFIG(Unfold4dConfig, kernel_size, stride, dilation, padding)

/// Sums sliding blocks into an image: [batch, C * kh * kw, L] -> [batch, C, *output_size].
struct Fold4d {
  std::array<std::int64_t, 2> output_size{1, 1};
  std::array<std::int64_t, 2> kernel_size{1, 1};
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> dilation{1, 1};
  std::array<std::int64_t, 2> padding{0, 0};

  EMBER_MODULE(output_size, kernel_size, stride, dilation, padding)

  /// Rank 3 -> 4, or unbatched rank 2 -> 3. Throws ShapeError (rank, dim 1 not a multiple of
  /// kh * kw, L not the number of blocks of output_size).
  template <class B, std::size_t D>
  Tensor<B, D + 1> forward(const Tensor<B, D>& x) const {
    const UnfoldOptions o{stride, padding, dilation};
    if constexpr (D == 3) {
      return module::fold4d(x, output_size, kernel_size, o);
    } else if constexpr (D == 2) {
      return module::fold4d(x.template unsqueeze_dim<3>(0), output_size, kernel_size, o)
          .template squeeze_dim<3>(0);
    } else {
      ember::detail::fail<ShapeError>("Fold4d", "input of shape ", x.shape(), " has rank ", D,
                                      ", expected rank 3 [batch, channels * kh * kw, blocks] or "
                                      "2 (unbatched)");
    }
  }
};

/// Config of Fold4d (torch.nn.Fold's options with Burn's names). init() throws ValueError for
/// an output size, kernel, stride or dilation < 1 or padding < 0.
struct Fold4dConfig {
  std::array<std::int64_t, 2> output_size{};
  std::array<std::int64_t, 2> kernel_size{};
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> dilation{1, 1};
  std::array<std::int64_t, 2> padding{0, 0};

  Fold4d init() const {
    detail::check_unfold_config("Fold4dConfig", kernel_size, stride, dilation, padding);
    detail::check_at_least<2>("Fold4dConfig", "output_size", output_size, 1);
    return Fold4d{output_size, kernel_size, stride, dilation, padding};
  }
};
EMBER_CONFIG(Fold4dConfig, output_size, kernel_size, stride, dilation, padding)

}  // namespace ember::nn
