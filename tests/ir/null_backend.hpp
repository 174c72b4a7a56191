// NullBackend: a test backend with only the required functions of the contract, generated
// from the op registry, whose tensors hold nothing but their type. Every call records the
// function's name and encoded description, and answers with the types its description
// infers: a lazy backend that knows every shape without running anything. That the front
// end and the nn modules compile and run on it proves that a new backend needs the required
// set only (every OPT / EXT function has a composite or is a hook).
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/backend/backend.hpp"
#include "ember/ir/serialize.hpp"
#include "infer_args.hpp"

namespace ember::test {

/// A tensor of the null backend: its shape and dtype only.
struct NullTensor {
  ir::TensorType type;
};
struct NullDevice {
  bool operator==(const NullDevice&) const = default;
  std::string to_string() const { return "null"; }
};

/// One recorded call: the backend function and its description's bytes.
struct NullRecord {
  std::string function;
  std::vector<std::uint8_t> description;
};

struct NullBackend {
  using Device = NullDevice;
  using FloatTensor = NullTensor;
  using IntTensor = NullTensor;
  using BoolTensor = NullTensor;
  EMBER_IR_TYPE_ALIASES(NullTensor, NullTensor, NullTensor, NullDevice);

  static std::string name() { return "null"; }
  static std::string device_name(const Device&) { return "null"; }
  static void seed(std::uint64_t) {}
  static void sync(const Device&) {}

  /// The calls recorded on this thread since the last clear.
  static std::vector<NullRecord>& log() {
    thread_local std::vector<NullRecord> records;
    return records;
  }

  template <class D, class R, class... A>
  static R record(const char* fn, const A&... a) {
    if constexpr (std::is_same_v<D, ir::Meta>) {
      const NullTensor& t = std::get<0>(std::tie(a...));
      if constexpr (std::is_same_v<R, Shape>)
        return t.type.shape;
      else if constexpr (std::is_same_v<R, DType>)
        return t.type.dtype;
      else
        return TensorData::full(t.type.shape, 0.0, t.type.dtype);  // into_data: zeros
    } else if constexpr (std::is_same_v<D, ir::DeviceOf>) {
      return NullDevice{};
    } else {
      const auto fields = std::tuple_cat(field_part<NullBackend>(a)...);
      const D d = std::apply([](const auto&... f) { return D{f...}; }, fields);
      log().push_back({fn, ir::encode(d)});
      const auto want = infer_call<NullBackend, D>(a...);
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(want)>, ir::TensorTypes2>)
        return R{NullTensor{want.first}, NullTensor{want.second}};
      else
        return R{NullTensor{want}};
    }
  }

#define EMBER_NULL_ROW(Req, Res, Ret, name, Desc, Params) \
  EMBER_NULL_ROW_##Req(Ret, name, Desc, Params)
#define EMBER_NULL_ROW_REQ(Ret, name, Desc, Params)                                             \
  static Ret name(EMBER_PP_PARAMS Params) {                                                     \
    return record<ir::Desc, Ret>(#name, EMBER_PP_ARGS(EMBER_PP_NAME, EMBER_PP_UNPAREN Params)); \
  }
#define EMBER_NULL_ROW_OPT(Ret, name, Desc, Params)
#define EMBER_NULL_ROW_EXT(Ret, name, Desc, Params)
#define EMBER_NULL_ROW_N(Req, Res, Ret, name, Desc, Params, Ns) \
  EMBER_NULL_ROW_N_##Req(Ret, name, Desc, Params)
#define EMBER_NULL_ROW_N_REQ(Ret, name, Desc, Params)                                              \
  template <std::size_t N>                                                                         \
  static Ret name(EMBER_PP_PARAMS Params) {                                                        \
    return record<ir::Desc<N>, Ret>(#name, EMBER_PP_ARGS(EMBER_PP_NAME, EMBER_PP_UNPAREN Params)); \
  }
#define EMBER_NULL_ROW_N_OPT(Ret, name, Desc, Params)
#define EMBER_NULL_ROW_N_EXT(Ret, name, Desc, Params)
  EMBER_IR_OPS(EMBER_NULL_ROW, EMBER_NULL_ROW_N)

  // ---- the element-wise table ------------------------------------------------------------------
  template <class Op>
  static F float_unary(F x) {
    return record<ir::UnaryOp<Op>, F>(Op::name, x);
  }
  template <class Op>
  static I int_unary(I x) {
    return record<ir::UnaryOp<Op>, I>(Op::name, x);
  }
  template <class Op>
  static Bo bool_unary(Bo x) {
    return record<ir::UnaryOp<Op>, Bo>(Op::name, x);
  }
  template <class Op>
  static F float_binary(F a, F b) {
    return record<ir::BinaryOp<Op>, F>(Op::name, a, b);
  }
  template <class Op>
  static I int_binary(I a, I b) {
    return record<ir::BinaryOp<Op>, I>(Op::name, a, b);
  }
  template <class Op>
  static Bo bool_binary(Bo a, Bo b) {
    return record<ir::BinaryOp<Op>, Bo>(Op::name, a, b);
  }
  template <class Op>
  static F float_binary_scalar(F a, double s) {
    return record<ir::ScalarOp<Op, double>, F>(Op::name, a, s);
  }
  template <class Op>
  static I int_binary_scalar(I a, i64 s) {
    return record<ir::ScalarOp<Op, i64>, I>(Op::name, a, s);
  }
  template <class Op>
  static Bo float_compare(const F& a, const F& b) {
    return record<ir::CompareOp<Op>, Bo>(Op::name, a, b);
  }
  template <class Op>
  static Bo int_compare(const I& a, const I& b) {
    return record<ir::CompareOp<Op>, Bo>(Op::name, a, b);
  }
  template <class Op>
  static Bo bool_compare(const Bo& a, const Bo& b) {
    return record<ir::CompareOp<Op>, Bo>(Op::name, a, b);
  }
  template <class Op>
  static Bo float_compare_scalar(const F& a, double s) {
    return record<ir::CompareScalarOp<Op, double>, Bo>(Op::name, a, s);
  }
  template <class Op>
  static Bo int_compare_scalar(const I& a, i64 s) {
    return record<ir::CompareScalarOp<Op, i64>, Bo>(Op::name, a, s);
  }
  template <class Op>
  static Bo float_predicate(const F& x) {
    return record<ir::PredicateOp<Op>, Bo>(Op::name, x);
  }
  static F float_clamp(F x, double lo, double hi) {
    return record<ir::Clamp<double>, F>("clamp", x, lo, hi);
  }
  static I int_clamp(I x, i64 lo, i64 hi) {
    return record<ir::Clamp<i64>, I>("clamp", x, lo, hi);
  }
};

static_assert(Backend<NullBackend>, "the required set must make a backend");

}  // namespace ember::test
