// CPU backend: core functions of the contract (see ember/backend/core.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "ember/cpu/tensor.hpp"
#include "ember/tensor/data.hpp"
#include "ember/tensor/distribution.hpp"

namespace ember::cpu {

struct CoreOps {
  using P = CpuTensor;
  using Dev = CpuDevice;

  static std::string name() { return "cpu"; }
  static std::string device_name(const Dev&) { return "cpu"; }
  /// Seeds the backend's random generator; the same seed gives the same values
  /// whatever the thread count.
  static void seed(std::uint64_t seed);
  static void sync(const Dev&) {}
  /// Number of threads used by kernels (default: hardware concurrency).
  static void set_num_threads(int n);
  static int num_threads();

  static P from_data(const TensorData& data, const Dev& dev);
  static TensorData into_data(const P& t);
  static P empty(const Shape& shape, const Dev& dev, DType dtype);
  static P full(const Shape& shape, double value, const Dev& dev, DType dtype);
  static P reshape(P t, const Shape& shape);
  static P cast(P t, DType dtype);

  static P float_from_data(const TensorData& d, const Dev& dev) { return from_data(d, dev); }
  static P int_from_data(const TensorData& d, const Dev& dev) { return from_data(d, dev); }
  static P bool_from_data(const TensorData& d, const Dev& dev) { return from_data(d, dev); }
  static TensorData float_into_data(const P& t) { return into_data(t); }
  static TensorData int_into_data(const P& t) { return into_data(t); }
  static TensorData bool_into_data(const P& t) { return into_data(t); }
  static Shape float_shape(const P& t) { return t.shape; }
  static Shape int_shape(const P& t) { return t.shape; }
  static Shape bool_shape(const P& t) { return t.shape; }
  static DType float_dtype(const P& t) { return t.dtype; }
  static DType int_dtype(const P& t) { return t.dtype; }
  static DType bool_dtype(const P& t) { return t.dtype; }
  static Dev float_device(const P&) { return {}; }
  static Dev int_device(const P&) { return {}; }
  static Dev bool_device(const P&) { return {}; }
  static P float_to_device(P t, const Dev&) { return t; }
  static P int_to_device(P t, const Dev&) { return t; }
  static P bool_to_device(P t, const Dev&) { return t; }
  static P float_empty(const Shape& s, const Dev& d, DType dt) { return empty(s, d, dt); }
  static P int_empty(const Shape& s, const Dev& d, DType dt) { return empty(s, d, dt); }
  static P bool_empty(const Shape& s, const Dev& d, DType) { return empty(s, d, DType::Bool); }
  static P float_full(const Shape& s, double v, const Dev& d, DType dt) {
    return full(s, v, d, dt);
  }
  static P int_full(const Shape& s, double v, const Dev& d, DType dt) { return full(s, v, d, dt); }
  static P bool_full(const Shape& s, double v, const Dev& d, DType) {
    return full(s, v, d, DType::Bool);
  }
  static P float_reshape(P t, const Shape& s) { return reshape(std::move(t), s); }
  static P int_reshape(P t, const Shape& s) { return reshape(std::move(t), s); }
  static P bool_reshape(P t, const Shape& s) { return reshape(std::move(t), s); }
  static P float_cast(P t, DType dt) { return cast(std::move(t), dt); }
  static P int_cast(P t, DType dt) { return cast(std::move(t), dt); }
  static P float_into_int(P t, DType dt) { return cast(std::move(t), dt); }
  static P int_into_float(P t, DType dt) { return cast(std::move(t), dt); }
  static P bool_into_int(P t, DType dt) { return cast(std::move(t), dt); }
  static P bool_into_float(P t, DType dt) { return cast(std::move(t), dt); }
  static P float_into_bool(P t) { return cast(std::move(t), DType::Bool); }
  static P int_into_bool(P t) { return cast(std::move(t), DType::Bool); }

  /// Values from `dist`, reproducible for a given seed (counter-based generator).
  static P float_random(const Shape& shape, Distribution dist, const Dev& dev, DType dtype);
  /// [start, start+step, ...) up to `end` (exclusive); step may be negative.
  static P int_arange(std::int64_t start, std::int64_t end, std::int64_t step, const Dev& dev,
                      DType dtype);
};

}  // namespace ember::cpu
