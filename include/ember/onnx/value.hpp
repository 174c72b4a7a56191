// Values of an ONNX graph: tensors of any rank (0..8) and element type, sequences of
// tensors, and empty optionals.
//
// A tensor keeps its ONNX element type and logical shape; its elements live in an Ember
// tensor of rank 8 on a Dispatch device (the shape padded with leading 1s, so one
// instantiation of every front-end op serves all ranks). Element types Ember has no dtype
// for are stored widened: uint16 in i32, uint32 and uint64 in i64 (uint64 values above
// 2^63 - 1 wrap), the 8-bit and 4-bit float types in f32 (values rounded to the type), the
// 4-bit and 2-bit int types in i8/u8. Strings are kept on the host.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/dispatch/dispatch.hpp"

namespace ember::onnx {

/// ONNX TensorProto.DataType values.
enum class ElemType : std::int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  UInt4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
  Float8E8M0 = 24,
  UInt2 = 25,
  Int2 = 26,
};

/// "float", "int64", "float8e4m3fn", ... (ONNX's names); "type<N>" for unknown values.
std::string elem_type_name(ElemType t);
/// The Ember dtype that stores elements of `t` (see the file comment). Throws
/// UnsupportedError for string and complex types.
DType storage_dtype(ElemType t);
/// The ONNX element type of an Ember dtype.
ElemType elem_type_of(DType d);
bool is_float_type(ElemType t);  ///< float, double, float16, bfloat16, the float8/4 types
bool is_int_type(ElemType t);    ///< signed and unsigned integers of any width
bool is_signed_int_type(ElemType t);

/// Highest rank a tensor value may have.
inline constexpr std::size_t kMaxRank = 8;
using FloatStore = DTensor<kMaxRank, Float>;
using IntStore = DTensor<kMaxRank, Int>;
using BoolStore = DTensor<kMaxRank, Bool>;

/// A tensor, a sequence of tensors, or an empty optional (ONNX's value kinds).
class Value {
 public:
  enum class Kind { None, Tensor, Sequence };

  /// An empty optional (ONNX's "optional without a value"); `elem` is the declared
  /// element type where known.
  Value() = default;

  // ---- tensors -----------------------------------------------------------------------
  /// A tensor of logical `shape` stored in `store` (whose numel must equal the shape's).
  static Value tensor(ElemType type, std::vector<std::int64_t> shape, FloatStore store);
  static Value tensor(ElemType type, std::vector<std::int64_t> shape, IntStore store);
  static Value tensor(ElemType type, std::vector<std::int64_t> shape, BoolStore store);
  /// A string tensor (host).
  static Value strings(std::vector<std::int64_t> shape, std::vector<std::string> values);
  /// From host data (any rank <= 8; the ONNX type defaults to the dtype's) on `device`.
  /// Throws ShapeError for rank > 8, DTypeError when `type` cannot hold `data`'s kind.
  static Value from_data(const TensorData& data, const Device& device = Device{},
                         ElemType type = ElemType::Undefined);
  /// From an Ember tensor of any rank (>= 1); `type` defaults to its dtype's.
  template <std::size_t D, class K>
  static Value from_tensor(const DTensor<D, K>& t, ElemType type = ElemType::Undefined);
  /// A rank-0 tensor.
  static Value scalar(double v, ElemType type, const Device& device = Device{});
  /// An int64 rank-1 tensor.
  static Value int64s(const std::vector<std::int64_t>& v, const Device& device = Device{});

  // ---- sequences ---------------------------------------------------------------------
  /// A sequence of tensors of element type `elem` (may be empty).
  static Value sequence(ElemType elem, std::vector<Value> items);
  /// An empty optional of a declared type.
  static Value none(ElemType elem = ElemType::Undefined);

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_sequence() const { return kind_ == Kind::Sequence; }
  bool is_none() const { return kind_ == Kind::None; }

  /// Element type (for a sequence: of its tensors).
  ElemType type() const { return type_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  std::size_t rank() const { return shape_.size(); }
  std::int64_t numel() const;
  /// Device of the storage (cpu for strings, sequences and none).
  Device device() const;

  /// Storage of a numeric tensor, padded to rank 8 (throws DTypeError for another kind).
  const FloatStore& floats() const;
  const IntStore& ints() const;
  const BoolStore& bools() const;
  bool is_float_store() const { return std::holds_alternative<FloatStore>(store_); }
  bool is_int_store() const { return std::holds_alternative<IntStore>(store_); }
  bool is_bool_store() const { return std::holds_alternative<BoolStore>(store_); }
  const std::vector<std::string>& string_values() const;
  /// The store moved out (the value keeps its type and shape but no data): lets an op on
  /// the last use of a value write into its buffer. Throws DTypeError for another kind.
  FloatStore into_floats() &&;
  IntStore into_ints() &&;
  const std::vector<Value>& items() const { return items_; }

  /// Host copy with the logical shape and the storage dtype (throws for strings).
  TensorData to_data() const;
  /// Values converted to int64 / double (host, row-major).
  std::vector<std::int64_t> to_int64s() const;
  std::vector<double> to_doubles() const;
  /// As an Ember tensor of rank D (rank-0 values need D == 1). Throws ShapeError when the
  /// rank differs, DTypeError when the kind differs.
  template <std::size_t D, class K = Float>
  DTensor<D, K> to_tensor() const;
  /// The same tensor moved to `device`.
  Value to_device(const Device& device) const;
  /// "tensor(float)[1, 3, 224, 224]", "seq(tensor(int64))[2]", "none".
  std::string describe() const;

 private:
  Kind kind_ = Kind::None;
  ElemType type_ = ElemType::Undefined;
  std::vector<std::int64_t> shape_;
  std::variant<std::monostate, FloatStore, IntStore, BoolStore> store_;
  std::shared_ptr<const std::vector<std::string>> strings_;
  std::vector<Value> items_;
};

/// The rank-8 shape that stores a tensor of logical `shape` (leading 1s).
Shape padded_shape(const std::vector<std::int64_t>& shape);

template <std::size_t D, class K>
Value Value::from_tensor(const DTensor<D, K>& t, ElemType type) {
  static_assert(D <= kMaxRank, "rank above 8");
  if (type == ElemType::Undefined) type = elem_type_of(t.dtype());
  const Shape s = t.shape();
  auto store = t.template reshape<kMaxRank>(padded_shape(s.dims));
  return tensor(type, s.dims, std::move(store));
}

template <std::size_t D, class K>
DTensor<D, K> Value::to_tensor() const {
  const bool scalar_ok = D == 1 && shape_.empty();
  if (!is_tensor() || (shape_.size() != D && !scalar_ok)) {
    detail::fail<ShapeError>("onnx", "value ", describe(), " is not a tensor of rank ", D);
  }
  Shape s(scalar_ok ? std::vector<std::int64_t>{1} : shape_);
  if constexpr (std::is_same_v<K, Float>) {
    return floats().template reshape<D>(s);
  } else if constexpr (std::is_same_v<K, Int>) {
    return ints().template reshape<D>(s);
  } else {
    return bools().template reshape<D>(s);
  }
}

}  // namespace ember::onnx
