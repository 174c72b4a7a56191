// Autodiff<B>: backward rules of convolutions, deformable convolution and unfold/fold.
#pragma once

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

namespace rules {
template <class B>
std::optional<typename B::FloatTensor> inner_opt(const std::optional<AP<B>>& t) {
  if (!t) return std::nullopt;
  return t->inner;
}
template <class B>
std::vector<AP<B>> with_opt(std::vector<AP<B>> ins, const std::optional<AP<B>>& t) {
  if (t) ins.push_back(*t);
  return ins;
}
}  // namespace rules

#define EMBER_AD_CONV_NO_RULE(name, Opt)                                                    \
  template <class B>                                                                        \
  AdTensor<B> AdConvOps<B>::name(const AP& x, const AP& weight, const OptAP& bias,          \
                                 const Opt& opt) {                                          \
    auto out = B::name(x.inner, weight.inner, rules::inner_opt<B>(bias), opt);              \
    return rules::no_rule<B>(#name, rules::with_opt<B>({x, weight}, bias), std::move(out)); \
  }
EMBER_AD_CONV_NO_RULE(conv1d, ConvOptions<1>)
EMBER_AD_CONV_NO_RULE(conv2d, ConvOptions<2>)
EMBER_AD_CONV_NO_RULE(conv3d, ConvOptions<3>)
EMBER_AD_CONV_NO_RULE(conv_transpose1d, ConvTransposeOptions<1>)
EMBER_AD_CONV_NO_RULE(conv_transpose2d, ConvTransposeOptions<2>)
EMBER_AD_CONV_NO_RULE(conv_transpose3d, ConvTransposeOptions<3>)
#undef EMBER_AD_CONV_NO_RULE

template <class B>
AdTensor<B> AdConvOps<B>::deform_conv2d(const AP& x, const AP& offset, const AP& weight,
                                        const OptAP& mask, const OptAP& bias,
                                        const DeformConvOptions& opt) {
  auto out = B::deform_conv2d(x.inner, offset.inner, weight.inner, rules::inner_opt<B>(mask),
                              rules::inner_opt<B>(bias), opt);
  auto ins = rules::with_opt<B>(rules::with_opt<B>({x, offset, weight}, mask), bias);
  return rules::no_rule<B>("deform_conv2d", std::move(ins), std::move(out));
}

template <class B>
AdTensor<B> AdConvOps<B>::unfold4d(const AP& x, const std::array<std::int64_t, 2>& kernel,
                                   const UnfoldOptions& opt) {
  return rules::no_rule<B>("unfold4d", {x}, B::unfold4d(x.inner, kernel, opt));
}

template <class B>
AdTensor<B> AdConvOps<B>::fold4d(const AP& x, const std::array<std::int64_t, 2>& output_size,
                                 const std::array<std::int64_t, 2>& kernel,
                                 const UnfoldOptions& opt) {
  return rules::no_rule<B>("fold4d", {x}, B::fold4d(x.inner, output_size, kernel, opt));
}

}  // namespace ember::autodiff
