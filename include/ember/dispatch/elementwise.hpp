// Dispatch's element-wise functions: one entry point per family taking the row's index in
// ir::ElementwiseOps; src/dispatch/elementwise.cpp holds, for every registered stack, a table
// of that stack's instantiations indexed by the row. (Internal to ember/dispatch/dispatch.hpp.)
#pragma once

#include <cstdint>

namespace ember::dispatch::ew {

enum class Form : std::uint8_t {
  FloatUnary,
  IntUnary,
  BoolUnary,
  FloatBinary,
  IntBinary,
  BoolBinary,
  FloatScalar,
  IntScalar,
  FloatCompare,
  IntCompare,
  BoolCompare,
  FloatCompareScalar,
  IntCompareScalar,
  FloatPredicate,
};

}  // namespace ember::dispatch::ew
