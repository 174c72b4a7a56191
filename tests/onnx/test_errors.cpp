// Bad models: each gives an ember::Error subclass whose message starts with "[onnx]" and
// names the node and the problem; never a crash. Models are built with the protobuf classes.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "ember/onnx/model.hpp"
#include "ember/onnx/runtime.hpp"
#include "fixture_util.hpp"

using namespace ember::onnx;

namespace {

::onnx::ValueInfoProto info(const std::string& name, std::vector<std::int64_t> dims,
                            int type = ::onnx::TensorProto::FLOAT) {
  ::onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  auto* s = t->mutable_shape();
  for (auto d : dims) s->add_dim()->set_dim_value(d);
  return v;
}

::onnx::NodeProto node(const std::string& name, const std::string& op, std::vector<std::string> in,
                       std::vector<std::string> out) {
  ::onnx::NodeProto n;
  n.set_name(name);
  n.set_op_type(op);
  for (auto& i : in) n.add_input(i);
  for (auto& o : out) n.add_output(o);
  return n;
}

/// y = Relu(x) with x, y [2, 3], opset 17: the base every case breaks.
::onnx::ModelProto base() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  *g->add_input() = info("x", {2, 3});
  *g->add_output() = info("y", {2, 3});
  *g->add_node() = node("relu1", "Relu", {"x"}, {"y"});
  return m;
}

template <class E>
void expect_error(const std::string& bytes, const std::vector<std::string>& parts) {
  try {
    parse_model(bytes);
    FAIL() << "no error; expected one mentioning " << parts[0];
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[onnx]", 0), 0u) << msg;
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  } catch (const std::exception& e) {
    FAIL() << "wrong exception type: " << e.what();
  }
}

std::string bytes(const ::onnx::ModelProto& m) {
  return m.SerializeAsString();
}

