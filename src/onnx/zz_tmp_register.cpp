#include "onnx_internal.hpp"
namespace ember::onnx::detail {
void register_control(OpRegistry&) {}
void register_sequence(OpRegistry&) {}
void register_quant(OpRegistry&) {}
void register_string(OpRegistry&) {}
void register_attention(OpRegistry&) {}
}
