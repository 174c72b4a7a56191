// The op descriptions (ember/ir): every registry row's description and every element-wise
// description round-trips through serialisation; malformed bytes are refused; infer's errors
// name the op; and the recording null backend, which has only the required functions, runs
// the front end and answers every shape from the descriptions alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "ember/ir/elementwise_ir.hpp"
#include "ember/ir/registry.hpp"
#include "ember/ir/serialize.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/module/conv.hpp"
#include "ember/tensor/module/pool.hpp"
#include "ember/tensor/tensor.hpp"
#include "null_backend.hpp"

namespace ember::test {
namespace {

/// Sets every field of a description to a value derived from a counter (each field distinct
/// from its default), recursing into option structs and containers.
struct Filler {
  std::int64_t n = 3;

  template <class T>
  void fill(T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      v = !v;  // never the default
    } else if constexpr (std::is_same_v<T, DType>) {
      v = DType::F64;
    } else if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(1);
    } else if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(n++);
    } else if constexpr (std::is_floating_point_v<T>) {
      v = static_cast<T>(n++) * 0.25 + 0.125;
    } else if constexpr (std::is_same_v<T, Shape>) {
      v = Shape{n, n + 1};
      n += 2;
    } else if constexpr (std::is_same_v<T, TensorData>) {
      v = TensorData(std::vector<float>{1.5f, -2.0f, static_cast<float>(n++)}, Shape{3});
    } else if constexpr (requires {
                           std::tuple_size<T>::value;
                           v[0];
                         }) {
      for (auto& x : v) fill(x);
    } else if constexpr (requires {
                           v.resize(2);
                           v.begin();
                         }) {
      v.resize(2);
      for (auto& x : v) fill(x);
    } else if constexpr (requires {
                           v.first;
                           v.second;
                         }) {
      fill(v.first);
      fill(v.second);
    } else if constexpr (requires {
                           v.has_value();
                           v.emplace();
                         }) {
      v.emplace();
      fill(*v);
    } else {
      std::apply([this](auto&... x) { (fill(x), ...); }, ir::fields(v));
    }
  }
};

std::set<std::string>& tested() {
  static std::set<std::string> names;
  return names;
}

template <class D>
void round_trip(const std::string& fn) {
  SCOPED_TRACE(fn);
  D d{};
  Filler{}.fill(d);
  const std::vector<std::uint8_t> bytes = ir::encode(d);
  const D back = ir::decode<D>(bytes);
  EXPECT_TRUE(ir::equal(d, back)) << fn;
  EXPECT_EQ(ir::encode(back), bytes) << fn;
  // A default description differs from the filled one (the fields really travel), unless
  // the description has no fields.
  if constexpr (std::tuple_size_v < decltype(d.tie()) >> 0) {
    EXPECT_NE(ir::encode(D{}), bytes) << fn;
  }
  tested().insert(fn);
}

#define EMBER_RT_ROW(Req, Res, Ret, name, Desc, Params) round_trip<ir::Desc>(#name);
#define EMBER_RT_ONE(n, name, Desc) round_trip<ir::Desc<n>>(#name "<" #n ">");
#define EMBER_RT_ROW_N(Req, Res, Ret, name, Desc, Params, Ns) \
  EMBER_IR_FOR_NS(Ns, EMBER_RT_ONE, name, Desc)

TEST(IrSerialize, EveryRegistryDescriptionRoundTrips) {
  tested().clear();
  EMBER_IR_OPS(EMBER_RT_ROW, EMBER_RT_ROW_N)
  // Every row once (template rows once per rank), counted from the registry itself.
#define EMBER_COUNT_ROW(...) +1
#define EMBER_COUNT_ROW_N(Req, Res, Ret, name, Desc, Params, Ns) \
  +EMBER_PP_NARGS(EMBER_PP_UNPAREN Ns)
  constexpr std::size_t kRows = 0 EMBER_IR_OPS(EMBER_COUNT_ROW, EMBER_COUNT_ROW_N);
  EXPECT_EQ(tested().size(), kRows);
  EXPECT_GE(kRows, 200u);
}

TEST(IrSerialize, EveryElementwiseDescriptionRoundTrips) {
  std::size_t n = 0;
  ir::for_each_row([&]<class Op>() {
    round_trip<ir::UnaryOp<Op>>(std::string(Op::name) + " unary");
    round_trip<ir::BinaryOp<Op>>(std::string(Op::name) + " binary");
    round_trip<ir::ScalarOp<Op, double>>(std::string(Op::name) + " scalar");
    round_trip<ir::ScalarOp<Op, std::int64_t>>(std::string(Op::name) + " int scalar");
    round_trip<ir::CompareOp<Op>>(std::string(Op::name) + " compare");
    round_trip<ir::CompareScalarOp<Op, double>>(std::string(Op::name) + " compare scalar");
    round_trip<ir::PredicateOp<Op>>(std::string(Op::name) + " predicate");
    ++n;
  });
  round_trip<ir::Clamp<double>>("clamp");
  round_trip<ir::Clamp<std::int64_t>>("int clamp");
  EXPECT_EQ(n, ir::ElementwiseOps::size);
}

