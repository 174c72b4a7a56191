// The description and operand types of a backend call, rebuilt from its arguments: the
// tensor arguments (primitives of B, optionals and vectors of them) give the operand types,
// the others (but the device) the description's fields, in order. Used by the checking and
// recording test backends.
#pragma once

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/ir/elementwise_ir.hpp"
#include "ember/ir/registry.hpp"

namespace ember::test {

template <class B, class T>
inline constexpr bool kIsPrim =
    std::is_same_v<T, typename B::FloatTensor> || std::is_same_v<T, typename B::IntTensor> ||
    std::is_same_v<T, typename B::BoolTensor>;
template <class B, class T>
struct IsTensorArg : std::bool_constant<kIsPrim<B, T>> {};
template <class B, class T>
struct IsTensorArg<B, std::optional<T>> : std::bool_constant<kIsPrim<B, T>> {};
template <class B, class T>
struct IsTensorArg<B, std::vector<T>> : std::bool_constant<kIsPrim<B, T>> {};

/// The type of primitive p of backend B (the kind is found by the primitive's type).
template <class B, class P>
ir::TensorType type_of(const P& p) {
  if constexpr (std::is_same_v<P, typename B::FloatTensor>)
    return {B::float_shape(p), B::float_dtype(p)};
  else if constexpr (std::is_same_v<P, typename B::IntTensor>)
    return {B::int_shape(p), B::int_dtype(p)};
  else
    return {B::bool_shape(p), B::bool_dtype(p)};
}
template <class B, class T>
auto operand_type(const T& x) {
  using U = std::remove_cvref_t<T>;
  if constexpr (kIsPrim<B, U>) {
    return type_of<B>(x);
  } else if constexpr (requires { x.has_value(); }) {
    std::optional<ir::TensorType> o;
    if (x) o = type_of<B>(*x);
    return o;
  } else {
    std::vector<ir::TensorType> v;
    for (const auto& e : x) v.push_back(type_of<B>(e));
    return v;
  }
}

/// The operand types (a tuple) and the description's fields (a tuple) of a call.
template <class B, class T>
auto operand_part(const T& x) {
  using U = std::remove_cvref_t<T>;
  if constexpr (IsTensorArg<B, U>::value)
    return std::make_tuple(operand_type<B>(x));
  else
    return std::tuple<>{};
}
template <class B, class T>
auto field_part(const T& x) {
  using U = std::remove_cvref_t<T>;
  if constexpr (IsTensorArg<B, U>::value || std::is_same_v<U, typename B::Device>)
    return std::tuple<>{};
  else
    return std::make_tuple(x);
}

template <class D>
concept HasInfer = requires {
  &D::infer;
};

/// D's inferred output type(s) for a call with arguments `a`.
template <class B, class D, class... A>
auto infer_call(const A&... a) {
  auto fields = std::tuple_cat(field_part<B>(a)...);
  const D d = std::apply([](const auto&... f) { return D{f...}; }, fields);
  auto operands = std::tuple_cat(operand_part<B>(a)...);
  return std::apply([&](const auto&... t) { return d.infer(t...); }, operands);
}

/// Whether `got` has `want`'s shape (where `want` is not data-dependent) and dtype.
inline bool same_type(const ir::TensorType& want, const ir::TensorType& got) {
  if (want.dtype != got.dtype || want.shape.rank() != got.shape.rank()) return false;
  for (std::size_t d = 0; d < got.shape.rank(); ++d)
    if (want.shape[d] != ir::kDynamicDim && want.shape[d] != got.shape[d]) return false;
  return true;
}

}  // namespace ember::test
