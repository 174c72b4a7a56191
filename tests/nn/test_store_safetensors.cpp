// safetensors: round trips of every dtype, files written by Python's safetensors read back
// exactly, every kind of damaged file rejected with its documented error, atomic writes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include "ember/store/safetensors.hpp"
#include "store_test_util.hpp"

namespace ember::test::store {
namespace {

using ember::store::NamedTensors;
using ember::store::read_safetensors;
using ember::store::serialize_safetensors;
using ember::store::write_safetensors;

// One tensor of every dtype, a 0-dim one and an empty one, in a deliberately unsorted order.
NamedTensors every_dtype() {
  NamedTensors t;
  t.tensors.emplace_back("z.f64", TensorData(std::vector<double>{1.5, -2.25, 1e300}, Shape{3}));
  t.tensors.emplace_back("a.f32", TensorData(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3}));
  t.tensors.emplace_back("m.f16", TensorData(std::vector<f16>{f16(0.5f), f16(-65504.f)}, Shape{2}));
  t.tensors.emplace_back("b.bf16", TensorData(std::vector<bf16>{bf16(3.0f)}, Shape{1, 1}));
  t.tensors.emplace_back(
      "i64", TensorData(std::vector<std::int64_t>{-(std::int64_t{1} << 62), 7}, Shape{2}));
  t.tensors.emplace_back("i32", TensorData(std::vector<std::int32_t>{-5, 5}, Shape{2, 1}));
  t.tensors.emplace_back("i16", TensorData(std::vector<std::int16_t>{-32768, 32767}, Shape{2}));
  t.tensors.emplace_back("i8", TensorData(std::vector<std::int8_t>{-128}, Shape{}));
  t.tensors.emplace_back("u8", TensorData(std::vector<std::uint8_t>{0, 255, 7}, Shape{3}));
  t.tensors.emplace_back("bool", TensorData(std::vector<bool>{true, false}, Shape{2}));
  t.tensors.emplace_back("empty", TensorData(std::vector<float>{}, Shape{0, 4}));
  t.metadata = {{"config", R"({"d_model": 16})"}, {"format", "pt"}};
  return t;
}

void expect_same(const NamedTensors& a, const NamedTensors& b) {
  ASSERT_EQ(a.names(), b.names());
  EXPECT_EQ(a.metadata, b.metadata);
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    SCOPED_TRACE(a.tensors[i].first);
    expect_eq(a.tensors[i].second, b.tensors[i].second);
    EXPECT_EQ(a.tensors[i].second.bytes(), b.tensors[i].second.bytes());
  }
}

