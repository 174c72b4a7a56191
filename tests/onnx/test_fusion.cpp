// The interpreter's fused Conv fast path (Conv+Relu, Conv+Add, Conv+Add+Relu as one oneDNN
// primitive with post-ops, weights packed once per session) against the same nodes run one
// at a time with run_op, and cpu::conv_fused's weight pack against new weights.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <utility>

#include "ember/cpu/conv_fused.hpp"
#include "ember/dispatch/cpu.hpp"
#include "ember/onnx/model.hpp"
#include "ember/onnx/runtime.hpp"

using namespace ember::onnx;

namespace {

/// Deterministic values in [-1, 1).
std::vector<float> values(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<float>(static_cast<double>(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  return v;
}

std::int64_t numel(const std::vector<std::int64_t>& dims) {
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

::onnx::ValueInfoProto info(const std::string& name, std::vector<std::int64_t> dims) {
  ::onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(::onnx::TensorProto::FLOAT);
  auto* s = t->mutable_shape();
  for (auto d : dims) s->add_dim()->set_dim_value(d);
  return v;
}

::onnx::NodeProto node(const std::string& op, std::vector<std::string> in, const std::string& out) {
  ::onnx::NodeProto n;
  n.set_name(out + "_node");
  n.set_op_type(op);
  for (auto& i : in) n.add_input(i);
  n.add_output(out);
  return n;
}

::onnx::NodeProto conv(std::vector<std::string> in, const std::string& out, std::int64_t pad,
                       std::int64_t stride = 1) {
  auto n = node("Conv", std::move(in), out);
  auto* p = n.add_attribute();
  p->set_name("pads");
  p->set_type(::onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) p->add_ints(pad);
  auto* s = n.add_attribute();
  s->set_name("strides");
  s->set_type(::onnx::AttributeProto::INTS);
  for (int i = 0; i < 2; ++i) s->add_ints(stride);
  return n;
}

struct Builder {
  ::onnx::ModelProto m;
  std::map<std::string, Value> inits;  // the same values, for the reference
  Builder() {
    m.set_ir_version(8);
    auto* op = m.add_opset_import();
    op->set_domain("");
    op->set_version(17);
    m.mutable_graph()->set_name("g");
  }
  void init(const std::string& name, std::vector<std::int64_t> dims, std::uint64_t seed) {
    auto v = values(static_cast<std::size_t>(numel(dims)), seed);
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    for (float f : v) t->add_float_data(f);
    inits[name] = Value::from_data(ember::TensorData(v, ember::Shape(dims)));
  }
  void add(::onnx::NodeProto n) { *m.mutable_graph()->add_node() = std::move(n); }
};

/// Runs `model`'s nodes one at a time with run_op (no fusion) from `values`.
std::map<std::string, Value> reference(const Model& model, std::map<std::string, Value> vals) {
  for (const auto& n : model.graph.nodes) {
    std::vector<Value> in;
    for (const auto& i : n.inputs) in.push_back(vals.at(i));
    auto out = run_op(n.op_type, in, n.attributes, 17, n.outputs.size());
    for (std::size_t o = 0; o < out.size(); ++o) vals[n.outputs[o]] = out[o];
  }
  return vals;
}

/// The largest difference relative to the reference's magnitude (absolute below 1): fused
/// and node-by-node convolutions sum in different orders, and oneDNN's kernels (and so the
/// rounding) differ between CPUs (AVX2 against AVX-512).
double max_diff(const Value& a, const Value& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const auto x = a.to_doubles(), y = b.to_doubles();
  double d = 0;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
    d = std::max(d, std::fabs(x[i] - y[i]) / std::max(1.0, std::fabs(y[i])));
  return d;
}

/// A residual block like ResNet's: Conv+Relu, Conv+Add+Relu (with a 1x1 strided shortcut
/// conv), Conv+Add (Add output is a graph output and has two uses), Conv+Relu, a Conv
/// whose output is also a graph output (not fused), and a blocked result read by a Conv the
/// fast path declines (asymmetric pads: made plain first). Blocked results in between:
/// r1 (read as x), c2 (read as a residual), y1 (both).
Builder residual_model(std::int64_t batch) {
  Builder b;
  auto* g = b.m.mutable_graph();
  *g->add_input() = info("x", {batch, 4, 9, 9});
  b.init("w1", {8, 4, 3, 3}, 1);
  b.init("b1", {8}, 2);
  b.init("w2", {8, 8, 3, 3}, 3);
  b.init("b2", {8}, 4);
  b.init("w3", {8, 4, 1, 1}, 5);
  b.init("w4", {8, 8, 3, 3}, 6);
  b.init("b4", {8}, 7);
  b.init("w5", {6, 8, 1, 1}, 8);
  b.add(conv({"x", "w1", "b1"}, "c1", 1, 2));  // [B, 8, 5, 5]
  b.add(node("Relu", {"c1"}, "r1"));
  b.add(conv({"r1", "w2", "b2"}, "c2", 1));
  b.add(conv({"x", "w3"}, "s", 0, 2));  // the shortcut comes after: it takes c2 as residual
  b.add(node("Add", {"c2", "s"}, "a"));
  b.add(node("Relu", {"a"}, "y1"));
  b.add(conv({"y1", "w4", "b4"}, "c4", 1));
  b.add(node("Add", {"y1", "c4"}, "z"));  // residual first
  b.add(conv({"z", "w5"}, "c5", 0));
  b.add(node("Relu", {"c5"}, "u"));
  b.add(conv({"x", "w1", "b1"}, "c6", 1));  // c6 is an output too: no fusion
  b.add(node("Relu", {"c6"}, "r6"));
  b.init("w7", {4, 8, 3, 3}, 10);
  b.add(conv({"x", "w1", "b1"}, "c7", 1));
  b.add(node("Relu", {"c7"}, "r7"));
  auto c8 = conv({"r7", "w7"}, "c8", 0);
  c8.mutable_attribute(0)->set_ints(2, 1);  // pads [0, 0, 1, 1]
  c8.mutable_attribute(0)->set_ints(3, 1);
  b.add(c8);
  // MaxPool on a blocked input: kept blocked for a Conv+Add+Relu that reads it both as x and
  // as the residual, or made plain as a graph output.
  b.add(conv({"x", "w1", "b1"}, "c9", 1));
  b.add(node("Relu", {"c9"}, "r9"));
  auto pool = [](const std::string& in, const std::string& out, std::int64_t k, std::int64_t s,
                 std::int64_t p) {
    auto n = node("MaxPool", {in}, out);
    const std::pair<const char*, std::int64_t> attrs[] = {
        {"kernel_shape", k}, {"strides", s}, {"pads", p}};
    for (const auto& [name, v] : attrs) {
      auto* a = n.add_attribute();
      a->set_name(name);
      a->set_type(::onnx::AttributeProto::INTS);
      for (int i = 0; i < (std::string(name) == "pads" ? 4 : 2); ++i) a->add_ints(v);
    }
    return n;
  };
  b.add(pool("r9", "m9", 3, 2, 1));
  b.add(conv({"m9", "w2", "b2"}, "c10", 1));
  b.add(node("Add", {"c10", "m9"}, "a10"));
  b.add(node("Relu", {"a10"}, "o10"));
  b.add(pool("r9", "m11", 2, 2, 0));
  for (const char* o : {"z", "u", "c6", "r6", "c8", "o10", "m11"}) {
    auto* out = g->add_output();
    out->set_name(o);
  }
  return b;
}

TEST(OnnxFusion, FusedConvMatchesNodeByNode) {
  for (std::int64_t batch : {1, 3}) {
    Builder b = residual_model(batch);
    const Model model = parse_model(b.m.SerializeAsString());
    const Value x = Value::from_data(ember::TensorData(
        values(static_cast<std::size_t>(batch * 4 * 81), 9), ember::Shape({batch, 4, 9, 9})));
    auto vals = b.inits;
    vals["x"] = x;
    const auto want = reference(model, vals);
    Session session(model, {.device = ember::Device::cpu()});
    for (int rep = 0; rep < 2; ++rep) {  // the second run uses the packed weights
      const auto out = session.run({x});
      const char* names[] = {"z", "u", "c6", "r6", "c8", "o10", "m11"};
      ASSERT_EQ(out.size(), std::size(names));
      // Two chained convolutions over 36 taps of values up to ~10: f32 rounding in a
      // different order reaches ~1e-5 near zero (AVX2's oneDNN kernels), so 5e-5.
      for (std::size_t i = 0; i < std::size(names); ++i)
        EXPECT_LE(max_diff(out[i], want.at(names[i])), 5e-5)
            << names[i] << " batch " << batch << " run " << rep;
    }
  }
}

TEST(OnnxFusion, BroadcastAddIsNotFused) {
  // Add with a broadcast residual [1, 8, 1, 1]: the fast path declines, the nodes run.
  Builder b;
  auto* g = b.m.mutable_graph();
  *g->add_input() = info("x", {2, 4, 6, 6});
  b.init("w", {8, 4, 3, 3}, 11);
  b.init("r", {1, 8, 1, 1}, 12);
  b.add(conv({"x", "w"}, "c", 1));
  b.add(node("Add", {"c", "r"}, "a"));
  b.add(node("Relu", {"a"}, "y"));
  g->add_output()->set_name("y");
  const Model model = parse_model(b.m.SerializeAsString());
  const Value x =
      Value::from_data(ember::TensorData(values(2 * 4 * 36, 13), ember::Shape({2, 4, 6, 6})));
  auto vals = b.inits;
  vals["x"] = x;
  const auto want = reference(model, vals);
  Session session(model, {.device = ember::Device::cpu()});
  EXPECT_LE(max_diff(session.run({x})[0], want.at("y")), 1e-5);
}

ember::CpuTensor cpu_of(const Value& v, std::size_t rank) {
  ember::CpuTensor t = ember::dispatch::cpu_primitive(v.floats().primitive());
  const std::size_t k = t.shape.rank() - rank;
  t.shape = ember::Shape(std::vector<std::int64_t>(t.shape.dims.begin() + k, t.shape.dims.end()));
  t.strides.erase(t.strides.begin(), t.strides.begin() + static_cast<std::ptrdiff_t>(k));
  return t;
}

TEST(OnnxFusion, WeightPackFollowsNewWeights) {
  // A pack used with one weight, then another (e.g. updated) weight tensor, gives the
  // second weight's result, not the cached one.
  const std::vector<std::int64_t> xd{2, 8, 7, 7}, wd{16, 8, 3, 3};
  const Value x = Value::from_data(ember::TensorData(values(2 * 8 * 49, 21), ember::Shape(xd)));
  const Value r =
      Value::from_data(ember::TensorData(values(2 * 16 * 49, 22), ember::Shape({2, 16, 7, 7})));
  std::vector<Attribute> attrs(1);
  attrs[0].name = "pads";
  attrs[0].kind = Attribute::Kind::Ints;
  attrs[0].ints = {1, 1, 1, 1};
  ember::cpu::ConvWeightPack pack;
  ember::cpu::ConvFusedOptions o{{1, 1}, {1, 1}, {1, 1}, 1, true};
  for (std::uint64_t seed : {31, 32, 31}) {
    const Value w = Value::from_data(ember::TensorData(values(16 * 8 * 9, seed), ember::Shape(wd)));
    const Value c = run_op("Conv", {x, w}, attrs, 17, 1)[0];
    const Value a = run_op("Add", {c, r}, {}, 17, 1)[0];
    const Value want = run_op("Relu", {a}, {}, 17, 1)[0];
    auto got =
        ember::cpu::conv_fused(cpu_of(x, 4), cpu_of(w, 4), std::nullopt, cpu_of(r, 4), o, &pack);
    if (!got) GTEST_SKIP() << "built without oneDNN";
    const Value gv = Value::from_tensor(ember::DTensor<4>(
        ember::dispatch::from_cpu_primitive<ember::Float>(*got, ember::Device::cpu())));
    EXPECT_LE(max_diff(gv, want), 1e-5) << "seed " << seed;
  }
}

/// relu(conv2d(x, w, pad 1) + bias + r) in double, for [B, C, H, W] x and [O, C, 3, 3] w.
std::vector<double> conv3x3_reference(const std::vector<double>& x, const std::vector<double>& w,
                                      const std::vector<double>& bias, const std::vector<double>& r,
                                      std::int64_t B, std::int64_t C, std::int64_t O,
                                      std::int64_t H, std::int64_t W) {
  std::vector<double> y(static_cast<std::size_t>(B * O * H * W));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t i = 0; i < H; ++i)
        for (std::int64_t j = 0; j < W; ++j) {
          double acc = bias[static_cast<std::size_t>(o)];
          for (std::int64_t c = 0; c < C; ++c)
            for (std::int64_t ki = 0; ki < 3; ++ki)
              for (std::int64_t kj = 0; kj < 3; ++kj) {
                const std::int64_t ii = i + ki - 1, jj = j + kj - 1;
                if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
                acc += x[static_cast<std::size_t>(((b * C + c) * H + ii) * W + jj)] *
                       w[static_cast<std::size_t>(((o * C + c) * 3 + ki) * 3 + kj)];
              }
          const auto at = static_cast<std::size_t>(((b * O + o) * H + i) * W + j);
          y[at] = std::max(0.0, acc + r[at]);
        }
  return y;
}

TEST(OnnxFusion, WinogradSizedConvMatchesADoubleReference) {
  // 3x3 stride 1 with channels in multiples of 16: the case conv_fused gives oneDNN's
  // Winograd kernels (unless EMBER_CONV_WINOGRAD=0), at batch 1 and 4, with bias, residual
  // and ReLU, against the convolution in double: within 4e-6 of the outputs' scale (~20;
  // measured 1.1e-6 of it with Winograd, 6.5e-7 with the direct kernels).
  const std::int64_t C = 32, O = 64, H = 14, W = 14;
  for (std::int64_t batch : {1, 4}) {
    const Value x = Value::from_data(
        ember::TensorData(values(batch * C * H * W, 41), ember::Shape({batch, C, H, W})));
    const Value w =
        Value::from_data(ember::TensorData(values(O * C * 9, 42), ember::Shape({O, C, 3, 3})));
    const Value bias = Value::from_data(ember::TensorData(values(O, 43), ember::Shape({O})));
    const Value r = Value::from_data(
        ember::TensorData(values(batch * O * H * W, 44), ember::Shape({batch, O, H, W})));
    const std::vector<double> want = conv3x3_reference(
        x.to_doubles(), w.to_doubles(), bias.to_doubles(), r.to_doubles(), batch, C, O, H, W);
    double scale = 1;
    for (double v : want) scale = std::max(scale, std::fabs(v));
    ember::cpu::ConvWeightPack pack;
    ember::cpu::ConvFusedOptions o{{1, 1}, {1, 1}, {1, 1}, 1, true};
    for (int rep = 0; rep < 2; ++rep) {  // the second run uses the packed weights
      auto got = ember::cpu::conv_fused(cpu_of(x, 4), cpu_of(w, 4), cpu_of(bias, 1), cpu_of(r, 4),
                                        o, &pack);
      if (!got) GTEST_SKIP() << "built without oneDNN";
      const Value gv = Value::from_tensor(ember::DTensor<4>(
          ember::dispatch::from_cpu_primitive<ember::Float>(*got, ember::Device::cpu())));
      const std::vector<double> y = gv.to_doubles();
      ASSERT_EQ(y.size(), want.size());
      double d = 0;
      for (std::size_t i = 0; i < y.size(); ++i) d = std::max(d, std::fabs(y[i] - want[i]));
      EXPECT_LE(d, 4e-6 * scale) << "batch " << batch << " run " << rep << " scale " << scale;
    }
  }
}

TEST(OnnxFusion, NonFiniteInputsGiveTheNodeByNodeResult) {
  // A NaN and an infinity in x: Winograd would spread them over whole output tiles and
  // oneDNN's ReLU post-op turns NaN into 0. The fast path must give what Conv then Relu give
  // one by one: the same NaN and infinity positions, the same finite values.
  const std::vector<std::int64_t> xd{2, 16, 12, 12}, wd{16, 16, 3, 3};
  std::vector<float> xv = values(2 * 16 * 144, 51);
  xv[2 * 12 + 3] = std::nanf("");                                 // x[0, 0, 2, 3]
  xv[144 + 5 * 12 + 5] = std::numeric_limits<float>::infinity();  // x[0, 1, 5, 5]
  const Value x = Value::from_data(ember::TensorData(xv, ember::Shape(xd)));
  const Value w = Value::from_data(ember::TensorData(values(16 * 16 * 9, 52), ember::Shape(wd)));
  const Value bias = Value::from_data(ember::TensorData(values(16, 53), ember::Shape({16})));
  std::vector<Attribute> attrs(1);
  attrs[0].name = "pads";
  attrs[0].kind = Attribute::Kind::Ints;
  attrs[0].ints = {1, 1, 1, 1};
  const Value c = run_op("Conv", {x, w, bias}, attrs, 17, 1)[0];
  const std::vector<double> want = run_op("Relu", {c}, {}, 17, 1)[0].to_doubles();
  ember::cpu::ConvWeightPack pack;
  ember::cpu::ConvFusedOptions o{{1, 1}, {1, 1}, {1, 1}, 1, true};
  for (int rep = 0; rep < 2; ++rep) {
    auto got = ember::cpu::conv_fused(cpu_of(x, 4), cpu_of(w, 4), cpu_of(bias, 1),
                                      std::optional<ember::CpuTensor>{}, o, &pack);
    if (!got) GTEST_SKIP() << "built without oneDNN";
    const std::vector<double> y =
        Value::from_tensor(ember::DTensor<4>(ember::dispatch::from_cpu_primitive<ember::Float>(
                               *got, ember::Device::cpu())))
            .to_doubles();
    ASSERT_EQ(y.size(), want.size());
    std::size_t nan = 0, inf = 0, wrong = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      nan += std::isnan(want[i]);
      inf += std::isinf(want[i]);
      const bool same = std::isnan(want[i])   ? std::isnan(y[i])
                        : std::isinf(want[i]) ? y[i] == want[i]
                                              : std::fabs(y[i] - want[i]) <= 1e-5;
      wrong += !same;
    }
    EXPECT_GT(nan, 0u);  // the NaN reaches 3x3 windows of every output channel
    EXPECT_EQ(wrong, 0u) << "run " << rep << ": " << nan << " NaN, " << inf << " inf expected";
  }
}

TEST(OnnxFusion, EmptyConvGivesAnEmptyResult) {
  // An empty batch and a weight with no output channels give empty results of the right
  // shape (as onnxruntime), on the fast path's side and on the operator's.
  std::vector<Attribute> attrs(1);
  attrs[0].name = "pads";
  attrs[0].kind = Attribute::Kind::Ints;
  attrs[0].ints = {1, 1, 1, 1};
  const Value x0 =
      Value::from_data(ember::TensorData(std::vector<float>{}, ember::Shape({0, 4, 6, 6})));
  const Value w =
      Value::from_data(ember::TensorData(values(4 * 4 * 9, 61), ember::Shape({4, 4, 3, 3})));
  EXPECT_EQ(run_op("Conv", {x0, w}, attrs, 17, 1)[0].shape(),
            (std::vector<std::int64_t>{0, 4, 6, 6}));
  const Value x =
      Value::from_data(ember::TensorData(values(4 * 36, 62), ember::Shape({1, 4, 6, 6})));
  const Value w0 =
      Value::from_data(ember::TensorData(std::vector<float>{}, ember::Shape({0, 4, 3, 3})));
  EXPECT_EQ(run_op("Conv", {x, w0}, attrs, 17, 1)[0].shape(),
            (std::vector<std::int64_t>{1, 0, 6, 6}));
}

}  // namespace
