// .npy reading and writing.
#include "ember/onnx/npy.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

#include "onnx_internal.hpp"

namespace ember::onnx {

namespace {

using detail::onnx_fail;

ElemType type_of_descr(const std::string& d, const std::string& path) {
  static const std::pair<const char*, ElemType> table[] = {
      {"|b1", ElemType::Bool},    {"|i1", ElemType::Int8},   {"|u1", ElemType::UInt8},
      {"<i2", ElemType::Int16},   {"<u2", ElemType::UInt16}, {"<i4", ElemType::Int32},
      {"<u4", ElemType::UInt32},  {"<i8", ElemType::Int64},  {"<u8", ElemType::UInt64},
      {"<f2", ElemType::Float16}, {"<f4", ElemType::Float},  {"<f8", ElemType::Double}};
  for (const auto& [k, t] : table)
    if (d == k) return t;
  onnx_fail<IoError>("'", path, "': unsupported .npy dtype '", d, "'");
}

std::string descr_of(ElemType t) {
  switch (t) {
    case ElemType::Bool:
      return "|b1";
    case ElemType::Int8:
      return "|i1";
    case ElemType::UInt8:
      return "|u1";
    case ElemType::Int16:
      return "<i2";
    case ElemType::UInt16:
      return "<u2";
    case ElemType::Int32:
      return "<i4";
    case ElemType::UInt32:
      return "<u4";
    case ElemType::Int64:
      return "<i8";
    case ElemType::UInt64:
      return "<u8";
    case ElemType::Float16:
      return "<f2";
    case ElemType::Double:
      return "<f8";
    default:
      return "<f4";
  }
}

/// The value of `key` in the header dict ("'descr': '<f4', ...").
std::string header_field(const std::string& h, const std::string& key, const std::string& path) {
  const auto k = h.find("'" + key + "'");
  if (k == std::string::npos) onnx_fail<IoError>("'", path, "': .npy header has no '", key, "'");
  auto p = h.find(':', k);
  if (p == std::string::npos) onnx_fail<IoError>("'", path, "': corrupt .npy header");
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  if (p < h.size() && h[p] == '\'') {
    const auto e = h.find('\'', p + 1);
    if (e == std::string::npos) onnx_fail<IoError>("'", path, "': corrupt .npy header");
    return h.substr(p + 1, e - p - 1);
  }
  if (p < h.size() && h[p] == '(') {
    const auto e = h.find(')', p);
    if (e == std::string::npos) onnx_fail<IoError>("'", path, "': corrupt .npy header");
    return h.substr(p + 1, e - p - 1);
  }
  const auto e = h.find_first_of(",}", p);
  return h.substr(p, e == std::string::npos ? std::string::npos : e - p);
}

}  // namespace

Value read_npy(const std::string& path, const Device& device) {
  std::ifstream f(path, std::ios::binary);
  if (!f) onnx_fail<IoError>("cannot open '", path, "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  const std::string b = ss.str();
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0)
    onnx_fail<IoError>("'", path, "' is not a .npy file");
  const int major = static_cast<unsigned char>(b[6]);
  std::size_t hlen, off;
  if (major == 1) {
    hlen = static_cast<unsigned char>(b[8]) |
           (static_cast<std::size_t>(static_cast<unsigned char>(b[9])) << 8);
    off = 10;
  } else {
    if (b.size() < 12) onnx_fail<IoError>("'", path, "' is truncated");
    hlen = 0;
    for (int i = 0; i < 4; ++i)
      hlen |= static_cast<std::size_t>(static_cast<unsigned char>(b[8 + i])) << (8 * i);
    off = 12;
  }
  if (off + hlen > b.size()) onnx_fail<IoError>("'", path, "' is truncated (header)");
  const std::string h = b.substr(off, hlen);
  const ElemType t = type_of_descr(header_field(h, "descr", path), path);
  if (header_field(h, "fortran_order", path).find("True") != std::string::npos)
    onnx_fail<IoError>("'", path, "': Fortran-order arrays are not supported");
  std::vector<std::int64_t> shape;
  std::stringstream dims(header_field(h, "shape", path));
  std::string tok;
  std::int64_t n = 1;
  while (std::getline(dims, tok, ',')) {
    if (tok.find_first_not_of(" ") == std::string::npos) continue;
    std::int64_t d = 0;
    try {
      d = std::stoll(tok);
    } catch (...) {
      onnx_fail<IoError>("'", path, "': corrupt shape in the .npy header");
    }
    if (d < 0) onnx_fail<IoError>("'", path, "': negative dim in the .npy header");
    shape.push_back(d);
    n *= d;
  }
  std::size_t width = 1;
  switch (t) {
    case ElemType::Int16:
    case ElemType::UInt16:
    case ElemType::Float16:
      width = 2;
      break;
    case ElemType::Int32:
    case ElemType::UInt32:
    case ElemType::Float:
      width = 4;
      break;
    case ElemType::Int64:
    case ElemType::UInt64:
    case ElemType::Double:
      width = 8;
      break;
    default:
      width = 1;
  }
  const std::size_t data = off + hlen;
  if (b.size() - data != static_cast<std::size_t>(n) * width)
    onnx_fail<IoError>("'", path, "' holds ", b.size() - data, " data bytes, the shape needs ",
                       static_cast<std::size_t>(n) * width);
  std::vector<std::uint8_t> bytes;
  const DType sd = storage_dtype(t);
  if (t == ElemType::UInt16 || t == ElemType::UInt32) {
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint64_t v = 0;
      std::memcpy(&v, b.data() + data + static_cast<std::size_t>(i) * width, width);
      if (sd == DType::I32) {
        const auto w = static_cast<std::int32_t>(v);
        const auto* p = reinterpret_cast<const std::uint8_t*>(&w);
        bytes.insert(bytes.end(), p, p + 4);
      } else {
        const auto w = static_cast<std::int64_t>(v);
        const auto* p = reinterpret_cast<const std::uint8_t*>(&w);
        bytes.insert(bytes.end(), p, p + 8);
      }
    }
  } else {
    bytes.assign(b.begin() + static_cast<std::ptrdiff_t>(data), b.end());
  }
  return Value::from_data(TensorData::from_bytes(std::move(bytes), Shape(shape), sd), device, t);
}

