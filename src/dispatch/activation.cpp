// Dispatch: the optional activation and nn functions (ember/ir/nn.hpp), generated from the
// registry: the stack's fused kernel when it has one, else the front end's composite on the
// stack (src/dispatch/defaults.hpp).
#include "defaults.hpp"
#include "stacks.hpp"

namespace ember {

EMBER_IR_NN(EMBER_DISPATCH_DEFINE, EMBER_DISPATCH_DEFINE_N)

}  // namespace ember