TEST(OnnxErrors, ValidBaseLoadsAndRuns) {
  const Model m = parse_model(bytes(base()));
  Session s(m);
  auto x = ember::DTensor<2>::from_floats({{-1, 2, -3}, {4, -5, 6}});
  auto y = s.run({Value::from_tensor(x)})[0].to_tensor<2>();
  EXPECT_EQ(y.to_vec<float>(), (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

TEST(OnnxErrors, TruncatedFile) {
  const std::string b = bytes(base());
  for (std::size_t cut : {b.size() / 2, b.size() - 3, std::size_t{5}})
    expect_error<ember::IoError>(b.substr(0, cut), {"not a valid ONNX protobuf", "truncated"});
  expect_error<ember::IoError>("", {"empty"});
  EXPECT_THROW(load_model("/nonexistent/model.onnx"), ember::IoError);
}

TEST(OnnxErrors, MissingAndWrongOpset) {
  auto m = base();
  m.clear_opset_import();
  expect_error<ember::UnsupportedError>(bytes(m), {"opset", "default domain"});
  m = base();
  m.mutable_opset_import(0)->set_version(99);
  expect_error<ember::UnsupportedError>(bytes(m), {"opset 99", "newer"});
}

TEST(OnnxErrors, UnknownOperator) {
  auto m = base();
  m.mutable_graph()->mutable_node(0)->set_op_type("FrobnicateV2");
  expect_error<ember::UnsupportedError>(bytes(m),
                                        {"node 'relu1' (FrobnicateV2)", "unknown operator"});
  m = base();
  m.mutable_graph()->mutable_node(0)->set_domain("com.example");
  expect_error<ember::UnsupportedError>(bytes(m),
                                        {"node 'relu1' (com.example::Relu)", "com.example"});
}

TEST(OnnxErrors, InconsistentShapes) {
  // Add of [2, 3] and [4, 3]
  auto m = base();
  auto* g = m.mutable_graph();
  *g->add_input() = info("z", {4, 3});
  *g->mutable_node(0) = node("add1", "Add", {"x", "z"}, {"y"});
  expect_error<ember::ShapeError>(bytes(m), {"node 'add1' (Add)", "broadcast", "3"});
  // MatMul with inner dims 3 and 4
  m = base();
  g = m.mutable_graph();
  *g->add_input() = info("w", {4, 5});
  *g->mutable_node(0) = node("mm", "MatMul", {"x", "w"}, {"y"});
  expect_error<ember::ShapeError>(bytes(m), {"node 'mm' (MatMul)", "inner dims"});
  // Declared output shape contradicting the operator
  m = base();
  *m.mutable_graph()->mutable_output(0) = info("y", {3, 2});
  expect_error<ember::ShapeError>(bytes(m), {"node 'relu1' (Relu)", "declared"});
  // Conv channels
  m = base();
  g = m.mutable_graph();
  *g->mutable_input(0) = info("x", {1, 3, 8, 8});
  *g->add_input() = info("w", {4, 2, 3, 3});
  *g->mutable_output(0) = info("y", {});
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  *g->mutable_node(0) = node("conv", "Conv", {"x", "w"}, {"y"});
  expect_error<ember::ShapeError>(bytes(m), {"node 'conv' (Conv)", "channels"});
}

TEST(OnnxErrors, CyclesAndUndefinedNames) {
  auto m = base();
  auto* g = m.mutable_graph();
  *g->mutable_node(0) = node("a", "Relu", {"b_out"}, {"a_out"});
  *g->add_node() = node("b", "Relu", {"a_out"}, {"b_out"});
  *g->add_node() = node("c", "Relu", {"a_out"}, {"y"});
  expect_error<ember::ValueError>(bytes(m), {"cycle", "(Relu)"});
  m = base();
  *m.mutable_graph()->mutable_node(0) = node("self", "Relu", {"y"}, {"y"});
  expect_error<ember::ValueError>(bytes(m), {"node 'self' (Relu)", "own output"});
  m = base();
  *m.mutable_graph()->mutable_node(0) = node("r", "Relu", {"nowhere"}, {"y"});
  expect_error<ember::ValueError>(bytes(m), {"node 'r' (Relu)", "'nowhere'", "not defined"});
  m = base();
  *m.mutable_graph()->add_node() = node("dup", "Relu", {"x"}, {"y"});
  expect_error<ember::ValueError>(bytes(m), {"node 'dup' (Relu)", "already defined"});
}

TEST(OnnxErrors, BadTensorData) {
  auto m = base();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(::onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_raw_data(std::string(7, '\0'));  // 7 bytes for 4 floats
  expect_error<ember::ValueError>(bytes(m), {"initializer 'w'", "raw_data has 7 bytes", "16"});
  t->clear_raw_data();
  t->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("../../etc/passwd");
  expect_error<ember::ValueError>(bytes(m), {"initializer 'w'", "relative path"});
}

TEST(OnnxErrors, RunTimeErrorsNameTheNode) {
  auto m = base();
  auto* g = m.mutable_graph();
  *g->mutable_input(0) = info("x", {});
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  *g->add_input() = info("s", {2}, ::onnx::TensorProto::INT64);
  *g->mutable_output(0) = info("y", {});
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  *g->mutable_node(0) = node("resh", "Reshape", {"x", "s"}, {"y"});
  const Model model = parse_model(bytes(m));
  Session s(model);
  const Value x = Value::from_tensor(ember::DTensor<1>::from_floats({1, 2, 3, 4, 5, 6}));
  const Value shape = Value::int64s({4, 2});
  try {
    s.run(std::vector<Value>{x, shape});
    FAIL() << "no error";
  } catch (const ember::ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[onnx] node 'resh' (Reshape): cannot reshape"), std::string::npos) << msg;
  }
  // wrong input type
  EXPECT_THROW(s.run(std::vector<Value>{Value::int64s({1, 2}), shape}), ember::DTypeError);
  EXPECT_THROW(s.run(std::vector<Value>{x}), ember::ValueError);
}

/// Loading `m` and running it on x [1, 4, 6, 6] (and w [4, 4, 3, 3], b when the graph has
/// them as inputs) fails with an ember::Error naming the node and containing `part`.
void expect_conv_error(const ::onnx::ModelProto& m, const std::string& part) {
  std::vector<Value> in;
  in.push_back(
      Value::from_data(ember::TensorData::full(ember::Shape{1, 4, 6, 6}, 0.5, ember::DType::F32)));
  in.push_back(
      Value::from_data(ember::TensorData::full(ember::Shape{4, 4, 3, 3}, 0.25, ember::DType::F32)));
  for (int i = 2; i < m.graph().input_size(); ++i) {
    std::vector<std::int64_t> d;
    for (const auto& dim : m.graph().input(i).type().tensor_type().shape().dim())
      d.push_back(dim.dim_value());
    in.push_back(
        Value::from_data(ember::TensorData::full(ember::Shape(d), 1.0, ember::DType::F32)));
  }
  try {
    const Model model = parse_model(bytes(m));
    Session s(model, {.device = ember::Device::cpu()});
    s.run(in);
    FAIL() << "no error; expected one mentioning " << part;
  } catch (const ember::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[onnx] node 'c' (Conv): "), std::string::npos) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
  }
}

TEST(OnnxErrors, InvalidConvNodesAreRefused) {
  // Each of these ran silently (found by the newcomer review of issue 16); onnxruntime
  // refuses them all.
  const auto conv_model = [](std::vector<std::string> ins) {
    auto m = base();
    auto* g = m.mutable_graph();
    *g->mutable_input(0) = info("x", {1, 4, 6, 6});
    *g->add_input() = info("w", {4, 4, 3, 3});
    *g->mutable_output(0) = info("y", {});
    g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    *g->mutable_node(0) = node("c", "Conv", std::move(ins), {"y"});
    return m;
  };
  const auto with_ints = [](::onnx::ModelProto m, const std::string& name,
                            std::vector<std::int64_t> v) {
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
    return m;
  };
  const auto with_string = [](::onnx::ModelProto m, const std::string& name, const std::string& v) {
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::STRING);
    a->set_s(v);
    return m;
  };
  expect_conv_error(with_ints(conv_model({"x", "w"}), "kernel_shape", {5, 5}),
                    "kernel_shape [5, 5] differs from the weight's spatial dims [3, 3]");
  expect_conv_error(with_string(conv_model({"x", "w"}), "auto_pad", "FOO"),
                    "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got \"FOO\"");
  expect_conv_error(with_ints(with_string(conv_model({"x", "w"}), "auto_pad", "SAME_UPPER"), "pads",
                              {1, 1, 1, 1}),
                    "auto_pad SAME_UPPER and explicit pads cannot both be given");
  {
    auto m = conv_model({"x", "w", "b"});
    *m.mutable_graph()->add_input() = info("b", {4, 1});
    expect_conv_error(m, "must have shape [4]");
  }
  {
    auto m = conv_model({"x", "w", "b", "b"});
    *m.mutable_graph()->add_input() = info("b", {4});
    expect_conv_error(m, "Conv takes 2 or 3 inputs (X, W, B), got 4");
  }
  {
    auto m = conv_model({"x", "w"});
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("group");
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(0);
    expect_conv_error(m, "group must be positive, got 0");
  }
}

}  // namespace
