// TensorData: a backend-independent host copy of a tensor (shape, dtype, bytes).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ember/core/dtype.hpp"
#include "ember/core/error.hpp"
#include "ember/core/shape.hpp"

namespace ember {

/// Tolerance for approximate comparison: |a - b| <= absolute + relative * |b|.
/// `balanced()` is Burn's default (relative 0.5 %, absolute 1e-5).
struct Tolerance {
  double relative = 5e-3;
  double absolute = 1e-5;
  static Tolerance balanced() { return {}; }
  static Tolerance strict() { return {1e-6, 1e-9}; }
  static Tolerance permissive() { return {1e-2, 1e-2}; }
  static Tolerance rel_abs(double rel, double abs) { return {rel, abs}; }
};

/// Row-major host data of a tensor. Values are stored in `dtype`'s native
/// layout (f16/bf16 as their 16 bits, bool as one byte 0/1).
class TensorData {
 public:
  TensorData() = default;

  /// Takes `values` (row-major) for `shape`; throws ShapeError if the counts differ.
  template <class T>
  TensorData(std::vector<T> values, Shape shape) : shape_(std::move(shape)), dtype_(dtype_of<T>()) {
    check_count("TensorData", static_cast<std::int64_t>(values.size()));
    bytes_.resize(values.size() * sizeof(T));
    if constexpr (std::is_same_v<T, bool>) {
      for (std::size_t i = 0; i < values.size(); ++i) bytes_[i] = values[i] ? 1 : 0;
    } else if (!values.empty()) {
      std::memcpy(bytes_.data(), values.data(), bytes_.size());
    }
  }

  /// Raw bytes (exactly numel * dtype_size bytes), e.g. from a file.
  /// Throws ShapeError if the size does not match.
  static TensorData from_bytes(std::vector<std::uint8_t> bytes, Shape shape, DType dtype);

  /// All elements `value` in `dtype`; ValueError outside its range (torch.full's rule).
  static TensorData full(Shape shape, double value, DType dtype);

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  std::int64_t numel() const { return shape_.numel(); }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }
  /// Same dtype, shape and bytes.
  bool operator==(const TensorData& o) const {
    return dtype_ == o.dtype_ && shape_ == o.shape_ && bytes_ == o.bytes_;
  }
  std::vector<std::uint8_t>& bytes_mut() { return bytes_; }
  std::vector<std::uint8_t> into_bytes() && { return std::move(bytes_); }

  /// A typed view; throws DTypeError if T is not exactly the stored dtype.
  template <class T>
  std::span<const T> as_span() const {
    check_type(dtype_of<T>(), "as_span");
    return {reinterpret_cast<const T*>(bytes_.data()), static_cast<std::size_t>(numel())};
  }
  template <class T>
  std::span<T> as_mut_span() {
    check_type(dtype_of<T>(), "as_mut_span");
    return {reinterpret_cast<T*>(bytes_.data()), static_cast<std::size_t>(numel())};
  }

  /// Values converted to T (any dtype to any C++ element type; float->int truncates toward 0,
  /// NaN->int gives 0, anything->bool is `!= 0`).
  template <class T>
  std::vector<T> to_vec() const;

  /// Element i as a double (for printing and comparison).
  double value_as_double(std::int64_t i) const;

  /// A copy converted to `dtype` (same rules as to_vec).
  TensorData convert(DType dtype) const;

  /// Throws Error with a message listing up to 10 mismatches unless shapes, dtypes
  /// and every element match exactly (NaN equals NaN).
  void assert_eq(const TensorData& expected, bool check_dtype = true) const;

  /// Throws Error unless shapes match and every element satisfies
  /// |actual - expected| <= tol.absolute + tol.relative * |expected|. NaN matches NaN, and
  /// infinities must match exactly. Dtypes may differ (values compared as double).
  void assert_approx_eq(const TensorData& expected, Tolerance tol = Tolerance::balanced()) const;

  /// "TensorData { shape: [2, 3], dtype: f32, values: [...] }"
  std::string to_string(std::size_t max_values = 64) const;

 private:
  void check_count(const char* op, std::int64_t n) const;
  void check_type(DType want, const char* op) const;

  Shape shape_;
  DType dtype_ = DType::F32;
  std::vector<std::uint8_t> bytes_;
};

namespace detail {
template <class To, class From>
To convert_value(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<double>(v) != 0.0;
  } else if constexpr (std::is_same_v<To, f16> || std::is_same_v<To, bf16>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> &&
                       (std::is_floating_point_v<From> || std::is_same_v<From, f16> ||
                        std::is_same_v<From, bf16>)) {
    const double d = static_cast<double>(
        static_cast<float>(v) == static_cast<float>(v) ? static_cast<double>(v) : 0.0);
    if (d != d) return To(0);
    if (d >= static_cast<double>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    if (d <= static_cast<double>(std::numeric_limits<To>::lowest()))
      return std::numeric_limits<To>::lowest();
    return static_cast<To>(d);
  } else if constexpr (std::is_same_v<From, f16> || std::is_same_v<From, bf16>) {
    return static_cast<To>(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}
}  // namespace detail

template <class T>
std::vector<T> TensorData::to_vec() const {
  std::vector<T> out(static_cast<std::size_t>(numel()));
  visit_dtype(dtype_, [&]<class S>() {
    const S* src = reinterpret_cast<const S*>(bytes_.data());
    for (std::size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<S, bool>) {
        out[i] = detail::convert_value<T>(static_cast<int>(bytes_[i] != 0));
      } else {
        out[i] = detail::convert_value<T>(src[i]);
      }
    }
  });
  return out;
}

/// The values of `data` as nested brackets ("[[1, 2, 3], [4, 5, 6]]"), elided in the middle
/// (edge_items per dim kept) when there are more than `threshold` elements.
std::string format_tensor_values(const TensorData& data, std::size_t edge_items = 3,
                                 std::size_t threshold = 1000);

}  // namespace ember
