// Pooling layers MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d (Burn's burn-nn pool
// modules; torch.nn.MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d).
//
//   auto pool = nn::MaxPool2dConfig{.kernel_size = {2, 2}}.init();   // stride = kernel_size
//   DTensor<4> y = pool.forward(x);                                  // [N, C, H, W] -> [N, C, H/2,
//   W/2]
//
// The layers have no parameters and are not templates over the backend (as Burn's):
// init() takes no device and forward is a template over the tensor's backend. Inputs are
// [batch, channels, *spatial] or unbatched [channels, *spatial] (as PyTorch); another rank
// throws ShapeError naming the layer ("[MaxPool2d] ...").
//
// Output size per dim with padding (start, end), effective kernel e = d (k - 1) + 1:
//   floor((L + start + end - e) / s) + 1, or with ceil_mode ceil(...) + 1 minus the last window
//   when it would start in the end padding (PyTorch's rule).
// Symmetric padding up to kernel / 2 runs through the pooling op's own padding; other padding
// (asymmetric, from "same", or wider) pads the input first: with -inf for max pooling, with
// zeros for average pooling, whose divisor then counts the padding or not
// (count_include_pad) as PyTorch's does.
// Explicit padding must be at most kernel_size / 2 per side (PyTorch's rule; ValueError at
// init).
//
// JSON of the configs: Burn's field names; "stride"/"strides" may be null (= kernel_size).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <optional>

#include "ember/module/config_fwd.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/padding.hpp"
#include "ember/tensor/module/pool.hpp"

