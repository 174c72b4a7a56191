// onnx::Value and the small helpers of the graph structs.
#include <sstream>

#include "onnx_internal.hpp"

namespace ember::onnx {

using ember::detail::fail;

Shape padded_shape(const std::vector<std::int64_t>& shape) {
  if (shape.size() > kMaxRank)
    fail<ShapeError>("onnx", "tensor of rank ", shape.size(), " exceeds the maximum rank ",
                     kMaxRank);
  std::vector<std::int64_t> d(kMaxRank - shape.size(), 1);
  d.insert(d.end(), shape.begin(), shape.end());
  return Shape(std::move(d));
}

namespace {
template <class S>
Value make_tensor(ElemType type, std::vector<std::int64_t> shape, S store, Value v) {
  return v;
}
}  // namespace

#define EMBER_ONNX_TENSOR_CTOR(Store)                                                \
  Value Value::tensor(ElemType type, std::vector<std::int64_t> shape, Store store) { \
    const Shape ps = padded_shape(shape);                                            \
    Value v;                                                                         \
    v.kind_ = Kind::Tensor;                                                          \
    v.type_ = type;                                                                  \
    if (store.shape() != ps)                                                         \
      store = ps.numel() == 0 && store.numel() == 0                                  \
                  ? Store::empty(ps, store.device(), store.dtype())                  \
                  : std::move(store).template reshape<kMaxRank>(ps);                 \
    v.store_ = std::move(store);                                                     \
    v.shape_ = std::move(shape);                                                     \
    return v;                                                                        \
  }
EMBER_ONNX_TENSOR_CTOR(FloatStore)
EMBER_ONNX_TENSOR_CTOR(IntStore)
EMBER_ONNX_TENSOR_CTOR(BoolStore)
#undef EMBER_ONNX_TENSOR_CTOR

Value Value::strings(std::vector<std::int64_t> shape, std::vector<std::string> values) {
  Value v;
  v.kind_ = Kind::Tensor;
  v.type_ = ElemType::String;
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  if (n != static_cast<std::int64_t>(values.size()))
    fail<ShapeError>("onnx", values.size(), " strings for a tensor of ", n, " elements");
  v.shape_ = std::move(shape);
  v.strings_ = std::make_shared<const std::vector<std::string>>(std::move(values));
  return v;
}

Value Value::from_data(const TensorData& data, const Device& device, ElemType type) {
  if (type == ElemType::Undefined) type = elem_type_of(data.dtype());
  const DType sd = storage_dtype(type);
  const std::vector<std::int64_t> shape = data.shape().dims;
  const Shape ps = padded_shape(shape);
  TensorData d = data.dtype() == sd ? data : data.convert(sd);
  TensorData padded = TensorData::from_bytes(std::move(d).into_bytes(), ps, sd);
  if (is_float(sd)) return tensor(type, shape, FloatStore::from_data(padded, device));
  if (is_int(sd)) return tensor(type, shape, IntStore::from_data(padded, device));
  return tensor(type, shape, BoolStore::from_data(padded, device));
}

Value Value::scalar(double v, ElemType type, const Device& device) {
  const DType sd = storage_dtype(type);
  const Shape ps = padded_shape({});
  if (is_float(sd)) return tensor(type, {}, FloatStore::full(ps, v, device, sd));
  if (is_int(sd)) return tensor(type, {}, IntStore::full(ps, v, device, sd));
  return tensor(type, {}, BoolStore::full(ps, v, device, sd));
}

Value Value::int64s(const std::vector<std::int64_t>& v, const Device& device) {
  const auto n = static_cast<std::int64_t>(v.size());
  return from_data(TensorData(v, Shape{n}), device, ElemType::Int64);
}

Value Value::sequence(ElemType elem, std::vector<Value> items) {
  Value v;
  v.kind_ = Kind::Sequence;
  v.type_ = elem;
  v.shape_ = {static_cast<std::int64_t>(items.size())};
  v.items_ = std::move(items);
  return v;
}

Value Value::none(ElemType elem) {
  Value v;
  v.type_ = elem;
  return v;
}

std::int64_t Value::numel() const {
  std::int64_t n = 1;
  for (auto d : shape_) n *= d;
  return n;
}

Device Value::device() const {
  if (auto* f = std::get_if<FloatStore>(&store_)) return f->device();
  if (auto* i = std::get_if<IntStore>(&store_)) return i->device();
  if (auto* b = std::get_if<BoolStore>(&store_)) return b->device();
  return Device::cpu();
}

const FloatStore& Value::floats() const {
  if (auto* f = std::get_if<FloatStore>(&store_)) return *f;
  fail<DTypeError>("onnx", "value ", describe(), " is not a float tensor");
}
const IntStore& Value::ints() const {
  if (auto* f = std::get_if<IntStore>(&store_)) return *f;
  fail<DTypeError>("onnx", "value ", describe(), " is not an integer tensor");
}
const BoolStore& Value::bools() const {
  if (auto* f = std::get_if<BoolStore>(&store_)) return *f;
  fail<DTypeError>("onnx", "value ", describe(), " is not a bool tensor");
}
FloatStore Value::into_floats() && {
  if (auto* f = std::get_if<FloatStore>(&store_)) return std::move(*f);
  fail<DTypeError>("onnx", "value ", describe(), " is not a float tensor");
}
IntStore Value::into_ints() && {
  if (auto* f = std::get_if<IntStore>(&store_)) return std::move(*f);
  fail<DTypeError>("onnx", "value ", describe(), " is not an integer tensor");
}

const std::vector<std::string>& Value::string_values() const {
  if (!strings_) fail<DTypeError>("onnx", "value ", describe(), " is not a string tensor");
  return *strings_;
}

TensorData Value::to_data() const {
  if (!is_tensor() || type_ == ElemType::String)
    fail<DTypeError>("onnx", "value ", describe(), " has no numeric data");
  TensorData d;
  if (auto* f = std::get_if<FloatStore>(&store_))
    d = f->into_data();
  else if (auto* i = std::get_if<IntStore>(&store_))
    d = i->into_data();
  else
    d = std::get<BoolStore>(store_).into_data();
  const DType dt = d.dtype();
  return TensorData::from_bytes(std::move(d).into_bytes(), Shape(shape_), dt);
}

std::vector<std::int64_t> Value::to_int64s() const {
  return to_data().to_vec<std::int64_t>();
}
std::vector<double> Value::to_doubles() const {
  return to_data().to_vec<double>();
}

Value Value::to_device(const Device& device) const {
  Value v = *this;
  if (auto* f = std::get_if<FloatStore>(&store_)) v.store_ = f->to_device(device);
  if (auto* i = std::get_if<IntStore>(&store_)) v.store_ = i->to_device(device);
  if (auto* b = std::get_if<BoolStore>(&store_)) v.store_ = b->to_device(device);
  for (auto& it : v.items_) it = it.to_device(device);
  return v;
}

std::string Value::describe() const {
  std::ostringstream os;
  if (kind_ == Kind::None) return "none";
  if (kind_ == Kind::Sequence) {
    os << "seq(tensor(" << elem_type_name(type_) << "))[" << items_.size() << "]";
    return os.str();
  }
  os << "tensor(" << elem_type_name(type_) << ")" << Shape(shape_);
  return os.str();
}

// ---- graph structs ------------------------------------------------------------------------

std::string TypeInfo::to_string() const {
  return type_string(*this);
}

std::string type_string(const TypeInfo& t) {
  switch (t.kind) {
    case TypeInfo::Kind::Unknown:
      return "unknown";
    case TypeInfo::Kind::Sequence:
      return "seq(" + (t.inner ? type_string(*t.inner) : std::string("?")) + ")";
    case TypeInfo::Kind::Optional:
      return "optional(" + (t.inner ? type_string(*t.inner) : std::string("?")) + ")";
    case TypeInfo::Kind::Tensor:
      break;
  }
  std::string s = "tensor(" + elem_type_name(t.elem) + ")";
  if (t.has_shape) {
    s += "[";
    for (std::size_t i = 0; i < t.shape.size(); ++i) {
      if (i) s += ", ";
      const Dim& d = t.shape[i];
      s += d.known() ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param);
    }
    s += "]";
  }
  return s;
}

