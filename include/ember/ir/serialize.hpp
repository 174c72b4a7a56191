// Op descriptions to bytes and back (Remote will send them over a network).
//
//   std::vector<std::uint8_t> b = ir::encode(ir::SumDim{{1}});
//   ir::SumDim d = ir::decode<ir::SumDim>(b);            // throws IoError on bad bytes
//
// Format (little-endian): the description's name (u32 length + bytes), then its fields in
// `tie()` order: integers and doubles as 8 bytes, bools and enums as 1 / 4 bytes, containers as
// a u64 count followed by the items, optionals as a flag byte and the value, TensorData as
// dtype, shape and raw bytes. Decoding checks the name, every length against the remaining
// bytes, enum ranges, and that nothing is left over.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/core/distribution.hpp"
#include "ember/core/error.hpp"
#include "ember/core/options.hpp"
#include "ember/core/quant.hpp"
#include "ember/core/slice.hpp"

namespace ember::ir {

// ---- the fields of the option structs (descriptions expose theirs with tie()) ---------------
template <std::size_t N>
auto fields(ConvOptions<N>& o) {
  return std::tie(o.stride, o.padding, o.dilation, o.groups);
}
template <std::size_t N>
auto fields(ConvTransposeOptions<N>& o) {
  return std::tie(o.stride, o.padding, o.padding_out, o.dilation, o.groups);
}
inline auto fields(DeformConvOptions& o) {
  return std::tie(o.stride, o.padding, o.dilation, o.weight_groups, o.offset_groups);
}
inline auto fields(UnfoldOptions& o) {
  return std::tie(o.stride, o.padding, o.dilation);
}
template <std::size_t N>
auto fields(MaxPoolOptions<N>& o) {
  return std::tie(o.kernel, o.stride, o.padding, o.dilation, o.ceil_mode);
}
template <std::size_t N>
auto fields(AvgPoolOptions<N>& o) {
  return std::tie(o.kernel, o.stride, o.padding, o.count_include_pad, o.ceil_mode);
}
inline auto fields(InterpolateOptions& o) {
  return std::tie(o.mode, o.align_corners);
}
inline auto fields(GridSampleOptions& o) {
  return std::tie(o.mode, o.padding_mode, o.align_corners);
}
inline auto fields(Distribution& o) {
  return std::tie(o.kind, o.a, o.b);
}
inline auto fields(QuantScheme& o) {
  return std::tie(o.value, o.mode, o.level, o.axis, o.block_size, o.param);
}
inline auto fields(ActivationQuant& o) {
  return std::tie(o.scale, o.zero_point);
}
inline auto fields(SliceRange& o) {
  return std::tie(o.start, o.count, o.step);
}
template <class D>
auto fields(D& d) -> decltype(d.tie()) {
  return d.tie();
}

/// Appends encoded values to a byte buffer.
class Writer {
 public:
  std::vector<std::uint8_t> bytes;

  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }

  template <class T>
  void write(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      bytes.push_back(v ? 1 : 0);
    } else if constexpr (std::is_enum_v<T>) {
      u64(static_cast<std::uint64_t>(v));
    } else if constexpr (std::is_integral_v<T>) {
      u64(static_cast<std::uint64_t>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      const double d = static_cast<double>(v);
      std::uint64_t u;
      std::memcpy(&u, &d, 8);
      u64(u);
    } else if constexpr (std::is_same_v<T, std::string>) {
      u64(v.size());
      raw(v.data(), v.size());
    } else if constexpr (std::is_same_v<T, Shape>) {
      write(v.dims);
    } else if constexpr (std::is_same_v<T, TensorData>) {
      write(v.dtype());
      write(v.shape());
      u64(v.bytes().size());
      raw(v.bytes().data(), v.bytes().size());
    } else if constexpr (requires {
                           std::tuple_size<T>::value;
                           v[0];
                         }) {
      for (const auto& x : v) write(x);  // std::array: fixed size
    } else if constexpr (requires {
                           typename T::value_type;
                           v.size();
                           v.begin();
                         }) {
      u64(v.size());
      for (const auto& x : v) write(x);
    } else if constexpr (requires {
                           v.has_value();
                           *v;
                         }) {
      write(v.has_value());
      if (v) write(*v);
    } else if constexpr (requires {
                           v.first;
                           v.second;
                         }) {
      write(v.first);
      write(v.second);
    } else {
      auto f = fields(const_cast<T&>(v));
      std::apply([this](const auto&... x) { (write(x), ...); }, f);
    }
  }
};

