// Reading ONNX protobuf messages (Debian's libonnx generated classes) into the plain graph
// representation of model.hpp. The only file that includes the protobuf headers.
#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>  // first: defines ONNX_API for the generated headers

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "onnx_internal.hpp"

namespace ember::onnx {

namespace {

using detail::onnx_fail;

std::string read_file(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) onnx_fail<IoError>("cannot open ", what, " '", path, "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) onnx_fail<IoError>("cannot read ", what, " '", path, "'");
  return ss.str();
}

struct Ctx {
  std::string base_dir;
  std::string where;  // "initializer 'w'" etc. for messages
};

std::int64_t checked_numel(const std::vector<std::int64_t>& dims, const std::string& where) {
  std::int64_t n = 1;
  for (auto d : dims) {
    if (d < 0) onnx_fail<ValueError>(where, " has a negative dim ", d);
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
      onnx_fail<ValueError>(where, " has more than 2^63 elements");
    n *= d;
  }
  return n;
}

template <class T>
void append_le(std::vector<std::uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

/// Raw bytes of a tensor: raw_data or external data.
bool raw_bytes(const ::onnx::TensorProto& t, const Ctx& ctx, std::string& out) {
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
    std::string location;
    std::int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") {
        location = kv.value();
      } else if (kv.key() == "offset" || kv.key() == "length") {
        std::int64_t v = 0;
        try {
          v = std::stoll(kv.value());
        } catch (...) {
          onnx_fail<ValueError>(ctx.where, ": external data ", kv.key(), " '", kv.value(),
                                "' is not a number");
        }
        if (v < 0) onnx_fail<ValueError>(ctx.where, ": negative external data ", kv.key());
        (kv.key() == "offset" ? offset : length) = v;
      }
    }
    if (location.empty()) onnx_fail<ValueError>(ctx.where, ": external data without a location");
    const std::filesystem::path loc(location);
    if (loc.is_absolute() || location.find("..") != std::string::npos)
      onnx_fail<ValueError>(ctx.where, ": external data location '", location,
                            "' must be a relative path inside the model's folder");
    if (ctx.base_dir.empty())
      onnx_fail<IoError>(ctx.where, ": external data '", location,
                         "' but the model was not read from a file");
    const std::string path = (std::filesystem::path(ctx.base_dir) / loc).string();
    std::ifstream f(path, std::ios::binary);
    if (!f) onnx_fail<IoError>(ctx.where, ": cannot open external data file '", path, "'");
    f.seekg(0, std::ios::end);
    const std::int64_t size = f.tellg();
    if (offset > size || (length >= 0 && offset + length > size))
      onnx_fail<IoError>(ctx.where, ": external data file '", path, "' is truncated (", size,
                         " bytes, need ", offset + std::max<std::int64_t>(length, 0), ")");
    if (length < 0) length = size - offset;
    out.resize(static_cast<std::size_t>(length));
    f.seekg(offset);
    f.read(out.data(), length);
    if (!f) onnx_fail<IoError>(ctx.where, ": cannot read external data file '", path, "'");
    return true;
  }
  if (t.has_raw_data()) {
    out = t.raw_data();
    return true;
  }
  return false;
}

/// Unpacks n values of `bits` bits (little-endian within each byte) from bytes.
std::vector<std::uint32_t> unpack_bits(const std::string& bytes, std::int64_t n, int bits) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(n));
  const int per = 8 / bits;
  const std::uint32_t mask = (1u << bits) - 1;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto b = static_cast<std::uint8_t>(bytes[static_cast<std::size_t>(i / per)]);
    out[static_cast<std::size_t>(i)] = (b >> ((i % per) * bits)) & mask;
  }
  return out;
}

}  // namespace

