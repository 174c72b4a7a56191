// Dispatch: quantization (ember/ir/quant.hpp), generated from the registry. Each row runs the
// stack's kernel when it has one (the CPU), else the front end's composite on the stack.
#include "defaults.hpp"
#include "stacks.hpp"

namespace ember {

EMBER_IR_QUANT(EMBER_DISPATCH_DEFINE, EMBER_DISPATCH_DEFINE_N)

}  // namespace ember
