// Dispatch: convolution and pooling functions (ember/ir/conv.hpp, pool.hpp), generated from
// the registry (the rank-generic ones instantiated for each rank they exist for).
#include "defaults.hpp"
#include "stacks.hpp"

namespace ember {

EMBER_IR_CONV(EMBER_DISPATCH_DEFINE, EMBER_DISPATCH_DEFINE_N)
EMBER_IR_POOL(EMBER_DISPATCH_DEFINE, EMBER_DISPATCH_DEFINE_N)

}  // namespace ember