const char* Attribute::kind_name(Kind k) {
  switch (k) {
    case Kind::Undefined:
      return "undefined";
    case Kind::Float:
      return "float";
    case Kind::Int:
      return "int";
    case Kind::String:
      return "string";
    case Kind::Tensor:
      return "tensor";
    case Kind::Graph:
      return "graph";
    case Kind::Floats:
      return "floats";
    case Kind::Ints:
      return "ints";
    case Kind::Strings:
      return "strings";
    case Kind::Tensors:
      return "tensors";
    case Kind::Graphs:
      return "graphs";
    case Kind::TypeProto:
      return "type_proto";
    case Kind::TypeProtos:
      return "type_protos";
  }
  return "?";
}

const Attribute* Node::attr(std::string_view name) const {
  for (const auto& a : attributes)
    if (a.name == name) return &a;
  return nullptr;
}

std::string Node::label() const {
  std::string s = "node '" + name + "' (";
  if (!domain.empty()) s += domain + "::";
  return s + op_type + ")";
}

const Initializer* Graph::initializer(std::string_view name) const {
  for (const auto& i : initializers)
    if (i.name == name) return &i;
  return nullptr;
}

std::int64_t Model::opset(std::string_view domain) const {
  for (const auto& o : opsets)
    if (o.domain == domain) return o.version;
  return 0;
}

