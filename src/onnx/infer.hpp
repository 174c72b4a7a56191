// Type and shape inference over a checked, sorted graph (infer.cpp).
#pragma once

#include "onnx_internal.hpp"

namespace ember::onnx::detail {

/// Fills graph.value_types for every node output whose type the rules determine, checks
/// declared value_info / graph outputs against it, and throws ShapeError naming the node for
/// operands whose known shapes contradict the operator (broadcasting, matmul inner dims,
/// conv channels, concat dims, reshape sizes).
void infer_graph(const Model& model, Graph& graph);

}  // namespace ember::onnx::detail