namespace detail {

/// Converts a TensorProto into an Initializer (numeric data in the storage dtype).
Initializer convert_tensor(const ::onnx::TensorProto& t, const Ctx& ctx) {
  Initializer init;
  init.name = t.name();
  init.shape.assign(t.dims().begin(), t.dims().end());
  init.type = static_cast<ElemType>(t.data_type());
  const std::string& where = ctx.where;
  const std::int64_t n = checked_numel(init.shape, where);
  if (init.type == ElemType::Undefined)
    onnx_fail<ValueError>(where, " has no data type (data_type 0)");
  if (init.type == ElemType::String) {
    if (t.string_data_size() != n)
      onnx_fail<ValueError>(where, " has ", t.string_data_size(), " strings for shape of ", n,
                            " elements");
    init.strings.assign(t.string_data().begin(), t.string_data().end());
    return init;
  }
  if (init.type == ElemType::Complex64 || init.type == ElemType::Complex128)
    onnx_fail<UnsupportedError>(where, " has complex element type ", elem_type_name(init.type));
  const int raw_type = t.data_type();
  if (raw_type < 1 || raw_type > 26)
    onnx_fail<ValueError>(where, " has an unknown data type ", raw_type);
  const DType sd = storage_dtype(init.type);
  std::string raw;
  const bool have_raw = raw_bytes(t, ctx, raw);
  std::vector<std::uint8_t> bytes;
  bytes.reserve(static_cast<std::size_t>(std::min<std::int64_t>(n, 1 << 24)) * dtype_size(sd));
  auto need = [&](std::int64_t have, std::int64_t want, const char* field) {
    if (have != want)
      onnx_fail<ValueError>(where, ": ", field, " holds ", have, " values, the shape needs ", want);
  };
  const ElemType et = init.type;
  const bool packed = et == ElemType::Int4 || et == ElemType::UInt4 || et == ElemType::Int2 ||
                      et == ElemType::UInt2 || et == ElemType::Float4E2M1;
  if (packed) {
    const int bits = (et == ElemType::Int2 || et == ElemType::UInt2) ? 2 : 4;
    const int per = 8 / bits;
    const std::int64_t nbytes = (n + per - 1) / per;
    std::string src;
    if (have_raw) {
      need(static_cast<std::int64_t>(raw.size()), nbytes, "raw_data (bytes)");
      src = raw;
    } else {
      need(t.int32_data_size(), nbytes, "int32_data (packed)");
      for (auto v : t.int32_data()) src.push_back(static_cast<char>(v & 0xff));
    }
    const auto codes = unpack_bits(src, n, bits);
    for (auto c : codes) {
      if (et == ElemType::Float4E2M1) {
        append_le(bytes, small_float_decode(et, c));
      } else if (et == ElemType::Int4 || et == ElemType::Int2) {
        const int sh = 32 - bits;
        append_le(bytes, static_cast<std::int8_t>(static_cast<std::int32_t>(c << sh) >> sh));
      } else {
        append_le(bytes, static_cast<std::uint8_t>(c));
      }
    }
  } else if (is_small_float(et)) {
    if (have_raw) {
      need(static_cast<std::int64_t>(raw.size()), n, "raw_data (bytes)");
      for (char c : raw) append_le(bytes, small_float_decode(et, static_cast<std::uint8_t>(c)));
    } else {
      need(t.int32_data_size(), n, "int32_data");
      for (auto v : t.int32_data()) append_le(bytes, small_float_decode(et, v & 0xff));
    }
  } else if (have_raw) {
    // Raw little-endian values of the ONNX type's width.
    std::size_t width = 0;
    switch (et) {
      case ElemType::UInt16:
        width = 2;
        break;
      case ElemType::UInt32:
        width = 4;
        break;
      case ElemType::UInt64:
        width = 8;
        break;
      default:
        width = dtype_size(sd);
        break;
    }
    if (static_cast<std::uint64_t>(raw.size()) != static_cast<std::uint64_t>(n) * width)
      onnx_fail<ValueError>(where, ": raw_data has ", raw.size(), " bytes, the shape needs ",
                            n * static_cast<std::int64_t>(width));
    if (et == ElemType::UInt16) {
      for (std::int64_t i = 0; i < n; ++i) {
        std::uint16_t v;
        std::memcpy(&v, raw.data() + i * 2, 2);
        append_le(bytes, static_cast<std::int32_t>(v));
      }
    } else if (et == ElemType::UInt32) {
      for (std::int64_t i = 0; i < n; ++i) {
        std::uint32_t v;
        std::memcpy(&v, raw.data() + i * 4, 4);
        append_le(bytes, static_cast<std::int64_t>(v));
      }
    } else if (et == ElemType::Bool) {
      for (char c : raw) bytes.push_back(c != 0 ? 1 : 0);
    } else {
      bytes.assign(raw.begin(), raw.end());
    }
  } else {
    switch (et) {
      case ElemType::Float:
        need(t.float_data_size(), n, "float_data");
        for (auto v : t.float_data()) append_le(bytes, v);
        break;
      case ElemType::Double:
        need(t.double_data_size(), n, "double_data");
        for (auto v : t.double_data()) append_le(bytes, v);
        break;
      case ElemType::Int64:
        need(t.int64_data_size(), n, "int64_data");
        for (auto v : t.int64_data()) append_le(bytes, v);
        break;
      case ElemType::UInt32:
      case ElemType::UInt64:
        need(t.uint64_data_size(), n, "uint64_data");
        for (auto v : t.uint64_data()) append_le(bytes, static_cast<std::int64_t>(v));
        break;
      case ElemType::Float16:
      case ElemType::BFloat16:
        need(t.int32_data_size(), n, "int32_data");
        for (auto v : t.int32_data()) append_le(bytes, static_cast<std::uint16_t>(v & 0xffff));
        break;
      case ElemType::Bool:
        need(t.int32_data_size(), n, "int32_data");
        for (auto v : t.int32_data()) bytes.push_back(v != 0 ? 1 : 0);
        break;
      case ElemType::Int8:
        need(t.int32_data_size(), n, "int32_data");
        for (auto v : t.int32_data()) append_le(bytes, static_cast<std::int8_t>(v));
        break;
      case ElemType::UInt8:
        need(t.int32_data_size(), n, "int32_data");
        for (auto v : t.int32_data()) append_le(bytes, static_cast<std::uint8_t>(v));
        break;
      case ElemType::Int16:
        need(t.int32_data_size(), n, "int32_data");
        for (auto v : t.int32_data()) append_le(bytes, static_cast<std::int16_t>(v));
        break;
      case ElemType::UInt16:
        need(t.int32_data_size(), n, "int32_data");
        for (auto v : t.int32_data()) append_le(bytes, static_cast<std::int32_t>(v & 0xffff));
        break;
      case ElemType::Int32:
        need(t.int32_data_size(), n, "int32_data");
        for (auto v : t.int32_data()) append_le(bytes, v);
        break;
      default:
        onnx_fail<UnsupportedError>(where, ": element type ", elem_type_name(et));
    }
  }
  init.data = std::make_shared<const TensorData>(
      TensorData::from_bytes(std::move(bytes), Shape(init.shape), sd));
  return init;
}

}  // namespace detail