std::int64_t Model::num_params() const {
  std::int64_t n = 0;
  for (const auto& i : graph.initializers)
    if (is_float_type(i.type)) {
      std::int64_t k = 1;
      for (auto d : i.shape) k *= d;
      n += k;
    }
  return n;
}

namespace detail {

Value value_from_initializer(const Initializer& init, const Device& device) {
  if (init.type == ElemType::String) return Value::strings(init.shape, init.strings);
  return Value::from_data(*init.data, device, init.type);
}

void with_node_context(const Node& node, const std::function<void()>& f) {
  auto prefix = [&](const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind("[onnx] node '", 0) == 0) return msg;
    return "[onnx] " + node.label() + ": " + msg;
  };
  try {
    f();
  } catch (const ShapeError& e) {
    throw ShapeError(prefix(e));
  } catch (const DTypeError& e) {
    throw DTypeError(prefix(e));
  } catch (const DeviceError& e) {
    throw DeviceError(prefix(e));
  } catch (const IoError& e) {
    throw IoError(prefix(e));
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(prefix(e));
  } catch (const OutOfMemoryError& e) {
    throw OutOfMemoryError(prefix(e));
  } catch (const ValueError& e) {
    throw ValueError(prefix(e));
  } catch (const Error& e) {
    throw Error(prefix(e));
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError("[onnx] " + node.label() + ": out of memory");
  } catch (const std::exception& e) {
    // A standard-library error (a size too large for a vector, ...) from a kernel: still
    // an ember::Error naming the node, never an escape.
    throw ValueError("[onnx] " + node.label() + ": " + e.what());
  }
}

// ---- OpContext ------------------------------------------------------------------------------

const Value& OpContext::in(std::size_t i) const {
  if (i >= inputs.size() || inputs[i] == nullptr)
    fail(concat("input ", i, " is required but missing"));
  return *inputs[i];
}

const Value& OpContext::tensor(std::size_t i) const {
  const Value& v = in(i);
  if (!v.is_tensor()) fail(concat("input ", i, " must be a tensor, got ", v.describe()));
  return v;
}

const Attribute& OpContext::attr_required(std::string_view name) const {
  const Attribute* a = attr(name);
  if (!a) fail("required attribute '", name, "' is missing");
  return *a;
}

std::int64_t OpContext::attr_int(std::string_view name, std::int64_t def) const {
  const Attribute* a = attr(name);
  if (!a) return def;
  if (a->kind != Attribute::Kind::Int)
    fail("attribute '", name, "' must be an int, got ", Attribute::kind_name(a->kind));
  return a->i;
}

double OpContext::attr_float(std::string_view name, double def) const {
  const Attribute* a = attr(name);
  if (!a) return def;
  if (a->kind == Attribute::Kind::Int) return static_cast<double>(a->i);
  if (a->kind != Attribute::Kind::Float)
    fail("attribute '", name, "' must be a float, got ", Attribute::kind_name(a->kind));
  return a->f;
}

std::string OpContext::attr_string(std::string_view name, const std::string& def) const {
  const Attribute* a = attr(name);
  if (!a) return def;
  if (a->kind != Attribute::Kind::String)
    fail("attribute '", name, "' must be a string, got ", Attribute::kind_name(a->kind));
  return a->s;
}

std::vector<std::int64_t> OpContext::attr_ints(std::string_view name,
                                               std::vector<std::int64_t> def) const {
  const Attribute* a = attr(name);
  if (!a) return def;
  if (a->kind == Attribute::Kind::Int) return {a->i};
  if (a->kind != Attribute::Kind::Ints)
    fail("attribute '", name, "' must be a list of ints, got ", Attribute::kind_name(a->kind));
  return a->ints;
}

std::vector<double> OpContext::attr_floats(std::string_view name, std::vector<double> def) const {
  const Attribute* a = attr(name);
  if (!a) return def;
  if (a->kind == Attribute::Kind::Float) return {a->f};
  if (a->kind != Attribute::Kind::Floats)
    fail("attribute '", name, "' must be a list of floats, got ", Attribute::kind_name(a->kind));
  return a->floats;
}

std::vector<std::string> OpContext::attr_strings(std::string_view name) const {
  const Attribute* a = attr(name);
  if (!a) return {};
  if (a->kind == Attribute::Kind::String) return {a->s};
  if (a->kind != Attribute::Kind::Strings)
    fail("attribute '", name, "' must be a list of strings, got ", Attribute::kind_name(a->kind));
  return a->strings;
}

}  // namespace detail
}  // namespace ember::onnx