namespace ember::nn {

namespace detail {

/// Output size of one pooled dim with (start, end) padding (see the file comment).
inline std::int64_t pool_out_size(std::int64_t in, std::int64_t lo, std::int64_t hi, std::int64_t k,
                                  std::int64_t s, std::int64_t d, bool ceil_mode) {
  const std::int64_t num = in + lo + hi - (d * (k - 1) + 1);
  std::int64_t out = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + lo) --out;
  return out;
}

/// Throws ValueError naming `config` for kernel/stride/dilation < 1 or explicit padding wider
/// than kernel / 2.
template <std::size_t N>
void check_pool_config(const char* config, const std::array<std::int64_t, N>& kernel,
                       const std::array<std::int64_t, N>& stride,
                       const std::array<std::int64_t, N>& dilation,
                       const PaddingConfig<N>& padding) {
  check_at_least<N>(config, "kernel_size", kernel, 1);
  check_at_least<N>(config, "stride", stride, 1);
  check_at_least<N>(config, "dilation", dilation, 1);
  padding.check(config);
  if (padding.kind == PaddingConfig<N>::Kind::Explicit) {
    for (std::size_t i = 0; i < N; ++i) {
      if (padding.start[i] > kernel[i] / 2 || padding.end[i] > kernel[i] / 2) {
        ember::detail::fail<ValueError>(config, "padding (", padding.start[i], ", ", padding.end[i],
                                        ") of spatial dim ", i,
                                        " should be at most half of kernel size ", kernel[i]);
      }
    }
  }
}

/// Whether (lo, hi) can go to the pooling op itself (symmetric, at most kernel / 2).
template <std::size_t N>
bool op_padding_ok(const std::array<std::int64_t, N>& lo, const std::array<std::int64_t, N>& hi,
                   const std::array<std::int64_t, N>& kernel) {
  for (std::size_t i = 0; i < N; ++i) {
    if (lo[i] != hi[i] || lo[i] > kernel[i] / 2) return false;
  }
  return true;
}

template <std::size_t N, class B>
Tensor<B, N + 2> run_max_pool(const Tensor<B, N + 2>& x, const std::array<std::int64_t, N>& k,
                              const std::array<std::int64_t, N>& s,
                              const std::array<std::int64_t, N>& p,
                              const std::array<std::int64_t, N>& d, bool ceil_mode) {
  if constexpr (N == 1) {
    return module::max_pool1d(x, k[0], s[0], p[0], d[0], ceil_mode);
  } else {
    return module::max_pool2d(x, k, s, p, d, ceil_mode);
  }
}

template <std::size_t N, class B>
Tensor<B, N + 2> run_avg_pool(const Tensor<B, N + 2>& x, const std::array<std::int64_t, N>& k,
                              const std::array<std::int64_t, N>& s,
                              const std::array<std::int64_t, N>& p, bool count_include_pad,
                              bool ceil_mode) {
  if constexpr (N == 1) {
    return module::avg_pool1d(x, k[0], s[0], p[0], count_include_pad, ceil_mode);
  } else {
    return module::avg_pool2d(x, k, s, p, count_include_pad, ceil_mode);
  }
}

/// Drops the extra last windows that pooling a pre-padded input gives in ceil_mode.
template <std::size_t N, class B>
Tensor<B, N + 2> trim_pooled(Tensor<B, N + 2> y, const std::array<std::int64_t, N>& in,
                             const std::array<std::int64_t, N>& lo,
                             const std::array<std::int64_t, N>& hi,
                             const std::array<std::int64_t, N>& k,
                             const std::array<std::int64_t, N>& s,
                             const std::array<std::int64_t, N>& d, bool ceil_mode) {
  for (std::size_t i = 0; i < N; ++i) {
    const std::int64_t want = pool_out_size(in[i], lo[i], hi[i], k[i], s[i], d[i], ceil_mode);
    if (y.dim(2 + i) > want) y = y.narrow(static_cast<std::int64_t>(2 + i), 0, want);
  }
  return y;
}

template <std::size_t N, class B>
Tensor<B, N + 2> max_pool_nd(const Tensor<B, N + 2>& x, const std::array<std::int64_t, N>& k,
                             const std::array<std::int64_t, N>& s, const PaddingConfig<N>& padding,
                             const std::array<std::int64_t, N>& d, bool ceil_mode) {
  const auto in = spatial_of<N>(x.shape());
  auto [lo, hi] = padding.resolve(in, k, s, d);
  if (op_padding_ok<N>(lo, hi, k)) return run_max_pool<N>(x, k, s, lo, d, ceil_mode);
  const auto xp =
      x.pad(pad_arg<N>(lo, hi), PadMode::Constant, -std::numeric_limits<double>::infinity());
  auto y = run_max_pool<N>(xp, k, s, filled<N>(0), d, ceil_mode);
  return trim_pooled<N>(std::move(y), in, lo, hi, k, s, d, ceil_mode);
}

template <std::size_t N, class B>
Tensor<B, N + 2> avg_pool_nd(const Tensor<B, N + 2>& x, const std::array<std::int64_t, N>& k,
                             const std::array<std::int64_t, N>& s, const PaddingConfig<N>& padding,
                             bool count_include_pad, bool ceil_mode) {
  const auto in = spatial_of<N>(x.shape());
  const auto one = filled<N>(1);
  auto [lo, hi] = padding.resolve(in, k, s, one);
  if (op_padding_ok<N>(lo, hi, k)) {
    return run_avg_pool<N>(x, k, s, lo, count_include_pad, ceil_mode);
  }
  const auto zero = filled<N>(0);
  const auto arg = pad_arg<N>(lo, hi);
  // Windows that the padded input gives beyond PyTorch's count are dropped before any
  // division (they may hold no input element).
  auto y = trim_pooled<N>(run_avg_pool<N>(x.pad(arg), k, s, zero, true, ceil_mode), in, lo, hi, k,
                          s, one, ceil_mode);
  if (count_include_pad) return y;
  // The op divided by the window clipped to the padded input; rescale to the input part.
  Shape os{1, 1};
  for (auto v : in) os.dims.push_back(v);
  const auto ones = Tensor<B, N + 2>::ones(os, x.device(), x.dtype());
  return y / trim_pooled<N>(run_avg_pool<N>(ones.pad(arg), k, s, zero, true, ceil_mode), in, lo, hi,
                            k, s, one, ceil_mode);
}

}  // namespace detail

// ---- max pooling ----------------------------------------------------------------------------

/// 1-d max pooling (torch.nn.MaxPool1d): [batch, channels, L] -> [batch, channels, L_out].
/// Padding counts as -inf; NaN propagates.
struct MaxPool1d {
  std::int64_t stride = 1;
  std::int64_t kernel_size = 1;
  PaddingConfig1d padding;
  std::int64_t dilation = 1;
  bool ceil_mode = false;

