// Porting friction found by porting a PyTorch model by hand (issue 19): ember/nn.hpp alone
// reads weights files and load_state_dict takes what the reader returns; Linear raises on a
// dtype mismatch as PyTorch does; a loss module given tensors of another backend.
#include <gtest/gtest.h>

#include <type_traits>

#include "ember/autodiff/cpu.hpp"
#include "ember/nn.hpp"  // the only ember include: the weights readers come with it
#include "store_test_util.hpp"

namespace ember::nn {
namespace {

using test::store::ScratchDir;

template <Backend B = Dispatch>
struct TwoLayers {
  Linear<B> fc1, fc2;
  EMBER_MODULE(fc1, fc2)
};

template <class B>
TwoLayers<B> make_two_layers(std::uint64_t seed) {
  B::seed(seed);
  return {LinearConfig{.d_input = 3, .d_output = 4}.init<B>(),
          LinearConfig{.d_input = 4, .d_output = 2}.init<B>()};
}

TEST(Porting, LoadStateDictTakesWhatTheWeightsReaderReturns) {
  ScratchDir dir;
  const auto saved = make_two_layers<Cpu>(1);
  saved.save(dir.path() / "w.safetensors", {{"note", "x"}});

  const store::NamedTensors file = store::read_weights(dir.path() / "w.safetensors");
  auto model = make_two_layers<Cpu>(2);
  const LoadReport r = load_state_dict(model, file);
  EXPECT_EQ(r.loaded.size(), 4u);
  model.fc2.weight.val().into_data().assert_eq(saved.fc2.weight.val().into_data());

  auto other = make_two_layers<Cpu>(3);
  other.load_state_dict(store::read_safetensors(dir.path() / "w.safetensors"));
  other.fc1.bias->val().into_data().assert_eq(saved.fc1.bias->val().into_data());

  // The reader's options and the loader's options together: a sub-dict, renamed.
  auto part = LinearConfig{.d_input = 3, .d_output = 4}.init<Cpu>();
  part.load_state_dict(store::read_weights(dir.path() / "w.safetensors", {.select = "fc1"}));
  part.weight.val().into_data().assert_eq(saved.fc1.weight.val().into_data());
}

TEST(Porting, LinearRaisesOnADtypeMismatch) {
  const auto fc = LinearConfig{.d_input = 3, .d_output = 2}.init<Cpu>();
  const auto x64 = Tensor<Cpu, 2>::ones({5, 3}, {}, DType::F64);
  EMBER_EXPECT_THROW_MSG(fc.forward(x64), DTypeError,
                         "[Linear] input of dtype f64 (shape [5, 3]) does not match the weight's "
                         "dtype f32");
  EXPECT_EQ(fc.forward(x64.cast(DType::F32)).dtype(), DType::F32);
  const auto fc64 = LinearConfig{.d_input = 3, .d_output = 2}.init<Cpu>();
  auto w64 = fc64;
  w64.weight = Param<Tensor<Cpu, 2>>(fc64.weight.val().cast(DType::F64));
  w64.bias = Param<Tensor<Cpu, 1>>(fc64.bias->val().cast(DType::F64));
  EXPECT_EQ(w64.forward(x64).dtype(), DType::F64);
}

TEST(Porting, LossModulesOfAnotherBackendPickTheDiagnosingOverload) {
  // MseLoss<> is made for Dispatch; Cpu tensors select the overload whose static_assert
  // explains .init<Cpu>() (tests/tools/test_link_lines.cpp compiles it and reads the
  // message). With the module made for Cpu, forward computes.
  using X = Tensor<Cpu, 2>;
  static_assert(std::is_void_v<decltype(std::declval<const MseLoss<>&>().forward(
                    std::declval<const X&>(), std::declval<const X&>()))>);
  const auto mse = MseLossConfig{}.init<Cpu>();
  const X a = X::from_floats({{1, 2}}), b = X::from_floats({{3, 2}});
  EXPECT_DOUBLE_EQ(mse.forward(a, b).into_scalar(), 2.0);
}

}  // namespace
}  // namespace ember::nn
