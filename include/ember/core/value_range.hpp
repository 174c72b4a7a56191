// The range of values a dtype holds (torch.iinfo), and the checks of creation ops against it:
// full / zeros / ones / arange throw ValueError instead of wrapping or saturating.
#pragma once

#include <cstdint>

#include "ember/core/dtype.hpp"

namespace ember {

/// Bounds of an integer dtype, as torch.iinfo.
struct IInfo {
  int bits;
  std::int64_t min;  ///< smallest value
  std::int64_t max;  ///< largest value
};

/// iinfo for an integer dtype (i64, i32, i16, i8, u8); throws DTypeError otherwise.
IInfo iinfo(DType d);

namespace detail {

/// Checks that `value` can be stored in `dtype` without overflow (PyTorch's "value cannot be
/// converted to type int8_t without overflow"): integer dtypes take values in
/// [iinfo.min, iinfo.max] (NaN and infinities are rejected), float dtypes any value that
/// does not round to +-inf (infinities and NaN themselves are kept), bool anything.
/// Throws ValueError "[op] value 300 is out of range for dtype i8 [-128, 127]".
void check_value_fits(const char* op, double value, DType dtype);

/// Checks arange(start, end, step) in `dtype`: step != 0, at most 2^63 - 1 values, and
/// every value (the first and the last) within the dtype's range. Throws ValueError naming
/// "arange", the offending value or count, and the dtype.
void check_arange(std::int64_t start, std::int64_t end, std::int64_t step, DType dtype);

}  // namespace detail
}  // namespace ember
