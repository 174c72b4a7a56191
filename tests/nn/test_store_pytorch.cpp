// PyTorch .pt files written by torch.save (tests/fixtures/gen_nn_store.py) read without
// Python: every dtype, views of shared storages, parameters, nested checkpoints, pickle
// protocols 2 and 4, and the errors for files that are not state dicts or are damaged.
#include <gtest/gtest.h>

#include "ember/store/pytorch.hpp"
#include "ember/store/safetensors.hpp"
#include "store_test_util.hpp"

namespace ember::test::store {
namespace {

using ember::store::NamedTensors;
using ember::store::PyTorchOptions;
using ember::store::read_pytorch;

const json& store_case(const std::string& name) {
  return load_fixture("nn/store").at("cases").at(name);
}

// `t` holds exactly the tensors of the fixture object `expected` ({"names": [...],
// "tensors": {name: tensor}}), with `prefix` before each name, in the listed order.
void expect_tensors(const NamedTensors& t, const json& expected, const std::string& prefix = "") {
  std::vector<std::string> want;
  for (const auto& n : expected.at("names")) want.push_back(prefix + n.get<std::string>());
  EXPECT_EQ(t.names(), want);
  for (const auto& n : expected.at("names")) {
    const auto name = n.get<std::string>();
    SCOPED_TRACE(prefix + name);
    const TensorData* got = t.find(prefix + name);
    ASSERT_NE(got, nullptr);
    expect_eq(*got, fixture_tensor(expected.at("tensors").at(name)));
  }
}

TEST(StorePyTorch, EveryDtypeExact) {
  for (const char* file : {"store_dtypes.pt", "store_dtypes_p4.pt"}) {
    SCOPED_TRACE(file);
    const NamedTensors t = read_pytorch(fixture_path(file));
    expect_tensors(t, store_case("dtypes"));
    EXPECT_TRUE(t.metadata.empty());
    EXPECT_EQ(t.find("w.scalar")->shape(), Shape{});
    EXPECT_EQ(t.find("w.empty")->shape(), (Shape{0, 3}));
  }
}

TEST(StorePyTorch, SameTensorsAsTheSafetensorsFile) {
  const NamedTensors pt = read_pytorch(fixture_path("store_dtypes.pt"));
  const NamedTensors st = ember::store::read_safetensors(fixture_path("store_dtypes.safetensors"));
  for (const auto& [name, data] : pt.tensors) {
    SCOPED_TRACE(name);
    ASSERT_NE(st.find(name), nullptr);
    EXPECT_EQ(st.find(name)->dtype(), data.dtype());
    EXPECT_EQ(st.find(name)->bytes(), data.bytes());
  }
}

TEST(StorePyTorch, ViewsOfSharedStoragesAndParameters) {
  const NamedTensors t = read_pytorch(fixture_path("store_views.pt"));
  expect_tensors(t, store_case("views"));
  // Spot checks by hand: base = arange(24).reshape(4, 6).
  EXPECT_EQ(t.find("transposed")->shape(), (Shape{6, 4}));
  EXPECT_EQ(t.find("transposed")->to_vec<float>()[1], 6.0f);
  EXPECT_EQ(t.find("block")->to_vec<float>(), (std::vector<float>{8, 9, 10, 14, 15, 16}));
  EXPECT_EQ(t.find("strided")->to_vec<float>(), (std::vector<float>{0, 3, 12, 15}));
  EXPECT_EQ(t.find("element")->to_vec<float>(), std::vector<float>{15});
  EXPECT_EQ(t.find("expanded")->to_vec<float>(),
            (std::vector<float>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(t.find("narrow_i64")->to_vec<std::int64_t>(), (std::vector<std::int64_t>{3, 4, 5, 6}));
  // The safetensors copy (made contiguous in Python) holds the same values.
  const NamedTensors st = ember::store::read_safetensors(fixture_path("store_views.safetensors"));
  for (const auto& [name, data] : t.tensors) {
    SCOPED_TRACE(name);
    expect_eq(data, *st.find(name));
  }
}

TEST(StorePyTorch, CheckpointFlattenedWithDottedKeys) {
  const NamedTensors t = read_pytorch(fixture_path("store_checkpoint.pt"));
  const json& c = store_case("checkpoint");
  std::vector<std::string> want;
  for (const auto& n : c.at("model").at("names")) want.push_back("model." + n.get<std::string>());
  for (const auto& n : c.at("optimizer").at("names")) want.push_back(n.get<std::string>());
  for (const auto& n : c.at("ema_model").at("names"))
    want.push_back("ema.model." + n.get<std::string>());
  EXPECT_EQ(t.names(), want);  // "epoch", "lr", "name", "seed", "flags" are not tensors
  NamedTensors part;
  for (const auto& [name, data] : t.tensors) {
    if (name.rfind("optimizer.", 0) == 0) part.tensors.emplace_back(name, data);
  }
  expect_tensors(part, c.at("optimizer"));
  expect_eq(*t.find("model.fc.weight"),
            fixture_tensor(c.at("model").at("tensors").at("fc.weight")));
  expect_eq(*t.find("ema.model.bn.running_var"),
            fixture_tensor(c.at("ema_model").at("tensors").at("bn.running_var")));
}

TEST(StorePyTorch, SelectSubDict) {
  const json& c = store_case("checkpoint");
  expect_tensors(read_pytorch(fixture_path("store_checkpoint.pt"), {.select = "model"}),
                 c.at("model"));
  expect_tensors(read_pytorch(fixture_path("store_checkpoint.pt"), {.select = "ema.model"}),
                 c.at("ema_model"));
  EMBER_EXPECT_THROW_MSG(read_pytorch(fixture_path("store_checkpoint.pt"), {.select = "modle"}),
                         IoError,
                         "no entry 'modle' to select; the top-level keys are: model, optimizer, "
                         "epoch, name, lr, seed, flags, ema");
  EMBER_EXPECT_THROW_MSG(read_pytorch(fixture_path("store_checkpoint.pt"), {.select = "epoch"}),
                         UnsupportedError, "'epoch' is an int, not a dict of tensors");
}

TEST(StorePyTorch, UnknownObjectsAreNamed) {
  // {"model": state_dict, "args": argparse.Namespace(...)}: fine when "model" is selected.
  EMBER_EXPECT_THROW_MSG(read_pytorch(fixture_path("store_namespace.pt")), UnsupportedError,
                         "'args' holds an argparse.Namespace object");
  expect_tensors(read_pytorch(fixture_path("store_namespace.pt"), {.select = "model"}),
                 store_case("checkpoint").at("model"));
  // torch.save(module): a pickled nn.Module, not a state dict.
  EMBER_EXPECT_THROW_MSG(read_pytorch(fixture_path("store_module.pt")), UnsupportedError,
                         "holds a __main__.Small object (a whole pickled model?)");
}

TEST(StorePyTorch, DamagedFiles) {
  ScratchDir dir;
  const Bytes good = read_bytes(fixture_path("store_dtypes.pt"));
  for (std::size_t len : {std::size_t{0}, std::size_t{3}, good.size() / 2, good.size() - 1}) {
    SCOPED_TRACE(len);
    write_bytes(dir / "t.pt", Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len)));
    EMBER_EXPECT_THROW_MSG(read_pytorch(dir / "t.pt"), IoError, "not a valid zip archive");
  }
  // A flipped byte inside the first tensor record (f64 data): the CRC check catches it.
  const auto tensors = read_pytorch(fixture_path("store_dtypes.pt"));
  const auto& f64 = tensors.find("w.f64")->bytes();
  auto pos = std::search(good.begin(), good.end(), f64.begin(), f64.end());
  ASSERT_NE(pos, good.end());
  Bytes flipped = good;
  flipped[static_cast<std::size_t>(pos - good.begin()) + 3] ^= 0x10;
  write_bytes(dir / "f.pt", flipped);
  EMBER_EXPECT_THROW_MSG(read_pytorch(dir / "f.pt"), IoError,
                         "corrupt zip entry 'store_dtypes/data/");
  // Legacy (pre-1.6) files start with a pickle, not a zip header.
  write_bytes(dir / "legacy.pt", Bytes{0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc});
  EMBER_EXPECT_THROW_MSG(read_pytorch(dir / "legacy.pt"), UnsupportedError,
                         "legacy torch.save format");
  EMBER_EXPECT_THROW_MSG(read_pytorch(dir / "missing.pt"), IoError, "cannot open");
}

}  // namespace
}  // namespace ember::test::store
