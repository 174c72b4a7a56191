// The shared scalar element functions, which the CPU target calls directly and the CUDA
// generator compiles from the same text: ember::scalar (exp_f32, erf_f32, integer division,
// round_half_even, ...) in ember/ir/scalar.hpp, and the element-wise table's rows
// (ember::ir::op::Exp, ...) built on them in ember/ir/elementwise.hpp. The one place that names
// them (CMake's EMBER_SCALAR_HEADER names ember/ir/scalar.hpp for the CUDA text).
#pragma once

#include "ember/ir/elementwise.hpp"
#include "ember/ir/scalar.hpp"
