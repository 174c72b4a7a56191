// Forward<Inner, Types, Self>: the pass-through base of backend decorators, generated from the
// op registry (ember/ir/registry.hpp) and the element-wise table (ember/ir/elementwise.hpp).
//
// A decorator (Autodiff, the tests' checking backend, later Fusion, Router) derives from
// Forward and overrides only the functions it intercepts; every other function of the
// contract calls the same function of `Inner` with the arguments unwrapped by
// `Self::unwrap` and the result wrapped by `Self::template lift<R>` (both default to the
// identity). A new op in the registry needs no forwarding line anywhere.
//
//   Types   the decorator's primitive types (FloatTensor, IntTensor, BoolTensor, Device) and
//           `forward_float`: false when the decorator must intercept every function that
//           computes a float tensor from float tensors (Autodiff records them): Forward then
//           offers those only as declarations that can never be called, and OPT / EXT float
//           rows are not offered, so the front end runs their composites on the decorator;
//           and optionally `forward_optional`: false when no OPT / EXT row is forwarded (a
//           backend over a host fallback, Gpu<R>, whose composites of its own kernels beat
//           running Inner's optional function on the host).
//   Self    the decorator (the most derived class whose unwrap/lift apply).
// Optional rows (OPT, EXT) are offered only when Inner has them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "ember/backend/core.hpp"
#include "ember/ir/elementwise.hpp"
#include "ember/ir/elementwise_ir.hpp"
#include "ember/ir/registry.hpp"

namespace ember {

/// Types::forward_optional, true when Types does not say.
template <class Types>
inline constexpr bool kForwardOptional = true;
template <class Types>
requires requires {
  Types::forward_optional;
}
inline constexpr bool kForwardOptional<Types> = Types::forward_optional;

#define EMBER_FORWARD_UNWRAP(T, a) Self::unwrap(std::forward<T>(a))
// The constraint of an optional row: Inner has the function.
#define EMBER_FORWARD_HAS(name, Params)                                        \
  requires(EMBER_PP_PARAMS Params) {                                           \
    Inner::name(EMBER_PP_ARGS(EMBER_FORWARD_UNWRAP, EMBER_PP_UNPAREN Params)); \
  }
#define EMBER_FORWARD_HAS_N(name, Params)                                                  \
  requires(EMBER_PP_PARAMS Params) {                                                       \
    Inner::template name<N>(EMBER_PP_ARGS(EMBER_FORWARD_UNWRAP, EMBER_PP_UNPAREN Params)); \
  }

// Constraints by (kind, result class).
#define EMBER_FORWARD_REQUIRES_REQ_N(has)
#define EMBER_FORWARD_REQUIRES_REQ_C(has)
#define EMBER_FORWARD_REQUIRES_REQ_F(has) requires(Types::forward_float)
#define EMBER_FORWARD_REQUIRES_OPT_N(has) requires(kForwardOptional<Types> && has)
#define EMBER_FORWARD_REQUIRES_OPT_F(has) \
  requires(Types::forward_float && kForwardOptional<Types> && has)
#define EMBER_FORWARD_REQUIRES_EXT_N EMBER_FORWARD_REQUIRES_OPT_N
#define EMBER_FORWARD_REQUIRES_EXT_F EMBER_FORWARD_REQUIRES_OPT_F

// Each row: Self::run<Desc, Ret>(name, the call of Inner's function, the arguments).
#define EMBER_FORWARD_ROW(Req, Res, Ret, name, Desc, Params)                  \
  static Ret name(EMBER_PP_PARAMS Params)                                     \
      EMBER_FORWARD_REQUIRES_##Req##_##Res(EMBER_FORWARD_HAS(name, Params)) { \
    return Self::template run<ir::Desc, Ret>(                                 \
        #name,                                                                \
        [](auto&&... a_) -> decltype(auto) {                                  \
          return Inner::name(std::forward<decltype(a_)>(a_)...);              \
        },                                                                    \
        EMBER_PP_ARGS(EMBER_PP_FORWARD, EMBER_PP_UNPAREN Params));            \
  }
#define EMBER_FORWARD_ROW_N(Req, Res, Ret, name, Desc, Params, Ns)              \
  template <std::size_t N>                                                      \
  static Ret name(EMBER_PP_PARAMS Params)                                       \
      EMBER_FORWARD_REQUIRES_##Req##_##Res(EMBER_FORWARD_HAS_N(name, Params)) { \
    return Self::template run<ir::Desc<N>, Ret>(                                \
        #name,                                                                  \
        [](auto&&... a_) -> decltype(auto) {                                    \
          return Inner::template name<N>(std::forward<decltype(a_)>(a_)...);    \
        },                                                                      \
        EMBER_PP_ARGS(EMBER_PP_FORWARD, EMBER_PP_UNPAREN Params));              \
  }

/// The identity unwrap and lift (decorators whose primitives are Inner's).
struct ForwardIdentity {
  template <class T>
  static T&& unwrap(T&& x) {
    return std::forward<T>(x);
  }
  template <class R, class V>
  static R lift(V&& v) {
    return R(std::forward<V>(v));
  }
};

template <class Inner, class Types, class Self>
struct Forward : ForwardIdentity {
  EMBER_IR_TYPE_ALIASES(typename Types::FloatTensor, typename Types::IntTensor,
                        typename Types::BoolTensor, typename Types::Device);

