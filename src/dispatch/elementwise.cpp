// Dispatch: element-wise functions (ember/backend/elementwise.hpp).
#include "stacks.hpp"

namespace ember {

#define EMBER_DEF_FB(name) EMBER_DISPATCH_DEF2(F, float_##name, F, F)
#define EMBER_DEF_FS(name) EMBER_DISPATCH_DEF2(F, float_##name##_scalar, F, double)
#define EMBER_DEF_FU(name) EMBER_DISPATCH_DEF1(F, float_##name, F)
#define EMBER_DEF_IB(name)                 \
  EMBER_DISPATCH_DEF2(I, int_##name, I, I) \
  EMBER_DISPATCH_DEF2(I, int_##name##_scalar, I, i64)
#define EMBER_DEF_IU(name) EMBER_DISPATCH_DEF1(I, int_##name, I)
#define EMBER_DEF_CMP(name)                                      \
  EMBER_DISPATCH_DEF2(Bo, float_##name, const F&, const F&)      \
  EMBER_DISPATCH_DEF2(Bo, float_##name##_elem, const F&, double) \
  EMBER_DISPATCH_DEF2(Bo, int_##name, const I&, const I&)        \
  EMBER_DISPATCH_DEF2(Bo, int_##name##_elem, const I&, i64)
#define EMBER_DEF_BB(name) EMBER_DISPATCH_DEF2(Bo, bool_##name, Bo, Bo)

EMBER_DISPATCH_FLOAT_BINARY(EMBER_DEF_FB)
EMBER_DISPATCH_FLOAT_SCALAR(EMBER_DEF_FS)
EMBER_DISPATCH_FLOAT_UNARY(EMBER_DEF_FU)
EMBER_DISPATCH_INT_BINARY(EMBER_DEF_IB)
EMBER_DISPATCH_INT_UNARY(EMBER_DEF_IU)
EMBER_DISPATCH_COMPARE(EMBER_DEF_CMP)
EMBER_DISPATCH_BOOL_BINARY(EMBER_DEF_BB)

EMBER_DISPATCH_DEF2(I, int_max_pair, I, I)
EMBER_DISPATCH_DEF2(I, int_min_pair, I, I)
EMBER_DISPATCH_DEF3(F, float_clamp, F, double, double)
EMBER_DISPATCH_DEF2(F, float_clamp_min, F, double)
EMBER_DISPATCH_DEF2(F, float_clamp_max, F, double)
EMBER_DISPATCH_DEF3(I, int_clamp, I, i64, i64)
EMBER_DISPATCH_DEF2(I, int_clamp_min, I, i64)
EMBER_DISPATCH_DEF2(I, int_clamp_max, I, i64)
EMBER_DISPATCH_DEF1(Bo, float_is_nan, const F&)
EMBER_DISPATCH_DEF1(Bo, float_is_inf, const F&)
EMBER_DISPATCH_DEF1(Bo, float_is_finite, const F&)
EMBER_DISPATCH_DEF1(Bo, bool_not, Bo)

}  // namespace ember
