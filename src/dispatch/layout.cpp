// Dispatch: layout and indexing functions (ember/backend/layout.hpp, indexing.hpp).
// The optional layout functions (unfold, squeeze_dims, unsqueeze_dims, pad) run the stack's
// override when it has one and the front end's composite (detail::LayoutPrim) otherwise.
#include "ember/tensor/ops/layout_prim.hpp"
#include "stacks.hpp"

namespace ember {

namespace {
/// A generic lambda calling the layout composite-or-override of kind K on stack B.
#define EMBER_LAYOUT_OPT(K, fn)                                                       \
  []<class B_>(auto&&... a_) {                                                        \
    return ::ember::detail::LayoutPrim<B_, K>::fn(std::forward<decltype(a_)>(a_)...); \
  }
}  // namespace

#define EMBER_DEF_LAYOUT(X, P, K)                                                             \
  EMBER_DISPATCH_DEF2(P, X##_permute, P, const Axes&)                                         \
  EMBER_DISPATCH_DEF2(P, X##_expand, P, const Shape&)                                         \
  EMBER_DISPATCH_DEF2(P, X##_slice, P, const Ranges&)                                         \
  EMBER_DISPATCH_DEF2(P, X##_flip, P, const Axes&)                                            \
  EMBER_DISPATCH_DEF2(P, X##_cat, const std::vector<P>&, std::size_t)                         \
  EMBER_DISPATCH_DEF3(P, X##_slice_assign, P, const Ranges&, P)                               \
  EMBER_DISPATCH_DEF3(P, X##_select, const P&, std::size_t, const I&)                         \
  EMBER_DISPATCH_DEF5(P, X##_select_assign, P, std::size_t, const I&, const P&, IndexUpdate)  \
  EMBER_DISPATCH_DEF3(P, X##_gather, std::size_t, const P&, const I&)                         \
  EMBER_DISPATCH_DEF5(P, X##_scatter, std::size_t, P, const I&, const P&, IndexUpdate)        \
  EMBER_DISPATCH_DEF3(P, X##_mask_where, P, const Bo&, const P&)                              \
  EMBER_DISPATCH_DEF3(P, X##_mask_fill, P, const Bo&, double)                                 \
  Dispatch::P Dispatch::X##_unfold(P t, std::size_t dim, i64 size, i64 step) {                \
    return dispatch::forward<P>(#X "_unfold", EMBER_LAYOUT_OPT(K, unfold), std::move(t), dim, \
                                size, step);                                                  \
  }                                                                                           \
  Dispatch::P Dispatch::X##_squeeze_dims(P t, const Axes& dims) {                             \
    return dispatch::forward<P>(#X "_squeeze_dims", EMBER_LAYOUT_OPT(K, squeeze_dims),        \
                                std::move(t), dims);                                          \
  }                                                                                           \
  Dispatch::P Dispatch::X##_unsqueeze_dims(P t, const Axes& dims) {                           \
    return dispatch::forward<P>(#X "_unsqueeze_dims", EMBER_LAYOUT_OPT(K, unsqueeze_dims),    \
                                std::move(t), dims);                                          \
  }                                                                                           \
  Dispatch::P Dispatch::X##_pad(const P& t, const Pads& pads, PadMode mode, double value) {   \
    return dispatch::forward<P>(#X "_pad", EMBER_LAYOUT_OPT(K, pad), t, pads, mode, value);   \
  }

EMBER_DEF_LAYOUT(float, F, Float)
EMBER_DEF_LAYOUT(int, I, Int)
EMBER_DEF_LAYOUT(bool, Bo, Bool)

EMBER_DISPATCH_DEF2(I, bool_argwhere, const Bo&, DType)

}  // namespace ember