  /// The default of Self::run: Inner's function on the unwrapped arguments, the result lifted.
  /// A decorator redefines run<Desc, R>(name, call, args...) to intercept every forwarded
  /// function with its description (the tests' checking backend, later Fusion).
  template <class D, class R, class Call, class... A>
  static R run(const char*, Call call, A&&... a) {
    return Self::template lift<R>(call(Self::unwrap(std::forward<A>(a))...));
  }

  static std::string device_name(const Dev& d) { return Inner::device_name(d); }
  // Runtime services (ember/backend/core.hpp), when Inner has them.
  static MemoryStats memory_stats(const Dev& d) requires requires { Inner::memory_stats(d); }
  { return Inner::memory_stats(d); }
  static void reset_peak_memory(const Dev& d) requires requires { Inner::reset_peak_memory(d); }
  { Inner::reset_peak_memory(d); }
  static void set_num_threads(int n) requires requires { Inner::set_num_threads(n); }
  { Inner::set_num_threads(n); }
  static int num_threads() requires requires { Inner::num_threads(); }
  { return Inner::num_threads(); }
  /// Deferred value checks (ember/tensor/ops/value_check.hpp), when Inner defers them.
  static bool bool_check_none(const Bo& bad, const char* op) requires requires {
    Inner::bool_check_none(Self::unwrap(bad), op);
  }
  { return Inner::bool_check_none(Self::unwrap(bad), op); }
  static void seed(std::uint64_t s) { Inner::seed(s); }
  static void sync(const Dev& d) { Inner::sync(d); }

  EMBER_IR_OPS(EMBER_FORWARD_ROW, EMBER_FORWARD_ROW_N)

  // ---- the element-wise table ------------------------------------------------------------------
#define EMBER_FORWARD_EW(D, R, fn, ...)                                   \
  Self::template run<D, R>(                                               \
      #fn,                                                                \
      [](auto&&... a_) -> decltype(auto) {                                \
        return Inner::template fn<Op>(std::forward<decltype(a_)>(a_)...); \
      },                                                                  \
      __VA_ARGS__)
  template <class Op>
  static F float_unary(F x) requires(Types::forward_float) {
    return EMBER_FORWARD_EW(ir::UnaryOp<Op>, F, float_unary, std::move(x));
  }
  template <class Op>
  static F float_binary(F a, F b) requires(Types::forward_float) {
    return EMBER_FORWARD_EW(ir::BinaryOp<Op>, F, float_binary, std::move(a), std::move(b));
  }
  template <class Op>
  static F float_binary_scalar(F a, double s) requires(Types::forward_float) {
    using D = ir::ScalarOp<Op, double>;
    return EMBER_FORWARD_EW(D, F, float_binary_scalar, std::move(a), s);
  }
  template <class Op>
  static Bo float_compare(const F& a, const F& b) {
    return EMBER_FORWARD_EW(ir::CompareOp<Op>, Bo, float_compare, a, b);
  }
  template <class Op>
  static Bo float_compare_scalar(const F& a, double s) {
    using D = ir::CompareScalarOp<Op, double>;
    return EMBER_FORWARD_EW(D, Bo, float_compare_scalar, a, s);
  }
  template <class Op>
  static Bo float_predicate(const F& x) {
    return EMBER_FORWARD_EW(ir::PredicateOp<Op>, Bo, float_predicate, x);
  }
  template <class Op>
  static I int_unary(I x) {
    return EMBER_FORWARD_EW(ir::UnaryOp<Op>, I, int_unary, std::move(x));
  }
  template <class Op>
  static I int_binary(I a, I b) {
    return EMBER_FORWARD_EW(ir::BinaryOp<Op>, I, int_binary, std::move(a), std::move(b));
  }
  template <class Op>
  static I int_binary_scalar(I a, std::int64_t s) {
    using D = ir::ScalarOp<Op, std::int64_t>;
    return EMBER_FORWARD_EW(D, I, int_binary_scalar, std::move(a), s);
  }
  template <class Op>
  static Bo int_compare(const I& a, const I& b) {
    return EMBER_FORWARD_EW(ir::CompareOp<Op>, Bo, int_compare, a, b);
  }
  template <class Op>
  static Bo int_compare_scalar(const I& a, std::int64_t s) {
    using D = ir::CompareScalarOp<Op, std::int64_t>;
    return EMBER_FORWARD_EW(D, Bo, int_compare_scalar, a, s);
  }
  template <class Op>
  static Bo bool_unary(Bo x) {
    return EMBER_FORWARD_EW(ir::UnaryOp<Op>, Bo, bool_unary, std::move(x));
  }
  template <class Op>
  static Bo bool_binary(Bo a, Bo b) {
    return EMBER_FORWARD_EW(ir::BinaryOp<Op>, Bo, bool_binary, std::move(a), std::move(b));
  }
  template <class Op>
  static Bo bool_compare(const Bo& a, const Bo& b) {
    return EMBER_FORWARD_EW(ir::CompareOp<Op>, Bo, bool_compare, a, b);
  }
#undef EMBER_FORWARD_EW
  static F float_clamp(F x, double lo, double hi) requires(Types::forward_float) {
    return Self::template run<ir::Clamp<double>, F>(
        "float_clamp",
        [](auto&&... a_) { return Inner::float_clamp(std::forward<decltype(a_)>(a_)...); },
        std::move(x), lo, hi);
  }
  static I int_clamp(I x, std::int64_t lo, std::int64_t hi) {
    return Self::template run<ir::Clamp<std::int64_t>, I>(
        "int_clamp",
        [](auto&&... a_) { return Inner::int_clamp(std::forward<decltype(a_)>(a_)...); },
        std::move(x), lo, hi);
  }
};

}  // namespace ember
