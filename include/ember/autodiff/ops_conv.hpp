// Autodiff<B>: convolutions, deformable convolution, unfold/fold (rules in
// ember/autodiff/impl/conv.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "ember/autodiff/ops_core.hpp"

namespace ember::autodiff {

template <class B>
struct AdConvOps {
  using AP = AdTensor<B>;
  using OptAP = std::optional<AP>;

  static AP conv1d(const AP& x, const AP& weight, const OptAP& bias, const ConvOptions<1>& opt);
  static AP conv2d(const AP& x, const AP& weight, const OptAP& bias, const ConvOptions<2>& opt);
  static AP conv3d(const AP& x, const AP& weight, const OptAP& bias, const ConvOptions<3>& opt);
  static AP conv_transpose1d(const AP& x, const AP& weight, const OptAP& bias,
                             const ConvTransposeOptions<1>& opt);
  static AP conv_transpose2d(const AP& x, const AP& weight, const OptAP& bias,
                             const ConvTransposeOptions<2>& opt);
  static AP conv_transpose3d(const AP& x, const AP& weight, const OptAP& bias,
                             const ConvTransposeOptions<3>& opt);
  static AP deform_conv2d(const AP& x, const AP& offset, const AP& weight, const OptAP& mask,
                          const OptAP& bias, const DeformConvOptions& opt);
  static AP unfold4d(const AP& x, const std::array<std::int64_t, 2>& kernel,
                     const UnfoldOptions& opt);
  static AP fold4d(const AP& x, const std::array<std::int64_t, 2>& output_size,
                   const std::array<std::int64_t, 2>& kernel, const UnfoldOptions& opt);
};

}  // namespace ember::autodiff
