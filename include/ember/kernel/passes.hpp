// Passes over the kernel IR. Each returns true when it changed the kernel.
#pragma once

#include <string>

#include "ember/kernel/ir.hpp"

namespace ember::kernel {

/// Evaluates pure instructions whose operands are all constants, and simplifies
/// x + 0, x - 0, x * 1, x / 1 (integers), x * 1, x / 1 (floats), x * 0 (integers).
bool fold_constants(Kernel& k);
/// Common subexpressions: a pure instruction equal to one already computed in the same or
/// an enclosing block is replaced by that one's result.
bool eliminate_common_subexpressions(Kernel& k);
/// Removes pure instructions, loads and reads whose results are unused, assignments to
/// variables never read, and ifs with empty branches.
bool eliminate_dead_code(Kernel& k);
/// Replaces every IfInBounds by its body. Valid only when each thread's `pos` is below
/// `len` by construction, e.g. pos = absolute_pos() and the launch has exactly len threads
/// (see covers_exactly in launch.hpp).
bool assume_in_bounds(Kernel& k);
/// fold_constants, eliminate_common_subexpressions and eliminate_dead_code to a fixed point.
void optimize(Kernel& k);

/// The kernel as text, for debugging (EMBER_KERNEL_LOG=1 prints it with the generated code).
std::string to_string(const Kernel& k);
/// True when EMBER_KERNEL_LOG is set to a non-zero value.
bool kernel_log_enabled();

}  // namespace ember::kernel
