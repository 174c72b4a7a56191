// End to end: a PyTorch-trained small CNN (conv-bn-relu-pool x2, linear) and a small
// transformer encoder model (embedding, 2 encoder layers, linear head), saved by
// tests/fixtures/gen_nn_store.py as .safetensors and .pt, load into the equivalent Ember
// modules with no adapter and give PyTorch's eval-mode outputs within 1e-5; Ember's own
// files round-trip; bad files and misfitting state dicts leave the model unchanged.
#include <gtest/gtest.h>

#include "ember/autodiff/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/conv.hpp"
#include "ember/nn/embedding.hpp"
#include "ember/nn/linear.hpp"
#include "ember/nn/norm.hpp"
#include "ember/nn/pool.hpp"
#include "ember/nn/transformer.hpp"
#include "ember/store/pytorch.hpp"
#include "ember/store/safetensors.hpp"
#include "ember/tensor/activation.hpp"
#include "nn_device.hpp"
#include "store_test_util.hpp"

namespace ember::test::store {
namespace {

using ember::store::NamedTensors;

// ---- the models (PyTorch's module structure, hence its state dict keys) ------------------

template <Backend B = Dispatch>
struct Cnn {
  nn::Conv2d<B> conv1;
  nn::BatchNorm<B> bn1;
  nn::Conv2d<B> conv2;
  nn::BatchNorm<B> bn2;
  nn::Linear<B> fc;
  nn::MaxPool2d pool;
  EMBER_MODULE(conv1, bn1, conv2, bn2, fc, pool)

  /// [N, 3, 8, 8] -> [N, 5]
  Tensor<B, 2> forward(const Tensor<B, 4>& x) const {
    auto h = pool.forward(activation::relu(bn1.forward(conv1.forward(x))));
    h = pool.forward(activation::relu(bn2.forward(conv2.forward(h))));
    return fc.forward(h.template flatten<2>(1, 3));
  }

  static Cnn init(const typename B::Device& d) {
    const auto conv = [&](std::int64_t in, std::int64_t out) {
      return nn::Conv2dConfig{.channels = {in, out},
                              .kernel_size = {3, 3},
                              .padding = nn::PaddingConfig2d::explicit_(1, 1)}
          .template init<B>(d);
    };
    return Cnn{conv(3, 4),
               nn::BatchNormConfig{.num_features = 4}.template init<B>(d),
               conv(4, 8),
               nn::BatchNormConfig{.num_features = 8}.template init<B>(d),
               nn::LinearConfig{.d_input = 32, .d_output = 5}.template init<B>(d),
               nn::MaxPool2dConfig{.kernel_size = {2, 2}}.init()};
  }
};

template <Backend B = Dispatch>
struct Encoder {
  nn::Embedding<B> embed;
  nn::TransformerEncoder<B> encoder;
  nn::Linear<B> head;
  EMBER_MODULE(embed, encoder, head)

  /// tokens [N, S] -> [N, S, 3]
  Tensor<B, 3> forward(const Tensor<B, 2, Int>& tokens) const {
    return head.forward(encoder.forward(nn::TransformerEncoderInput<B>{embed.forward(tokens)}));
  }

