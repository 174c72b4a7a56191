// Properties of the conv / pool / resampling layers that the PyTorch fixtures do not cover:
// default initialisation statistics (PyTorch's U(-1/sqrt(fan_in), 1/sqrt(fan_in))), config
// defaults and JSON, "same" padding sizes, unbatched inputs, valid(), loading a torch
// state_dict, and the errors (ShapeError naming the layer, ValueError naming the config).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "ember/nn/conv.hpp"
#include "ember/nn/conv_transpose.hpp"
#include "ember/nn/deform_conv.hpp"
#include "ember/nn/interpolate.hpp"
#include "ember/nn/pixel_shuffle.hpp"
#include "ember/nn/pool.hpp"
#include "ember/nn/unfold.hpp"
#include "layer_conv_support.hpp"

namespace ember::test::layer_conv {
namespace {

template <class On>
class LayerConvProps : public ::testing::Test {};
using Backends = ::testing::Types<OnAutodiffCpu, OnDispatch>;
struct BackendNames {
  template <class T>
  static std::string GetName(int) {
    return T::name();
  }
};
TYPED_TEST_SUITE(LayerConvProps, Backends, BackendNames);

template <class B, std::size_t D>
Tensor<B, D> random_input(const Shape& s, const typename B::Device& device, std::uint64_t seed) {
  return Tensor<B, D>::from_data(random_data(s, seed).convert(DType::F32), device);
}

/// Every value within [-bound, bound]; with `check_moments` (large tensors) the mean is
/// within 5 standard errors of 0 and the variance within 5% of bound^2 / 3 (U(-b, b)).
void expect_uniform(const std::string& what, const std::vector<double>& v, double bound,
                    bool check_moments) {
  SCOPED_TRACE(what);
  ASSERT_FALSE(v.empty());
  double mx = 0, sum = 0, sq = 0;
  for (double x : v) {
    mx = std::max(mx, std::abs(x));
    sum += x;
    sq += x * x;
  }
  EXPECT_LE(mx, bound * (1 + 1e-6));
  EXPECT_GT(mx, bound * 0.9) << "values should fill the range";
  if (!check_moments) return;
  const double n = static_cast<double>(v.size());
  const double mean = sum / n, var = sq / n - mean * mean, want = bound * bound / 3;
  EXPECT_LE(std::abs(mean), 5 * bound / std::sqrt(3 * n));
  EXPECT_NEAR(var, want, 0.05 * want);
}

template <class M>
void expect_default_init(const M& m, std::int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  expect_uniform("weight", m.weight->template to_vec<double>(), bound, true);
  ASSERT_TRUE(m.bias.has_value());
  expect_uniform("bias", (*m.bias)->template to_vec<double>(), bound, false);
}

TYPED_TEST(LayerConvProps, DefaultInitIsTorchsKaimingUniform) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  B::seed(7);
  {
    SCOPED_TRACE("Conv1d in 16 out 64 k 5 groups 4: fan_in 4 * 5");
    auto m = nn::Conv1dConfig{.channels_in = 16, .channels_out = 64, .kernel_size = 5, .groups = 4}
                 .init<B>(dev);
    expect_default_init(m, 20);
  }
  {
    SCOPED_TRACE("Conv2d in 64 out 32 k 3x3 groups 2: fan_in 32 * 9");
    auto m =
        nn::Conv2dConfig{.channels = {64, 32}, .kernel_size = {3, 3}, .groups = 2}.init<B>(dev);
    expect_default_init(m, 288);
  }
  {
    SCOPED_TRACE("Conv3d in 8 out 16 k 3x3x3: fan_in 8 * 27");
    auto m = nn::Conv3dConfig{.channels = {8, 16}, .kernel_size = {3, 3, 3}}.init<B>(dev);
    expect_default_init(m, 216);
  }
  {
    SCOPED_TRACE("ConvTranspose1d in 64 out 32 k 4: torch's fan_in out * k");
    auto m = nn::ConvTranspose1dConfig{.channels = {64, 32}, .kernel_size = 4}.init<B>(dev);
    expect_default_init(m, 128);
  }
  {
    SCOPED_TRACE("ConvTranspose2d in 32 out 64 k 3x3 groups 2: torch's fan_in out/groups * k");
    auto m =
        nn::ConvTranspose2dConfig{.channels = {32, 64}, .kernel_size = {3, 3}, .groups = 2}.init<B>(
            dev);
    expect_default_init(m, 288);
  }
  {
    SCOPED_TRACE("DeformConv2d in 32 out 32 k 3x3 weight_groups 2: fan_in 16 * 9");
    auto m = nn::DeformConv2dConfig{.channels = {32, 32}, .kernel_size = {3, 3}, .weight_groups = 2}
                 .init<B>(dev);
    expect_default_init(m, 144);
  }
}

TYPED_TEST(LayerConvProps, ConfigInitializerAndBiasOptionsAreUsed) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  auto m = nn::Conv2dConfig{.channels = {2, 3},
                            .kernel_size = {2, 2},
                            .bias = false,
                            .initializer = nn::Initializer::constant(0.25)}
               .init<B>(dev);
  EXPECT_FALSE(m.bias.has_value());
  EXPECT_EQ(m.weight->shape(), Shape({3, 2, 2, 2}));
  for (double v : m.weight->template to_vec<double>()) EXPECT_EQ(v, 0.25);
  EXPECT_EQ(m.num_params(), 24);
  EXPECT_EQ(m.channels_in(), 2);
  EXPECT_EQ(m.channels_out(), 3);
  auto t =
      nn::ConvTranspose3dConfig{.channels = {4, 6}, .kernel_size = {1, 2, 3}, .groups = 2}.init<B>(
          dev);
  EXPECT_EQ(t.weight->shape(), Shape({4, 3, 1, 2, 3}));
  EXPECT_EQ(t.channels_in(), 4);
  EXPECT_EQ(t.channels_out(), 6);
}

