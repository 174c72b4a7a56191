// iinfo and the range checks of creation ops.
#include "ember/core/value_range.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "ember/core/error.hpp"

namespace ember {

IInfo iinfo(DType d) {
  switch (d) {
    case DType::I64:
      return {64, std::numeric_limits<std::int64_t>::min(),
              std::numeric_limits<std::int64_t>::max()};
    case DType::I32:
      return {32, std::numeric_limits<std::int32_t>::min(),
              std::numeric_limits<std::int32_t>::max()};
    case DType::I16:
      return {16, std::numeric_limits<std::int16_t>::min(),
              std::numeric_limits<std::int16_t>::max()};
    case DType::I8:
      return {8, -128, 127};
    case DType::U8:
      return {8, 0, 255};
    default:
      break;
  }
  throw DTypeError("[iinfo] dtype " + std::string(dtype_name(d)) + " is not an integer dtype");
}

namespace detail {

namespace {

/// Whether `value` rounds to an infinity in the float dtype `d`.
bool overflows_float(double value, DType d) {
  if (!std::isfinite(value)) return false;
  switch (d) {
    case DType::F64:
      return false;
    case DType::F32:
      return std::isinf(static_cast<float>(value));
    case DType::F16:
      return std::isinf(static_cast<float>(f16(static_cast<float>(value))));
    case DType::BF16:
      return std::isinf(static_cast<float>(bf16(static_cast<float>(value))));
    default:
      return false;
  }
}

/// `v` in full: integers exactly (2147483648, not 2.14748e+09), others as the shortest text
/// that reads back as `v` (0.1, 1e+39).
std::string show(double v) {
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 9.2e18)
    return std::to_string(static_cast<long long>(v));
  char buf[64];
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
#else
  // libc++ 14 (emscripten) has no floating-point to_chars: the fewest digits that read back.
  for (int digits = 1; digits < 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) return buf;
  }
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
#endif
}

}  // namespace

void check_value_fits(const char* op, double value, DType dtype) {
  if (is_int(dtype)) {
    const IInfo r = iinfo(dtype);
    // PyTorch's rule (torch.full): values in [min, max + 1) fit and are truncated toward
    // zero (127.9 -> 127 in i8; -0.5 is below u8's 0 and is refused). max + 1 is exact in
    // double for every dtype, so `<` is the exact test; for i64 the values near 2^63 - 1
    // round to 2^63 on their way through a double, which is accepted (and stored as
    // 2^63 - 1): full(INT64_MAX) must work, although torch refuses the double 2^63.
    const double hi = static_cast<double>(r.max) + 1.0;
    const bool ok = dtype == DType::I64 ? value >= static_cast<double>(r.min) && value <= hi
                                        : value >= static_cast<double>(r.min) && value < hi;
    if (!ok) {
      fail<ValueError>(op, "value ", show(value), " is out of range for dtype ", dtype, " [", r.min,
                       ", ", r.max, "]");
    }
  } else if (is_float(dtype) && overflows_float(value, dtype)) {
    fail<ValueError>(op, "value ", show(value), " is out of range for dtype ", dtype, " (largest ",
                     finfo(dtype).max, ")");
  }
}

void check_arange(std::int64_t start, std::int64_t end, std::int64_t step, DType dtype) {
  if (step == 0) fail<ValueError>("arange", "step must be non-zero");
  const __int128 span = static_cast<__int128>(end) - start;
  // torch.arange(0, 10, -1) raises rather than giving an empty tensor.
  if ((span > 0 && step < 0) || (span < 0 && step > 0)) {
    fail<ValueError>("arange", "[", start, ", ", end, ") with step ", step,
                     ": the step's sign does not lead from start to end");
  }
  __int128 n = 0;
  if ((span > 0 && step > 0) || (span < 0 && step < 0)) {
    const __int128 s = step;
    n = (span + s + (step > 0 ? -1 : 1)) / s;
  }
  if (n > static_cast<__int128>(std::numeric_limits<std::int64_t>::max())) {
    fail<ValueError>("arange", "[", start, ", ", end, ") with step ", step, " in dtype ", dtype,
                     " has ", static_cast<unsigned long long>(n),
                     " values, more than a tensor holds (2^63 - 1)");
  }
  if (n == 0 || !is_int(dtype)) return;
  const IInfo r = iinfo(dtype);
  const __int128 last = static_cast<__int128>(start) + (n - 1) * static_cast<__int128>(step);
  for (const __int128 v : {static_cast<__int128>(start), last}) {
    if (v < r.min || v > r.max) {
      fail<ValueError>("arange", "value ", static_cast<long long>(v), " of [", start, ", ", end,
                       ") with step ", step, " is out of range for dtype ", dtype, " [", r.min,
                       ", ", r.max, "]");
    }
  }
}

}  // namespace detail
}  // namespace ember
