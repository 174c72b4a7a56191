// Autodiff<B> (B = EMBER_AD_BACKEND, given by CMake per library): training batch norm and
// attention with the inner backend's fused kernels, when it has them (Cpu has the batch norm,
// the GPU backends both; without them the front end's composite runs on Autodiff<B>'s own ops
// and nothing is instantiated here).
#include EMBER_AD_HEADER
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
namespace {
template <class B>
constexpr auto batch_norm_train_instance() {
  if constexpr (HasBatchNormTrain<B>)
    return &AdOps<B>::float_batch_norm_train;
  else
    return nullptr;
}
template <class B>
constexpr auto attention_instance() {
  if constexpr (HasFusedAttention<B>)
    return &AdOps<B>::float_scaled_dot_product_attention;
  else
    return nullptr;
}
}  // namespace
// An exported pointer to the instance makes the compiler emit it (named after EMBER_AD_TAG,
// so that the instances of several backends link into one program).
extern const auto EMBER_PP_CAT(kAdInstance_, EMBER_PP_CAT(EMBER_AD_TAG, _batch_norm_train)) =
    batch_norm_train_instance<EMBER_AD_BACKEND>();
extern const auto EMBER_PP_CAT(kAdInstance_,
                               EMBER_PP_CAT(EMBER_AD_TAG,
                                            _attention)) = attention_instance<EMBER_AD_BACKEND>();
}  // namespace ember::autodiff
