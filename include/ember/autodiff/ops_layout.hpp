// Autodiff<B>: layout functions (rules in ember/autodiff/impl/layout.hpp). The optional
// layout functions (unfold, squeeze_dims, repeat, pad, ...) are not defined for floats, so
// the front end's composites run and are differentiated through the required ones.
#pragma once

#include <cstddef>
#include <vector>

#include "ember/autodiff/ops_core.hpp"

namespace ember::autodiff {

template <class B>
struct AdLayoutOps {
  using AP = AdTensor<B>;

  /// Gradient: permuted back with the inverse permutation.
  static AP float_permute(AP t, const std::vector<std::size_t>& axes);
  /// Gradient: summed over the broadcast dims back to the input's shape.
  static AP float_expand(AP t, const Shape& shape);
  /// Gradient: scattered into zeros at the sliced positions.
  static AP float_slice(AP t, const std::vector<SliceRange>& ranges);
  /// Gradient: flipped back.
  static AP float_flip(AP t, const std::vector<std::size_t>& axes);
  /// Gradient: sliced into one piece per input.
  static AP float_cat(const std::vector<AP>& tensors, std::size_t dim);

  EMBER_AD_FORWARD(int_permute)
  EMBER_AD_FORWARD(bool_permute)
  EMBER_AD_FORWARD(int_expand)
  EMBER_AD_FORWARD(bool_expand)
  EMBER_AD_FORWARD(int_slice)
  EMBER_AD_FORWARD(bool_slice)
  EMBER_AD_FORWARD(int_flip)
  EMBER_AD_FORWARD(bool_flip)
  EMBER_AD_FORWARD(int_cat)
  EMBER_AD_FORWARD(bool_cat)
  EMBER_AD_FORWARD(int_unfold)
  EMBER_AD_FORWARD(bool_unfold)
  EMBER_AD_FORWARD(int_squeeze_dims)
  EMBER_AD_FORWARD(bool_squeeze_dims)
  EMBER_AD_FORWARD(int_unsqueeze_dims)
  EMBER_AD_FORWARD(bool_unsqueeze_dims)
  EMBER_AD_FORWARD(int_repeat)
  EMBER_AD_FORWARD(bool_repeat)
  EMBER_AD_FORWARD(int_pad)
  EMBER_AD_FORWARD(bool_pad)
};

}  // namespace ember::autodiff