TEST(LayerConvConfig, BurnDefaults) {
  const nn::Conv2dConfig c{.channels = {3, 8}, .kernel_size = {3, 3}};
  EXPECT_EQ(c.stride, (std::array<std::int64_t, 2>{1, 1}));
  EXPECT_EQ(c.dilation, (std::array<std::int64_t, 2>{1, 1}));
  EXPECT_EQ(c.groups, 1);
  EXPECT_EQ(c.padding, nn::PaddingConfig2d::valid());
  EXPECT_TRUE(c.bias);
  EXPECT_EQ(c.initializer, nn::Initializer::kaiming_uniform(1.0 / std::sqrt(3.0), false));
  // Pool strides default to the kernel size (Burn's #[config(default = "kernel_size")]).
  EXPECT_EQ((nn::MaxPool2dConfig{.kernel_size = {3, 2}}.init().stride),
            (std::array<std::int64_t, 2>{3, 2}));
  EXPECT_EQ(nn::AvgPool1dConfig{.kernel_size = 4}.init().stride, 4);
  EXPECT_EQ((nn::MaxPool1dConfig{.kernel_size = 4, .stride = 1}.init().stride), 1);
  const auto ip = nn::Interpolate2dConfig{.output_size = {{4, 4}}};
  EXPECT_EQ(ip.mode, nn::InterpolateMode::Nearest);
  EXPECT_TRUE(ip.align_corners);
}

