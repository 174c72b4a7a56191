// Tensor<B, D, K>: the tensor front end (Burn's Tensor API in C++).
//
//   B: backend type (ember::Cpu, Autodiff<Cpu>, ...), D: rank (compile time, >= 1),
//   K: Float, Int or Bool. The dtype is a run-time property (f32 by default for Float,
//   i64 for Int).
//
// A Tensor is a handle: copying it is cheap and shares data. Every check (shapes, dims,
// dtypes, devices) happens here, before the backend is called, and throws ember::Error
// subclasses whose message starts with "[op]". Methods called on an rvalue
// (`std::move(x).exp()`) let the backend reuse the buffer when the handle is unique.
//
// The op families are mixins defined in ember/tensor/ops/*.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <utility>
#include <vector>

#include "ember/backend/backend.hpp"
#include "ember/core/data.hpp"
#include "ember/core/value_range.hpp"
#include "ember/tensor/fwd.hpp"
#include "ember/tensor/ops/autodiff.hpp"
#include "ember/tensor/ops/elementwise.hpp"
#include "ember/tensor/ops/indexing.hpp"
#include "ember/tensor/ops/layout.hpp"
#include "ember/tensor/ops/linalg.hpp"
#include "ember/tensor/ops/reduce.hpp"

namespace ember {

namespace detail {

/// Nested initializer list of depth D: NestedList<double, 2> is {{1, 2}, {3, 4}}.
template <class T, std::size_t D>
struct NestedListT {
  using type = std::initializer_list<typename NestedListT<T, D - 1>::type>;
};
template <class T>
struct NestedListT<T, 1> {
  using type = std::initializer_list<T>;
};

template <class T, std::size_t D, class L>
void flatten_nested(const L& list, std::vector<T>& out, std::vector<std::int64_t>& dims,
                    std::size_t depth) {
  const auto n = static_cast<std::int64_t>(list.size());
  if (dims.size() <= depth) {
    dims.push_back(n);
  } else if (dims[depth] != n) {
    fail<ShapeError>("from_data", "ragged nested list: dim ", depth, " has lengths ", dims[depth],
                     " and ", n);
  }
  if constexpr (D == 1) {
    for (const auto& v : list) out.push_back(static_cast<T>(v));
  } else {
    if (n == 0) {
      for (std::size_t k = depth + 1; k < depth + D; ++k) dims.push_back(0);
    }
    for (const auto& sub : list) flatten_nested<T, D - 1>(sub, out, dims, depth + 1);
  }
}

template <class K>
constexpr DType default_dtype() {
  if constexpr (std::is_same_v<K, Float>)
    return DType::F32;
  else if constexpr (std::is_same_v<K, Int>)
    return DType::I64;
  else
    return DType::Bool;
}

template <class K>
constexpr bool dtype_matches_kind(DType d) {
  if constexpr (std::is_same_v<K, Float>)
    return is_float(d);
  else if constexpr (std::is_same_v<K, Int>)
    return is_int(d);
  else
    return is_bool(d);
}

template <class K>
constexpr const char* kind_name() {
  if constexpr (std::is_same_v<K, Float>)
    return "Float";
  else if constexpr (std::is_same_v<K, Int>)
    return "Int";
  else
    return "Bool";
}

}  // namespace detail

template <class B, std::size_t D, class K>
class Tensor : public detail::ElementwiseApi<B, D, K>,
               public detail::LayoutApi<B, D, K>,
               public detail::IndexingApi<B, D, K>,
               public detail::ReduceApi<B, D, K>,
               public detail::LinalgApi<B, D, K>,
               public detail::AutodiffApi<B, D, K> {
  static_assert(D >= 1, "Tensor rank must be at least 1");
  static_assert(TensorKind<K>, "K must be Float, Int or Bool");

 public:
  using Backend = B;
  using Kind = K;
  using Device = typename B::Device;
  using Primitive = PrimitiveOf<B, K>;
  static constexpr std::size_t rank = D;

  /// Wraps a backend primitive; throws ShapeError if its rank is not D.
  explicit Tensor(Primitive p) : prim_(std::move(p)) {
    if (shape().rank() != D) {
      detail::fail<ShapeError>("Tensor", "primitive of shape ", shape(), " has rank ",
                               shape().rank(), ", expected rank ", D);
    }
  }

  // ---- primitive access -------------------------------------------------------------
  const Primitive& primitive() const& { return prim_; }
  Primitive into_primitive() && { return std::move(prim_); }
  Primitive into_primitive() const& { return prim_; }

  // ---- metadata -----------------------------------------------------------------------
  Shape shape() const {
    if constexpr (std::is_same_v<K, Float>)
      return B::float_shape(prim_);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_shape(prim_);
    else
      return B::bool_shape(prim_);
  }
  /// Dims as an array of length D.
  std::array<std::int64_t, D> dims() const {
    std::array<std::int64_t, D> out{};
    const Shape s = shape();
    for (std::size_t i = 0; i < D; ++i) out[i] = s[i];
    return out;
  }
  /// Size of dim `d` (negative counts from the end); throws ShapeError if out of range.
  std::int64_t dim(std::int64_t d) const { return shape()[normalize_dim("dim", d, D)]; }
  std::int64_t numel() const { return shape().numel(); }
  bool is_empty() const { return numel() == 0; }
  DType dtype() const {
    if constexpr (std::is_same_v<K, Float>)
      return B::float_dtype(prim_);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_dtype(prim_);
    else
      return B::bool_dtype(prim_);
  }
  Device device() const {
    if constexpr (std::is_same_v<K, Float>)
      return B::float_device(prim_);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_device(prim_);
    else
      return B::bool_device(prim_);
  }

  // ---- creation -----------------------------------------------------------------------
  /// From host data of rank D. Data of another kind is converted to K's default dtype
  /// (f32 / i64 / bool). Throws ShapeError if data's rank is not D.
  static Tensor from_data(const TensorData& data, const Device& device = Device{}) {
    if (data.shape().rank() != D) {
      detail::fail<ShapeError>("from_data", "data of shape ", data.shape(), " has rank ",
                               data.shape().rank(), ", expected rank ", D);
    }
    if (!detail::dtype_matches_kind<K>(data.dtype())) {
      return from_prim_data(data.convert(detail::default_dtype<K>()), device);
    }
    return from_prim_data(data, device);
  }
  /// From host data converted to `dtype` (which must be of kind K).
  static Tensor from_data(const TensorData& data, const Device& device, DType dtype) {
    check_kind_dtype("from_data", dtype);
    // Two returns, not `cond ? data : data.convert(dtype)`: that expression would copy data.
    if (data.dtype() == dtype) return from_data(data, device);
    return from_data(data.convert(dtype), device);
  }
  /// Float tensor from nested lists: Tensor<B, 2>::from_floats({{1, 2}, {3, 4}}).
  static Tensor from_floats(typename detail::NestedListT<double, D>::type values,
                            const Device& device = Device{},
                            DType dtype = DType::F32) requires std::same_as<K, Float> {
    return from_nested<double>(values, device, dtype);
  }
  /// Int tensor from nested lists (i64 by default). Throws ValueError for a value out of
  /// the dtype's range.
  static Tensor from_ints(typename detail::NestedListT<std::int64_t, D>::type values,
                          const Device& device = Device{},
                          DType dtype = DType::I64) requires std::same_as<K, Int> {
    return from_nested<std::int64_t>(values, device, dtype);
  }
  /// Bool tensor from nested lists.
  static Tensor from_bools(typename detail::NestedListT<bool, D>::type values,
                           const Device& device = Device{}) requires std::same_as<K, Bool> {
    return from_nested<bool>(values, device, DType::Bool);
  }

  /// Uninitialised values. Throws ShapeError if shape's rank is not D or a dim is negative.
  static Tensor empty(const Shape& shape, const Device& device = Device{},
                      DType dtype = detail::default_dtype<K>()) {
    check_new_shape("empty", shape);
    check_kind_dtype("empty", dtype);
    if constexpr (std::is_same_v<K, Float>)
      return Tensor(B::float_empty(shape, device, dtype));
    else if constexpr (std::is_same_v<K, Int>)
      return Tensor(B::int_empty(shape, device, dtype));
    else
      return Tensor(B::bool_empty(shape, device, dtype));
  }
  /// Every element equal to `value` (converted to dtype). Throws ValueError when the value
  /// does not fit the dtype (300 in i8, NaN in i64, 1e39 in f32), as PyTorch.
  static Tensor full(const Shape& shape, double value, const Device& device = Device{},
                     DType dtype = detail::default_dtype<K>()) {
    check_new_shape("full", shape);
    check_kind_dtype("full", dtype);
    detail::check_value_fits("full", value, dtype);
    if constexpr (std::is_same_v<K, Float>)
      return Tensor(B::float_full(shape, value, device, dtype));
    else if constexpr (std::is_same_v<K, Int>)
      return Tensor(B::int_full(shape, value, device, dtype));
    else
      return Tensor(B::bool_full(shape, value, device, dtype));
  }
  static Tensor zeros(const Shape& shape, const Device& device = Device{},
                      DType dtype = detail::default_dtype<K>()) {
    return full(shape, 0.0, device, dtype);
  }
  static Tensor ones(const Shape& shape, const Device& device = Device{},
                     DType dtype = detail::default_dtype<K>()) {
    return full(shape, 1.0, device, dtype);
  }
  Tensor empty_like() const { return empty(shape(), device(), dtype()); }
  Tensor zeros_like() const { return full(shape(), 0.0, device(), dtype()); }
  Tensor ones_like() const { return full(shape(), 1.0, device(), dtype()); }
  Tensor full_like(double value) const { return full(shape(), value, device(), dtype()); }

  /// Random values from `dist` (Float only). Throws ValueError for an invalid
  /// distribution (uniform high < low, normal std < 0, bernoulli p outside [0, 1]).
  static Tensor random(const Shape& shape, Distribution dist = Distribution::default_(),
                       const Device& device = Device{},
                       DType dtype = DType::F32) requires std::same_as<K, Float> {
    check_new_shape("random", shape);
    check_kind_dtype("random", dtype);
    using DK = Distribution::Kind;
    if (dist.kind == DK::Uniform && !(dist.b >= dist.a))
      detail::fail<ValueError>("random", "uniform distribution needs low <= high, got [", dist.a,
                               ", ", dist.b, ")");
    if (dist.kind == DK::Normal && !(dist.b >= 0))
      detail::fail<ValueError>("random", "normal distribution needs std >= 0, got ", dist.b);
    if (dist.kind == DK::Bernoulli && !(dist.a >= 0 && dist.a <= 1))
      detail::fail<ValueError>("random", "bernoulli distribution needs p in [0, 1], got ", dist.a);
    return Tensor(B::float_random(shape, dist, device, dtype));
  }
  Tensor random_like(
      Distribution dist = Distribution::default_()) const requires std::same_as<K, Float> {
    return random(shape(), dist, device(), dtype());
  }

  /// [start, end) with step 1, as Int (Burn's Tensor::arange). Rank 1 only.
  static Tensor arange(std::int64_t start, std::int64_t end, const Device& device = Device{},
                       DType dtype = DType::I64) requires(std::same_as<K, Int>&& D == 1) {
    return arange_step(start, end, 1, device, dtype);
  }
  /// [start, end) with `step` (may be negative). Throws ValueError for step == 0, more than
  /// 2^63 - 1 values, or a value out of the dtype's range (arange(0, 200) in i8).
  static Tensor arange_step(std::int64_t start, std::int64_t end, std::int64_t step,
                            const Device& device = Device{},
                            DType dtype = DType::I64) requires(std::same_as<K, Int>&& D == 1) {
    check_kind_dtype("arange", dtype);
    detail::check_arange(start, end, step, dtype);
    return Tensor(B::int_arange(start, end, step, device, dtype));
  }

  // ---- read-back ----------------------------------------------------------------------
  /// Host copy (synchronises the device).
  TensorData into_data() const {
    if constexpr (std::is_same_v<K, Float>)
      return B::float_into_data(prim_);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_into_data(prim_);
    else
      return B::bool_into_data(prim_);
  }
  TensorData to_data() const { return into_data(); }
  /// Values converted to T, row-major.
  template <class T>
  std::vector<T> to_vec() const {
    return into_data().template to_vec<T>();
  }
  /// The single value of a one-element tensor (double for Float, int64 for Int, bool for
  /// Bool). Throws ShapeError if numel != 1.
  auto into_scalar() const {
    if (numel() != 1) {
      detail::fail<ShapeError>("into_scalar", "tensor of shape ", shape(), " has ", numel(),
                               " elements, expected 1");
    }
    const TensorData d = into_data();
    if constexpr (std::is_same_v<K, Float>)
      return d.template to_vec<double>()[0];
    else if constexpr (std::is_same_v<K, Int>)
      return d.template to_vec<std::int64_t>()[0];
    else
      return static_cast<bool>(d.template to_vec<std::uint8_t>()[0]);
  }

  // ---- reshape & casts ----------------------------------------------------------------
  /// New shape with the same numel. One dim may be -1 (inferred); 0 keeps the input dim
  /// at that position (Burn's rule). Throws ShapeError if numel differs or -1 is ambiguous.
  template <std::size_t D2>
  Tensor<B, D2, K> reshape(const std::int64_t (&dims)[D2]) const& {
    return Tensor<B, D2, K>(
        reshape_prim(prim_, resolve_reshape(std::span<const std::int64_t>(dims, D2))));
  }
  template <std::size_t D2>
  Tensor<B, D2, K> reshape(const std::int64_t (&dims)[D2]) && {
    Shape s = resolve_reshape(std::span<const std::int64_t>(dims, D2));
    return Tensor<B, D2, K>(reshape_prim(std::move(prim_), s));
  }
  template <std::size_t D2>
  Tensor<B, D2, K> reshape(const std::array<std::int64_t, D2>& dims) const {
    return Tensor<B, D2, K>(
        reshape_prim(prim_, resolve_reshape(std::span<const std::int64_t>(dims))));
  }
  template <std::size_t D2>
  Tensor<B, D2, K> reshape(const Shape& s) const {
    if (s.rank() != D2) {
      detail::fail<ShapeError>("reshape", "target shape ", s, " has rank ", s.rank(),
                               ", expected rank ", D2);
    }
    return Tensor<B, D2, K>(
        reshape_prim(prim_, resolve_reshape(std::span<const std::int64_t>(s.dims))));
  }

  /// Same kind, other dtype (e.g. f32 -> f16). Throws DTypeError if dtype is of another kind.
  Tensor cast(DType dtype) const {
    check_kind_dtype("cast", dtype);
    if (dtype == this->dtype()) return *this;
    if constexpr (std::is_same_v<K, Float>)
      return Tensor(B::float_cast(prim_, dtype));
    else if constexpr (std::is_same_v<K, Int>)
      return Tensor(B::int_cast(prim_, dtype));
    else
      return *this;
  }
  /// To Int (float values truncate toward zero, as torch's .long()).
  Tensor<B, D, Int> int_(DType dtype = DType::I64) const {
    if (!is_int(dtype))
      detail::fail<DTypeError>("int", "target dtype ", dtype, " is not an int dtype");
    if constexpr (std::is_same_v<K, Float>)
      return Tensor<B, D, Int>(B::float_into_int(prim_, dtype));
    else if constexpr (std::is_same_v<K, Int>)
      return cast(dtype);
    else
      return Tensor<B, D, Int>(B::bool_into_int(prim_, dtype));
  }
  /// To Float.
  Tensor<B, D, Float> float_(DType dtype = DType::F32) const {
    if (!is_float(dtype))
      detail::fail<DTypeError>("float", "target dtype ", dtype, " is not a float dtype");
    if constexpr (std::is_same_v<K, Float>)
      return cast(dtype);
    else if constexpr (std::is_same_v<K, Int>)
      return Tensor<B, D, Float>(B::int_into_float(prim_, dtype));
    else
      return Tensor<B, D, Float>(B::bool_into_float(prim_, dtype));
  }
  /// To Bool (value != 0).
  Tensor<B, D, Bool> bool_() const {
    if constexpr (std::is_same_v<K, Bool>)
      return *this;
    else if constexpr (std::is_same_v<K, Float>)
      return Tensor<B, D, Bool>(B::float_into_bool(prim_));
    else
      return Tensor<B, D, Bool>(B::int_into_bool(prim_));
  }

  /// Copy to another device of the same backend.
  Tensor to_device(const Device& device) const {
    if constexpr (std::is_same_v<K, Float>)
      return Tensor(B::float_to_device(prim_, device));
    else if constexpr (std::is_same_v<K, Int>)
      return Tensor(B::int_to_device(prim_, device));
    else
      return Tensor(B::bool_to_device(prim_, device));
  }

  /// Quantizes under `scheme` with scales from the values' min and max per group
  /// (ember/tensor/quant.hpp, included at the end of this header): [shape] -> QTensor.
  /// DTypeError for an Int or Bool tensor, ShapeError / ValueError as ember::quantize.
  QTensor<B, D> quantize(const QuantScheme& scheme) const;

  // ---- helpers used by the mixins -----------------------------------------------------
  static void check_kind_dtype(const char* op, DType dtype) {
    if (!detail::dtype_matches_kind<K>(dtype)) {
      detail::fail<DTypeError>(op, "dtype ", dtype, " is not ",
                               std::is_same_v<K, Int> ? "an " : "a ", detail::kind_name<K>(),
                               " dtype");
    }
  }
  static void check_new_shape(const char* op, const Shape& shape) {
    if (shape.rank() != D) {
      detail::fail<ShapeError>(op, "shape ", shape, " has rank ", shape.rank(), ", expected rank ",
                               D);
    }
    checked_numel(op, shape);
  }

 private:
  static PrimitiveOf<B, K> reshape_prim(Primitive p, const Shape& s) {
    if constexpr (std::is_same_v<K, Float>)
      return B::float_reshape(std::move(p), s);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_reshape(std::move(p), s);
    else
      return B::bool_reshape(std::move(p), s);
  }

  Shape resolve_reshape(std::span<const std::int64_t> dims) const {
    const Shape in = shape();
    Shape out;
    out.dims.assign(dims.begin(), dims.end());
    int infer = -1;
    std::int64_t known = 1;
    for (std::size_t i = 0; i < out.rank(); ++i) {
      if (out[i] == -1) {
        if (infer >= 0) detail::fail<ShapeError>("reshape", "more than one -1 in target ", out);
        infer = static_cast<int>(i);
        continue;
      }
      if (out[i] == 0 && i < in.rank()) out[i] = in[i];
      if (out[i] < 0)
        detail::fail<ShapeError>("reshape", "invalid dim ", out[i], " in target ", out);
      if (__builtin_mul_overflow(known, out[i], &known)) {
        detail::fail<ShapeError>("reshape", "target ", out, " has more than 2^63 - 1 elements");
      }
    }
    if (infer >= 0) {
      if (known == 0 || in.numel() % known != 0) {
        detail::fail<ShapeError>("reshape", "cannot reshape ", in, " into ", out);
      }
      out[static_cast<std::size_t>(infer)] = in.numel() / known;
    }
    if (checked_numel("reshape", out) != in.numel()) {
      detail::fail<ShapeError>("reshape", "cannot reshape ", in, " (", in.numel(),
                               " elements) into ", out, " (", out.numel(), " elements)");
    }
    return out;
  }

  static Tensor from_prim_data(const TensorData& data, const Device& device) {
    if constexpr (std::is_same_v<K, Float>)
      return Tensor(B::float_from_data(data, device));
    else if constexpr (std::is_same_v<K, Int>)
      return Tensor(B::int_from_data(data, device));
    else
      return Tensor(B::bool_from_data(data, device));
  }

  template <class T, class L>
  static Tensor from_nested(const L& values, const Device& device, DType dtype) {
    check_kind_dtype("from_data", dtype);
    std::vector<T> flat;
    std::vector<std::int64_t> dims;
    detail::flatten_nested<T, D>(values, flat, dims, 0);
    dims.resize(D, 0);
    if constexpr (std::is_same_v<T, std::int64_t>) {
      if (dtype != DType::I64) {  // from_ints(..., DType::I8): no silent wrap-around
        for (const T v : flat) detail::check_value_fits("from_ints", static_cast<double>(v), dtype);
      }
    }
    TensorData data(std::move(flat), Shape(std::move(dims)));
    return from_prim_data(data.dtype() == dtype ? data : data.convert(dtype), device);
  }

  Primitive prim_;
};

/// "Tensor { shape: [2, 3], dtype: f32, device: cpu, values: [[1, 2, 3], [4, 5, 6]] }";
/// values are elided in the middle when the tensor has more than 1000 elements.
template <class B, std::size_t D, class K>
std::ostream& operator<<(std::ostream& os, const Tensor<B, D, K>& t) {
  return os << "Tensor { shape: " << t.shape() << ", dtype: " << t.dtype()
            << ", device: " << B::device_name(t.device())
            << ", values: " << format_tensor_values(t.into_data()) << " }";
}

}  // namespace ember

// Quantized tensors (QTensor, Tensor::quantize) need the complete Tensor.
#include "ember/tensor/quant.hpp"
