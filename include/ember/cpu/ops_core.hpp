// CPU backend: core functions of the contract (see ember/backend/core.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "ember/core/data.hpp"
#include "ember/core/distribution.hpp"
#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

/// Kind-agnostic kernels behind the core functions of `cpu::Ops` (src/cpu/core.cpp).
struct CoreOps {
  using P = CpuTensor;
  using Dev = CpuDevice;
  static P from_data(const TensorData& data, const Dev& dev);
  static TensorData into_data(const P& t);
  static P empty(const Shape& shape, const Dev& dev, DType dtype);
  static P full(const Shape& shape, double value, const Dev& dev, DType dtype);
  static P reshape(P t, const Shape& shape);
  static P cast(P t, DType dtype);
  /// Seeds the backend's random generator; the same seed gives the same values
  /// whatever the thread count.
  static void seed(std::uint64_t seed);
  /// Number of threads used by kernels (default: hardware concurrency).
  static void set_num_threads(int n);
  static int num_threads();
  /// Values from `dist`, reproducible for a given seed (counter-based generator).
  static P float_random(const Shape& shape, Distribution dist, const Dev& dev, DType dtype);
  /// [start, start+step, ...) up to `end` (exclusive); step may be negative.
  static P int_arange(std::int64_t start, std::int64_t end, std::int64_t step, const Dev& dev,
                      DType dtype);
};

}  // namespace ember::cpu