// A safetensors image with the given header text and data bytes.
Bytes image(const std::string& header, const Bytes& data = {}) {
  Bytes b(8);
  for (int i = 0; i < 8; ++i)
    b[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(header.size() >> (8 * i));
  b.insert(b.end(), header.begin(), header.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

// Expects read_safetensors on `bytes` (from memory and from a file) to throw E with `what`.
template <class E = IoError>
void expect_bad(const Bytes& bytes, const std::string& what) {
  EMBER_EXPECT_THROW_MSG(read_safetensors(bytes, "bad.safetensors"), E, what);
  ScratchDir dir;
  write_bytes(dir / "bad.safetensors", bytes);
  EMBER_EXPECT_THROW_MSG(read_safetensors(dir / "bad.safetensors"), E, what);
  EMBER_EXPECT_THROW_MSG(read_safetensors(dir / "bad.safetensors"), E, "bad.safetensors");
}

TEST(StoreSafetensors, RoundTripEveryDtypeInMemoryAndOnDisk) {
  const NamedTensors t = every_dtype();
  const Bytes image = serialize_safetensors(t);
  expect_same(read_safetensors(image), t);

  ScratchDir dir;
  write_safetensors(dir / "all.safetensors", t);
  EXPECT_EQ(read_bytes(dir / "all.safetensors"), image);
  expect_same(read_safetensors(dir / "all.safetensors"), t);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"all.safetensors"});
}

TEST(StoreSafetensors, LayoutFollowsTheFormat) {
  NamedTensors t;
  t.tensors.emplace_back("b", TensorData(std::vector<float>{1.0f}, Shape{1}));
  t.tensors.emplace_back("a", TensorData(std::vector<std::uint8_t>{9, 8}, Shape{2}));
  const Bytes b = serialize_safetensors(t);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | b[static_cast<std::size_t>(i)];
  EXPECT_EQ(n % 8, 0u);  // padded so that the data is 8-byte aligned
  const std::string header(b.begin() + 8, b.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  EXPECT_EQ(header.substr(0, header.find_last_not_of(' ') + 1),
            R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
            R"("a":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})");
  ASSERT_EQ(b.size(), 8 + n + 6);
  EXPECT_EQ(b[8 + n + 4], 9);
  EXPECT_EQ(b[8 + n + 5], 8);
}

TEST(StoreSafetensors, EmptyFileHasNoTensors) {
  const NamedTensors none = read_safetensors(serialize_safetensors(NamedTensors{}));
  EXPECT_TRUE(none.tensors.empty());
  EXPECT_TRUE(none.metadata.empty());
}

TEST(StoreSafetensors, ReadsPythonWrittenFileExactly) {
  const auto t = read_safetensors(fixture_path("store_dtypes.safetensors"));
  const auto& c = load_fixture("nn/store").at("cases").at("dtypes");
  EXPECT_EQ(t.metadata, (std::map<std::string, std::string>{{"format", "pt"}, {"note", "dtypes"}}));
  ASSERT_EQ(t.tensors.size(), c.at("names").size());
  for (const auto& name : c.at("names")) {
    SCOPED_TRACE(name.get<std::string>());
    const TensorData* got = t.find(name.get<std::string>());
    ASSERT_NE(got, nullptr);
    expect_eq(*got, fixture_tensor(c.at("tensors").at(name.get<std::string>())));
  }
}

TEST(StoreSafetensors, KeepsTheHeaderKeyOrder) {
  const auto t = read_safetensors(
      image(R"({"zeta":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},)"
            R"("__metadata__":{"k":"v"},"alpha":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
            Bytes{5, 6}));
  EXPECT_EQ(t.names(), (std::vector<std::string>{"zeta", "alpha"}));
  EXPECT_EQ(t.find("zeta")->to_vec<int>(), std::vector<int>{6});
  EXPECT_EQ(t.find("alpha")->to_vec<int>(), std::vector<int>{5});
  EXPECT_EQ(t.metadata.at("k"), "v");
}

TEST(StoreSafetensors, TruncatedFiles) {
  const Bytes good = serialize_safetensors(every_dtype());
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | good[static_cast<std::size_t>(i)];
  for (std::size_t len : {std::size_t{0}, std::size_t{5}, std::size_t{8}, std::size_t{8 + n / 2},
                          std::size_t{8 + n}, std::size_t{8 + n + 10}, good.size() - 1}) {
    SCOPED_TRACE(len);
    expect_bad(Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len)), "truncated");
  }
}