  EMBER_MODULE(stride, kernel_size, padding, dilation, ceil_mode)

  /// Throws ShapeError (rank, kernel larger than the padded input).
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return detail::with_batch<1>("MaxPool1d", x, [&](const Tensor<B, 3>& xb) {
      return detail::max_pool_nd<1, B>(xb, {kernel_size}, {stride}, padding, {dilation}, ceil_mode);
    });
  }
};

/// Config of MaxPool1d (Burn's MaxPool1dConfig; stride nullopt = kernel_size). init()
/// throws ValueError for kernel, stride or dilation < 1 or explicit padding > kernel / 2.
struct MaxPool1dConfig {
  std::int64_t kernel_size = 0;
  std::optional<std::int64_t> stride = std::nullopt;
  PaddingConfig1d padding = PaddingConfig1d::valid();
  std::int64_t dilation = 1;
  bool ceil_mode = false;

  MaxPool1d init() const {
    const std::int64_t s = stride.value_or(kernel_size);
    detail::check_pool_config<1>("MaxPool1dConfig", {kernel_size}, {s}, {dilation}, padding);
    return MaxPool1d{s, kernel_size, padding, dilation, ceil_mode};
  }
};

/// 2-d max pooling (torch.nn.MaxPool2d): [batch, channels, H, W] -> [batch, channels, H_o, W_o].
struct MaxPool2d {
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> kernel_size{1, 1};
  PaddingConfig2d padding;
  std::array<std::int64_t, 2> dilation{1, 1};
  bool ceil_mode = false;

  EMBER_MODULE(stride, kernel_size, padding, dilation, ceil_mode)

  /// Throws ShapeError (rank, kernel larger than the padded input).
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return detail::with_batch<2>("MaxPool2d", x, [&](const Tensor<B, 4>& xb) {
      return detail::max_pool_nd<2, B>(xb, kernel_size, stride, padding, dilation, ceil_mode);
    });
  }
};

/// Config of MaxPool2d (Burn's MaxPool2dConfig; strides nullopt = kernel_size). init()
/// throws as MaxPool1dConfig.
struct MaxPool2dConfig {
  std::array<std::int64_t, 2> kernel_size{};
  std::optional<std::array<std::int64_t, 2>> strides = std::nullopt;
  PaddingConfig2d padding = PaddingConfig2d::valid();
  std::array<std::int64_t, 2> dilation{1, 1};
  bool ceil_mode = false;

  MaxPool2d init() const {
    const auto s = strides.value_or(kernel_size);
    detail::check_pool_config<2>("MaxPool2dConfig", kernel_size, s, dilation, padding);
    return MaxPool2d{s, kernel_size, padding, dilation, ceil_mode};
  }
};

// ---- average pooling ------------------------------------------------------------------------

/// 1-d average pooling (torch.nn.AvgPool1d): [batch, channels, L] -> [batch, channels, L_out].
struct AvgPool1d {
  std::int64_t stride = 1;
  std::int64_t kernel_size = 1;
  PaddingConfig1d padding;
  bool count_include_pad = true;
  bool ceil_mode = false;

  EMBER_MODULE(stride, kernel_size, padding, count_include_pad, ceil_mode)

  /// Throws ShapeError (rank, kernel larger than the padded input).
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return detail::with_batch<1>("AvgPool1d", x, [&](const Tensor<B, 3>& xb) {
      return detail::avg_pool_nd<1, B>(xb, {kernel_size}, {stride}, padding, count_include_pad,
                                       ceil_mode);
    });
  }
};

/// Config of AvgPool1d (Burn's AvgPool1dConfig; stride nullopt = kernel_size). init()
/// throws ValueError for kernel or stride < 1 or explicit padding > kernel / 2.
struct AvgPool1dConfig {
  std::int64_t kernel_size = 0;
  std::optional<std::int64_t> stride = std::nullopt;
  PaddingConfig1d padding = PaddingConfig1d::valid();
  bool count_include_pad = true;
  bool ceil_mode = false;

  AvgPool1d init() const {
    const std::int64_t s = stride.value_or(kernel_size);
    detail::check_pool_config<1>("AvgPool1dConfig", {kernel_size}, {s}, {1}, padding);
    return AvgPool1d{s, kernel_size, padding, count_include_pad, ceil_mode};
  }
};

