// Dispatch: layout and indexing functions (ember/ir/layout.hpp), generated from the registry.
// The optional ones (unfold, squeeze_dims, unsqueeze_dims, repeat, pad) run the stack's
// override when it has one and the front end's composite (detail::LayoutPrim) otherwise.
#include "defaults.hpp"
#include "stacks.hpp"

namespace ember {

EMBER_IR_LAYOUT(EMBER_DISPATCH_DEFINE, EMBER_DISPATCH_DEFINE_N)

}  // namespace ember
