#include "ember/core/data.hpp"

#include <cmath>
#include <sstream>

#include "ember/core/value_range.hpp"

namespace ember {

void TensorData::check_count(const char* op, std::int64_t n) const {
  for (auto d : shape_.dims) {
    if (d < 0) detail::fail<ShapeError>(op, "shape ", shape_, " has a negative dim");
  }
  if (n != shape_.numel()) {
    detail::fail<ShapeError>(op, n, " values given for shape ", shape_, " (", shape_.numel(),
                             " elements)");
  }
}

void TensorData::check_type(DType want, const char* op) const {
  if (want != dtype_) {
    detail::fail<DTypeError>(op, "requested ", want, " but the data is ", dtype_);
  }
}

TensorData TensorData::from_bytes(std::vector<std::uint8_t> bytes, Shape shape, DType dtype) {
  TensorData d;
  d.shape_ = std::move(shape);
  d.dtype_ = dtype;
  const auto want = static_cast<std::size_t>(d.shape_.numel()) * dtype_size(dtype);
  for (auto v : d.shape_.dims) {
    if (v < 0) detail::fail<ShapeError>("from_bytes", "shape ", d.shape_, " has a negative dim");
  }
  if (bytes.size() != want) {
    detail::fail<ShapeError>("from_bytes", bytes.size(), " bytes given for shape ", d.shape_,
                             " of dtype ", dtype, " (", want, " bytes expected)");
  }
  d.bytes_ = std::move(bytes);
  return d;
}

TensorData TensorData::full(Shape shape, double value, DType dtype) {
  TensorData d;
  d.shape_ = std::move(shape);
  d.dtype_ = dtype;
  d.check_count("full", d.shape_.numel());
  detail::check_value_fits("TensorData::full", value, dtype);
  const auto n = static_cast<std::size_t>(d.shape_.numel());
  d.bytes_.resize(n * dtype_size(dtype));
  visit_dtype(dtype, [&]<class T>() {
    const T v = detail::convert_value<T>(value);
    T* p = reinterpret_cast<T*>(d.bytes_.data());
    for (std::size_t i = 0; i < n; ++i) p[i] = v;
  });
  return d;
}

double TensorData::value_as_double(std::int64_t i) const {
  return visit_dtype(dtype_, [&]<class T>() -> double {
    if constexpr (std::is_same_v<T, bool>) {
      return bytes_[static_cast<std::size_t>(i)] ? 1.0 : 0.0;
    } else {
      T v;
      std::memcpy(&v, bytes_.data() + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
      if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
        return static_cast<float>(v);
      else
        return static_cast<double>(v);
    }
  });
}

TensorData TensorData::convert(DType dtype) const {
  if (dtype == dtype_) return *this;
  return visit_dtype(dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<bool> v = to_vec<bool>();
      return TensorData(std::vector<bool>(v.begin(), v.end()), shape_);
    } else {
      return TensorData(to_vec<T>(), shape_);
    }
  });
}

namespace {
bool same_value(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return a == b;
}
}  // namespace

void TensorData::assert_eq(const TensorData& expected, bool check_dtype) const {
  if (shape_ != expected.shape_) {
    throw Error("[assert_eq] shape " + shape_.to_string() + " != expected " +
                expected.shape_.to_string());
  }
  if (check_dtype && dtype_ != expected.dtype_) {
    throw Error("[assert_eq] dtype " + std::string(dtype_name(dtype_)) + " != expected " +
                std::string(dtype_name(expected.dtype_)));
  }
  std::ostringstream os;
  int bad = 0;
  // 64-bit ints are compared exactly (doubles lose precision above 2^53)
  const bool ints = is_int(dtype_) && is_int(expected.dtype_);
  std::vector<std::int64_t> ia, ib;
  if (ints) {
    ia = to_vec<std::int64_t>();
    ib = expected.to_vec<std::int64_t>();
  }
  for (std::int64_t i = 0; i < numel(); ++i) {
    const double a = value_as_double(i), b = expected.value_as_double(i);
    const bool ok = ints ? ia[static_cast<std::size_t>(i)] == ib[static_cast<std::size_t>(i)]
                         : same_value(a, b);
    if (!ok && bad++ < 10) os << "\n  index " << i << ": " << a << " != expected " << b;
  }
  if (bad) {
    throw Error("[assert_eq] " + std::to_string(bad) + " of " + std::to_string(numel()) +
                " values differ:" + os.str());
  }
}

