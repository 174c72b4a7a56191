// `ember onnx convert`: the model as a C++ EMBER_MODULE struct plus safetensors weights.
#include "ember/onnx/codegen.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>

#include "ember/store/safetensors.hpp"
#include "onnx_internal.hpp"

namespace ember::onnx {

namespace {

using detail::onnx_fail;

/// A C++ identifier from an ONNX name ("/layer1/0/conv1/Conv_output_0" ->
/// "layer1_0_conv1_Conv_output_0").
std::string ident(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out.push_back(c);
    else if (!out.empty() && out.back() != '_')
      out.push_back('_');
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v_" + out;
  return out;
}

/// Names a generated identifier must not take: C++ keywords, the names the generated code
/// uses itself (gen, Value, ember, B, dev, the struct's name) and the members EMBER_MODULE
/// gives the struct. An ONNX value named `return` or `gen` becomes `return_2`, `gen_2`.
std::set<std::string> reserved_names(const std::string& struct_name) {
  std::set<std::string> r = {
      // the generated struct and its body
      "forward", "init", "load", "save", "device", "gen", "Value", "ember", "B", "dev", "std",
      "model", "deep_copy", "ember_fields", "ember_fields2", "ember_module_tag", "fork", "freeze",
      "is_training", "load_state_dict", "no_grad", "num_params", "set_training", "state_dict",
      "to_device", "train", "unfreeze", "valid",
      // C++20 keywords and alternative tokens
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  r.insert(struct_name);
  return r;
}

std::string camel(const std::string& s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      up = true;
      continue;
    }
    out.push_back(up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
    up = false;
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "Model" + out;
  return out;
}

std::string quote(const std::string& s) {
  std::ostringstream os;
  os << '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      os << '\\' << c;
    else if (c < 32 || c > 126)
      os << "\\x" << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(c) << "\"\""
         << std::dec;
    else
      os << c;
  }
  os << '"';
  return os.str();
}

std::string num(double v) {
  if (std::isnan(v)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v))
    return v > 0 ? "std::numeric_limits<double>::infinity()"
                 : "-std::numeric_limits<double>::infinity()";
  std::ostringstream os;
  os << std::setprecision(17) << v;
  std::string s = os.str();
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

template <class T, class F>
std::string list(const std::vector<T>& v, F f) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + f(v[i]);
  return s + "}";
}

std::string ints_str(const std::vector<std::int64_t>& v) {
  return list(v, [](std::int64_t x) { return std::to_string(x); });
}

std::string elem_str(ElemType t) {
  return "ember::onnx::ElemType{" + std::to_string(static_cast<int>(t)) + "} /* " +
         elem_type_name(t) + " */";
}

std::string attr_code(const Node& n, const Attribute& a) {
  using K = Attribute::Kind;
  const std::string nm = quote(a.name);
  switch (a.kind) {
    case K::Int:
      return "gen::i(" + nm + ", " + std::to_string(a.i) + ")";
    case K::Float:
      return "gen::f(" + nm + ", " + num(a.f) + ")";
    case K::String:
      return "gen::s(" + nm + ", " + quote(a.s) + ")";
    case K::Ints:
      return "gen::ints(" + nm + ", " + ints_str(a.ints) + ")";
    case K::Floats:
      return "gen::floats(" + nm + ", " + list(a.floats, num) + ")";
    case K::Strings:
      return "gen::strings(" + nm + ", " + list(a.strings, quote) + ")";
    case K::Tensor:
      if (a.t_type != ElemType::String && a.t)
        return "gen::tensor(" + nm + ", " + elem_str(a.t_type) + ", " + ints_str(a.t_shape) + ", " +
               list(a.t->to_vec<double>(), num) + ")";
      break;
    default:
      break;
  }
  detail::node_fail<UnsupportedError>(n, "attribute '", a.name, "' of kind ",
                                      Attribute::kind_name(a.kind), " cannot be generated");
}

struct Field {
  std::string name;  // C++ field name
  std::string onnx;  // initializer name
  const Initializer* init;
  bool param;  // float -> Param, else Buffer
  std::size_t rank;
};

}  // namespace