void write_npy(const std::string& path, const Value& value) {
  if (!value.is_tensor() || value.type() == ElemType::String)
    onnx_fail<UnsupportedError>("cannot write ", value.describe(), " as .npy");
  ElemType t = value.type();
  TensorData d = value.to_data();
  if (detail::is_small_float(t) || t == ElemType::BFloat16) {
    d = d.convert(DType::F32);
    t = ElemType::Float;
  }
  if (t == ElemType::Int4 || t == ElemType::Int2) t = ElemType::Int8;
  if (t == ElemType::UInt4 || t == ElemType::UInt2) t = ElemType::UInt8;
  std::vector<std::uint8_t> bytes = d.bytes();
  if (t == ElemType::UInt16) {
    std::vector<std::uint8_t> out;
    for (auto v : d.to_vec<std::int64_t>()) {
      const auto w = static_cast<std::uint16_t>(v);
      out.push_back(static_cast<std::uint8_t>(w & 0xff));
      out.push_back(static_cast<std::uint8_t>(w >> 8));
    }
    bytes = std::move(out);
  } else if (t == ElemType::UInt32) {
    std::vector<std::uint8_t> out;
    for (auto v : d.to_vec<std::int64_t>()) {
      const auto w = static_cast<std::uint32_t>(v);
      const auto* p = reinterpret_cast<const std::uint8_t*>(&w);
      out.insert(out.end(), p, p + 4);
    }
    bytes = std::move(out);
  }
  std::string shape = "(";
  for (std::size_t i = 0; i < value.shape().size(); ++i)
    shape += std::to_string(value.shape()[i]) +
             (value.shape().size() == 1 || i + 1 < value.shape().size() ? "," : "");
  shape += ")";
  std::string header =
      "{'descr': '" + descr_of(t) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) onnx_fail<IoError>("cannot write '", path, "'");
  f.write("\x93NUMPY\x01\x00", 8);
  const auto hl = static_cast<std::uint16_t>(header.size());
  const char l[2] = {static_cast<char>(hl & 0xff), static_cast<char>(hl >> 8)};
  f.write(l, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) onnx_fail<IoError>("cannot write '", path, "'");
}

}  // namespace ember::onnx
