// Config JSON is read strictly: integers must be JSON integers in range, arrays must have
// their exact length, unknown keys and unknown enum names are errors (not silently the
// first enum value), and load_config names the file and the reason it cannot be read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "ember/module/config.hpp"
#include "ember/nn/activation.hpp"
#include "ember/nn/conv.hpp"
#include "ember/nn/interpolate.hpp"
#include "ember/nn/linear.hpp"
#include "ember/nn/loss/regression.hpp"
#include "ember/nn/norm.hpp"
#include "ember/nn/rnn.hpp"
#include "ember/nn/transformer.hpp"
#include "fixtures.hpp"

namespace ember::nn {
namespace {

using json = nlohmann::json;

// ---- enums ----------------------------------------------------------------------------------

TEST(ConfigEnum, UnknownNamesThrowInsteadOfGivingTheFirstValue) {
  EMBER_EXPECT_THROW_MSG(config_from_json<TransformerEncoderConfig>(json{{"activation", "GELU"}}),
                         ValueError,
                         "[TransformerEncoderConfig] field 'activation': [TransformerActivation] "
                         "unknown value 'GELU' (expected one of: relu, gelu)");
  EMBER_EXPECT_THROW_MSG(config_from_json<GeluConfig>(json{{"approximate", "Tanh"}}), ValueError,
                         "[GeluApproximate] unknown value 'Tanh' (expected one of: none, tanh)");
  EMBER_EXPECT_THROW_MSG(config_from_json<RnnConfig>(json{{"nonlinearity", "sigmoid"}}), ValueError,
                         "[RnnNonlinearity] unknown value 'sigmoid' (expected one of: tanh, relu)");
  EMBER_EXPECT_THROW_MSG(config_from_json<RnnConfig>(json{{"nonlinearity", 1}}), ValueError,
                         "[RnnNonlinearity] unknown value 1 (expected one of: tanh, relu)");
  EMBER_EXPECT_THROW_MSG(
      config_from_json<PositionWiseFeedForwardConfig>(json{{"activation", nullptr}}), ValueError,
      "[TransformerActivation] unknown value null");
  // The enums that were strict already.
  EMBER_EXPECT_THROW_MSG(config_from_json<Interpolate2dConfig>(json{{"mode", "Bilinear"}}),
                         ValueError, "[InterpolateMode] unknown mode Bilinear");
  EMBER_EXPECT_THROW_MSG(config_from_json<MseLossConfig>(json{{"reduction", "avg"}}), ValueError,
                         "unknown reduction 'avg'");
}

TEST(ConfigEnum, EveryNameRoundTrips) {
  for (const auto a : {TransformerActivation::Relu, TransformerActivation::Gelu}) {
    const TransformerEncoderConfig c{.activation = a};
    EXPECT_EQ(config_from_json<TransformerEncoderConfig>(config_to_json(c)).activation, a);
  }
  EXPECT_EQ(json(TransformerActivation::Relu), "relu");
  EXPECT_EQ(json(GeluApproximate::Tanh), "tanh");
  EXPECT_EQ(json(RnnNonlinearity::Relu), "relu");
  EXPECT_EQ(config_from_json<GeluConfig>(json{{"approximate", "tanh"}}).approximate,
            GeluApproximate::Tanh);
  EXPECT_EQ(config_from_json<RnnConfig>(json{{"nonlinearity", "relu"}}).nonlinearity,
            RnnNonlinearity::Relu);
  // A value cast from outside the enum has no name to write.
  EMBER_EXPECT_THROW_MSG(json(static_cast<RnnNonlinearity>(7)), ValueError,
                         "[RnnNonlinearity] no name for the value 7");
}

// ---- field values ---------------------------------------------------------------------------

TEST(ConfigFields, IntegersMustBeJsonIntegersInRange) {
  EMBER_EXPECT_THROW_MSG(config_from_json<RnnConfig>(json{{"d_hidden", 64.7}}), ValueError,
                         "[RnnConfig] field 'd_hidden': expected an integer, got 64.7");
  EMBER_EXPECT_THROW_MSG(config_from_json<RnnConfig>(json::parse(R"({"d_hidden": 1e30})")),
                         ValueError,
                         "[RnnConfig] field 'd_hidden': expected an integer, got 1e+30");
  EMBER_EXPECT_THROW_MSG(config_from_json<RnnConfig>(json{{"d_hidden", 64.0}}), ValueError,
                         "expected an integer, got 64.0");
  EMBER_EXPECT_THROW_MSG(config_from_json<RnnConfig>(json{{"d_hidden", "64"}}), ValueError,
                         "expected an integer, got \"64\"");
  // 2^63 parses as an unsigned JSON integer: out of int64_t's range.
  EMBER_EXPECT_THROW_MSG(
      config_from_json<RnnConfig>(json::parse(R"({"d_hidden": 9223372036854775808})")), ValueError,
      "[RnnConfig] field 'd_hidden': the integer 9223372036854775808 is out of range "
      "[-9223372036854775808, 9223372036854775807]");
  EXPECT_EQ(config_from_json<RnnConfig>(json{{"d_hidden", 64}}).d_hidden, 64);
  EXPECT_EQ(config_from_json<RnnConfig>(json{{"d_input", -3}}).d_input, -3);
  EXPECT_EQ(config_from_json<RnnConfig>(json{{"d_input", std::numeric_limits<std::int64_t>::max()}})
                .d_input,
            std::numeric_limits<std::int64_t>::max());
}

TEST(ConfigFields, OtherScalarTypesAreChecked) {
  EMBER_EXPECT_THROW_MSG(config_from_json<LinearConfig>(json{{"bias", 1}}), ValueError,
                         "[LinearConfig] field 'bias': expected true or false, got 1");
  EMBER_EXPECT_THROW_MSG(config_from_json<LayerNormConfig>(json{{"epsilon", "small"}}), ValueError,
                         "[LayerNormConfig] field 'epsilon': expected a number, got \"small\"");
  // NaN is written as null by nlohmann::json: refused when read back.
  EMBER_EXPECT_THROW_MSG(config_from_json<LayerNormConfig>(json{{"epsilon", nullptr}}), ValueError,
                         "expected a number, got null");
  // Integers are fine for floating-point fields.
  EXPECT_EQ(config_from_json<LayerNormConfig>(json{{"epsilon", 1}}).epsilon, 1.0);
}

TEST(ConfigFields, ArraysNeedTheirExactLength) {
  EMBER_EXPECT_THROW_MSG(config_from_json<Conv2dConfig>(json{{"channels", {1, 2, 3}}}), ValueError,
                         "[Conv2dConfig] field 'channels': expected an array of 2 elements, got "
                         "[1,2,3]");
  EMBER_EXPECT_THROW_MSG(config_from_json<Conv2dConfig>(json{{"kernel_size", {3}}}), ValueError,
                         "field 'kernel_size': expected an array of 2 elements, got [3]");
  EMBER_EXPECT_THROW_MSG(config_from_json<Conv2dConfig>(json{{"stride", 2}}), ValueError,
                         "field 'stride': expected an array of 2 elements, got 2");
  EMBER_EXPECT_THROW_MSG(config_from_json<Conv2dConfig>(json{{"stride", {1, 2.5}}}), ValueError,
                         "field 'stride': element 1: expected an integer, got 2.5");
  const auto c = config_from_json<Conv2dConfig>(json{{"channels", {3, 8}}});
  EXPECT_EQ(c.channels, (std::array<std::int64_t, 2>{3, 8}));
  EXPECT_EQ(c.stride, (std::array<std::int64_t, 2>{1, 1}));
  // Nested values: explicit padding goes through the same integer check.
  EMBER_EXPECT_THROW_MSG(
      config_from_json<Conv2dConfig>(json{{"padding", {{"Explicit", {1, 1.5}}}}}), ValueError,
      "[Conv2dConfig] field 'padding': [PaddingConfig] expected");
  EXPECT_EQ(config_from_json<Conv2dConfig>(json{{"padding", {{"Explicit", {1, 2}}}}}).padding,
            PaddingConfig2d::explicit_(1, 2));
}

TEST(ConfigFields, UnknownKeysAreErrors) {
  EMBER_EXPECT_THROW_MSG(config_from_json<RnnConfig>(json{{"d_input", 4}, {"d_hiden", 8}}),
                         ValueError,
                         "[RnnConfig] unknown field 'd_hiden' (fields: d_input, d_hidden, bias, "
                         "bidirectional, nonlinearity, initializer)");
  EMBER_EXPECT_THROW_MSG(
      config_from_json<LinearConfig>(
          json{{"initializer", {{"kind", "normal"}, {"mean", 0}, {"std", 1}, {"gain", 2}}}}),
      ValueError,
      "[LinearConfig] field 'initializer': [Initializer] unknown key 'gain' for "
      "kind normal (keys: kind, mean, std)");
  EMBER_EXPECT_THROW_MSG(
      config_from_json<LinearConfig>(
          json{{"initializer", {{"kind", "kaiming_uniform"}, {"gain", 1}, {"fan_out_only", 0}}}}),
      ValueError, "needs true or false for 'fan_out_only'");
}

TEST(ConfigFields, EmberWrittenJsonRoundTrips) {
  // Non-default values of every kind of field: ints, doubles, bools, arrays, enums, nested
  // padding and initializers, optionals.
  const auto round_trip = [](const auto& c) {
    using C = std::remove_cvref_t<decltype(c)>;
    const json j = config_to_json(c);
    EXPECT_EQ(config_to_json(config_from_json<C>(j)), j) << j.dump();
  };
  round_trip(Conv2dConfig{.channels = {3, 8},
                          .kernel_size = {3, 5},
                          .stride = {2, 1},
                          .groups = 1,
                          .padding = PaddingConfig2d::explicit_(1, 2, 3, 4),
                          .bias = false,
                          .initializer = Initializer::uniform(-0.5, 0.25)});
  round_trip(Conv2dConfig{.channels = {3, 8}, .padding = PaddingConfig2d::same()});
  round_trip(RnnConfig{.d_input = 4,
                       .d_hidden = 8,
                       .bidirectional = true,
                       .nonlinearity = RnnNonlinearity::Relu,
                       .initializer = Initializer::kaiming_normal(2.0, true)});
  round_trip(TransformerEncoderConfig{.d_model = 16,
                                      .d_ff = 32,
                                      .n_heads = 4,
                                      .n_layers = 2,
                                      .activation = TransformerActivation::Relu,
                                      .layer_norm_eps = 1e-6});
  round_trip(GeluConfig{.approximate = GeluApproximate::Tanh});
  round_trip(Interpolate2dConfig{.output_size = std::array<std::int64_t, 2>{4, 6},
                                 .mode = InterpolateMode::Cubic});
  round_trip(Interpolate2dConfig{.scale_factor = std::array<double, 2>{1.5, 2}});
  round_trip(LinearConfig{.d_input = 2, .d_output = 3, .initializer = Initializer::orthogonal(2)});
  round_trip(BatchNormConfig{.num_features = 4, .epsilon = 1e-3, .momentum = 0.3});
}

// ---- load_config ----------------------------------------------------------------------------

TEST(LoadConfig, NamesTheFileAndTheReason) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ember_config_json_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "folder.json");
  const auto path = [&](const char* name) { return (dir / name).string(); };
  EMBER_EXPECT_THROW_MSG(load_config<LinearConfig>(dir / "folder.json"), IoError,
                         "[load_config] '" + path("folder.json") + "' is a directory");
  EMBER_EXPECT_THROW_MSG(
      load_config<LinearConfig>(dir / "missing.json"), IoError,
      "[load_config] '" + path("missing.json") + "': cannot open: No such file or directory");
  { std::ofstream(dir / "bad.json") << "{\"d_input\": 3,"; }
  EMBER_EXPECT_THROW_MSG(load_config<LinearConfig>(dir / "bad.json"), IoError,
                         "[load_config] '" + path("bad.json") + "' is not valid JSON");
  { std::ofstream(dir / "empty.json"); }
  EMBER_EXPECT_THROW_MSG(load_config<LinearConfig>(dir / "empty.json"), IoError,
                         "is not valid JSON");
  save_config(LinearConfig{.d_input = 2, .d_output = 5}, dir / "ok.json");
  EXPECT_EQ(load_config<LinearConfig>(dir / "ok.json").d_output, 5);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ember::nn