  static Encoder init(const typename B::Device& d) {
    return Encoder{nn::EmbeddingConfig{.n_embedding = 11, .d_model = 16}.template init<B>(d),
                   nn::TransformerEncoderConfig{.d_model = 16,
                                                .d_ff = 32,
                                                .n_heads = 2,
                                                .n_layers = 2,
                                                .dropout = 0.1,
                                                .activation = nn::TransformerActivation::Relu}
                       .template init<B>(d),
                   nn::LinearConfig{.d_input = 16, .d_output = 3}.template init<B>(d)};
  }
};

template <class B>
typename B::Device device() {
  if constexpr (std::is_same_v<B, Dispatch>) {
    return ember::test::nn_dispatch_device();
  } else {
    return typename B::Device{};
  }
}

const json& store_case(const std::string& name) {
  return load_fixture("nn/store").at("cases").at(name);
}

std::vector<std::string> names_of(const json& list) {
  std::vector<std::string> out;
  for (const auto& n : list) out.push_back(n.get<std::string>());
  return out;
}

std::vector<std::string> keys(const nn::StateDict& sd) {
  std::vector<std::string> out;
  for (const auto& kv : sd) out.push_back(kv.first);
  return out;
}

// The state dicts hold the same names, shapes, dtypes and bytes.
void expect_same_state(const nn::StateDict& a, const nn::StateDict& b) {
  ASSERT_EQ(keys(a), keys(b));
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(a[i].first);
    expect_eq(a[i].second, b[i].second);
  }
}

const Tolerance kWithin1e5 = Tolerance::rel_abs(0.0, 1e-5);

template <class B>
TensorData cnn_output(Cnn<B>& m) {
  m.eval();
  const auto x = Tensor<B, 4>::from_data(fixture_tensor(store_case("cnn").at("x")), device<B>());
  return m.forward(x).into_data();
}

template <class B>
TensorData encoder_output(Encoder<B>& m) {
  m.eval();
  const auto tokens = Tensor<B, 2, Int>::from_data(
      fixture_tensor(store_case("transformer").at("tokens")), device<B>());
  return m.forward(tokens).into_data();
}

template <class B>
class StoreEndToEnd : public ::testing::Test {};

struct BackendNames {
  template <class B>
  static std::string GetName(int) {
    return std::is_same_v<B, Dispatch> ? "Dispatch" : "AutodiffCpu";
  }
};
using Backends = ::testing::Types<Autodiff<Cpu>, Dispatch>;
TYPED_TEST_SUITE(StoreEndToEnd, Backends, BackendNames);

TYPED_TEST(StoreEndToEnd, CnnMatchesPyTorch) {
  using B = TypeParam;
  const auto& c = store_case("cnn");
  for (const char* file : {"store_cnn.safetensors", "store_cnn.pt"}) {
    SCOPED_TRACE(file);
    auto m = Cnn<B>::init(device<B>());
    // The Ember module's keys are PyTorch's, in the same order.
    EXPECT_EQ(keys(m.state_dict()), names_of(c.at("names")));
    const nn::LoadReport r = m.load(fixture_path(file));
    EXPECT_EQ(r.loaded.size(), c.at("names").size());
    EXPECT_TRUE(r.missing.empty());
    EXPECT_TRUE(r.unexpected.empty());
    expect_approx(cnn_output(m), fixture_tensor(c.at("y")), kWithin1e5);
    // Trained running statistics came along (not the init values 0 / 1).
    EXPECT_NE(m.bn1.running_var.val().into_data().template to_vec<float>()[0], 1.0f);
    EXPECT_EQ(m.bn2.num_batches_tracked.val().into_data().template to_vec<std::int64_t>(),
              std::vector<std::int64_t>{5});
  }
}

TYPED_TEST(StoreEndToEnd, TransformerMatchesPyTorch) {
  using B = TypeParam;
  const auto& c = store_case("transformer");
  for (const char* file : {"store_transformer.safetensors", "store_transformer.pt"}) {
    SCOPED_TRACE(file);
    auto m = Encoder<B>::init(device<B>());
    EXPECT_EQ(keys(m.state_dict()), names_of(c.at("names")));
    const nn::LoadReport r = m.load(fixture_path(file));
    EXPECT_EQ(r.loaded.size(), c.at("names").size());
    expect_approx(encoder_output(m), fixture_tensor(c.at("y")), kWithin1e5);
  }
}

TYPED_TEST(StoreEndToEnd, SavedFilesRoundTripAndMatchPyTorchsLayout) {
  using B = TypeParam;
  ScratchDir dir;
  auto m = Cnn<B>::init(device<B>());
  m.load(fixture_path("store_cnn.pt"));
  const std::string config = R"({"channels":[3,4,8],"classes":5})";
  m.save(dir / "cnn.safetensors", {{"config", config}});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"cnn.safetensors"});

  // The file holds PyTorch's names, shapes, dtypes (num_batches_tracked: i64, shape []) and
  // values: the same tensors as the file Python's safetensors wrote.
  const NamedTensors ours = ember::store::read_safetensors(dir / "cnn.safetensors");
  const NamedTensors theirs = ember::store::read_safetensors(fixture_path("store_cnn.safetensors"));
  EXPECT_EQ(ours.metadata.at("config"), config);
  EXPECT_EQ(ours.names(), names_of(store_case("cnn").at("names")));
  for (const auto& [name, data] : ours.tensors) {
    SCOPED_TRACE(name);
    expect_eq(data, *theirs.find(name));
  }
  EXPECT_EQ(ours.find("bn1.num_batches_tracked")->shape(), Shape{});

  auto fresh = Cnn<B>::init(device<B>());
  fresh.load(dir / "cnn.safetensors");
  expect_same_state(fresh.state_dict(), m.state_dict());
  expect_approx(cnn_output(fresh), fixture_tensor(store_case("cnn").at("y")), kWithin1e5);

  auto enc = Encoder<B>::init(device<B>());
  enc.load(fixture_path("store_transformer.pt"));
  enc.save(dir / "enc.safetensors");
  auto enc2 = Encoder<B>::init(device<B>());
  enc2.load(dir / "enc.safetensors");
  expect_same_state(enc2.state_dict(), enc.state_dict());
}

