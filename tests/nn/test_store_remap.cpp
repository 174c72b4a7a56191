// Key remapping by regex, format detection, and read_weights (selection + remapping over
// both formats).
#include <gtest/gtest.h>

#include "ember/store/pytorch.hpp"
#include "ember/store/safetensors.hpp"
#include "ember/store/weights.hpp"
#include "store_test_util.hpp"

namespace ember::test::store {
namespace {

using ember::store::KeyRemap;
using ember::store::NamedTensors;

NamedTensors named(std::vector<std::string> names) {
  NamedTensors t;
  float v = 0;
  for (auto& n : names)
    t.tensors.emplace_back(std::move(n), TensorData(std::vector<float>{v++}, Shape{1}));
  return t;
}

TEST(StoreRemap, RulesApplyInOrderWithGroups) {
  const KeyRemap rules{{"^module\\.", ""}, {"^fc(\\d)\\.", "layers.$1."}, {"\\.gamma$", ".weight"}};
  EXPECT_EQ(ember::store::remap_key("module.fc1.weight", rules), "layers.1.weight");
  EXPECT_EQ(ember::store::remap_key("module.bn.gamma", rules), "bn.weight");
  EXPECT_EQ(ember::store::remap_key("head.bias", rules), "head.bias");
  // Every match is replaced, and later rules see earlier results.
  EXPECT_EQ(ember::store::remap_key("a.a.a", {{"a", "b"}, {"^b", "c"}}), "c.b.b");

  NamedTensors t = named({"module.fc1.weight", "module.fc2.bias", "module.bn.gamma"});
  ember::store::remap_keys(t, rules);
  EXPECT_EQ(t.names(), (std::vector<std::string>{"layers.1.weight", "layers.2.bias", "bn.weight"}));
  EXPECT_EQ(t.find("layers.2.bias")->to_vec<float>(), std::vector<float>{1});  // data follows
}

TEST(StoreRemap, ErrorsLeaveTheTensorsUnchanged) {
  NamedTensors t = named({"enc.w", "dec.w"});
  EMBER_EXPECT_THROW_MSG(ember::store::remap_keys(t, {{"^(enc|dec)\\.", ""}}), ValueError,
                         "the keys 'enc.w' and 'dec.w' both map to 'w'");
  EMBER_EXPECT_THROW_MSG(ember::store::remap_keys(t, {{"(unclosed", ""}}), ValueError,
                         "invalid regex '(unclosed'");
  EMBER_EXPECT_THROW_MSG(ember::store::remap_keys(t, {{".*", ""}}), ValueError,
                         "the key 'enc.w' maps to an empty name");
  EXPECT_EQ(t.names(), (std::vector<std::string>{"enc.w", "dec.w"}));
  EMBER_EXPECT_THROW_MSG(std::move(named({"x", "x"})).into_map(), ValueError, "'x' appears twice");
}

TEST(StoreWeights, DetectsTheFormatByExtensionOrContent) {
  using ember::store::WeightsFormat;
  ScratchDir dir;
  EXPECT_EQ(ember::store::detect_format(fixture_path("store_dtypes.pt")), WeightsFormat::PyTorch);
  EXPECT_EQ(ember::store::detect_format(fixture_path("store_dtypes.safetensors")),
            WeightsFormat::Safetensors);
  // Other extensions: sniffed.
  fs::copy_file(fixture_path("store_dtypes.pt"), dir / "weights.bin");
  fs::copy_file(fixture_path("store_dtypes.safetensors"), dir / "weights.dat");
  EXPECT_EQ(ember::store::detect_format(dir / "weights.bin"), WeightsFormat::PyTorch);
  EXPECT_EQ(ember::store::detect_format(dir / "weights.dat"), WeightsFormat::Safetensors);
  expect_eq(*ember::store::read_weights(dir / "weights.bin").find("w.bf16"),
            *ember::store::read_weights(dir / "weights.dat").find("w.bf16"));
  // A header of 0x180 bytes: the file starts with 0x80 0x01, as a pickle would.
  std::string header = R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  header.resize(0x180, ' ');
  Bytes odd{0x80, 0x01, 0, 0, 0, 0, 0, 0};
  odd.insert(odd.end(), header.begin(), header.end());
  odd.push_back(42);
  write_bytes(dir / "odd.weights", odd);
  EXPECT_EQ(ember::store::detect_format(dir / "odd.weights"), WeightsFormat::Safetensors);
  EXPECT_EQ(ember::store::read_weights(dir / "odd.weights").find("x")->to_vec<int>(),
            std::vector<int>{42});
  write_bytes(dir / "notes.txt", text("hello, world"));
  EMBER_EXPECT_THROW_MSG(ember::store::detect_format(dir / "notes.txt"), IoError,
                         "unrecognised weights format");
  EMBER_EXPECT_THROW_MSG(ember::store::detect_format(dir / "absent.bin"), IoError,
                         "[detect_format] '" + (dir / "absent.bin").string() +
                             "': cannot open: No such file or directory");
}

TEST(StoreWeights, DirectoriesAreNamedAsSuch) {
  // A folder given as a weights file, whatever its name, is reported as a folder.
  ScratchDir dir;
  for (const auto& [name, op] :
       {std::pair{"w.safetensors", "read_safetensors"}, std::pair{"w.pt", "read_pytorch"},
        std::pair{"w.pth", "read_pytorch"}, std::pair{"w", "detect_format"}}) {
    SCOPED_TRACE(name);
    fs::create_directories(dir / name);
    const std::string want =
        std::string("[") + op + "] '" + (dir / name).string() + "' is a directory";
    EMBER_EXPECT_THROW_MSG(ember::store::read_weights(dir / name), IoError, want);
  }
  EMBER_EXPECT_THROW_MSG(ember::store::read_safetensors(dir / "w.pt"), IoError,
                         "[read_safetensors] '" + (dir / "w.pt").string() + "' is a directory");
  EMBER_EXPECT_THROW_MSG(ember::store::read_pytorch(dir / "w"), IoError,
                         "[read_pytorch] '" + (dir / "w").string() + "' is a directory");
}

TEST(StoreWeights, SelectAndRemapOverBothFormats) {
  const KeyRemap remap{{"^fc\\.", "linear."}, {"^bn\\.", "norm."}};
  const auto pt = ember::store::read_weights(fixture_path("store_checkpoint.pt"),
                                             {.select = "model", .remap = remap});
  const auto st = ember::store::read_weights(fixture_path("store_checkpoint.safetensors"),
                                             {.select = "model", .remap = remap});
  const std::vector<std::string> want{"linear.weight",
                                      "linear.bias",
                                      "norm.weight",
                                      "norm.bias",
                                      "norm.running_mean",
                                      "norm.running_var",
                                      "norm.num_batches_tracked"};
  EXPECT_EQ(pt.names(), want);
  ASSERT_EQ(st.tensors.size(), want.size());
  const auto& model = load_fixture("nn/store").at("cases").at("checkpoint").at("model");
  for (const auto& name : want) {
    SCOPED_TRACE(name);
    ASSERT_NE(st.find(name), nullptr);
    const auto original =
        name.rfind("linear.", 0) == 0 ? "fc." + name.substr(7) : "bn." + name.substr(5);
    expect_eq(*pt.find(name), fixture_tensor(model.at("tensors").at(original)));
    expect_eq(*st.find(name), fixture_tensor(model.at("tensors").at(original)));
  }
  EXPECT_EQ(st.metadata.at("epoch"), "3");
  EMBER_EXPECT_THROW_MSG(ember::store::read_weights(fixture_path("store_checkpoint.safetensors"),
                                                    {.select = "nothing", .remap = {}}),
                         IoError, "no tensor name starts with 'nothing.'");
}

}  // namespace
}  // namespace ember::test::store
