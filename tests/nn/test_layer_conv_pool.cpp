// MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, Interpolate1d/2d, PixelShuffle,
// PixelUnshuffle, Unfold4d and Fold4d against PyTorch (nn/pool.json from
// tests/fixtures/gen_nn_conv.py): built from the case's config (JSON), output and input
// gradient of sum(out * w) within rel 1e-4 / abs 1e-5, no state_dict entries and no
// parameters (as torch's). On Autodiff<Cpu> and on Dispatch (cpu+autodiff).
#include <gtest/gtest.h>

#include <string>

#include "ember/nn/interpolate.hpp"
#include "ember/nn/pixel_shuffle.hpp"
#include "ember/nn/pool.hpp"
#include "ember/nn/unfold.hpp"
#include "layer_conv_support.hpp"

namespace ember::test::layer_conv {
namespace {

template <class Cfg, std::size_t D, class On>
void run_free(const FixtureCase& c) {
  auto m = nn::config_from_json<Cfg>(c.at("config")).init();
  check_module_case<D, On>(c, m);
}

template <class On>
void run_pool_case(const FixtureCase& c) {
  const std::string layer = c.param<std::string>("layer");
  if (layer == "max_pool1d") {
    run_free<nn::MaxPool1dConfig, 3, On>(c);
  } else if (layer == "max_pool2d") {
    run_free<nn::MaxPool2dConfig, 4, On>(c);
  } else if (layer == "avg_pool1d") {
    run_free<nn::AvgPool1dConfig, 3, On>(c);
  } else if (layer == "avg_pool2d") {
    run_free<nn::AvgPool2dConfig, 4, On>(c);
  } else if (layer == "adaptive_avg_pool1d") {
    run_free<nn::AdaptiveAvgPool1dConfig, 3, On>(c);
  } else if (layer == "adaptive_avg_pool2d") {
    run_free<nn::AdaptiveAvgPool2dConfig, 4, On>(c);
  } else if (layer == "interpolate1d") {
    run_free<nn::Interpolate1dConfig, 3, On>(c);
  } else if (layer == "interpolate2d") {
    run_free<nn::Interpolate2dConfig, 4, On>(c);
  } else if (layer == "pixel_shuffle") {
    run_free<nn::PixelShuffleConfig, 4, On>(c);
  } else if (layer == "pixel_unshuffle") {
    run_free<nn::PixelUnshuffleConfig, 4, On>(c);
  } else if (layer == "unfold4d") {
    run_free<nn::Unfold4dConfig, 4, On>(c);
  } else if (layer == "fold4d") {
    run_free<nn::Fold4dConfig, 3, On>(c);
  } else {
    FAIL() << "unknown layer " << layer;
  }
}

[[maybe_unused]] const bool registered = [] {
  register_fixture_tests<OnAutodiffCpu>("LayerConvPoolFixture", "nn/pool", "",
                                        run_pool_case<OnAutodiffCpu>);
  register_fixture_tests<OnDispatch>("LayerConvPoolFixture", "nn/pool", "",
                                     run_pool_case<OnDispatch>);
  return true;
}();

}  // namespace
}  // namespace ember::test::layer_conv