TEST(LayerConvConfig, JsonRoundTripAndBurnPaddingForm) {
  const nn::Conv2dConfig c{.channels = {3, 8},
                           .kernel_size = {3, 5},
                           .stride = {2, 1},
                           .groups = 1,
                           .padding = nn::PaddingConfig2d::explicit_(1, 0, 2, 1),
                           .bias = false};
  const auto j = nn::config_to_json(c);
  EXPECT_EQ(j.at("padding"), nlohmann::json::parse(R"({"Explicit": [1, 0, 2, 1]})"));
  const auto back = nn::config_from_json<nn::Conv2dConfig>(j);
  EXPECT_EQ(back.channels, c.channels);
  EXPECT_EQ(back.kernel_size, c.kernel_size);
  EXPECT_EQ(back.stride, c.stride);
  EXPECT_EQ(back.padding, c.padding);
  EXPECT_EQ(back.bias, false);
  EXPECT_EQ(back.initializer, c.initializer);

  // Missing keys keep the defaults; "Same" / "Valid"; a symmetric Explicit list of N values.
  const auto same = nn::config_from_json<nn::Conv1dConfig>(
      nlohmann::json::parse(R"({"channels_in": 2, "channels_out": 4, "kernel_size": 3,
                                "padding": "Same"})"));
  EXPECT_EQ(same.padding, nn::PaddingConfig1d::same());
  EXPECT_EQ(same.stride, 1);
  EXPECT_TRUE(same.bias);
  const auto sym = nn::config_from_json<nn::Conv3dConfig>(
      nlohmann::json::parse(R"({"padding": {"Explicit": [1, 2, 3]}})"));
  EXPECT_EQ(sym.padding, nn::PaddingConfig3d::explicit_(1, 2, 3, 1, 2, 3));
  EXPECT_THROW(nn::config_from_json<nn::Conv2dConfig>(
                   nlohmann::json::parse(R"({"padding": {"Explicit": [1, 2, 3]}})")),
               ValueError);
  EXPECT_THROW(
      nn::config_from_json<nn::Conv2dConfig>(nlohmann::json::parse(R"({"padding": "Full"})")),
      ValueError);

  // Optional strides and sizes: null or absent = unset.
  auto mp = nn::config_from_json<nn::MaxPool2dConfig>(
      nlohmann::json::parse(R"({"kernel_size": [2, 2], "strides": null})"));
  EXPECT_FALSE(mp.strides.has_value());
  mp.strides = {{1, 2}};
  EXPECT_EQ(nn::config_from_json<nn::MaxPool2dConfig>(nn::config_to_json(mp)).strides, mp.strides);
  nn::Interpolate2dConfig ic{.scale_factor = {{2.0, 0.5}}, .mode = nn::InterpolateMode::Cubic};
  const auto ij = nn::config_to_json(ic);
  EXPECT_EQ(ij.at("mode"), "Cubic");
  EXPECT_TRUE(ij.at("output_size").is_null());
  const auto ib = nn::config_from_json<nn::Interpolate2dConfig>(ij);
  EXPECT_EQ(ib.scale_factor, ic.scale_factor);
  EXPECT_EQ(ib.mode, nn::InterpolateMode::Cubic);
  EXPECT_FALSE(ib.output_size.has_value());
  EXPECT_THROW(nn::config_from_json<nn::Interpolate1dConfig>(
                   nlohmann::json::parse(R"({"mode": "Bilinear"})")),
               ValueError);
}

TEST(LayerConvConfig, SamePaddingSizes) {
  // Stride 1: total d (k - 1), the odd one at the end (PyTorch's padding="same").
  auto [lo, hi] = nn::PaddingConfig2d::same().resolve({7, 8}, {3, 4}, {1, 1}, {1, 1});
  EXPECT_EQ(lo, (std::array<std::int64_t, 2>{1, 1}));
  EXPECT_EQ(hi, (std::array<std::int64_t, 2>{1, 2}));
  auto [lo2, hi2] = nn::PaddingConfig1d::same().resolve({9}, {3}, {1}, {3});
  EXPECT_EQ(lo2[0], 3);
  EXPECT_EQ(hi2[0], 3);
  // Stride 2 (Burn's / ONNX SAME_UPPER): out = ceil(7 / 2) = 4, total (4-1)*2 + 3 - 7 = 2;
  // out = ceil(8 / 2) = 4, total 3*2 + 3 - 8 = 1.
  auto [lo3, hi3] = nn::PaddingConfig2d::same().resolve({7, 8}, {3, 3}, {2, 2}, {1, 1});
  EXPECT_EQ(lo3, (std::array<std::int64_t, 2>{1, 0}));
  EXPECT_EQ(hi3, (std::array<std::int64_t, 2>{1, 1}));
  // Explicit with N values is symmetric; negative values throw.
  EXPECT_EQ(nn::PaddingConfig2d::explicit_(1, 2), nn::PaddingConfig2d::explicit_(1, 2, 1, 2));
  EMBER_EXPECT_THROW_MSG(nn::PaddingConfig1d::explicit_(-1), ValueError, "[PaddingConfig]");
}

