// A CPU backend without the quantization kernels, so that the front end (and Dispatch) run
// the composites of ember/tensor/quant_composite.hpp: how the quant tests check them.
#pragma once

#include <string>

#include "checking_backend.hpp"
#include "ember/cpu/cpu.hpp"

namespace ember::test {

/// Checking<Cpu> with the quantization rows hidden.
struct NoQuantKernels : Checking<Cpu> {
  static std::string name() { return "composite"; }
  template <class... A>
  static void float_quant_params(A&&...) = delete;
  template <class... A>
  static void float_quantize(A&&...) = delete;
  template <class... A>
  static void int_dequantize(A&&...) = delete;
  template <class... A>
  static void int_quantized_linear_pack(A&&...) = delete;
  template <class... A>
  static void float_quantized_linear(A&&...) = delete;
  template <class... A>
  static void float_quantized_conv2d(A&&...) = delete;
};

}  // namespace ember::test
