#include "onnx_internal.hpp"
namespace ember::onnx::detail {
void register_string(OpRegistry&) {}
}