TYPED_TEST(LayerConvProps, SamePaddingKeepsTheSize) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  auto conv = nn::Conv2dConfig{.channels = {2, 3},
                               .kernel_size = {4, 3},
                               .dilation = {1, 2},
                               .padding = nn::PaddingConfig2d::same()}
                  .init<B>(dev);
  auto x = random_input<B, 4>({1, 2, 5, 7}, dev, 1);
  EXPECT_EQ(conv.forward(x).shape(), Shape({1, 3, 5, 7}));
  auto strided = nn::Conv1dConfig{.channels_in = 2,
                                  .channels_out = 2,
                                  .kernel_size = 3,
                                  .stride = 2,
                                  .padding = nn::PaddingConfig1d::same()}
                     .init<B>(dev);
  EXPECT_EQ(strided.forward(random_input<B, 3>({1, 2, 9}, dev, 2)).shape(), Shape({1, 2, 5}));
  auto pool =
      nn::MaxPool2dConfig{.kernel_size = {3, 3}, .padding = nn::PaddingConfig2d::same()}.init();
  EXPECT_EQ(pool.forward(x).shape(), Shape({1, 2, 2, 3}));
}

TYPED_TEST(LayerConvProps, UnbatchedInputMatchesBatched) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  auto x = random_input<B, 3>({2, 5, 6}, dev, 3);
  auto xb = x.template unsqueeze_dim<4>(0);
  auto conv = nn::Conv2dConfig{.channels = {2, 3}, .kernel_size = {3, 2}}.init<B>(dev);
  expect_approx(conv.forward(x).into_data(),
                conv.forward(xb).template squeeze_dim<3>(0).into_data(), kTol);
  auto up = nn::ConvTranspose2dConfig{.channels = {2, 3}, .kernel_size = {2, 2}, .stride = {2, 2}}
                .init<B>(dev);
  EXPECT_EQ(up.forward(x).shape(), Shape({3, 10, 12}));
  auto pool = nn::AvgPool2dConfig{.kernel_size = {2, 2}}.init();
  expect_approx(pool.forward(x).into_data(),
                pool.forward(xb).template squeeze_dim<3>(0).into_data(), kTol);
  auto x1 = random_input<B, 2>({3, 8}, dev, 4);
  auto mp = nn::MaxPool1dConfig{.kernel_size = 3, .stride = 2}.init();
  expect_approx(mp.forward(x1).into_data(),
                mp.forward(x1.template unsqueeze_dim<3>(0)).template squeeze_dim<2>(0).into_data(),
                kTol);
  auto unfold = nn::Unfold4dConfig{.kernel_size = {2, 2}}.init();
  auto cols = unfold.forward(x);
  EXPECT_EQ(cols.shape(), Shape({8, 20}));
  auto fold = nn::Fold4dConfig{.output_size = {5, 6}, .kernel_size = {2, 2}}.init();
  EXPECT_EQ(fold.forward(cols).shape(), Shape({2, 5, 6}));
}

TYPED_TEST(LayerConvProps, PixelUnshuffleInvertsPixelShuffle) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  auto x = random_input<B, 5>({2, 1, 12, 2, 3}, dev, 5);
  auto y = nn::PixelShuffleConfig{.upscale_factor = 2}.init().forward(x);
  EXPECT_EQ(y.shape(), Shape({2, 1, 3, 4, 6}));
  auto z = nn::PixelUnshuffleConfig{.downscale_factor = 2}.init().forward(y);
  expect_eq(z.into_data(), x.into_data());
}

TYPED_TEST(LayerConvProps, ValidRunsOnTheInnerBackend) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  auto conv = nn::Conv2dConfig{.channels = {2, 4}, .kernel_size = {3, 3}}.init<B>(dev);
  auto x = random_input<B, 4>({1, 2, 5, 5}, dev, 6);
  auto v = conv.valid();
  using Inner = typename decltype(v.weight)::Value;  // Tensor<inner backend, 4>
  auto xi = Inner::from_data(x.into_data(), v.weight->device());
  expect_approx(v.forward(xi).into_data(), conv.forward(x).into_data(), kTol);
  EXPECT_EQ(v.weight.id(), conv.weight.id());
  EXPECT_EQ(v.stride, conv.stride);
  if constexpr (std::is_same_v<B, Autodiff<Cpu>>) {
    static_assert(std::is_same_v<decltype(v), nn::Conv2d<Cpu>>);
  }
}

