// Generated declarations of a backend's required functions: inside a struct that defines the
// registry's type aliases (EMBER_IR_TYPE_ALIASES), `EMBER_IR_OPS(EMBER_BACKEND_DECLARE,
// EMBER_BACKEND_DECLARE_N)` declares one static function per REQ row with the row's exact
// signature; the backend defines them anywhere (src/cpu/*.cpp, inline in a header).
#pragma once

#include "ember/ir/registry.hpp"

#define EMBER_BACKEND_DECLARE(Req, Res, Ret, name, Desc, Params) \
  EMBER_BACKEND_DECLARE_##Req(Ret, name, Params)
#define EMBER_BACKEND_DECLARE_REQ(Ret, name, Params) static Ret name(EMBER_PP_PARAMS Params);
#define EMBER_BACKEND_DECLARE_OPT(Ret, name, Params)
#define EMBER_BACKEND_DECLARE_EXT(Ret, name, Params)
#define EMBER_BACKEND_DECLARE_N(Req, Res, Ret, name, Desc, Params, Ns) \
  EMBER_BACKEND_DECLARE_N_##Req(Ret, name, Params)
#define EMBER_BACKEND_DECLARE_N_REQ(Ret, name, Params) \
  template <std::size_t N>                             \
  static Ret name(EMBER_PP_PARAMS Params);
#define EMBER_BACKEND_DECLARE_N_OPT(Ret, name, Params)
#define EMBER_BACKEND_DECLARE_N_EXT(Ret, name, Params)