TEST(IrSerialize, MalformedBytesAreRefused) {
  ir::Conv<2> c;
  c.options.stride = {2, 3};
  std::vector<std::uint8_t> bytes = ir::encode(c);
  // Another op's bytes.
  EXPECT_THROW(ir::decode<ir::Conv<1>>(bytes), IoError);
  // Truncated at every length.
  for (std::size_t k = 0; k < bytes.size(); ++k) {
    std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(k));
    EXPECT_THROW(ir::decode<ir::Conv<2>>(cut), IoError) << k;
  }
  // Left-over bytes.
  bytes.push_back(0);
  EXPECT_THROW(ir::decode<ir::Conv<2>>(bytes), IoError);
  // A huge count.
  ir::Permute p{{0, 1}};
  std::vector<std::uint8_t> pb = ir::encode(p);
  pb[pb.size() - 17] = 0xff;  // the axes count's high byte
  EXPECT_THROW(ir::decode<ir::Permute>(pb), IoError);
  // TensorData whose bytes do not match its shape.
  ir::FromData fd{TensorData(std::vector<float>{1, 2}, Shape{2})};
  std::vector<std::uint8_t> fb = ir::encode(fd);
  fb.pop_back();
  EXPECT_THROW(ir::decode<ir::FromData>(fb), Error);
}

TEST(IrInfer, ErrorsNameTheOp) {
  const ir::TensorType a{Shape{2, 3}, DType::F32}, b{Shape{4, 5}, DType::F32};
  try {
    (void)ir::Matmul{}.infer(a, b);
    FAIL() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[matmul]", 0), 0u) << e.what();
  }
  EXPECT_THROW((void)ir::SumDim{{5}}.infer(a), ShapeError);
  EXPECT_THROW((void)ir::Cat{0}.infer(
                   std::vector<ir::TensorType>{a, ir::TensorType{Shape{2, 4}, DType::F32}}),
               ShapeError);
  EXPECT_THROW((void)ir::Cat{0}.infer(
                   std::vector<ir::TensorType>{a, ir::TensorType{Shape{2, 3}, DType::F64}}),
               DTypeError);
  EXPECT_THROW((void)(ir::Arange{0, 10, 0, DType::I64}.infer()), ValueError);
  EXPECT_EQ((ir::Arange{0, 10, 3, DType::I64}.infer().shape), (Shape{4}));
  EXPECT_EQ((ir::Arange{10, 0, -3, DType::I64}.infer().shape), (Shape{4}));
  EXPECT_THROW((void)(ir::Arange{INT64_MIN, INT64_MAX, 1, DType::I64}.infer()), ValueError);
  ir::Conv<2> conv;
  conv.options.stride = {2, 2};
  conv.options.padding = {1, 1};
  EXPECT_EQ(
      conv.infer({Shape{8, 3, 32, 32}, DType::F32}, {Shape{16, 3, 3, 3}, DType::F32}, {}).shape,
      (Shape{8, 16, 16, 16}));
  EXPECT_EQ(ir::infer_broadcast("add", {Shape{2, 1}, DType::F32}, {Shape{1, 3}, DType::F32}).shape,
            (Shape{2, 3}));
}

// ---- the null backend -----------------------------------------------------------------------

std::vector<std::string> functions() {
  std::vector<std::string> out;
  for (const auto& r : NullBackend::log()) out.push_back(r.function);
  return out;
}

TEST(NullBackend, AnswersShapesFromTheDescriptionsAlone) {
  using B = NullBackend;
  NullBackend::log().clear();
  const auto x = Tensor<B, 4>::random(Shape{8, 3, 32, 32});
  const auto w = Tensor<B, 4>::random(Shape{16, 3, 3, 3});
  auto y = module::conv2d(x, w, std::nullopt, ConvOptions<2>{.padding = {1, 1}});
  y = activation::relu(y);
  y = module::max_pool2d(y, {2, 2}, {2, 2});
  EXPECT_EQ(y.shape(), (Shape{8, 16, 16, 16}));
  auto flat = y.template reshape<2>({8, -1});
  const auto fc = Tensor<B, 2>::random(Shape{16 * 16 * 16, 10});
  auto logits = flat.matmul(fc);
  auto p = activation::softmax(logits, 1);
  EXPECT_EQ(p.shape(), (Shape{8, 10}));
  EXPECT_EQ(p.dtype(), DType::F32);
  auto s = p.sum_dim(1).argmax(0);
  EXPECT_EQ(s.shape(), (Shape{1, 1}));
  EXPECT_EQ(s.dtype(), DType::I64);
  // The recorded program: the required functions only (relu and softmax as composites).
  const auto f = functions();
  const std::set<std::string> calls(f.begin(), f.end());
  for (const char* name : {"float_random", "conv", "float_max_pool", "float_matmul",
                           "float_reshape", "float_sum_dim", "float_max_dim_with_indices"})
    EXPECT_TRUE(calls.count(name)) << name;
  EXPECT_FALSE(calls.count("float_relu"));
  EXPECT_FALSE(calls.count("float_softmax"));
  // Every recorded description decodes again.
  for (const auto& r : NullBackend::log()) EXPECT_FALSE(r.description.empty()) << r.function;
}

TEST(NullBackend, FrontEndErrorsComeFirst) {
  using B = NullBackend;
  NullBackend::log().clear();
  const auto a = Tensor<B, 2>::zeros(Shape{2, 3});
  const auto b = Tensor<B, 2>::zeros(Shape{4, 5});
  EXPECT_THROW((void)a.matmul(b), ShapeError);
  EXPECT_THROW((void)a.add(b), ShapeError);
  // Only the two creations reached the backend.
  EXPECT_EQ(functions(), (std::vector<std::string>{"float_full", "float_full"}));
}

}  // namespace
}  // namespace ember::test
