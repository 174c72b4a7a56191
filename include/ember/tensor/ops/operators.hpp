// C++ operators on tensors: + - * / % (Float, Int; scalars on either side), unary -,
// Bool ! & | ^, Int ~ & | ^ << >>. Operands are taken by value, so temporaries
// (`x * y + z`) are moved into the op and their buffer is reused.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "ember/tensor/fwd.hpp"

namespace ember {

template <class S>
concept ArithmeticScalar = std::is_arithmetic_v<S> && !std::same_as<S, bool>;

namespace detail {
template <class K, class S>
auto to_scalar(S s) {
  if constexpr (std::is_same_v<K, Float>)
    return static_cast<double>(s);
  else
    return static_cast<std::int64_t>(s);
}
}  // namespace detail

#define EMBER_EW_ARITH_OP(sym, method, rmethod)                   \
  template <class B, std::size_t D, class K>                      \
  requires NumericKind<K> Tensor<B, D, K>                         \
  operator sym(Tensor<B, D, K> a, Tensor<B, D, K> b) {            \
    return std::move(a).method(std::move(b));                     \
  }                                                               \
  template <class B, std::size_t D, class K, ArithmeticScalar S>  \
  requires NumericKind<K> Tensor<B, D, K>                         \
  operator sym(Tensor<B, D, K> a, S s) {                          \
    return std::move(a).method##_scalar(detail::to_scalar<K>(s)); \
  }                                                               \
  template <class B, std::size_t D, class K, ArithmeticScalar S>  \
  requires NumericKind<K> Tensor<B, D, K>                         \
  operator sym(S s, Tensor<B, D, K> a) {                          \
    return std::move(a).rmethod(detail::to_scalar<K>(s));         \
  }

EMBER_EW_ARITH_OP(+, add, add_scalar)
EMBER_EW_ARITH_OP(-, sub, rsub_scalar)
EMBER_EW_ARITH_OP(*, mul, mul_scalar)
EMBER_EW_ARITH_OP(/, div, rdiv_scalar)
EMBER_EW_ARITH_OP(%, remainder, rremainder_scalar)
#undef EMBER_EW_ARITH_OP

template <class B, std::size_t D, class K>
requires NumericKind<K> Tensor<B, D, K>
operator-(Tensor<B, D, K> a) {
  return std::move(a).neg();
}

template <class B, std::size_t D>
Tensor<B, D, Bool> operator!(Tensor<B, D, Bool> a) {
  return std::move(a).bool_not();
}
template <class B, std::size_t D>
Tensor<B, D, Int> operator~(Tensor<B, D, Int> a) {
  return std::move(a).bitwise_not();
}

#define EMBER_EW_LOGIC_OP(sym, bmethod, imethod)                        \
  template <class B, std::size_t D, class K>                            \
  requires(!std::same_as<K, Float>) Tensor<B, D, K>                     \
  operator sym(Tensor<B, D, K> a, Tensor<B, D, K> b) {                  \
    if constexpr (std::is_same_v<K, Bool>)                              \
      return std::move(a).bmethod(std::move(b));                        \
    else                                                                \
      return std::move(a).imethod(std::move(b));                        \
  }                                                                     \
  template <class B, std::size_t D, std::integral S>                    \
  requires(!std::same_as<S, bool>) Tensor<B, D, Int>                    \
  operator sym(Tensor<B, D, Int> a, S s) {                              \
    return std::move(a).imethod##_scalar(static_cast<std::int64_t>(s)); \
  }
EMBER_EW_LOGIC_OP(&, bool_and, bitwise_and)
EMBER_EW_LOGIC_OP(|, bool_or, bitwise_or)
EMBER_EW_LOGIC_OP(^, bool_xor, bitwise_xor)
#undef EMBER_EW_LOGIC_OP

template <class B, std::size_t D>
Tensor<B, D, Int> operator<<(Tensor<B, D, Int> a, Tensor<B, D, Int> b) {
  return std::move(a).bitwise_left_shift(std::move(b));
}
template <class B, std::size_t D>
Tensor<B, D, Int> operator>>(Tensor<B, D, Int> a, Tensor<B, D, Int> b) {
  return std::move(a).bitwise_right_shift(std::move(b));
}
template <class B, std::size_t D, std::integral S>
requires(!std::same_as<S, bool>) Tensor<B, D, Int>
operator<<(Tensor<B, D, Int> a, S s) {
  return std::move(a).bitwise_left_shift_scalar(static_cast<std::int64_t>(s));
}
template <class B, std::size_t D, std::integral S>
requires(!std::same_as<S, bool>) Tensor<B, D, Int>
operator>>(Tensor<B, D, Int> a, S s) {
  return std::move(a).bitwise_right_shift_scalar(static_cast<std::int64_t>(s));
}

}  // namespace ember