TEST(StoreSafetensors, CorruptHeaders) {
  const Bytes d4{0, 0, 128, 63};  // 1.0f
  expect_bad(image("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", d4),
             "corrupt header: invalid JSON");
  expect_bad(image("[1, 2]"), "corrupt header: expected a JSON object");
  expect_bad(image("{\"a\":\xff\xfe}"), "corrupt header: invalid JSON");
  expect_bad(image(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", d4), "has no 'dtype'");
  expect_bad(image(R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", d4), "has no 'shape'");
  expect_bad(image(R"({"a":{"dtype":"F32","shape":[1]}})", d4), "has no 'data_offsets'");
  expect_bad(image(R"({"a":{"dtype":"F31","shape":[1],"data_offsets":[0,4]}})", d4),
             "unknown dtype 'F31'");
  expect_bad<UnsupportedError>(
      image(R"({"a":{"dtype":"U32","shape":[1],"data_offsets":[0,4]}})", d4), "dtype U32");
  expect_bad(image(R"({"a":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})", d4),
             "dtype is a number");
  expect_bad(image(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", d4),
             "not a non-negative integer");
  expect_bad(image(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", d4),
             "not a non-negative integer");
  expect_bad(image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", d4),
             "not a pair of non-negative integers");
  expect_bad(image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", d4),
             "end before they begin");
  expect_bad(image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", d4),
             "spans 4 bytes but shape [2] of F32 needs 8");
  expect_bad(image(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,4]}})", d4),
             "spans 4 bytes but shape [1] of F64 needs 8");
  expect_bad(
      image(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,4]}})", d4),
      "too large");
  expect_bad(image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                   R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                   d4),
             "the key 'a' appears twice");
  expect_bad(
      image(R"({"__metadata__":{"n":1},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", d4),
      "__metadata__ value of 'n' is a number, not a string");
  expect_bad(
      image(R"({"__metadata__":[],"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", d4),
      "__metadata__ is an array");
  expect_bad(image(R"({"a":[0,4]})", d4), "tensor 'a' is an array");
  // The length field claims more than the file holds, or a too-short header.
  Bytes huge = image("{}");
  huge[7] = 0x7f;
  expect_bad(huge, "truncated: the header length field says");
  expect_bad(image("{"), "too short");
}

TEST(StoreSafetensors, CorruptLayouts) {
  const Bytes d8(8, 1);
  expect_bad(image(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                   R"("b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})",
                   d8),
             "corrupt layout: tensors 'a' [0, 4) and 'b' [2, 6) overlap");
  expect_bad(image(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})", d8),
             "corrupt layout: 4 unused bytes before tensor 'a'");
  expect_bad(image(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", d8),
             "corrupt layout: 4 trailing bytes");
  expect_bad(image(R"({"a":{"dtype":"U8","shape":[16],"data_offsets":[0,16]}})", d8),
             "truncated: tensor 'a' ends at data offset 16");
  // Zero-size tensors may share an offset.
  const auto ok =
      read_safetensors(image(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},)"
                             R"("b":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                             R"("c":{"dtype":"F32","shape":[0,2],"data_offsets":[8,8]}})",
                             d8));
  EXPECT_EQ(ok.names(), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(StoreSafetensors, FlippedBytesNeverPassSilently) {
  // Flip each header byte in turn: the result either fails with IoError or still parses into
  // exactly the tensors' sizes (a flip inside a name or a digit that keeps things consistent).
  NamedTensors t;
  t.tensors.emplace_back("w", TensorData(std::vector<float>{1, 2, 3}, Shape{3}));
  t.tensors.emplace_back("b", TensorData(std::vector<std::int64_t>{4}, Shape{1}));
  const Bytes good = serialize_safetensors(t);
  int rejected = 0;
  for (std::size_t i = 0; i < 8 + 90 && i < good.size(); ++i) {
    Bytes b = good;
    b[i] ^= 0x5a;
    try {
      const auto r = read_safetensors(b);
      std::size_t total = 0;
      for (const auto& kv : r.tensors) total += kv.second.bytes().size();
      EXPECT_EQ(total, 20u) << "byte " << i;
    } catch (const IoError& e) {
      ++rejected;
      EXPECT_NE(std::string(e.what()).find("[read_safetensors] '<memory>': "), std::string::npos);
    } catch (const UnsupportedError&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 60);
}

TEST(StoreSafetensors, WriterRejectsBadInput) {
  ScratchDir dir;
  const auto target = dir / "w.safetensors";
  NamedTensors dup;
  dup.tensors.emplace_back("a", TensorData(std::vector<float>{1}, Shape{1}));
  dup.tensors.emplace_back("a", TensorData(std::vector<float>{2}, Shape{1}));
  EMBER_EXPECT_THROW_MSG(write_safetensors(target, dup), ValueError, "'a' appears twice");
  NamedTensors reserved;
  reserved.tensors.emplace_back("__metadata__", TensorData(std::vector<float>{1}, Shape{1}));
  EMBER_EXPECT_THROW_MSG(write_safetensors(target, reserved), ValueError, "reserved");
  NamedTensors unnamed;
  unnamed.tensors.emplace_back("", TensorData(std::vector<float>{1}, Shape{1}));
  EMBER_EXPECT_THROW_MSG(write_safetensors(target, unnamed), ValueError, "empty name");
  NamedTensors utf;
  utf.tensors.emplace_back("bad\xff", TensorData(std::vector<float>{1}, Shape{1}));
  EMBER_EXPECT_THROW_MSG(write_safetensors(target, utf), ValueError, "not valid UTF-8");
  NamedTensors sized;
  TensorData d(std::vector<float>{1, 2}, Shape{2});
  d.bytes_mut().pop_back();
  sized.tensors.emplace_back("s", std::move(d));
  EMBER_EXPECT_THROW_MSG(write_safetensors(target, sized), ShapeError, "holds 7 bytes");
  EXPECT_TRUE(dir.entries().empty());
}

class StoreAtomicWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    NamedTensors old;
    old.tensors.emplace_back("old", TensorData(std::vector<float>{42}, Shape{1}));
    write_safetensors(target_, old);
    before_ = read_bytes(target_);
  }
  void expect_untouched() {
    EXPECT_EQ(read_bytes(target_), before_);
    EXPECT_EQ(dir_.entries(), std::vector<std::string>{"model.safetensors"});
    EXPECT_EQ(read_safetensors(target_).find("old")->to_vec<float>(), std::vector<float>{42});
  }
  ScratchDir dir_;
  fs::path target_ = dir_ / "model.safetensors";
  Bytes before_;
};

