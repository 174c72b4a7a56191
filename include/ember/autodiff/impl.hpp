// All of Autodiff<B>'s op definitions. Include this (in one translation unit per family, with
// the explicit instantiations below, as src/autodiff/instances/*.cpp do for each backend's
// library, see ember_autodiff_instances in CMakeLists.txt, or everywhere) to use Autodiff
// with a backend.
//
//   #define EMBER_AD_BACKEND MyBackend
//   #define EMBER_AD_TAG MyBackend      // an identifier, unique per backend in a program
//   EMBER_IR_REDUCE(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)   // one family's rules
#pragma once

#include "ember/autodiff/impl/attention.hpp"
#include "ember/autodiff/impl/conv.hpp"
#include "ember/autodiff/impl/conv_deform.hpp"
#include "ember/autodiff/impl/core.hpp"
#include "ember/autodiff/impl/elementwise.hpp"
#include "ember/autodiff/impl/indexing.hpp"
#include "ember/autodiff/impl/layout.hpp"
#include "ember/autodiff/impl/linalg.hpp"
#include "ember/autodiff/impl/norm.hpp"
#include "ember/autodiff/impl/pool.hpp"
#include "ember/autodiff/impl/reduce.hpp"

// Explicit instantiation of the recorded REQ rows (result class F) of AdOps<EMBER_AD_BACKEND>.
#define EMBER_AD_INSTANTIATE(Req, Res, Ret, name, Desc, Params) \
  EMBER_AD_INSTANTIATE_##Req##_##Res(Ret, name, Params)
#define EMBER_AD_INSTANTIATE_REQ_F(Ret, name, Params) \
  template auto ::ember::autodiff::AdOps<EMBER_AD_BACKEND>::name(EMBER_PP_PARAMS Params)->Ret;
#define EMBER_AD_INSTANTIATE_REQ_C(Ret, name, Params)
#define EMBER_AD_INSTANTIATE_REQ_N(Ret, name, Params)
#define EMBER_AD_INSTANTIATE_OPT_F(Ret, name, Params)
#define EMBER_AD_INSTANTIATE_OPT_N(Ret, name, Params)
#define EMBER_AD_INSTANTIATE_EXT_F(Ret, name, Params)
#define EMBER_AD_INSTANTIATE_EXT_N(Ret, name, Params)
#define EMBER_AD_INSTANTIATE_N(Req, Res, Ret, name, Desc, Params, Ns) \
  EMBER_AD_INSTANTIATE_N_##Req##_##Res(Ret, name, Params, Ns)
// Template rows: an exported pointer to each instance makes the compiler emit it.
// (named after EMBER_AD_TAG, so that the instances of several backends link into one program)
#define EMBER_AD_INSTANTIATE_N_ONE(n, Ret, name, Params)                                    \
  extern const auto EMBER_PP_CAT(EMBER_PP_CAT(kAdInstance_, EMBER_AD_TAG), _##name##_##n) = \
      &::ember::autodiff::AdOps<EMBER_AD_BACKEND>::template name<n>;
#define EMBER_AD_INSTANTIATE_N_REQ_F(Ret, name, Params, Ns) \
  EMBER_IR_FOR_NS(Ns, EMBER_AD_INSTANTIATE_N_ONE, Ret, name, Params)
#define EMBER_AD_INSTANTIATE_N_REQ_C(Ret, name, Params, Ns)
#define EMBER_AD_INSTANTIATE_N_REQ_N(Ret, name, Params, Ns)
#define EMBER_AD_INSTANTIATE_N_OPT_F(Ret, name, Params, Ns)
#define EMBER_AD_INSTANTIATE_N_OPT_N(Ret, name, Params, Ns)
#define EMBER_AD_INSTANTIATE_N_EXT_F(Ret, name, Params, Ns)
#define EMBER_AD_INSTANTIATE_N_EXT_N(Ret, name, Params, Ns)
