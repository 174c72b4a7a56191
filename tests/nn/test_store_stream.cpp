// store::WeightsReader (tensor by tensor) against read_weights on every weights fixture, and
// nn::load streaming a file into a module: one tensor of memory beyond the model (issue 19).
#include <gtest/gtest.h>

#include <vector>

#include "ember/cpu/cpu.hpp"
#include "ember/nn.hpp"
#include "store_test_util.hpp"

namespace ember::store {
namespace {

using test::store::fixture_path;
using test::store::ScratchDir;

/// Every tensor of `path` through WeightsReader: names, dtypes, shapes and bytes.
NamedTensors read_by_tensor(const std::filesystem::path& path, const ReadOptions& options = {}) {
  WeightsReader r(path, options);
  NamedTensors out;
  TensorData buffer;  // one buffer for every read, as nn::load does
  for (std::size_t i = 0; i < r.size(); ++i) {
    r.read(i, buffer);
    EXPECT_EQ(buffer.dtype(), r.dtype(i)) << r.name(i);
    EXPECT_EQ(buffer.shape(), r.shape(i)) << r.name(i);
    out.tensors.emplace_back(r.name(i), buffer);
  }
  return out;
}

void expect_same(const NamedTensors& got, const NamedTensors& want) {
  ASSERT_EQ(got.names(), want.names());
  for (std::size_t i = 0; i < want.tensors.size(); ++i) {
    EXPECT_EQ(got.tensors[i].second, want.tensors[i].second) << want.tensors[i].first;
  }
}

TEST(WeightsReader, ReadsWhatReadWeightsReads) {
  for (const char* file :
       {"store_cnn.pt", "store_cnn.safetensors", "store_dtypes.pt", "store_dtypes.safetensors",
        "store_views.pt", "store_views.safetensors", "store_transformer.pt",
        "store_transformer.safetensors", "store_module.pt", "store_namespace.pt"}) {
    SCOPED_TRACE(file);
    NamedTensors want;
    try {
      want = read_weights(fixture_path(file));
    } catch (const Error& e) {
      // A file read_weights refuses is refused the same way when opened.
      EXPECT_THROW(WeightsReader r(fixture_path(file)), Error) << e.what();
      continue;
    }
    expect_same(read_by_tensor(fixture_path(file)), want);
  }
}

TEST(WeightsReader, SelectAndRemapAsReadWeights) {
  const ReadOptions pt{.select = "model", .remap = {{"^fc\\.", "head."}}};
  expect_same(read_by_tensor(fixture_path("store_checkpoint.pt"), pt),
              read_weights(fixture_path("store_checkpoint.pt"), pt));
  const ReadOptions st{.select = "model"};
  expect_same(read_by_tensor(fixture_path("store_checkpoint.safetensors"), st),
              read_weights(fixture_path("store_checkpoint.safetensors"), st));
  EMBER_EXPECT_THROW_MSG(WeightsReader(fixture_path("store_cnn.safetensors"), {.select = "nope"}),
                         IoError, "no tensor name starts with 'nope.'");
}

template <Backend B = Cpu>
struct Stack {
  std::vector<nn::Param<Tensor<B, 2>>> w;
  EMBER_MODULE(w)
};

Stack<> make_stack(double value) {
  Stack<> s;
  for (int i = 0; i < 8; ++i) s.w.emplace_back(Tensor<Cpu, 2>::full({256, 256}, value + i));
  return s;
}

TEST(WeightsReader, ModuleLoadNeedsOneTensorOfMemoryBeyondTheModel) {
  ScratchDir dir;
  make_stack(1.0).save(dir.path() / "w.safetensors");
  auto m = make_stack(0.0);
  const std::size_t tensor_bytes = 256 * 256 * 4;
  cpu::reset_peak_memory();
  const std::size_t before = cpu::memory_stats().live_bytes;
  m.load(dir.path() / "w.safetensors");
  const auto after = cpu::memory_stats();
  // Each value replaces its leaf before the next is made (a load that held every new value
  // until the end needed a second model's memory: 8 tensors here).
  EXPECT_LE(after.peak_bytes - before, tensor_bytes);
  EXPECT_EQ(after.live_bytes, before);
  EXPECT_EQ(m.w[7].val().into_data().to_vec<float>()[5], 8.0f);
}

}  // namespace
}  // namespace ember::store