// ---- bad files: the documented error, the model unchanged ---------------------------------

template <class B, class E>
void expect_load_fails(Cnn<B>& m, const fs::path& file, const std::string& what,
                       const nn::LoadOptions& options = {}) {
  const nn::StateDict before = m.state_dict();
  EMBER_EXPECT_THROW_MSG(m.load(file, options), E, what);
  expect_same_state(m.state_dict(), before);
}

TYPED_TEST(StoreEndToEnd, BadFilesLeaveTheModelUnchanged) {
  using B = TypeParam;
  ScratchDir dir;
  auto m = Cnn<B>::init(device<B>());
  const NamedTensors good = ember::store::read_safetensors(fixture_path("store_cnn.safetensors"));
  const auto with = [&](const std::string& name, auto&& edit) {
    NamedTensors t = good;
    edit(t);
    ember::store::write_safetensors(dir / name, t);
    return dir / name;
  };
  const auto index_of = [](const NamedTensors& t, const std::string& key) {
    for (std::size_t i = 0; i < t.tensors.size(); ++i) {
      if (t.tensors[i].first == key) return i;
    }
    return t.tensors.size();
  };

  // Truncated files (both formats).
  const Bytes st = read_bytes(fixture_path("store_cnn.safetensors"));
  write_bytes(dir / "short.safetensors", Bytes(st.begin(), st.end() - 100));
  expect_load_fails<B, IoError>(m, dir / "short.safetensors", "truncated");
  const Bytes pt = read_bytes(fixture_path("store_cnn.pt"));
  write_bytes(dir / "short.pt",
              Bytes(pt.begin(), pt.begin() + static_cast<std::ptrdiff_t>(pt.size() / 2)));
  expect_load_fails<B, IoError>(m, dir / "short.pt", "not a valid zip archive");
  // A flipped byte in the data of the file's last storage: the CRC check fails before any
  // parameter is set (issue 19: the earlier storages used to be loaded already).
  {
    const NamedTensors tensors = ember::store::read_pytorch(fixture_path("store_cnn.pt"));
    const std::vector<std::uint8_t>& last = tensors.find("fc.bias")->bytes();
    const auto pos = std::search(pt.begin(), pt.end(), last.begin(), last.end());
    ASSERT_NE(pos, pt.end());
    Bytes crc = pt;
    crc[static_cast<std::size_t>(pos - pt.begin()) + 1] ^= 0x40;
    write_bytes(dir / "crc.pt", crc);
    expect_load_fails<B, IoError>(m, dir / "crc.pt", "corrupt zip entry 'store_cnn/data/");
  }
  // Module::save writes safetensors only: a PyTorch extension is refused, nothing written.
  EMBER_EXPECT_THROW_MSG(m.save(dir / "model.pt"), ValueError,
                         "[save] '" + (dir / "model.pt").string() +
                             "': Module::save writes safetensors, not the .pt format");
  for (const char* name : {"model.PT", "model.pth.tar", "model.onnx", "model.Bin"}) {
    EMBER_EXPECT_THROW_MSG(m.save(dir / name), ValueError, "Module::save writes safetensors");
    EXPECT_FALSE(fs::exists(dir / name)) << name;
  }
  EXPECT_FALSE(fs::exists(dir / "model.pt"));
  // A safetensors file under a .pt name (written by hand, or by an older Ember) loads by its
  // content.
  std::filesystem::copy_file(fixture_path("store_cnn.safetensors"), dir / "st.pt");
  {
    auto other = Cnn<B>::init(device<B>());
    other.load(dir / "st.pt");
    auto ref = Cnn<B>::init(device<B>());
    ref.load(fixture_path("store_cnn.safetensors"));
    expect_same_state(other.state_dict(), ref.state_dict());
  }
  // A corrupted header.
  Bytes flipped = st;
  flipped[8] = '[';
  write_bytes(dir / "flipped.safetensors", flipped);
  expect_load_fails<B, IoError>(m, dir / "flipped.safetensors", "corrupt header");

  // Wrong dtype: an integer tensor where the model has a float parameter.
  const auto wrong_dtype = with("dtype.safetensors", [&](NamedTensors& t) {
    auto& d = t.tensors[index_of(t, "bn1.weight")].second;
    d = d.convert(DType::I64);
  });
  expect_load_fails<B, nn::LoadError>(m, wrong_dtype,
                                      "bn1.weight: dtype i64 in the file, f32 in the model");
  // Wrong shapes.
  const auto wrong_shape = with("shape.safetensors", [&](NamedTensors& t) {
    t.tensors[index_of(t, "conv1.weight")].second =
        TensorData::full(Shape{4, 3, 2, 2}, 0.5, DType::F32);
  });
  expect_load_fails<B, nn::LoadError>(
      m, wrong_shape, "conv1.weight: shape [4, 3, 2, 2] in the file, [4, 3, 3, 3] in the model");
  // Missing and unexpected keys, all listed in one error.
  const auto renamed = with("keys.safetensors", [&](NamedTensors& t) {
    t.tensors.erase(t.tensors.begin() + static_cast<std::ptrdiff_t>(index_of(t, "fc.bias")));
    t.tensors[index_of(t, "bn2.bias")].first = "bn2.beta";
  });
  expect_load_fails<B, nn::LoadError>(m, renamed, "missing keys (2):\n    bn2.bias\n    fc.bias");
  expect_load_fails<B, nn::LoadError>(m, renamed, "unexpected keys (1):\n    bn2.beta");
  // Partial loading allows them; a remap fixes the rename.
  auto report = m.load(renamed, {.strict = false, .error_on_unexpected = false});
  EXPECT_EQ(report.missing, (std::vector<std::string>{"bn2.bias", "fc.bias"}));
  EXPECT_EQ(report.unexpected, std::vector<std::string>{"bn2.beta"});
  report = m.load(renamed, {.strict = false, .remap = {{"\\.beta$", ".bias"}}});
  EXPECT_EQ(report.missing, std::vector<std::string>{"fc.bias"});
  EXPECT_TRUE(report.unexpected.empty());
}