/// 2-d average pooling (torch.nn.AvgPool2d): [batch, channels, H, W] -> [batch, channels, H_o,
/// W_o].
struct AvgPool2d {
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> kernel_size{1, 1};
  PaddingConfig2d padding;
  bool count_include_pad = true;
  bool ceil_mode = false;

  EMBER_MODULE(stride, kernel_size, padding, count_include_pad, ceil_mode)

  /// Throws ShapeError (rank, kernel larger than the padded input).
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return detail::with_batch<2>("AvgPool2d", x, [&](const Tensor<B, 4>& xb) {
      return detail::avg_pool_nd<2, B>(xb, kernel_size, stride, padding, count_include_pad,
                                       ceil_mode);
    });
  }
};

/// Config of AvgPool2d (Burn's AvgPool2dConfig; strides nullopt = kernel_size). init()
/// throws as AvgPool1dConfig.
struct AvgPool2dConfig {
  std::array<std::int64_t, 2> kernel_size{};
  std::optional<std::array<std::int64_t, 2>> strides = std::nullopt;
  PaddingConfig2d padding = PaddingConfig2d::valid();
  bool count_include_pad = true;
  bool ceil_mode = false;

  AvgPool2d init() const {
    const auto s = strides.value_or(kernel_size);
    detail::check_pool_config<2>("AvgPool2dConfig", kernel_size, s, {1, 1}, padding);
    return AvgPool2d{s, kernel_size, padding, count_include_pad, ceil_mode};
  }
};

// ---- adaptive average pooling ---------------------------------------------------------------

/// torch.nn.AdaptiveAvgPool1d: [batch, channels, L] -> [batch, channels, output_size]; output
/// cell i averages input [floor(i L / O), ceil((i + 1) L / O)).
struct AdaptiveAvgPool1d {
  std::int64_t output_size = 1;

  EMBER_MODULE(output_size)

  /// Throws ShapeError (rank, empty length).
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return detail::with_batch<1>("AdaptiveAvgPool1d", x, [&](const Tensor<B, 3>& xb) {
      return module::adaptive_avg_pool1d(xb, output_size);
    });
  }
};

/// Config of AdaptiveAvgPool1d (Burn's). init() throws ValueError for output_size < 1.
struct AdaptiveAvgPool1dConfig {
  std::int64_t output_size = 0;

  AdaptiveAvgPool1d init() const {
    detail::check_at_least<1>("AdaptiveAvgPool1dConfig", "output_size", {output_size}, 1);
    return AdaptiveAvgPool1d{output_size};
  }
};
EMBER_CONFIG(AdaptiveAvgPool1dConfig, output_size)

/// torch.nn.AdaptiveAvgPool2d: [batch, channels, H, W] -> [batch, channels, *output_size].
struct AdaptiveAvgPool2d {
  std::array<std::int64_t, 2> output_size{1, 1};

  EMBER_MODULE(output_size)

  /// Throws ShapeError (rank, empty spatial dim).
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return detail::with_batch<2>("AdaptiveAvgPool2d", x, [&](const Tensor<B, 4>& xb) {
      return module::adaptive_avg_pool2d(xb, output_size);
    });
  }
};

/// Config of AdaptiveAvgPool2d (Burn's). init() throws ValueError for an output size < 1.
struct AdaptiveAvgPool2dConfig {
  std::array<std::int64_t, 2> output_size{};

  AdaptiveAvgPool2d init() const {
    detail::check_at_least<2>("AdaptiveAvgPool2dConfig", "output_size", output_size, 1);
    return AdaptiveAvgPool2d{output_size};
  }
};
EMBER_CONFIG(AdaptiveAvgPool2dConfig, output_size)

EMBER_CONFIG(MaxPool1dConfig, kernel_size, stride, padding, dilation, ceil_mode)
EMBER_CONFIG(MaxPool2dConfig, kernel_size, strides, padding, dilation, ceil_mode)
EMBER_CONFIG(AvgPool1dConfig, kernel_size, stride, padding, count_include_pad, ceil_mode)
EMBER_CONFIG(AvgPool2dConfig, kernel_size, strides, padding, count_include_pad, ceil_mode)

}  // namespace ember::nn
