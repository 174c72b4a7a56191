// Code generators: CUDA C++ (for NVRTC) and GLSL 4.50 compute (for shaderc -> SPIR-V).
//
// Both emit straight-line C-like code from the IR: each vector value becomes one variable
// per lane, f16/bf16 values are f32 variables rounded after every operation, memory
// accesses of 4, 8, 16 or 32 bytes are single wide loads/stores, and the math functions are
// the shared scalar functions (CUDA compiles ember::scalar's header text; GLSL gets the same
// algorithms transcribed). Unless the kernel allows it (Kernel::contract), no target contracts
// a * b + c into an FMA on its own (CUDA: --fmad=false; GLSL: `precise`), so every target
// rounds like the reference.
#pragma once

#include <cstdint>
#include <string>

#include "ember/kernel/ir.hpp"

namespace ember::kernel {

/// The CUDA C++ source of a kernel: `extern "C" __global__ void <name>(<buffers>, Info)`.
/// Throws UnsupportedError for what CUDA cannot express.
std::string generate_cuda(const Kernel& k);

/// What the Vulkan device offers that the GLSL generator may use.
struct GlslOptions {
  bool int8 = true;              // 8-bit storage and arithmetic types (u8/bool buffers)
  bool int16 = true;             // 16-bit storage (f16/bf16 buffers)
  bool float_atomics = true;     // GL_EXT_shader_atomic_float
  bool int64_atomics = true;     // GL_EXT_shader_atomic_int64
  bool coop_matrix = false;      // GL_NV_cooperative_matrix
  bool denorm_preserve = false;  // request f32 subnormals kept (SPV_KHR_float_controls)
  bool nan_preserve = false;     // request NaN/inf/-0 kept by f32 operations (same)
};

/// The GLSL 4.50 compute shader of a kernel: buffers at bindings 0..n-1 (set 0) in argument
/// order, the info words at binding n. Throws UnsupportedError for what the options lack
/// or GLSL cannot express (transcendental functions on f64).
std::string generate_glsl(const Kernel& k, const GlslOptions& options = {});

/// The header text of ember::scalar (embedded at build time), compiled into CUDA kernels.
const char* scalar_header_text();

}  // namespace ember::kernel