TYPED_TEST(LayerConvProps, LoadsATorchStateDict) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  const auto cases = fixture_cases("nn/conv", "conv_transpose2d_stride_pad_out");
  ASSERT_EQ(cases.size(), 1u);
  const auto& c = cases[0];
  auto m = nn::config_from_json<nn::ConvTranspose2dConfig>(c.at("config")).template init<B>(dev);
  std::map<std::string, TensorData> sd;
  for (const auto& [key, shape] : torch_state_dict(c)) sd.emplace(key, c.tensor("param_" + key));
  const auto report = m.load_state_dict(sd);
  EXPECT_EQ(report.loaded, (std::vector<std::string>{"weight", "bias"}));
  auto x = Tensor<B, 4>::from_data(c.tensor("x"), dev);
  expect_approx(m.forward(x).into_data(), c.tensor("out"), kTol);
}

TYPED_TEST(LayerConvProps, BadInputThrowsShapeErrorNamingTheLayer) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  auto conv = nn::Conv2dConfig{.channels = {3, 4}, .kernel_size = {3, 3}}.init<B>(dev);
  EMBER_EXPECT_THROW_MSG((conv.forward(random_input<B, 4>({1, 2, 5, 5}, dev, 7))), ShapeError,
                         "[Conv2d] input of shape [1, 2, 5, 5] has 2 channels, expected "
                         "channels_in = 3");
  EMBER_EXPECT_THROW_MSG((conv.forward(random_input<B, 5>({1, 3, 5, 5, 5}, dev, 8))), ShapeError,
                         "[Conv2d] input of shape [1, 3, 5, 5, 5] has rank 5");
  EMBER_EXPECT_THROW_MSG((conv.forward(random_input<B, 2>({3, 5}, dev, 9))), ShapeError,
                         "[Conv2d]");
  auto c1 = nn::Conv1dConfig{.channels_in = 2, .channels_out = 2, .kernel_size = 3}.init<B>(dev);
  EMBER_EXPECT_THROW_MSG((c1.forward(random_input<B, 4>({1, 2, 5, 5}, dev, 10))), ShapeError,
                         "[Conv1d]");
  auto c3 = nn::Conv3dConfig{.channels = {2, 2}, .kernel_size = {1, 1, 1}}.init<B>(dev);
  EMBER_EXPECT_THROW_MSG((c3.forward(random_input<B, 5>({1, 3, 2, 2, 2}, dev, 11))), ShapeError,
                         "[Conv3d]");
  auto t = nn::ConvTranspose2dConfig{.channels = {3, 4}, .kernel_size = {2, 2}}.init<B>(dev);
  EMBER_EXPECT_THROW_MSG((t.forward(random_input<B, 4>({1, 4, 5, 5}, dev, 12))), ShapeError,
                         "[ConvTranspose2d] input of shape [1, 4, 5, 5] has 4 channels");
  auto d = nn::DeformConv2dConfig{.channels = {3, 4}, .kernel_size = {3, 3}}.init<B>(dev);
  EMBER_EXPECT_THROW_MSG((d.forward(random_input<B, 4>({1, 2, 5, 5}, dev, 13),
                                    random_input<B, 4>({1, 18, 3, 3}, dev, 14))),
                         ShapeError, "[DeformConv2d]");
  auto x3 = random_input<B, 3>({1, 2, 5}, dev, 15);
  auto x4 = random_input<B, 4>({1, 2, 4, 4}, dev, 16);
  auto x2 = random_input<B, 2>({4, 4}, dev, 17);
  EMBER_EXPECT_THROW_MSG((nn::MaxPool2dConfig{.kernel_size = {2, 2}}.init().forward(x2)),
                         ShapeError, "[MaxPool2d] input of shape [4, 4] has rank 2");
  EMBER_EXPECT_THROW_MSG((nn::AvgPool1dConfig{.kernel_size = 2}.init().forward(x4)), ShapeError,
                         "[AvgPool1d]");
  EMBER_EXPECT_THROW_MSG((nn::AdaptiveAvgPool2dConfig{.output_size = {2, 2}}.init().forward(x2)),
                         ShapeError, "[AdaptiveAvgPool2d]");
  EMBER_EXPECT_THROW_MSG((nn::Interpolate2dConfig{.output_size = {{2, 2}}}.init().forward(x3)),
                         ShapeError, "[Interpolate2d] input of shape [1, 2, 5] has rank 3");
  EMBER_EXPECT_THROW_MSG((nn::Interpolate1dConfig{.output_size = 4}.init().forward(x4)), ShapeError,
                         "[Interpolate1d]");
  EMBER_EXPECT_THROW_MSG((nn::PixelShuffleConfig{.upscale_factor = 2}.init().forward(x4)),
                         ShapeError, "[PixelShuffle] input of shape [1, 2, 4, 4] has 2 channels");
  EMBER_EXPECT_THROW_MSG((nn::PixelUnshuffleConfig{.downscale_factor = 3}.init().forward(x4)),
                         ShapeError, "[PixelUnshuffle]");
  EMBER_EXPECT_THROW_MSG((nn::Unfold4dConfig{.kernel_size = {2, 2}}.init().forward(x2)), ShapeError,
                         "[Unfold4d]");
  EMBER_EXPECT_THROW_MSG(
      (nn::Fold4dConfig{.output_size = {4, 4}, .kernel_size = {2, 2}}.init().forward(
          random_input<B, 4>({1, 4, 9, 1}, dev, 18))),
      ShapeError, "[Fold4d]");
}

