// Element semantics of the IR's operations on the host: the reference every code generator
// agrees with. Used by constant folding and by the CPU target. Math, rounding, min/max and
// integer division and remainder are ember::scalar's helpers and the element-wise table's rows
// (ember/ir/scalar.hpp, ember/ir/elementwise.hpp), the functions the CPU backend runs.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ember/kernel/ir.hpp"
#include "scalar.hpp"

namespace ember::kernel::eval {

/// Register type of an element type: f16/bf16 are held as float, bool as uint8_t (0/1).
template <Elem E>
struct RegOf;
template <>
struct RegOf<Elem::F32> {
  using type = float;
};
template <>
struct RegOf<Elem::F16> {
  using type = float;
};
template <>
struct RegOf<Elem::BF16> {
  using type = float;
};
template <>
struct RegOf<Elem::F64> {
  using type = double;
};
template <>
struct RegOf<Elem::I32> {
  using type = std::int32_t;
};
template <>
struct RegOf<Elem::I64> {
  using type = std::int64_t;
};
template <>
struct RegOf<Elem::U32> {
  using type = std::uint32_t;
};
template <>
struct RegOf<Elem::U8> {
  using type = std::uint8_t;
};
template <>
struct RegOf<Elem::Bool> {
  using type = std::uint8_t;
};
template <Elem E>
using Reg = typename RegOf<E>::type;

constexpr int reg_bytes(Elem e) {
  return is_half(e) ? 4 : elem_bytes(e);
}

/// Calls f(std::integral_constant<Elem, E>{}) for the run-time element type e.
template <class F>
decltype(auto) with_elem(Elem e, F&& f) {
  switch (e) {
    case Elem::F32:
      return f(std::integral_constant<Elem, Elem::F32>{});
    case Elem::F16:
      return f(std::integral_constant<Elem, Elem::F16>{});
    case Elem::BF16:
      return f(std::integral_constant<Elem, Elem::BF16>{});
    case Elem::F64:
      return f(std::integral_constant<Elem, Elem::F64>{});
    case Elem::I32:
      return f(std::integral_constant<Elem, Elem::I32>{});
    case Elem::I64:
      return f(std::integral_constant<Elem, Elem::I64>{});
    case Elem::U32:
      return f(std::integral_constant<Elem, Elem::U32>{});
    case Elem::U8:
      return f(std::integral_constant<Elem, Elem::U8>{});
    case Elem::Bool:
      break;
  }
  return f(std::integral_constant<Elem, Elem::Bool>{});
}

/// Rounds a register value to its element type (f16/bf16: round to nearest even).
template <Elem E, class T>
inline T round_to(T x) {
  if constexpr (E == Elem::F16)
    return f16::to_float(f16::from_float(x));
  else if constexpr (E == Elem::BF16)
    return bf16::to_float(bf16::from_float(x));
  else if constexpr (E == Elem::Bool)
    return x != 0 ? 1 : 0;
  else
    return x;
}

/// Value conversion between register types: float -> int truncates toward zero and
/// saturates (NaN -> 0); anything -> bool is != 0; int -> int wraps.
template <class To, class From>
inline To convert(From x) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (x != x) return To{0};
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    const double d = static_cast<double>(x);
    if (d <= lo) return std::numeric_limits<To>::lowest();
    if (d >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else {
    return static_cast<To>(x);
  }
}

/// Cast of a register value of element type From to element type To (bool: != 0; f16/bf16:
/// rounded to nearest even).
template <Elem To, Elem From>
inline Reg<To> cast_elem(Reg<From> x) {
  if constexpr (To == Elem::Bool)
    return x != 0 ? 1 : 0;
  else
    return round_to<To>(convert<Reg<To>>(x));
}

// ---- element functions ----------------------------------------------------------------------
// Where the element-wise table (ember/ir/elementwise.hpp) has the same semantics, its row is
// the function (f32 exp/log/log1p/tanh/erf are ember::scalar's polynomials, the same text the
// CUDA generator compiles); the rest are one-liners. Integer +, -, * and negation wrap here
// (the table's rows leave signed overflow to the backend).
namespace fn {
/// Integer arithmetic wraps (two's complement), computed on unsigned values to avoid
/// C++'s undefined signed overflow.
template <class T>
using Wrap =
    std::conditional_t<std::is_integral_v<T>,
                       std::make_unsigned_t<std::conditional_t<std::is_integral_v<T>, T, int>>, T>;
struct Add {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(static_cast<Wrap<T>>(a) + static_cast<Wrap<T>>(b));
  }
};
struct Sub {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(static_cast<Wrap<T>>(a) - static_cast<Wrap<T>>(b));
  }
};
struct Mul {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && sizeof(T) < sizeof(unsigned))  // u8: no promotion to int
      return static_cast<T>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
    else
      return static_cast<T>(static_cast<Wrap<T>>(a) * static_cast<Wrap<T>>(b));
  }
};
/// Floats: a / b. Integers: floor division, 0 for b == 0.
struct Div {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return a / b;
    else
      return scalar::int_floor_div(a, b);
  }
};
/// Remainder with the divisor's sign; integers: 0 for b == 0.
struct Rem {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return scalar::float_remainder(a, b);
    else
      return scalar::int_remainder(a, b);
  }
};
/// NaN-propagating minimum / maximum (torch.minimum / torch.maximum).
using Min = ember::ir::op::MinPair;
using Max = ember::ir::op::MaxPair;
struct Pow {
  template <class T>
  T operator()(T a, T b) const {
    return std::pow(a, b);
  }
};
struct BitAnd {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a & b);
  }
};
struct BitOr {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a | b);
  }
};
struct BitXor {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a ^ b);
  }
};
/// Shift by a negative count or >= the bit width: 0 (>> of a negative value: -1).
struct Shl {
  template <class T>
  T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    if (b < 0 || b >= static_cast<T>(sizeof(T) * 8)) return T{0};
    return static_cast<T>(static_cast<U>(a) << b);
  }
};
struct Shr {
  template <class T>
  T operator()(T a, T b) const {
    if (b < 0 || b >= static_cast<T>(sizeof(T) * 8)) return static_cast<T>(a < 0 ? -1 : 0);
    return static_cast<T>(a >> b);
  }
};
struct Neg {
  template <class T>
  T operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>)
      return -a;
    else
      return static_cast<T>(Wrap<T>(0) - static_cast<Wrap<T>>(a));
  }
};
struct Abs {
  template <class T>
  T operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>)
      return std::fabs(a);
    else if constexpr (std::is_signed_v<T>)
      return a < 0 ? Neg{}(a) : a;
    else
      return a;
  }
};
struct BitNot {
  template <class T>
  T operator()(T a) const {
    return static_cast<T>(~a);
  }
};
// f32: ember::scalar's exp_f32, log_f32, log1p_f32, tanh_f32, erf_f32; f64: the library's.
using Exp = ember::ir::op::Exp;
using Log = ember::ir::op::Log;
using Log1p = ember::ir::op::Log1p;
using Tanh = ember::ir::op::Tanh;
using Erf = ember::ir::op::Erf;
using Sin = ember::ir::op::Sin;
using Cos = ember::ir::op::Cos;
/// Round half to even (torch.round; scalar::round_half_even).
using Round = ember::ir::op::Round;
}  // namespace fn

