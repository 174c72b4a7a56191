// The op registry: every backend function of the contract other than the element-wise ones
// (ember/ir/elementwise.hpp), one row each, with its description (ember/ir/<family>.hpp).
//
//   EMBER_IR_OPS(X, XN)   expands X(kind, result, Ret, name, Desc, (Params...)) per row and
//                         XN(kind, result, Ret, name, Desc, (Params...), (Ns...)) per template row
//
// Everything that must list the contract is generated from it: the Backend concept
// (ember/backend/backend.hpp), the declarations of the CPU backend and of Autodiff's float
// functions, the pass-through base of decorators (ember/backend/forward.hpp), Dispatch's
// functions, and the tests' checking and recording backends. The columns are described in
// ember/ir/core.hpp. Parameter and return types are spelled with the aliases of
// EMBER_IR_TYPE_ALIASES, defined in each expansion context.
//
// ADDING A STRUCTURED OP: its description and row in ember/ir/<family>.hpp, its kernel in
// the CPU backend (the declaration is generated), its gradient in ember/autodiff/impl/
// (float ops; the declaration is generated), its front-end method, and a test.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ember/ir/conv.hpp"
#include "ember/ir/core.hpp"
#include "ember/ir/layout.hpp"
#include "ember/ir/linalg.hpp"
#include "ember/ir/nn.hpp"
#include "ember/ir/pool.hpp"
#include "ember/ir/pp.hpp"
#include "ember/ir/quant.hpp"
#include "ember/ir/reduce.hpp"

// clang-format off
#define EMBER_IR_OPS(X, XN) \
  EMBER_IR_CORE(X, XN) \
  EMBER_IR_LAYOUT(X, XN) \
  EMBER_IR_REDUCE(X, XN) \
  EMBER_IR_LINALG(X, XN) \
  EMBER_IR_CONV(X, XN) \
  EMBER_IR_POOL(X, XN) \
  EMBER_IR_NN(X, XN) \
  EMBER_IR_QUANT(X, XN)
// clang-format on

/// The aliases the rows' types are written with, for primitives FT, IT, BT and device DT.
#define EMBER_IR_TYPE_ALIASES(FT, IT, BT, DT)   \
  using F = FT;                                 \
  using I = IT;                                 \
  using Bo = BT;                                \
  using Dev = DT;                               \
  using OptF = std::optional<F>;                \
  using OptI = std::optional<I>;                \
  using OptBo = std::optional<Bo>;              \
  using VecF = std::vector<F>;                  \
  using VecI = std::vector<I>;                  \
  using VecBo = std::vector<Bo>;                \
  using FI = std::pair<F, I>;                   \
  using II = std::pair<I, I>;                   \
  using FF = std::pair<F, F>;                   \
  using OptFF = std::optional<std::pair<F, F>>; \
  using i64 = std::int64_t;                     \
  using usize = std::size_t;                    \
  using Axes = ::ember::ir::Axes;               \
  using Ranges = ::ember::ir::Ranges;           \
  using Pads = ::ember::ir::Pads;               \
  using Reps = ::ember::ir::Reps;               \
  using Arr2 = std::array<std::int64_t, 2>;     \
  template <std::size_t N_>                     \
  using Dims = ::ember::ir::Dims<N_>

/// EMBER_IR_FOR_NS((1, 2, 3), M, args...) -> M(1, args...) M(2, args...) M(3, args...)
#define EMBER_IR_FOR_NS(Ns, ...) EMBER_IR_FOR_NS_A((__VA_ARGS__), EMBER_PP_UNPAREN Ns)
#define EMBER_IR_FOR_NS_A(args, ...) EMBER_IR_FOR_NS_B(args, __VA_ARGS__)
#define EMBER_IR_FOR_NS_B(args, ...) \
  EMBER_PP_CAT(EMBER_IR_FOR_NS_, EMBER_PP_NARGS(__VA_ARGS__))(args, __VA_ARGS__)
#define EMBER_IR_INVOKE(f, a) f a
#define EMBER_IR_APPLY(n, args) EMBER_IR_INVOKE(EMBER_IR_APPLY_, (n, EMBER_PP_UNPAREN args))
#define EMBER_IR_APPLY_(n, M, ...) M(n, __VA_ARGS__)
#define EMBER_IR_FOR_NS_1(args, a) EMBER_IR_APPLY(a, args)
#define EMBER_IR_FOR_NS_2(args, a, b) EMBER_IR_APPLY(a, args) EMBER_IR_APPLY(b, args)
#define EMBER_IR_FOR_NS_3(args, a, b, c) \
  EMBER_IR_APPLY(a, args) EMBER_IR_APPLY(b, args) EMBER_IR_APPLY(c, args)