namespace {

TypeInfo convert_type(const ::onnx::TypeProto& tp) {
  TypeInfo ti;
  if (tp.has_tensor_type()) {
    ti.kind = TypeInfo::Kind::Tensor;
    ti.elem = static_cast<ElemType>(tp.tensor_type().elem_type());
    if (tp.tensor_type().has_shape()) {
      ti.has_shape = true;
      for (const auto& d : tp.tensor_type().shape().dim()) {
        Dim dim;
        if (d.has_dim_value()) dim.value = d.dim_value() >= 0 ? d.dim_value() : -1;
        if (d.has_dim_param()) dim.param = d.dim_param();
        ti.shape.push_back(dim);
      }
    }
  } else if (tp.has_sequence_type()) {
    ti.kind = TypeInfo::Kind::Sequence;
    ti.inner = std::make_shared<TypeInfo>(convert_type(tp.sequence_type().elem_type()));
    ti.elem = ti.inner->elem;
  } else if (tp.has_optional_type()) {
    ti.kind = TypeInfo::Kind::Optional;
    ti.inner = std::make_shared<TypeInfo>(convert_type(tp.optional_type().elem_type()));
    ti.elem = ti.inner->elem;
  }
  return ti;
}

std::shared_ptr<const Graph> convert_graph(const ::onnx::GraphProto& g, const Ctx& ctx);

Attribute convert_attribute(const ::onnx::AttributeProto& a, const Ctx& ctx,
                            const std::string& node_label) {
  using K = Attribute::Kind;
  Attribute out;
  out.name = a.name();
  if (!a.ref_attr_name().empty())
    onnx_fail<UnsupportedError>(node_label, ": attribute '", a.name(),
                                "' refers to a function attribute (only in functions)");
  Ctx sub = ctx;
  sub.where = node_label + " attribute '" + a.name() + "'";
  switch (a.type()) {
    case ::onnx::AttributeProto::FLOAT:
      out.kind = K::Float;
      out.f = a.f();
      break;
    case ::onnx::AttributeProto::INT:
      out.kind = K::Int;
      out.i = a.i();
      break;
    case ::onnx::AttributeProto::STRING:
      out.kind = K::String;
      out.s = a.s();
      break;
    case ::onnx::AttributeProto::TENSOR: {
      out.kind = K::Tensor;
      Initializer t = detail::convert_tensor(a.t(), sub);
      out.t = t.data;
      out.t_type = t.type;
      out.t_shape = t.shape;
      out.t_strings = std::move(t.strings);
      break;
    }
    case ::onnx::AttributeProto::GRAPH:
      out.kind = K::Graph;
      out.g = convert_graph(a.g(), sub);
      break;
    case ::onnx::AttributeProto::FLOATS:
      out.kind = K::Floats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case ::onnx::AttributeProto::INTS:
      out.kind = K::Ints;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case ::onnx::AttributeProto::STRINGS:
      out.kind = K::Strings;
      out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case ::onnx::AttributeProto::GRAPHS:
      out.kind = K::Graphs;
      for (const auto& g : a.graphs()) out.graphs.push_back(convert_graph(g, sub));
      break;
    case ::onnx::AttributeProto::TYPE_PROTO:
      out.kind = K::TypeProto;
      out.tp = convert_type(a.tp());
      break;
    case ::onnx::AttributeProto::SPARSE_TENSOR:
      onnx_fail<UnsupportedError>(node_label, ": sparse tensor attribute '", a.name(), "'");
    default:
      // Files written without `type` (old exporters): infer it from the field set.
      if (a.has_f()) {
        out.kind = K::Float, out.f = a.f();
      } else if (a.has_i()) {
        out.kind = K::Int, out.i = a.i();
      } else if (a.has_s()) {
        out.kind = K::String, out.s = a.s();
      } else if (a.ints_size()) {
        out.kind = K::Ints, out.ints.assign(a.ints().begin(), a.ints().end());
      } else if (a.floats_size()) {
        out.kind = K::Floats, out.floats.assign(a.floats().begin(), a.floats().end());
      } else {
        onnx_fail<ValueError>(node_label, ": attribute '", a.name(), "' has no type");
      }
  }
  return out;
}

std::shared_ptr<const Graph> convert_graph(const ::onnx::GraphProto& g, const Ctx& ctx) {
  auto out = std::make_shared<Graph>();
  out->name = g.name();
  std::map<std::string, bool> init_names;
  for (const auto& t : g.initializer()) {
    Ctx c = ctx;
    c.where = "initializer '" + t.name() + "'";
    if (t.name().empty()) onnx_fail<ValueError>("an initializer has no name");
    if (init_names.count(t.name()))
      onnx_fail<ValueError>("initializer '", t.name(), "' is defined twice");
    init_names[t.name()] = true;
    out->initializers.push_back(detail::convert_tensor(t, c));
  }
  if (g.sparse_initializer_size() > 0)
    onnx_fail<UnsupportedError>("graph '", g.name(), "' has sparse initializers");
  for (const auto& vi : g.input()) {
    if (init_names.count(vi.name())) continue;  // an initializer with a declared type
    out->inputs.push_back({vi.name(), convert_type(vi.type())});
  }
  for (const auto& vi : g.output()) out->outputs.push_back({vi.name(), convert_type(vi.type())});
  for (const auto& vi : g.value_info()) out->value_types[vi.name()] = convert_type(vi.type());
  out->nodes.reserve(static_cast<std::size_t>(g.node_size()));
  int index = 0;
  for (const auto& n : g.node()) {
    Node node;
    node.name = n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
    node.op_type = n.op_type();
    node.domain = detail::canonical_domain(n.domain());
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    const std::string label = node.label();
    for (const auto& a : n.attribute()) {
      node.attributes.push_back(convert_attribute(a, ctx, label));
    }
    out->nodes.push_back(std::move(node));
    ++index;
  }
  return out;
}

Model convert_model(const ::onnx::ModelProto& mp, const std::string& base_dir) {
  Model m;
  m.ir_version = mp.ir_version();
  m.producer = mp.producer_name();
  for (const auto& o : mp.opset_import())
    m.opsets.push_back({detail::canonical_domain(o.domain()), o.version()});
  if (!mp.has_graph()) onnx_fail<ValueError>("the model has no graph");
  if (mp.functions_size() > 0)
    onnx_fail<UnsupportedError>("the model defines ", mp.functions_size(),
                                " local functions (first: '", mp.functions(0).name(), "')");
  Ctx ctx{base_dir, ""};
  m.graph = *convert_graph(mp.graph(), ctx);
  return m;
}

Value convert_value_proto_tensor(const ::onnx::TensorProto& t, const Device& device) {
  Ctx ctx{"", "tensor '" + t.name() + "'"};
  return detail::value_from_initializer(detail::convert_tensor(t, ctx), device);
}

Value convert_sequence(const ::onnx::SequenceProto& s, const TypeInfo& type, const Device& dev);

Value convert_optional(const ::onnx::OptionalProto& o, const TypeInfo& type, const Device& dev) {
  const TypeInfo inner = type.inner ? *type.inner : TypeInfo{};
  if (o.elem_type() == ::onnx::OptionalProto::UNDEFINED) return Value::none(type.elem);
  if (o.has_tensor_value()) return convert_value_proto_tensor(o.tensor_value(), dev);
  if (o.has_sequence_value()) return convert_sequence(o.sequence_value(), inner, dev);
  return Value::none(type.elem);
}

Value convert_sequence(const ::onnx::SequenceProto& s, const TypeInfo& type, const Device& dev) {
  std::vector<Value> items;
  for (const auto& t : s.tensor_values()) items.push_back(convert_value_proto_tensor(t, dev));
  for (const auto& q : s.sequence_values()) {
    (void)q;
    onnx_fail<UnsupportedError>("sequences of sequences are not supported");
  }
  ElemType elem = type.elem;
  if (elem == ElemType::Undefined && !items.empty()) elem = items[0].type();
  if (elem == ElemType::Undefined && s.elem_type() == ::onnx::SequenceProto::TENSOR && type.inner)
    elem = type.inner->elem;
  return Value::sequence(elem, std::move(items));
}

}  // namespace

