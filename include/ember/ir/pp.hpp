// Preprocessor helpers for the op registry (ember/ir/registry.hpp): a parenthesised list of
// parameter types `(const F&, i64)` becomes a parameter list `const F& a1, i64 a2` and an
// argument list `std::forward<const F&>(a1), std::forward<i64>(a2)`. Up to 12 parameters;
// a type must not contain a top-level comma (use an alias).
#pragma once

#define EMBER_PP_CAT(a, b) EMBER_PP_CAT_(a, b)
#define EMBER_PP_CAT_(a, b) a##b
#define EMBER_PP_NARGS(...) EMBER_PP_NARGS_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define EMBER_PP_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, ...) N

/// (T1, T2) -> T1 a1, T2 a2
#define EMBER_PP_PARAMS(...) \
  EMBER_PP_CAT(EMBER_PP_PARAMS_, EMBER_PP_NARGS(__VA_ARGS__))(__VA_ARGS__)
#define EMBER_PP_PARAMS_1(T1) T1 a1
#define EMBER_PP_PARAMS_2(T1, T2) T1 a1, T2 a2
#define EMBER_PP_PARAMS_3(T1, T2, T3) T1 a1, T2 a2, T3 a3
#define EMBER_PP_PARAMS_4(T1, T2, T3, T4) T1 a1, T2 a2, T3 a3, T4 a4
#define EMBER_PP_PARAMS_5(T1, T2, T3, T4, T5) T1 a1, T2 a2, T3 a3, T4 a4, T5 a5
#define EMBER_PP_PARAMS_6(T1, T2, T3, T4, T5, T6) T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6
#define EMBER_PP_PARAMS_7(T1, T2, T3, T4, T5, T6, T7) \
  T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6, T7 a7
#define EMBER_PP_PARAMS_8(T1, T2, T3, T4, T5, T6, T7, T8) \
  T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6, T7 a7, T8 a8
#define EMBER_PP_PARAMS_9(T1, T2, T3, T4, T5, T6, T7, T8, T9) \
  T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6, T7 a7, T8 a8, T9 a9
#define EMBER_PP_PARAMS_10(T1, T2, T3, T4, T5, T6, T7, T8, T9, T10) \
  T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6, T7 a7, T8 a8, T9 a9, T10 a10
#define EMBER_PP_PARAMS_11(T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11) \
  T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6, T7 a7, T8 a8, T9 a9, T10 a10, T11 a11
#define EMBER_PP_PARAMS_12(T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12) \
  T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6, T7 a7, T8 a8, T9 a9, T10 a10, T11 a11, T12 a12

/// (T1, T2) -> W(T1, a1), W(T2, a2): each argument wrapped by the macro W.
#define EMBER_PP_ARGS(W, ...) \
  EMBER_PP_CAT(EMBER_PP_ARGS_, EMBER_PP_NARGS(__VA_ARGS__))(W, __VA_ARGS__)
#define EMBER_PP_ARGS_1(W, T1) W(T1, a1)
#define EMBER_PP_ARGS_2(W, T1, T2) W(T1, a1), W(T2, a2)
#define EMBER_PP_ARGS_3(W, T1, T2, T3) W(T1, a1), W(T2, a2), W(T3, a3)
#define EMBER_PP_ARGS_4(W, T1, T2, T3, T4) W(T1, a1), W(T2, a2), W(T3, a3), W(T4, a4)
#define EMBER_PP_ARGS_5(W, T1, T2, T3, T4, T5) W(T1, a1), W(T2, a2), W(T3, a3), W(T4, a4), W(T5, a5)
#define EMBER_PP_ARGS_6(W, T1, T2, T3, T4, T5, T6) \
  W(T1, a1), W(T2, a2), W(T3, a3), W(T4, a4), W(T5, a5), W(T6, a6)
#define EMBER_PP_ARGS_7(W, T1, T2, T3, T4, T5, T6, T7) \
  W(T1, a1), W(T2, a2), W(T3, a3), W(T4, a4), W(T5, a5), W(T6, a6), W(T7, a7)
#define EMBER_PP_ARGS_8(W, T1, T2, T3, T4, T5, T6, T7, T8) \
  W(T1, a1), W(T2, a2), W(T3, a3), W(T4, a4), W(T5, a5), W(T6, a6), W(T7, a7), W(T8, a8)
#define EMBER_PP_ARGS_9(W, T1, T2, T3, T4, T5, T6, T7, T8, T9) \
  W(T1, a1), W(T2, a2), W(T3, a3), W(T4, a4), W(T5, a5), W(T6, a6), W(T7, a7), W(T8, a8), W(T9, a9)
#define EMBER_PP_ARGS_10(W, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10)                      \
  W(T1, a1), W(T2, a2), W(T3, a3), W(T4, a4), W(T5, a5), W(T6, a6), W(T7, a7), W(T8, a8), \
      W(T9, a9), W(T10, a10)
#define EMBER_PP_ARGS_11(W, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11)                 \
  W(T1, a1), W(T2, a2), W(T3, a3), W(T4, a4), W(T5, a5), W(T6, a6), W(T7, a7), W(T8, a8), \
      W(T9, a9), W(T10, a10), W(T11, a11)
#define EMBER_PP_ARGS_12(W, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12)            \
  W(T1, a1), W(T2, a2), W(T3, a3), W(T4, a4), W(T5, a5), W(T6, a6), W(T7, a7), W(T8, a8), \
      W(T9, a9), W(T10, a10), W(T11, a11), W(T12, a12)

/// Argument wrappers for EMBER_PP_ARGS.
#define EMBER_PP_FORWARD(T, a) std::forward<T>(a)
#define EMBER_PP_NAME(T, a) a

/// Removes one level of parentheses: EMBER_PP_UNPAREN (a, b) -> a, b
#define EMBER_PP_UNPAREN(...) __VA_ARGS__