/// Reads encoded values, throwing IoError "[decode] ..." on malformed input.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> b) : bytes_(b) {}
  bool done() const { return pos_ == bytes_.size(); }

  void need(std::uint64_t n) const {
    if (n > bytes_.size() - pos_)
      ember::detail::fail<IoError>("decode", "truncated description: ", n, " bytes needed at ",
                                   pos_, " of ", bytes_.size());
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(bytes_[pos_ + i]) << (8 * i);
    pos_ += 8;
    return v;
  }
  /// A count of items of at least `item_bytes` bytes each (bounded by what is left).
  std::uint64_t count(std::uint64_t item_bytes) {
    const std::uint64_t n = u64();
    if (item_bytes > 0 && n > (bytes_.size() - pos_) / item_bytes)
      ember::detail::fail<IoError>("decode", "count ", n, " exceeds the remaining bytes");
    return n;
  }

  template <class T>
  void read(T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      need(1);
      const std::uint8_t b = bytes_[pos_++];
      if (b > 1) ember::detail::fail<IoError>("decode", "invalid bool byte ", int(b));
      v = b != 0;
    } else if constexpr (std::is_enum_v<T>) {
      const std::uint64_t u = u64();
      if (u > 255) ember::detail::fail<IoError>("decode", "enum value ", u, " out of range");
      v = static_cast<T>(u);
    } else if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(u64());
    } else if constexpr (std::is_floating_point_v<T>) {
      const std::uint64_t u = u64();
      double d;
      std::memcpy(&d, &u, 8);
      v = static_cast<T>(d);
    } else if constexpr (std::is_same_v<T, std::string>) {
      const std::uint64_t n = count(1);
      v.assign(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
      pos_ += n;
    } else if constexpr (std::is_same_v<T, Shape>) {
      read(v.dims);
    } else if constexpr (std::is_same_v<T, TensorData>) {
      DType dt{};
      Shape s;
      read(dt);
      read(s);
      const std::uint64_t n = count(1);
      std::vector<std::uint8_t> b(bytes_.begin() + static_cast<std::ptrdiff_t>(pos_),
                                  bytes_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
      pos_ += n;
      v = TensorData::from_bytes(std::move(b), std::move(s), dt);  // checks the byte count
    } else if constexpr (requires {
                           v.size();
                           v.begin();
                           v.resize(0);
                         }) {
      const std::uint64_t n = count(1);
      v.clear();
      v.resize(static_cast<std::size_t>(n));
      for (auto& x : v) read(x);
    } else if constexpr (requires {
                           std::tuple_size<T>::value;
                           v[0];
                         }) {
      for (auto& x : v) read(x);
    } else if constexpr (requires {
                           v.has_value();
                           v.reset();
                         }) {
      bool has = false;
      read(has);
      if (has) {
        typename T::value_type x{};
        read(x);
        v = std::move(x);
      } else {
        v.reset();
      }
    } else if constexpr (requires {
                           v.first;
                           v.second;
                         }) {
      read(v.first);
      read(v.second);
    } else {
      auto f = fields(v);
      std::apply([this](auto&... x) { (read(x), ...); }, f);
    }
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
};

/// The bytes of description `d`: its name, then its fields.
template <class D>
std::vector<std::uint8_t> encode(const D& d) {
  Writer w;
  w.write(std::string(D::name));
  w.write(d);
  return std::move(w.bytes);
}

/// The description D encoded in `bytes`. Throws IoError when the bytes hold another op, are
/// truncated, or have bytes left over.
template <class D>
D decode(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  std::string name;
  r.read(name);
  if (name != D::name)
    ember::detail::fail<IoError>("decode", "bytes describe '", name, "', expected '", D::name, "'");
  D d{};
  r.read(d);
  if (!r.done()) ember::detail::fail<IoError>("decode", "bytes left over after '", name, "'");
  return d;
}

}  // namespace ember::ir