Model parse_model(const std::string& bytes, const std::string& base_dir,
                  const LoadOptions& options) {
  ::onnx::ModelProto mp;
  if (bytes.empty()) onnx_fail<IoError>("the model is empty (0 bytes)");
  if (!mp.ParseFromString(bytes))
    onnx_fail<IoError>("the model is not a valid ONNX protobuf (truncated or corrupt, ",
                       bytes.size(), " bytes)");
  try {
    Model m = convert_model(mp, base_dir);
    detail::prepare_graph(m, m.graph, options, {});
    return m;
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    onnx_fail<OutOfMemoryError>("out of memory while loading the model");
  } catch (const std::exception& e) {
    onnx_fail<ValueError>("invalid model: ", e.what());
  }
}

Model load_model(const std::string& path, const LoadOptions& options) {
  const std::string bytes = read_file(path, "model");
  try {
    std::string dir = std::filesystem::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
    Model m = parse_model(bytes, dir, options);
    m.path = path;
    return m;
  } catch (const IoError& e) {
    throw IoError(std::string(e.what()) + " (file '" + path + "')");
  }
}

Value read_tensor_proto(const std::string& path, const Device& device) {
  ::onnx::TensorProto t;
  if (!t.ParseFromString(read_file(path, "tensor file")))
    onnx_fail<IoError>("'", path, "' is not a valid TensorProto");
  return convert_value_proto_tensor(t, device);
}

Value read_value_proto(const std::string& path, const TypeInfo& type, const Device& device) {
  const std::string bytes = read_file(path, "value file");
  if (type.kind == TypeInfo::Kind::Sequence) {
    ::onnx::SequenceProto s;
    if (!s.ParseFromString(bytes)) onnx_fail<IoError>("'", path, "' is not a SequenceProto");
    return convert_sequence(s, type, device);
  }
  if (type.kind == TypeInfo::Kind::Optional) {
    ::onnx::OptionalProto o;
    if (!o.ParseFromString(bytes)) onnx_fail<IoError>("'", path, "' is not an OptionalProto");
    return convert_optional(o, type, device);
  }
  ::onnx::TensorProto t;
  if (!t.ParseFromString(bytes)) onnx_fail<IoError>("'", path, "' is not a valid TensorProto");
  return convert_value_proto_tensor(t, device);
}

}  // namespace ember::onnx