/// Unary operations on a register value of element type E.
template <Elem E>
struct Unary {
  using T = Reg<E>;
  static T apply(Op op, T a) {
    T r{};
    if constexpr (std::is_floating_point_v<T>) {
      switch (op) {
        case Op::Neg:
          r = -a;
          break;
        case Op::Abs:
          r = std::fabs(a);
          break;
        case Op::Sqrt:
          r = std::sqrt(a);
          break;
        case Op::Exp:
          r = fn::Exp{}(a);
          break;
        case Op::Log:
          r = fn::Log{}(a);
          break;
        case Op::Log1p:
          r = fn::Log1p{}(a);
          break;
        case Op::Tanh:
          r = fn::Tanh{}(a);
          break;
        case Op::Erf:
          r = fn::Erf{}(a);
          break;
        case Op::Sin:
          r = fn::Sin{}(a);
          break;
        case Op::Cos:
          r = fn::Cos{}(a);
          break;
        case Op::Floor:
          r = std::floor(a);
          break;
        case Op::Ceil:
          r = std::ceil(a);
          break;
        case Op::Round:
          r = fn::Round{}(a);
          break;
        case Op::Trunc:
          r = std::trunc(a);
          break;
        case Op::Recip:
          r = T(1) / a;
          break;
        default:
          break;
      }
    } else {
      switch (op) {
        case Op::Neg:
          r = fn::Neg{}(a);
          break;
        case Op::Abs:
          r = fn::Abs{}(a);
          break;
        case Op::Not:
          r = a ? 0 : 1;
          break;
        case Op::BitNot:
          r = fn::BitNot{}(a);
          break;
        default:
          break;
      }
    }
    return round_to<E>(r);
  }
  static std::uint8_t test(Op op, T a) {
    if constexpr (std::is_floating_point_v<T>) {
      if (op == Op::IsNan) return ember::ir::op::IsNan{}(a);
      return ember::ir::op::IsInf{}(a);
    } else {
      return 0;
    }
  }
};

