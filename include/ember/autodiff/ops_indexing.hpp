// Autodiff<B>: indexing functions (rules in ember/autodiff/impl/indexing.hpp).
#pragma once

#include <cstddef>
#include <vector>

#include "ember/autodiff/ops_core.hpp"

namespace ember::autodiff {

template <class B>
struct AdIndexingOps {
  using AP = AdTensor<B>;
  using IP = typename B::IntTensor;
  using BP = typename B::BoolTensor;

  static AP float_slice_assign(AP t, const std::vector<SliceRange>& ranges, AP values);
  static AP float_select(AP t, std::size_t dim, const IP& indices);
  static AP float_select_assign(AP t, std::size_t dim, const IP& indices, AP values,
                                IndexUpdate update);
  static AP float_gather(std::size_t dim, AP t, const IP& indices);
  static AP float_scatter(std::size_t dim, AP t, const IP& indices, AP values, IndexUpdate update);
  static AP float_mask_where(AP t, const BP& mask, AP values);
  static AP float_mask_fill(AP t, const BP& mask, double value);

  EMBER_AD_FORWARD(int_slice_assign)
  EMBER_AD_FORWARD(bool_slice_assign)
  EMBER_AD_FORWARD(int_select)
  EMBER_AD_FORWARD(bool_select)
  EMBER_AD_FORWARD(int_select_assign)
  EMBER_AD_FORWARD(bool_select_assign)
  EMBER_AD_FORWARD(int_gather)
  EMBER_AD_FORWARD(bool_gather)
  EMBER_AD_FORWARD(int_scatter)
  EMBER_AD_FORWARD(bool_scatter)
  EMBER_AD_FORWARD(int_mask_where)
  EMBER_AD_FORWARD(bool_mask_where)
  EMBER_AD_FORWARD(int_mask_fill)
  EMBER_AD_FORWARD(bool_mask_fill)
  EMBER_AD_FORWARD(bool_argwhere)
};

}  // namespace ember::autodiff