std::string generate_header(const Model& model, const std::string& struct_name,
                            const std::string& name_space, const std::string& weights_file) {
  const Graph& g = model.graph;
  std::set<std::string> used = reserved_names(struct_name);
  std::map<std::string, std::string> names;  // ONNX value -> C++ expression
  auto unique = [&](std::string base) {
    std::string s = base;
    for (int k = 2; used.count(s); ++k) s = base + "_" + std::to_string(k);
    used.insert(s);
    return s;
  };
  // Small integer initializers are written inline; the others become fields.
  std::vector<Field> fields;
  std::ostringstream consts;
  for (const auto& init : g.initializers) {
    std::int64_t n = 1;
    for (auto d : init.shape) n *= d;
    if (init.type == ElemType::String)
      onnx_fail<UnsupportedError>("initializer '", init.name,
                                  "' is a string tensor (not supported by convert)");
    if (is_int_type(init.type) && n <= 64 && init.type == ElemType::Int64) {
      const std::string v = unique(ident(init.name));
      consts << "    const Value " << v << " = gen::c_i64("
             << ints_str(init.data->to_vec<std::int64_t>()) << ", " << ints_str(init.shape)
             << ", dev);\n";
      names[init.name] = v;
      continue;
    }
    Field f{unique(ident(init.name)), init.name, &init, is_float_type(init.type),
            std::max<std::size_t>(init.shape.size(), 1)};
    names[init.name] =
        "gen::w(" + f.name + ", " + elem_str(init.type) + ", " + ints_str(init.shape) + ")";
    fields.push_back(f);
  }
  std::ostringstream os;
  os << "// Generated by `ember onnx convert` from "
     << (model.path.empty() ? "a model" : std::filesystem::path(model.path).filename().string())
     << " (opset " << model.opset("") << ", " << model.num_params() << " parameters).\n"
     << "// Weights: " << weights_file
     << " (load with `model.load(path)`). Regenerate rather than edit.\n"
     << "#pragma once\n\n#include <limits>\n#include <vector>\n\n"
     << "#include \"ember/onnx/generated.hpp\"\n\n"
     << "namespace " << name_space << " {\n\n";
  os << "/// ";
  for (std::size_t k = 0; k < g.inputs.size(); ++k)
    os << (k ? ", " : "") << g.inputs[k].name << ": " << type_string(g.inputs[k].type);
  os << " -> ";
  for (std::size_t k = 0; k < g.outputs.size(); ++k)
    os << (k ? ", " : "") << g.outputs[k].name << ": " << type_string(g.outputs[k].type);
  os << "\ntemplate <ember::Backend B = ember::Dispatch>\nstruct " << struct_name << " {\n"
     << "  static_assert(std::is_same_v<B, ember::Dispatch>, \"ONNX values run on Dispatch\");\n";
  for (const auto& f : fields) {
    const std::string t = "ember::Tensor<B, " + std::to_string(f.rank) +
                          (f.param                     ? ""
                           : is_int_type(f.init->type) ? ", ember::Int"
                                                       : ", ember::Bool") +
                          ">";
    os << "  ember::nn::" << (f.param ? "Param<" : "Buffer<") << t << "> " << f.name << ";  // "
       << quote(f.onnx) << " " << elem_type_name(f.init->type) << Shape(f.init->shape) << "\n";
  }
  os << "  EMBER_MODULE(";
  for (std::size_t k = 0; k < fields.size(); ++k) os << (k ? ", " : "") << fields[k].name;
  os << ")\n\n";
  // init(): zero tensors of the right shapes (then load()).
  os << "  /// Fields of the right shapes filled with zeros; load the weights with load(path).\n"
     << "  static " << struct_name << " init(const ember::Device& device = {}) {\n"
     << "    " << struct_name << " m;\n";
  for (const auto& f : fields) {
    std::vector<std::int64_t> shape = f.init->shape;
    if (shape.empty()) shape = {1};
    const std::string t = "ember::Tensor<B, " + std::to_string(f.rank) +
                          (f.param                     ? ""
                           : is_int_type(f.init->type) ? ", ember::Int"
                                                       : ", ember::Bool") +
                          ">";
    os << "    m." << f.name << " = decltype(m." << f.name << ")(" << t << "::zeros("
       << ints_str(shape) << ", device, ember::DType("
       << static_cast<int>(storage_dtype(f.init->type)) << "))" << (f.param ? ", false" : "")
       << ");\n";
  }
  os << "    return m;\n  }\n\n";
  // forward()
  const bool multi = g.outputs.size() != 1;
  os << "  " << (multi ? "std::vector<ember::onnx::Value>" : "ember::onnx::Value") << " forward(";
  for (std::size_t k = 0; k < g.inputs.size(); ++k) {
    const std::string v = unique(ident(g.inputs[k].name));
    names[g.inputs[k].name] = v;
    os << (k ? ", " : "") << "const ember::onnx::Value& " << v;
  }
  os << ") const {\n    using ember::onnx::Value;\n    namespace gen = ember::onnx::gen;\n";
  os << "    const ember::Device dev = "
     << (g.inputs.empty() ? "ember::Device{}" : names[g.inputs[0].name] + ".device()") << ";\n"
     << "    (void)dev;\n";
  os << consts.str();
  const std::int64_t opset = model.opset("");
  for (const auto& n : g.nodes) {
    for (const auto& a : n.attributes)
      if (a.g || !a.graphs.empty())
        detail::node_fail<UnsupportedError>(n,
                                            "operators with sub-graphs cannot be converted to C++ "
                                            "(run the model with the interpreter)");
    std::string in = "{";
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      if (k) in += ", ";
      if (n.inputs[k].empty()) {
        in += "Value()";
        continue;
      }
      auto it = names.find(n.inputs[k]);
      if (it == names.end())
        detail::node_fail<ValueError>(n, "input '", n.inputs[k], "' is not defined");
      in += it->second;
    }
    in += "}";
    std::string at = "{";
    for (std::size_t k = 0; k < n.attributes.size(); ++k)
      at += (k ? ", " : "") + attr_code(n, n.attributes[k]);
    at += "}";
    const std::int64_t ver = n.domain.empty() ? opset : model.opset(n.domain);
    const std::string dom = n.domain.empty() ? "" : ", " + quote(n.domain);
    if (n.outputs.size() == 1) {
      const std::string v = unique(ident(n.outputs[0]));
      names[n.outputs[0]] = v;
      os << "    const Value " << v << " = gen::op1(" << quote(n.op_type) << ", " << in << ", "
         << at << ", " << ver << dom << ");\n";
    } else {
      const std::string v = unique(ident(n.name) + "_out");
      os << "    const auto " << v << " = gen::op(" << quote(n.op_type) << ", " << in << ", " << at
         << ", " << ver << ", " << n.outputs.size() << dom << ");\n";
      for (std::size_t k = 0; k < n.outputs.size(); ++k)
        if (!n.outputs[k].empty()) names[n.outputs[k]] = v + "[" + std::to_string(k) + "]";
    }
  }
  std::string ret;
  for (std::size_t k = 0; k < g.outputs.size(); ++k) {
    auto it = names.find(g.outputs[k].name);
    if (it == names.end())
      onnx_fail<ValueError>("graph output '", g.outputs[k].name, "' is not computed");
    ret += (k ? ", " : "") + it->second;
  }
  os << "    return " << (multi ? "{" + ret + "}" : ret) << ";\n  }\n};\n\n}  // namespace "
     << name_space << "\n";
  return os.str();
}

