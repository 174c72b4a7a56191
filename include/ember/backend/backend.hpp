// The Backend concept: the whole contract, generated from the op registry (ember/ir).
//
// A backend B has the types of ember/backend/core.hpp, the element-wise templates of
// ember/backend/elementwise.hpp, and one static function per REQ row of the registry
// (ember/ir/registry.hpp), with the row's parameter and return types. OPT and EXT rows are
// optional: the front end detects them with a requires-expression. The semantics of each
// function are documented beside its family (ember/backend/<family>.hpp) and its description
// (ember/ir/<family>.hpp). `ember::check_backend<B>()` names the first missing function in a
// compile error.
#pragma once

#include <concepts>

#include "ember/backend/core.hpp"
#include "ember/backend/elementwise.hpp"
#include "ember/ir/registry.hpp"

namespace ember {

namespace backend_detail {

/// B's primitive and device types under the registry's aliases.
template <class B>
struct Aliases {
  EMBER_IR_TYPE_ALIASES(typename B::FloatTensor, typename B::IntTensor, typename B::BoolTensor,
                        typename B::Device);
};

#define EMBER_BACKEND_HAS_REQ(Ret, name, Params)                                             \
  &&requires(EMBER_PP_PARAMS Params) {                                                       \
    { B::name(EMBER_PP_ARGS(EMBER_PP_NAME, EMBER_PP_UNPAREN Params)) } -> std::same_as<Ret>; \
  }
#define EMBER_BACKEND_HAS_OPT(Ret, name, Params)
#define EMBER_BACKEND_HAS_EXT(Ret, name, Params)
#define EMBER_BACKEND_HAS(Req, Res, Ret, name, Desc, Params) \
  EMBER_BACKEND_HAS_##Req(Ret, name, Params)
#define EMBER_BACKEND_HAS_N_ONE(n, Ret, name, Params)                              \
  &&[]<std::size_t N>() {                                                          \
    return requires(EMBER_PP_PARAMS Params) {                                      \
      {                                                                            \
        B::template name<N>(EMBER_PP_ARGS(EMBER_PP_NAME, EMBER_PP_UNPAREN Params)) \
        } -> std::same_as<Ret>;                                                    \
    };                                                                             \
  }.template operator()<n>()
#define EMBER_BACKEND_HAS_N_REQ(Ret, name, Params, Ns) \
  EMBER_IR_FOR_NS(Ns, EMBER_BACKEND_HAS_N_ONE, Ret, name, Params)
#define EMBER_BACKEND_HAS_N_OPT(Ret, name, Params, Ns)
#define EMBER_BACKEND_HAS_N_EXT(Ret, name, Params, Ns)
#define EMBER_BACKEND_HAS_N(Req, Res, Ret, name, Desc, Params, Ns) \
  EMBER_BACKEND_HAS_N_##Req(Ret, name, Params, Ns)

/// Whether B has every REQ row of the registry.
template <class B>
constexpr bool has_required_ops() {
  using A [[maybe_unused]] = Aliases<B>;
  using F [[maybe_unused]] = typename A::F;
  using I [[maybe_unused]] = typename A::I;
  using Bo [[maybe_unused]] = typename A::Bo;
  using Dev [[maybe_unused]] = typename A::Dev;
  using OptF [[maybe_unused]] = typename A::OptF;
  using OptBo [[maybe_unused]] = typename A::OptBo;
  using VecF [[maybe_unused]] = typename A::VecF;
  using VecI [[maybe_unused]] = typename A::VecI;
  using VecBo [[maybe_unused]] = typename A::VecBo;
  using FI [[maybe_unused]] = typename A::FI;
  using II [[maybe_unused]] = typename A::II;
  using FF [[maybe_unused]] = typename A::FF;
  using i64 [[maybe_unused]] = std::int64_t;
  using usize [[maybe_unused]] = std::size_t;
  using Axes [[maybe_unused]] = ir::Axes;
  using Ranges [[maybe_unused]] = ir::Ranges;
  using Pads [[maybe_unused]] = ir::Pads;
  using Reps [[maybe_unused]] = ir::Reps;
  using Arr2 [[maybe_unused]] = std::array<std::int64_t, 2>;
  using ir::Dims;
  return true EMBER_IR_OPS(EMBER_BACKEND_HAS, EMBER_BACKEND_HAS_N);
}

}  // namespace backend_detail

/// The contract of every backend.
template <class B>
concept Backend = CoreBackend<B> && ElementwiseBackend<B> && backend_detail::has_required_ops<B>();

}  // namespace ember
