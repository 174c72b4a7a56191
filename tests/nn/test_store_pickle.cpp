// Hand-built torch.save archives: strided views computed by hand, big-endian data, and each
// kind of malformed or unsupported content giving its documented error.
#include <gtest/gtest.h>

#include <chrono>

#include "ember/store/pytorch.hpp"
#include "ember/store/weights.hpp"
#include "store_test_util.hpp"

namespace ember::test::store {
namespace {

using ember::store::NamedTensors;
using ember::store::read_pytorch;
using ember::store::read_weights;

// storage 0: six floats 0..5 (little-endian).
Bytes six_floats() {
  return le_bytes(std::vector<float>{0, 1, 2, 3, 4, 5});
}

// {"a": <pickled tensor>} as a protocol-2 pickle; `tensor` adds the value.
template <class F>
Bytes dict_pickle(F&& tensor) {
  Pickle p;
  p.proto(2).global("collections", "OrderedDict").empty_tuple().reduce().mark().str("a");
  tensor(p);
  return p.setitems().stop().bytes();
}

class StorePickle : public ::testing::Test {
 protected:
  // Writes an archive "archive/..." with data.pkl = `pkl` and the given extra records.
  fs::path archive(const Bytes& pkl, std::vector<std::pair<std::string, Bytes>> records = {
                                         {"archive/data/0", six_floats()}}) {
    std::vector<std::pair<std::string, Bytes>> entries{{"archive/data.pkl", pkl}};
    for (auto& r : records) entries.push_back(std::move(r));
    entries.emplace_back("archive/version", text("3\n"));
    const auto p = dir_ / ("a" + std::to_string(count_++) + ".pt");
    write_bytes(p, make_zip(entries));
    return p;
  }
  fs::path tensor_archive(const std::string& type, std::int64_t numel, std::int64_t offset,
                          std::vector<std::int64_t> size, std::vector<std::int64_t> stride,
                          std::vector<std::pair<std::string, Bytes>> records = {
                              {"archive/data/0", six_floats()}}) {
    return archive(
        dict_pickle([&](Pickle& p) { p.tensor(type, "0", numel, offset, size, stride); }),
        std::move(records));
  }
  ScratchDir dir_;
  int count_ = 0;
};

TEST_F(StorePickle, StridedViewsByHand) {
  // storage [0 1 2 3 4 5]; offset 1, size (2, 2), stride (1, 2) -> [[1, 3], [2, 4]].
  auto t = read_pytorch(tensor_archive("FloatStorage", 6, 1, {2, 2}, {1, 2}));
  ASSERT_EQ(t.names(), std::vector<std::string>{"a"});
  EXPECT_EQ(t.tensors[0].second.shape(), (Shape{2, 2}));
  EXPECT_EQ(t.tensors[0].second.to_vec<float>(), (std::vector<float>{1, 3, 2, 4}));
  // size (3, 2), stride (2, 1) with offset 0: contiguous.
  t = read_pytorch(tensor_archive("FloatStorage", 6, 0, {3, 2}, {2, 1}));
  EXPECT_EQ(t.tensors[0].second.to_vec<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // size (2, 3), stride (0, 1) at offset 3 (a broadcast row).
  t = read_pytorch(tensor_archive("FloatStorage", 6, 3, {2, 3}, {0, 1}));
  EXPECT_EQ(t.tensors[0].second.to_vec<float>(), (std::vector<float>{3, 4, 5, 3, 4, 5}));
  // size (0, 4) touches nothing; any offset within the storage is fine.
  t = read_pytorch(tensor_archive("FloatStorage", 6, 6, {0, 4}, {4, 1}));
  EXPECT_EQ(t.tensors[0].second.numel(), 0);
}

TEST_F(StorePickle, BigEndianArchive) {
  Bytes be = six_floats();
  for (std::size_t i = 0; i < be.size(); i += 4) std::reverse(be.begin() + i, be.begin() + i + 4);
  auto t =
      read_pytorch(tensor_archive("FloatStorage", 6, 0, {6}, {1},
                                  {{"archive/byteorder", text("big")}, {"archive/data/0", be}}));
  EXPECT_EQ(t.tensors[0].second.to_vec<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EMBER_EXPECT_THROW_MSG(
      read_pytorch(tensor_archive("FloatStorage", 6, 0, {6}, {1},
                                  {{"archive/byteorder", text("middle")}, {"archive/data/0", be}})),
      IoError, "byteorder record says 'middle'");
}

TEST_F(StorePickle, StorageProblems) {
  EMBER_EXPECT_THROW_MSG(read_pytorch(tensor_archive("FloatStorage", 6, 0, {6}, {1}, {})), IoError,
                         "the storage record 'archive/data/0' is missing");
  EMBER_EXPECT_THROW_MSG(read_pytorch(tensor_archive("DoubleStorage", 6, 0, {6}, {1})), IoError,
                         "has 24 bytes, but 6 elements of torch.DoubleStorage need 48");
  EMBER_EXPECT_THROW_MSG(read_pytorch(tensor_archive("FloatStorage", 6, 5, {2}, {1})), IoError,
                         "reaches storage element 6 but storage '0' holds 6");
  EMBER_EXPECT_THROW_MSG(read_pytorch(tensor_archive("FloatStorage", 6, 0, {2, 2}, {3, 3})),
                         IoError, "reaches storage element 6");
  EMBER_EXPECT_THROW_MSG(read_pytorch(tensor_archive("FloatStorage", 6, 0, {2, 2}, {1})), IoError,
                         "1 strides");
  EMBER_EXPECT_THROW_MSG(
      read_pytorch(tensor_archive("ComplexFloatStorage", 3, 0, {3}, {1})), UnsupportedError,
      "tensor 'a' is stored as torch.ComplexFloatStorage, which has no Ember dtype");
  EMBER_EXPECT_THROW_MSG(read_pytorch(tensor_archive("QInt8Storage", 6, 0, {6}, {1})),
                         UnsupportedError, "torch.QInt8Storage");
}

TEST_F(StorePickle, MalformedPickles) {
  const auto expect = [&](const Bytes& pkl, const std::string& what) {
    EMBER_EXPECT_THROW_MSG(read_pytorch(archive(pkl)), IoError, what);
  };
  expect(Pickle().proto(2).empty_dict().bytes(), "truncated pickle: no STOP opcode");
  expect(Pickle().proto(2).reduce().stop().bytes(),
         "corrupt pickle: stack underflow (pickle byte 2)");
  expect(Pickle().proto(2).op('h').op(7).stop().bytes(), "memo entry 7 was never stored");
  expect(Pickle().proto(2).op(0xff).bytes(), "corrupt pickle: unknown opcode 0xff");
  expect(Pickle().proto(2).op('X').op(50).op(0).op(0).op(0).raw(text("abc")).bytes(),
         "truncated pickle: 50 bytes needed, 3 left");
  expect(Pickle().proto(2).empty_dict().empty_dict().stop().bytes(), "STOP with 2 values");
  expect(Pickle().proto(2).empty_dict().str("k").setitems().stop().bytes(), "no MARK");
  expect(Pickle().proto(2).empty_tuple().str("k").str("v").op('s').stop().bytes(),
         "SETITEM on a tuple");
  expect(Pickle().proto(2).mark().str("storage").tuple().op('Q').stop().bytes(),
         "unexpected persistent id");
  expect(
      dict_pickle([](Pickle& p) {
        p.global("torch._utils", "_rebuild_tensor_v2").mark().str("x").integer(0).tuple().reduce();
      }),
      "_rebuild_tensor_v2 expects (storage, offset, size, stride, ...)");
  // An archive without data.pkl.
  const auto p = dir_ / "nodata.pt";
  write_bytes(p, make_zip({{"archive/version", text("3\n")}}));
  EMBER_EXPECT_THROW_MSG(read_pytorch(p), IoError, "no <name>/data.pkl record");
}

TEST_F(StorePickle, UnsupportedContent) {
  const auto expect = [&](const Bytes& pkl, const std::string& what) {
    EMBER_EXPECT_THROW_MSG(read_pytorch(archive(pkl)), UnsupportedError, what);
  };
  expect(Pickle().proto(6).empty_dict().stop().bytes(), "pickle protocol 6 is newer than 5");
  expect(Pickle().proto(2).mark().global("os", "system").op('i').stop().bytes(),
         "unsupported pickle opcode INST");
  expect(Pickle().proto(2).op('I').raw(text("1\n")).stop().bytes(),
         "unsupported pickle opcode INT");
  // An unknown callable inside the dict: named with its key, never called.
  expect(dict_pickle(
             [](Pickle& p) { p.global("os", "system").mark().str("rm -rf /").tuple().reduce(); }),
         "'a' holds an os.system object, which cannot be read without running Python");
  // A single tensor instead of a dict.
  expect(Pickle().proto(2).tensor("FloatStorage", "0", 6, 0, {6}, {1}).stop().bytes(),
         "holds a single tensor");
  // A TorchScript archive.
  const auto ts = dir_ / "script.pt";
  write_bytes(
      ts, make_zip({{"archive/data.pkl", Pickle().proto(2).empty_dict().stop().bytes()},
                    {"archive/constants.pkl", Pickle().proto(2).empty_tuple().stop().bytes()}}));
  EMBER_EXPECT_THROW_MSG(read_pytorch(ts), UnsupportedError, "TorchScript archive");
}

TEST_F(StorePickle, NestingAndKeys) {
  // {"x": [tensor, {"y": tensor}], 3: tensor, "n": None}: lists index, int keys named.
  Pickle p;
  p.proto(2).empty_dict().mark().str("x").op(']').mark();
  p.tensor("FloatStorage", "0", 6, 0, {2}, {1});
  p.empty_dict().str("y").tensor("FloatStorage", "0", 6, 4, {2}, {1}).op('s');
  p.op('e').integer(3).tensor("FloatStorage", "0", 6, 2, {1}, {1}).str("n").op('N');
  p.setitems().stop();
  const NamedTensors t = read_pytorch(archive(p.bytes()));
  EXPECT_EQ(t.names(), (std::vector<std::string>{"x.0", "x.1.y", "3"}));
  EXPECT_EQ(t.find("x.1.y")->to_vec<float>(), (std::vector<float>{4, 5}));
  EXPECT_EQ(t.find("3")->to_vec<float>(), std::vector<float>{2});

  // {"a.b": t, "a": {"b": t}}: the same flattened key twice.
  Pickle dup;
  dup.proto(2).empty_dict().mark().str("a.b").tensor("FloatStorage", "0", 6, 0, {1}, {1});
  dup.str("a").empty_dict().str("b").tensor("FloatStorage", "0", 6, 1, {1}, {1}).op('s');
  dup.setitems().stop();
  EMBER_EXPECT_THROW_MSG(read_pytorch(archive(dup.bytes())), IoError, "the key 'a.b' occurs twice");

  // A list that contains itself.
  Pickle cyc;
  cyc.proto(2).empty_dict().str("l").op(']').op('q').op(0).op('h').op(0).op('a').op('s').stop();
  EMBER_EXPECT_THROW_MSG(read_pytorch(archive(cyc.bytes())), IoError,
                         "nesting deeper than 64 levels");
}

TEST_F(StorePickle, ParameterAndSubclassWrappers) {
  // _rebuild_parameter(tensor, True, OrderedDict()) and
  // _rebuild_from_type_v2(_rebuild_tensor_v2, Parameter, (args...), {}) give the tensor.
  Pickle p;
  p.proto(2).empty_dict().mark().str("p");
  p.global("torch._utils", "_rebuild_parameter").mark();
  p.tensor("FloatStorage", "0", 6, 1, {2}, {2}).op(0x88);
  p.global("collections", "OrderedDict").empty_tuple().reduce().tuple().reduce();
  p.str("s").global("torch._tensor", "_rebuild_from_type_v2").mark();
  p.global("torch._utils", "_rebuild_tensor_v2").global("torch.nn.parameter", "Parameter").mark();
  p.mark().str("storage").global("torch", "FloatStorage").str("0").str("cpu").integer(6).tuple();
  p.op('Q').integer(2).mark().integer(3).tuple().mark().integer(1).tuple().op(0x89);
  p.global("collections", "OrderedDict").empty_tuple().reduce().tuple();
  p.empty_dict().tuple().reduce();
  p.setitems().stop();
  const NamedTensors t = read_pytorch(archive(p.bytes()));
  EXPECT_EQ(t.names(), (std::vector<std::string>{"p", "s"}));
  EXPECT_EQ(t.find("p")->to_vec<float>(), (std::vector<float>{1, 3}));
  EXPECT_EQ(t.find("s")->to_vec<float>(), (std::vector<float>{2, 3, 4}));
}

// Pickles in which memoized objects are shared along exponentially many paths, the way
// torch.save writes l = [t]; for _ in range(40): l = [l, l]; torch.save({"x": l}, f).
class StoreSharedPickle : public StorePickle {
 protected:
  // `head` opens the pickle (up to the dict key), `leaf` pushes the shared leaf; then
  // `depth` levels of [prev, prev] are memoized and the result is stored under the key.
  template <class H, class L>
  static Bytes doubling(H&& head, L&& leaf, int depth) {
    Pickle p;
    p.proto(2).empty_dict();
    head(p);
    leaf(p);
    p.op('q').op(0).op('0');  // memoize and pop
    levels(p, depth);
    return p.op('h').op(static_cast<std::uint8_t>(depth)).op('s').stop().bytes();
  }
  // Memo entry i = [memo i-1, memo i-1] for i = 1..depth (nothing left on the stack).
  static void levels(Pickle& p, int depth) {
    for (int i = 1; i <= depth; ++i) {
      const auto prev = static_cast<std::uint8_t>(i - 1);
      p.mark().op('h').op(prev).op('h').op(prev).op('l');
      p.op('q').op(static_cast<std::uint8_t>(i)).op('0');
    }
  }
  static void key_x(Pickle& p) { p.str("x"); }
  static void tensor_leaf(Pickle& p) { p.tensor("FloatStorage", "0", 6, 0, {1}, {1}); }
  static void int_leaf(Pickle& p) { p.integer(7); }

  // Runs `f`, which must throw `E` with `what` in its message, in well under a second.
  template <class E, class F>
  static void expect_fast_throw(F&& f, const std::string& what) {
    const auto start = std::chrono::steady_clock::now();
    EMBER_EXPECT_THROW_MSG(f(), E, what);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    EXPECT_LT(took.count(), 1.0);
  }
};

TEST_F(StoreSharedPickle, ExponentiallySharedListsAreRefusedQuickly) {
  // 2^40 paths to one tensor: ~600 bytes of pickle.
  const Bytes bomb = doubling(key_x, tensor_leaf, 40);
  EXPECT_LT(bomb.size(), 1000u);
  const auto path = archive(bomb);
  expect_fast_throw<IoError>([&] { return read_pytorch(path); },
                             "': too many values to flatten: more than 1000000 (shared "
                             "sub-objects reached along too many paths)");
  expect_fast_throw<IoError>([&] { return read_weights(path); }, "too many values to flatten");
  // The same with plain values at the leaves: no tensor, but as many paths to walk.
  expect_fast_throw<IoError>([&] { return read_pytorch(archive(doubling(key_x, int_leaf, 40))); },
                             "too many values to flatten");
  // Under a key that cannot name a tensor (None), where only the presence of a tensor counts.
  expect_fast_throw<IoError>(
      [&] { return read_pytorch(archive(doubling([](Pickle& p) { p.op('N'); }, int_leaf, 40))); },
      "too many values to flatten");
}

TEST_F(StoreSharedPickle, CyclesBesideSharedObjectsAreBounded) {
  // l = [x, l] with x reaching 2^16 - 1 values: every level of the cycle walks x again
  // before the depth limit; the walk stops after 10^6 values.
  Pickle p;
  p.proto(2).empty_dict().str("l").integer(1).op('q').op(0).op('0');
  levels(p, 15);
  p.op(']').op('q').op(16).mark().op('h').op(15).op('h').op(16).op('e').op('s').stop();
  expect_fast_throw<IoError>([&] { return read_pytorch(archive(p.bytes())); },
                             "too many values to flatten: more than 1000000 visited, at 'l.");
}

TEST_F(StoreSharedPickle, ModerateSharingStillFlattens) {
  // Depth 3: 8 keys for one tensor (tied weights are the common case of a shared tensor).
  const NamedTensors t = read_pytorch(archive(doubling(key_x, tensor_leaf, 3)));
  ASSERT_EQ(t.tensors.size(), 8u);
  EXPECT_EQ(t.tensors.front().first, "x.0.0.0");
  EXPECT_EQ(t.tensors.back().first, "x.1.1.1");
  for (const auto& [k, v] : t.tensors) EXPECT_EQ(v.to_vec<float>(), std::vector<float>{0});
  // A shared bomb outside the selected sub-dict is never walked.
  Pickle p;
  p.proto(2).empty_dict().mark().str("model").empty_dict().str("w");
  p.tensor("FloatStorage", "0", 6, 0, {2}, {1}).op('s').str("junk");
  p.integer(1).op('q').op(0).op('0');
  levels(p, 40);
  p.op('h').op(40).setitems().stop();
  const auto path = archive(p.bytes());
  EXPECT_EQ(read_pytorch(path, {.select = "model"}).names(), std::vector<std::string>{"w"});
  EMBER_EXPECT_THROW_MSG(read_pytorch(path), IoError, "too many values to flatten");
}

TEST_F(StoreSharedPickle, LongSharedKeysAndRepeatedTensorsAreBounded) {
  // One 100 KB key string above 3000 values: 300 MB of dotted keys from a 106 KB pickle.
  Pickle keys;
  keys.proto(2).empty_dict().str(std::string(100'000, 'k')).op(']').mark();
  for (int i = 0; i < 3000; ++i) keys.integer(1);
  keys.op('e').op('s').stop();
  expect_fast_throw<IoError>([&] { return read_pytorch(archive(keys.bytes())); },
                             "too many key bytes to flatten");
  // One 4 MB tensor (a broadcast view of one float) listed 300 times: 1.2 GB of copies.
  Pickle rep;
  rep.proto(2).empty_dict().str("x").op(']').mark();
  rep.tensor("FloatStorage", "0", 6, 0, {1 << 20}, {0}).op('q').op(0);
  for (int i = 1; i < 300; ++i) rep.op('h').op(0);
  rep.op('e').op('s').stop();
  expect_fast_throw<IoError>([&] { return read_pytorch(archive(rep.bytes())); },
                             "too many tensor bytes: the 300 tensors hold 1258291200 bytes, "
                             "copied from 24 bytes of storage records");
}
}  // namespace
}  // namespace ember::test::store

namespace ember::test::store {
namespace {

TEST_F(StorePickle, DamagedPickleBytesOnlyThrowEmberErrors) {
  // Every byte of a small state-dict pickle XOR-ed with a few masks, and every prefix: the
  // reader returns or throws an ember::Error, never crashes or throws anything else.
  Pickle p;
  p.proto(2).global("collections", "OrderedDict").empty_tuple().reduce().op('q').op(1).mark();
  p.str("w").tensor("FloatStorage", "0", 6, 1, {2, 2}, {1, 2});
  p.str("b").tensor("LongStorage", "1", 2, 0, {2}, {1});
  p.setitems().stop();
  const Bytes good = p.bytes();
  const std::vector<std::pair<std::string, Bytes>> records{
      {"archive/data/0", six_floats()},
      {"archive/data/1", le_bytes(std::vector<std::int64_t>{7, 8})}};
  ASSERT_EQ(read_pytorch(archive(good, records)).names(), (std::vector<std::string>{"w", "b"}));
  int failures = 0;
  const auto attempt = [&](const Bytes& pkl) {
    try {
      read_pytorch(archive(pkl, records));
    } catch (const ember::Error&) {
      ++failures;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "non-Ember exception: " << e.what();
    }
  };
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (std::uint8_t mask : {0x01, 0x20, 0x80, 0xff}) {
      Bytes b = good;
      b[i] ^= mask;
      attempt(b);
    }
    attempt(Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(i)));
  }
  EXPECT_GT(failures, static_cast<int>(good.size()));
}

}  // namespace
}  // namespace ember::test::store
