// Dispatch: convolution and pooling functions (ember/backend/conv.hpp, pool.hpp).
#include "stacks.hpp"

namespace ember {

EMBER_DISPATCH_DEF4(F, conv1d, const F&, const F&, const OptF&, const ConvOptions<1>&)
EMBER_DISPATCH_DEF4(F, conv2d, const F&, const F&, const OptF&, const ConvOptions<2>&)
EMBER_DISPATCH_DEF4(F, conv3d, const F&, const F&, const OptF&, const ConvOptions<3>&)
EMBER_DISPATCH_DEF4(F, conv_transpose1d, const F&, const F&, const OptF&,
                    const ConvTransposeOptions<1>&)
EMBER_DISPATCH_DEF4(F, conv_transpose2d, const F&, const F&, const OptF&,
                    const ConvTransposeOptions<2>&)
EMBER_DISPATCH_DEF4(F, conv_transpose3d, const F&, const F&, const OptF&,
                    const ConvTransposeOptions<3>&)
EMBER_DISPATCH_DEF6(F, deform_conv2d, const F&, const F&, const F&, const OptF&, const OptF&,
                    const DeformConvOptions&)
EMBER_DISPATCH_DEF3(F, unfold4d, const F&, const PoolArg2&, const UnfoldOptions&)
EMBER_DISPATCH_DEF4(F, fold4d, const F&, const PoolArg2&, const PoolArg2&, const UnfoldOptions&)

EMBER_DISPATCH_DEF6(F, float_max_pool2d, const F&, PoolArg2, PoolArg2, PoolArg2, PoolArg2, bool)
EMBER_DISPATCH_DEF6(FI, float_max_pool2d_with_indices, const F&, PoolArg2, PoolArg2, PoolArg2,
                    PoolArg2, bool)
EMBER_DISPATCH_DEF6(F, float_avg_pool2d, const F&, PoolArg2, PoolArg2, PoolArg2, bool, bool)
EMBER_DISPATCH_DEF2(F, float_adaptive_avg_pool2d, const F&, PoolArg2)
EMBER_DISPATCH_DEF3(F, float_interpolate, const F&, PoolArg2, InterpolateOptions)
EMBER_DISPATCH_DEF3(F, float_grid_sample_2d, const F&, const F&, GridSampleOptions)

}  // namespace ember
