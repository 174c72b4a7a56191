// Conv1d/2d/3d, ConvTranspose1d/2d/3d and DeformConv2d against PyTorch (nn/conv.json from
// tests/fixtures/gen_nn_conv.py): the layer is built from the case's config (JSON, through
// EMBER_CONFIG), its state_dict paths/shapes and num_params must equal torch's, its Params
// are set to torch's values, and the output and the gradients of sum(out * w) with respect to
// the input(s) and every Param must match within rel 1e-4 / abs 1e-5. On Autodiff<Cpu> and
// on Dispatch (cpu+autodiff).
#include <gtest/gtest.h>

#include <string>

#include "ember/nn/conv.hpp"
#include "ember/nn/conv_transpose.hpp"
#include "ember/nn/deform_conv.hpp"
#include "layer_conv_support.hpp"

namespace ember::test::layer_conv {
namespace {

template <class Cfg, std::size_t D, class On>
void run_simple(const FixtureCase& c) {
  using B = typename On::B;
  auto m = nn::config_from_json<Cfg>(c.at("config")).template init<B>(On::device());
  check_module_case<D, On>(c, m);
}

template <class On>
void run_conv_case(const FixtureCase& c) {
  using B = typename On::B;
  const std::string layer = c.param<std::string>("layer");
  if (layer == "conv1d") {
    run_simple<nn::Conv1dConfig, 3, On>(c);
  } else if (layer == "conv2d") {
    run_simple<nn::Conv2dConfig, 4, On>(c);
  } else if (layer == "conv3d") {
    run_simple<nn::Conv3dConfig, 5, On>(c);
  } else if (layer == "conv_transpose1d") {
    run_simple<nn::ConvTranspose1dConfig, 3, On>(c);
  } else if (layer == "conv_transpose2d") {
    run_simple<nn::ConvTranspose2dConfig, 4, On>(c);
  } else if (layer == "conv_transpose3d") {
    run_simple<nn::ConvTranspose3dConfig, 5, On>(c);
  } else if (layer == "deform_conv2d") {
    auto m =
        nn::config_from_json<nn::DeformConv2dConfig>(c.at("config")).template init<B>(On::device());
    check_and_load_params(c, m, On::device());
    if (::testing::Test::HasFatalFailure()) return;
    Inputs<B> in{c, On::device(), {}};
    auto x = in.template leaf<4>("x");
    auto offset = in.template leaf<4>("offset");
    std::optional<Tensor<B, 4>> mask;
    if (c.has("mask")) mask = in.template leaf<4>("mask");
    in.check(m, m.forward(x, offset, mask));
  } else {
    FAIL() << "unknown layer " << layer;
  }
}

[[maybe_unused]] const bool registered = [] {
  register_fixture_tests<OnAutodiffCpu>("LayerConvFixture", "nn/conv", "",
                                        run_conv_case<OnAutodiffCpu>);
  register_fixture_tests<OnDispatch>("LayerConvFixture", "nn/conv", "", run_conv_case<OnDispatch>);
  return true;
}();

}  // namespace
}  // namespace ember::test::layer_conv
