#include "onnx_internal.hpp"
namespace ember::onnx::detail {
void register_activation(OpRegistry&) {}
void register_shape(OpRegistry&) {}
void register_indexing(OpRegistry&) {}
void register_reduce(OpRegistry&) {}
void register_nn(OpRegistry&) {}
void register_norm(OpRegistry&) {}
void register_rnn(OpRegistry&) {}
void register_control(OpRegistry&) {}
void register_sequence(OpRegistry&) {}
void register_quant(OpRegistry&) {}
void register_misc(OpRegistry&) {}
void register_string(OpRegistry&) {}
void register_signal(OpRegistry&) {}
void register_attention(OpRegistry&) {}
}
