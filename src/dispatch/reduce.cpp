// Dispatch: reductions and linear algebra (ember/ir/reduce.hpp, linalg.hpp), generated from
// the registry. The optional reductions (sum, max_dim, min_dim, argmax, argmin) run the
// stack's override when it has one, else a composite of the required functions.
#include "defaults.hpp"
#include "stacks.hpp"

namespace ember {

EMBER_IR_REDUCE(EMBER_DISPATCH_DEFINE, EMBER_DISPATCH_DEFINE_N)
EMBER_IR_LINALG(EMBER_DISPATCH_DEFINE, EMBER_DISPATCH_DEFINE_N)

}  // namespace ember