TEST_F(StoreAtomicWrite, ReplacesAnExistingFile) {
  write_safetensors(target_, every_dtype());
  expect_same(read_safetensors(target_), every_dtype());
  EXPECT_EQ(dir_.entries(), std::vector<std::string>{"model.safetensors"});
}

TEST_F(StoreAtomicWrite, FailingWriteLeavesTheOldFileAndNoTemporary) {
  // Make write(2) fail part-way (EFBIG) with a 4 KiB file size limit.
  NamedTensors big;
  big.tensors.emplace_back("big", TensorData::full(Shape{4096}, 1.0, DType::F32));
  struct rlimit old_limit {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  std::string message;
  try {
    write_safetensors(target_, big);
  } catch (const IoError& e) {
    threw = true;
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old_limit);
  signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_NE(message.find("write failed"), std::string::npos) << message;
  EXPECT_NE(message.find("model.safetensors"), std::string::npos) << message;
  expect_untouched();
}

TEST_F(StoreAtomicWrite, FailingRenameLeavesNoTemporary) {
  // The target is a non-empty directory: the rename fails after the data is written.
  const auto sub = dir_ / "sub.safetensors";
  fs::create_directories(sub / "inner");
  EMBER_EXPECT_THROW_MSG(write_safetensors(sub, every_dtype()), IoError,
                         "cannot rename the temporary file");
  EXPECT_EQ(dir_.entries(), (std::vector<std::string>{"model.safetensors", "sub.safetensors"}));
  fs::remove_all(sub);
  expect_untouched();
}

TEST_F(StoreAtomicWrite, MissingDirectory) {
  EMBER_EXPECT_THROW_MSG(write_safetensors(dir_ / "no" / "such.safetensors", every_dtype()),
                         IoError, "cannot create a temporary file");
  expect_untouched();
}

TEST(StoreSafetensors, MissingFile) {
  EMBER_EXPECT_THROW_MSG(read_safetensors(fs::path("/nonexistent/x.safetensors")), IoError,
                         "cannot open");
}

}  // namespace
}  // namespace ember::test::store
