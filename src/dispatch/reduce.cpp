// Dispatch: reduce and linalg functions (ember/backend/reduce.hpp, linalg.hpp). The
// optional reductions (sum, max_dim, min_dim, argmax, argmin) run the stack's override when
// it has one, else a composite of the required functions.
#include "stacks.hpp"

namespace ember {

#define EMBER_DEF_RD(name)                            \
  EMBER_DISPATCH_DEF2(F, float_##name, const F&, i64) \
  EMBER_DISPATCH_DEF2(I, int_##name, const I&, i64)
#define EMBER_DEF_RP(name)                             \
  EMBER_DISPATCH_DEF2(FI, float_##name, const F&, i64) \
  EMBER_DISPATCH_DEF2(II, int_##name, const I&, i64)
EMBER_DISPATCH_REDUCE_DIM(EMBER_DEF_RD)
EMBER_DISPATCH_REDUCE_PAIR(EMBER_DEF_RP)

EMBER_DISPATCH_DEF3(FI, float_sort_with_indices, const F&, i64, bool)
EMBER_DISPATCH_DEF3(II, int_sort_with_indices, const I&, i64, bool)
EMBER_DISPATCH_DEF3(FI, float_topk_with_indices, const F&, i64, i64)
EMBER_DISPATCH_DEF3(II, int_topk_with_indices, const I&, i64, i64)
EMBER_DISPATCH_DEF2(Bo, float_any_dim, const F&, i64)
EMBER_DISPATCH_DEF2(Bo, int_any_dim, const I&, i64)
EMBER_DISPATCH_DEF2(Bo, bool_any_dim, const Bo&, i64)
EMBER_DISPATCH_DEF2(Bo, float_all_dim, const F&, i64)
EMBER_DISPATCH_DEF2(Bo, int_all_dim, const I&, i64)
EMBER_DISPATCH_DEF2(Bo, bool_all_dim, const Bo&, i64)
EMBER_DISPATCH_DEF3(FF, float_var_mean, const F&, i64, i64)

// ---- optional reductions -------------------------------------------------------------------
#define EMBER_DEF_REDUCE_OPT(X, P)                                 \
  Dispatch::P Dispatch::X##_sum(const P& x) {                      \
    return dispatch::forward<P>(                                   \
        #X "_sum",                                                 \
        []<class B>(const auto& p) {                               \
          if constexpr (requires { B::X##_sum(p); }) {             \
            return B::X##_sum(p);                                  \
          } else {                                                 \
            const i64 n = B::X##_shape(p).numel();                 \
            return B::X##_sum_dim(B::X##_reshape(p, Shape{n}), 0); \
          }                                                        \
        },                                                         \
        x);                                                        \
  }                                                                \
  Dispatch::P Dispatch::X##_max_dim(const P& x, i64 dim) {         \
    return dispatch::forward<P>(                                   \
        #X "_max_dim",                                             \
        []<class B>(const auto& p, i64 d) {                        \
          if constexpr (requires { B::X##_max_dim(p, d); })        \
            return B::X##_max_dim(p, d);                           \
          else                                                     \
            return B::X##_max_dim_with_indices(p, d).first;        \
        },                                                         \
        x, dim);                                                   \
  }                                                                \
  Dispatch::P Dispatch::X##_min_dim(const P& x, i64 dim) {         \
    return dispatch::forward<P>(                                   \
        #X "_min_dim",                                             \
        []<class B>(const auto& p, i64 d) {                        \
          if constexpr (requires { B::X##_min_dim(p, d); })        \
            return B::X##_min_dim(p, d);                           \
          else                                                     \
            return B::X##_min_dim_with_indices(p, d).first;        \
        },                                                         \
        x, dim);                                                   \
  }                                                                \
  Dispatch::I Dispatch::X##_argmax(const P& x, i64 dim) {          \
    return dispatch::forward<I>(                                   \
        #X "_argmax",                                              \
        []<class B>(const auto& p, i64 d) {                        \
          if constexpr (requires { B::X##_argmax(p, d); })         \
            return B::X##_argmax(p, d);                            \
          else                                                     \
            return B::X##_max_dim_with_indices(p, d).second;       \
        },                                                         \
        x, dim);                                                   \
  }                                                                \
  Dispatch::I Dispatch::X##_argmin(const P& x, i64 dim) {          \
    return dispatch::forward<I>(                                   \
        #X "_argmin",                                              \
        []<class B>(const auto& p, i64 d) {                        \
          if constexpr (requires { B::X##_argmin(p, d); })         \
            return B::X##_argmin(p, d);                            \
          else                                                     \
            return B::X##_min_dim_with_indices(p, d).second;       \
        },                                                         \
        x, dim);                                                   \
  }
EMBER_DEF_REDUCE_OPT(float, F)
EMBER_DEF_REDUCE_OPT(int, I)

// ---- linalg --------------------------------------------------------------------------------
EMBER_DISPATCH_DEF2(F, float_matmul, const F&, const F&)
EMBER_DISPATCH_DEF2(I, int_matmul, const I&, const I&)

// Optional linalg functions the front end requires for now (no composite).
EMBER_DISPATCH_OPTIONAL(F, float_diag, (const F& t), t)
EMBER_DISPATCH_OPTIONAL(I, int_diag, (const I& t), t)
EMBER_DISPATCH_OPTIONAL(F, float_cross, (const F& a, const F& b, std::size_t dim), a, b, dim)
EMBER_DISPATCH_OPTIONAL(I, int_cross, (const I& a, const I& b, std::size_t dim), a, b, dim)
EMBER_DISPATCH_OPTIONAL(F, float_vector_norm, (const F& t, double p, std::size_t dim), t, p, dim)
EMBER_DISPATCH_OPTIONAL(F, float_cosine_similarity,
                        (const F& a, const F& b, std::size_t dim, double eps), a, b, dim, eps)

}  // namespace ember