TEST(LayerConvConfig, BadConfigThrowsValueErrorNamingTheConfig) {
  using B = Autodiff<Cpu>;
  EMBER_EXPECT_THROW_MSG(
      (nn::Conv2dConfig{.channels = {3, 4}, .kernel_size = {3, 3}, .groups = 2}.init<B>()),
      ValueError, "[Conv2dConfig] groups 2 must divide");
  EMBER_EXPECT_THROW_MSG((nn::Conv1dConfig{.channels_in = 2, .channels_out = 2}.init<B>()),
                         ValueError, "[Conv1dConfig] kernel_size [0] must be >= 1");
  EMBER_EXPECT_THROW_MSG(
      (nn::Conv3dConfig{.channels = {2, 2}, .kernel_size = {1, 1, 1}, .stride = {1, 0, 1}}
           .init<B>()),
      ValueError, "[Conv3dConfig] stride");
  EMBER_EXPECT_THROW_MSG(
      (nn::ConvTranspose2dConfig{
          .channels = {2, 2}, .kernel_size = {3, 3}, .stride = {2, 2}, .padding_out = {2, 0}}
           .init<B>()),
      ValueError, "[ConvTranspose2dConfig] padding_out");
  EMBER_EXPECT_THROW_MSG(
      (nn::DeformConv2dConfig{.channels = {3, 3}, .kernel_size = {3, 3}, .offset_groups = 2}
           .init<B>()),
      ValueError, "[DeformConv2dConfig] offset_groups");
  EMBER_EXPECT_THROW_MSG(
      (nn::MaxPool2dConfig{.kernel_size = {2, 2}, .padding = nn::PaddingConfig2d::explicit_(2, 0)}
           .init()),
      ValueError, "[MaxPool2dConfig]");
  EMBER_EXPECT_THROW_MSG((nn::AvgPool1dConfig{.kernel_size = 0}.init()), ValueError,
                         "[AvgPool1dConfig]");
  EMBER_EXPECT_THROW_MSG((nn::AdaptiveAvgPool1dConfig{}.init()), ValueError,
                         "[AdaptiveAvgPool1dConfig]");
  EMBER_EXPECT_THROW_MSG((nn::Interpolate2dConfig{}.init()), ValueError,
                         "[Interpolate2dConfig] exactly one of output_size and scale_factor");
  EMBER_EXPECT_THROW_MSG((nn::Interpolate1dConfig{.output_size = 3, .scale_factor = 2.0}.init()),
                         ValueError, "[Interpolate1dConfig] exactly one");
  EMBER_EXPECT_THROW_MSG((nn::PixelShuffleConfig{.upscale_factor = 0}.init()), ValueError,
                         "[PixelShuffleConfig]");
  EMBER_EXPECT_THROW_MSG((nn::Fold4dConfig{.output_size = {0, 4}, .kernel_size = {2, 2}}.init()),
                         ValueError, "[Fold4dConfig] output_size");
}

}  // namespace
}  // namespace ember::test::layer_conv