ConvertResult convert(const Model& model, const std::string& out_dir,
                      const ConvertOptions& options) {
  namespace fs = std::filesystem;
  const std::string stem = model.path.empty() ? "model" : fs::path(model.path).stem().string();
  ConvertResult r;
  r.struct_name = options.name.empty() ? camel(stem) : options.name;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) onnx_fail<IoError>("cannot create the folder '", out_dir, "': ", ec.message());
  r.header = (fs::path(out_dir) / (stem + ".hpp")).string();
  r.weights = (fs::path(out_dir) / (stem + ".safetensors")).string();
  const std::string text = generate_header(model, r.struct_name, options.name_space,
                                           fs::path(r.weights).filename().string());
  // Weights keyed by field name (the same unique identifiers as the header's).
  store::NamedTensors nt;
  std::set<std::string> used = reserved_names(r.struct_name);
  auto unique = [&](std::string base) {
    std::string s = base;
    for (int k = 2; used.count(s); ++k) s = base + "_" + std::to_string(k);
    used.insert(s);
    return s;
  };
  for (const auto& init : model.graph.initializers) {
    std::int64_t n = 1;
    for (auto d : init.shape) n *= d;
    const std::string f = unique(ident(init.name));
    if (init.type == ElemType::Int64 && n <= 64) continue;
    std::vector<std::int64_t> shape =
        init.shape.empty() ? std::vector<std::int64_t>{1} : init.shape;
    nt.tensors.emplace_back(
        f, TensorData::from_bytes(init.data->bytes(), Shape(shape), init.data->dtype()));
  }
  nt.metadata["onnx_model"] = stem;
  store::write_safetensors(r.weights, nt);
  std::ofstream h(r.header);
  h << text;
  if (!h) onnx_fail<IoError>("cannot write '", r.header, "'");
  return r;
}

}  // namespace ember::onnx
