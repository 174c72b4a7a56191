// iinfo and the range checks of creation ops.
#include "ember/core/value_range.hpp"

#include <cmath>
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

}  // namespace

void check_value_fits(const char* op, double value, DType dtype) {
  if (is_int(dtype)) {
    const IInfo r = iinfo(dtype);
    // PyTorch's rule (c10::overflows): the value itself, before truncation, must lie in
    // [min, max], so 127.9 does not fit i8 and -0.5 does not fit u8. For i64 the bound
    // 2^63 - 1 is not a double: values that round to 2^63 on their way through a double are
    // accepted (and stored as 2^63 - 1), as in PyTorch.
    const double lo = static_cast<double>(r.min), hi = static_cast<double>(r.max);
    const bool ok = value >= lo && value <= hi;
    if (!ok) {
      fail<ValueError>(op, "value ", value, " is out of range for dtype ", dtype, " [", r.min, ", ",
                       r.max, "]");
    }
  } else if (is_float(dtype) && overflows_float(value, dtype)) {
    fail<ValueError>(op, "value ", value, " is out of range for dtype ", dtype, " (largest ",
                     finfo(dtype).max, ")");
  }
}

void check_arange(std::int64_t start, std::int64_t end, std::int64_t step, DType dtype) {
  if (step == 0) fail<ValueError>("arange", "step must be non-zero");
  const __int128 span = static_cast<__int128>(end) - start;
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