void TensorData::assert_approx_eq(const TensorData& expected, Tolerance tol) const {
  if (shape_ != expected.shape_) {
    throw Error("[assert_approx_eq] shape " + shape_.to_string() + " != expected " +
                expected.shape_.to_string());
  }
  std::ostringstream os;
  os.precision(9);
  int bad = 0;
  for (std::int64_t i = 0; i < numel(); ++i) {
    const double a = value_as_double(i), b = expected.value_as_double(i);
    bool ok;
    if (std::isnan(a) || std::isnan(b))
      ok = std::isnan(a) && std::isnan(b);
    else if (std::isinf(a) || std::isinf(b))
      ok = a == b;
    else
      ok = std::fabs(a - b) <= tol.absolute + tol.relative * std::fabs(b);
    if (!ok && bad++ < 10) os << "\n  index " << i << ": " << a << " vs expected " << b;
  }
  if (bad) {
    std::ostringstream head;
    head << "[assert_approx_eq] " << bad << " of " << numel()
         << " values differ beyond tolerance (relative " << tol.relative << ", absolute "
         << tol.absolute << "):";
    throw Error(head.str() + os.str());
  }
}

std::string TensorData::to_string(std::size_t max_values) const {
  std::ostringstream os;
  os << "TensorData { shape: " << shape_ << ", dtype: " << dtype_
     << ", values: " << format_tensor_values(*this, max_values / 2, max_values) << " }";
  return os.str();
}

namespace {
void format_rec(const TensorData& d, std::ostringstream& os, std::size_t dim, std::int64_t base,
                std::size_t edge, bool elide) {
  const Shape& s = d.shape();
  if (s.rank() == 0) {
    os << d.value_as_double(0);
    return;
  }
  std::int64_t stride = 1;
  for (std::size_t k = dim + 1; k < s.rank(); ++k) stride *= s[k];
  const std::int64_t n = s[dim];
  os << "[";
  for (std::int64_t i = 0; i < n; ++i) {
    if (elide && n > static_cast<std::int64_t>(2 * edge) && i == static_cast<std::int64_t>(edge)) {
      os << "...";
      i = n - static_cast<std::int64_t>(edge) - 1;
      if (i + 1 < n) os << ", ";
      continue;
    }
    if (dim + 1 == s.rank()) {
      const std::int64_t k = base + i;
      if (d.dtype() == DType::Bool) {
        os << (d.value_as_double(k) != 0 ? "true" : "false");
      } else if (is_int(d.dtype())) {  // exact, not through double
        visit_dtype(d.dtype(), [&]<class T>() {
          if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            T v;
            std::memcpy(&v, d.bytes().data() + static_cast<std::size_t>(k) * sizeof(T), sizeof(T));
            os << static_cast<std::int64_t>(v);
          }
        });
      } else {
        os << d.value_as_double(k);
      }
    } else {
      format_rec(d, os, dim + 1, base + i * stride, edge, elide);
    }
    if (i + 1 < n) os << ", ";
  }
  os << "]";
}
}  // namespace

std::string format_tensor_values(const TensorData& data, std::size_t edge_items,
                                 std::size_t threshold) {
  if (data.numel() == 0) return "[]";
  std::ostringstream os;
  os.precision(6);
  format_rec(data, os, 0, 0, edge_items, static_cast<std::size_t>(data.numel()) > threshold);
  return os.str();
}

}  // namespace ember