// ---- a nested checkpoint: select + remap ---------------------------------------------------

template <Backend B = Dispatch>
struct Renamed {
  nn::Linear<B> linear;
  nn::BatchNorm<B> norm;
  EMBER_MODULE(linear, norm)
};

TYPED_TEST(StoreEndToEnd, CheckpointSubDictWithRemap) {
  using B = TypeParam;
  const auto d = device<B>();
  Renamed<B> m{nn::LinearConfig{.d_input = 3, .d_output = 2}.template init<B>(d),
               nn::BatchNormConfig{.num_features = 2}.template init<B>(d)};
  const nn::LoadOptions options{.remap = {{"^fc\\.", "linear."}, {"^bn\\.", "norm."}},
                                .select = "model"};
  const auto& want = store_case("checkpoint").at("model").at("tensors");
  for (const char* file : {"store_checkpoint.pt", "store_checkpoint.safetensors"}) {
    SCOPED_TRACE(file);
    m.load(fixture_path(file), options);
    expect_eq(m.linear.weight.val().into_data(), fixture_tensor(want.at("fc.weight")));
    expect_eq(m.norm.running_mean.val().into_data(), fixture_tensor(want.at("bn.running_mean")));
  }
  // Without select the keys carry the "model." and "ema.model." prefixes: nothing fits.
  const nn::StateDict before = m.state_dict();
  EMBER_EXPECT_THROW_MSG(m.load(fixture_path("store_checkpoint.pt")), nn::LoadError,
                         "missing keys (7)");
  expect_same_state(m.state_dict(), before);
}

}  // namespace
}  // namespace ember::test::store