template <Elem E>
struct Binary {
  using T = Reg<E>;
  static T apply(Op op, T a, T b) {
    T r{};
    if constexpr (E == Elem::Bool) {
      switch (op) {
        case Op::And:
          r = a & b;
          break;
        case Op::Or:
          r = a | b;
          break;
        default:
          break;
      }
      return r;
    } else {
      switch (op) {
        case Op::Add:
          r = fn::Add{}(a, b);
          break;
        case Op::Sub:
          r = fn::Sub{}(a, b);
          break;
        case Op::Mul:
          r = fn::Mul{}(a, b);
          break;
        case Op::Div:
          r = fn::Div{}(a, b);
          break;
        case Op::Rem:
          r = fn::Rem{}(a, b);
          break;
        case Op::Min:
          r = fn::Min{}(a, b);
          break;
        case Op::Max:
          r = fn::Max{}(a, b);
          break;
        default:
          break;
      }
      if constexpr (std::is_floating_point_v<T>) {
        if (op == Op::Pow) r = fn::Pow{}(a, b);
      } else {
        switch (op) {
          case Op::BitAnd:
            r = fn::BitAnd{}(a, b);
            break;
          case Op::BitOr:
            r = fn::BitOr{}(a, b);
            break;
          case Op::BitXor:
            r = fn::BitXor{}(a, b);
            break;
          case Op::Shl:
            r = fn::Shl{}(a, b);
            break;
          case Op::Shr:
            r = fn::Shr{}(a, b);
            break;
          default:
            break;
        }
      }
      return round_to<E>(r);
    }
  }
  static std::uint8_t compare(Op op, T a, T b) {
    switch (op) {
      case Op::Eq:
        return a == b;
      case Op::Ne:
        return a != b;
      case Op::Lt:
        return a < b;
      case Op::Le:
        return a <= b;
      case Op::Gt:
        return a > b;
      case Op::Ge:
        return a >= b;
      default:
        return 0;
    }
  }
};

inline bool is_compare(Op op) {
  return op == Op::Eq || op == Op::Ne || op == Op::Lt || op == Op::Le || op == Op::Gt ||
         op == Op::Ge;
}
inline bool is_unary(Op op) {
  return op >= Op::Neg && op <= Op::IsInf;
}
inline bool is_binary(Op op) {
  return op >= Op::Add && op <= Op::Ge;
}

/// fma in the element type (f16/bf16: computed in f32, rounded once).
template <Elem E>
inline Reg<E> fma(Reg<E> a, Reg<E> b, Reg<E> c) {
  return round_to<E>(std::fma(a, b, c));
}

}  // namespace ember::kernel::eval
