// The interpreter's arithmetic (one vectorisable loop per instruction), subgroup and matrix
// operations.
#include <algorithm>
#include <cmath>

#include "eval.hpp"
#include "interp_frame.hpp"

namespace ember::kernel::cpu {

using eval::Reg;
using eval::with_elem;
namespace fn = eval::fn;

namespace {

// out[i] = f(a[i * sa]) for i < n.
template <class R, class A, class F>
inline void map1(R* __restrict out, const A* __restrict a, std::size_t sa, std::size_t n, F f) {
  if (sa) {
    for (std::size_t i = 0; i < n; ++i) out[i] = f(a[i]);
  } else {
    const R v = f(a[0]);
    for (std::size_t i = 0; i < n; ++i) out[i] = v;
  }
}

template <class R, class A, class F>
inline void map2(R* __restrict out, const A* a, std::size_t sa, const A* b, std::size_t sb,
                 std::size_t n, F f) {
  if (sa && sb) {
    for (std::size_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (sa) {
    const A y = b[0];
    for (std::size_t i = 0; i < n; ++i) out[i] = f(a[i], y);
  } else if (sb) {
    const A x = a[0];
    for (std::size_t i = 0; i < n; ++i) out[i] = f(x, b[i]);
  } else {
    const R v = f(a[0], b[0]);
    for (std::size_t i = 0; i < n; ++i) out[i] = v;
  }
}

struct Ctx {
  Frame& f;
  const Inst& i;
  std::size_t n;  // entries of the result
  std::size_t s(int k) const { return f.uniform(i.in[k]) ? 0 : 1; }
  template <class T>
  const T* in(int k) const {
    return f.reg<T>(i.in[k]);
  }
};

template <Elem E>
void unary(Ctx c) {
  using T = Reg<E>;
  const T* a = c.in<T>(0);
  const std::size_t sa = c.s(0);
  if (c.i.op == Op::IsNan || c.i.op == Op::IsInf) {
    if constexpr (std::is_floating_point_v<T>) {
      auto* o = c.f.reg<std::uint8_t>(c.i.out);
      if (c.i.op == Op::IsNan)
        map1(o, a, sa, c.n, [](T x) -> std::uint8_t { return ember::ir::op::IsNan{}(x); });
      else
        map1(o, a, sa, c.n, [](T x) -> std::uint8_t { return ember::ir::op::IsInf{}(x); });
    }
    return;
  }
  T* o = c.f.reg<T>(c.i.out);
  if constexpr (std::is_floating_point_v<T>) {
    switch (c.i.op) {
      case Op::Neg:
        map1(o, a, sa, c.n, [](T x) { return -x; });
        break;
      case Op::Abs:
        map1(o, a, sa, c.n, [](T x) { return std::fabs(x); });
        break;
      case Op::Sqrt:
        map1(o, a, sa, c.n, [](T x) { return std::sqrt(x); });
        break;
      case Op::Exp:
        map1(o, a, sa, c.n, fn::Exp{});
        break;
      case Op::Log:
        map1(o, a, sa, c.n, fn::Log{});
        break;
      case Op::Log1p:
        map1(o, a, sa, c.n, fn::Log1p{});
        break;
      case Op::Tanh:
        map1(o, a, sa, c.n, fn::Tanh{});
        break;
      case Op::Erf:
        map1(o, a, sa, c.n, fn::Erf{});
        break;
      case Op::Sin:
        map1(o, a, sa, c.n, fn::Sin{});
        break;
      case Op::Cos:
        map1(o, a, sa, c.n, fn::Cos{});
        break;
      case Op::Floor:
        map1(o, a, sa, c.n, [](T x) { return std::floor(x); });
        break;
      case Op::Ceil:
        map1(o, a, sa, c.n, [](T x) { return std::ceil(x); });
        break;
      case Op::Round:
        map1(o, a, sa, c.n, fn::Round{});
        break;
      case Op::Trunc:
        map1(o, a, sa, c.n, [](T x) { return std::trunc(x); });
        break;
      case Op::Recip:
        map1(o, a, sa, c.n, [](T x) { return T(1) / x; });
        break;
      default:
        break;
    }
    if constexpr (is_half(E))
      for (std::size_t k = 0; k < c.n; ++k) o[k] = eval::round_to<E>(o[k]);
  } else {
    switch (c.i.op) {
      case Op::Neg:
        map1(o, a, sa, c.n, fn::Neg{});
        break;
      case Op::Abs:
        map1(o, a, sa, c.n, fn::Abs{});
        break;
      case Op::Not:
        map1(o, a, sa, c.n, [](T x) -> T { return x ? 0 : 1; });
        break;
      case Op::BitNot:
        map1(o, a, sa, c.n, fn::BitNot{});
        break;
      default:
        break;
    }
  }
}

template <Elem E>
void binary(Ctx c) {
  using T = Reg<E>;
  const T *a = c.in<T>(0), *b = c.in<T>(1);
  const std::size_t sa = c.s(0), sb = c.s(1);
  if (eval::is_compare(c.i.op)) {
    auto* o = c.f.reg<std::uint8_t>(c.i.out);
    switch (c.i.op) {
      case Op::Eq:
        map2(o, a, sa, b, sb, c.n, [](T x, T y) -> std::uint8_t { return x == y; });
        break;
      case Op::Ne:
        map2(o, a, sa, b, sb, c.n, [](T x, T y) -> std::uint8_t { return x != y; });
        break;
      case Op::Lt:
        map2(o, a, sa, b, sb, c.n, [](T x, T y) -> std::uint8_t { return x < y; });
        break;
      case Op::Le:
        map2(o, a, sa, b, sb, c.n, [](T x, T y) -> std::uint8_t { return x <= y; });
        break;
      case Op::Gt:
        map2(o, a, sa, b, sb, c.n, [](T x, T y) -> std::uint8_t { return x > y; });
        break;
      default:
        map2(o, a, sa, b, sb, c.n, [](T x, T y) -> std::uint8_t { return x >= y; });
        break;
    }
    return;
  }
  T* o = c.f.reg<T>(c.i.out);
  if constexpr (E == Elem::Bool) {
    if (c.i.op == Op::And)
      map2(o, a, sa, b, sb, c.n, [](T x, T y) -> T { return x & y; });
    else
      map2(o, a, sa, b, sb, c.n, [](T x, T y) -> T { return x | y; });
  } else {
    switch (c.i.op) {
      case Op::Add:
        map2(o, a, sa, b, sb, c.n, fn::Add{});
        break;
      case Op::Sub:
        map2(o, a, sa, b, sb, c.n, fn::Sub{});
        break;
      case Op::Mul:
        map2(o, a, sa, b, sb, c.n, fn::Mul{});
        break;
      case Op::Div:
        map2(o, a, sa, b, sb, c.n, fn::Div{});
        break;
      case Op::Rem:
        map2(o, a, sa, b, sb, c.n, fn::Rem{});
        break;
      case Op::Min:
        map2(o, a, sa, b, sb, c.n, fn::Min{});
        break;
      case Op::Max:
        map2(o, a, sa, b, sb, c.n, fn::Max{});
        break;
      default:
        break;
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (c.i.op == Op::Pow) map2(o, a, sa, b, sb, c.n, fn::Pow{});
      if constexpr (is_half(E))
        for (std::size_t k = 0; k < c.n; ++k) o[k] = eval::round_to<E>(o[k]);
    } else {
      switch (c.i.op) {
        case Op::BitAnd:
          map2(o, a, sa, b, sb, c.n, fn::BitAnd{});
          break;
        case Op::BitOr:
          map2(o, a, sa, b, sb, c.n, fn::BitOr{});
          break;
        case Op::BitXor:
          map2(o, a, sa, b, sb, c.n, fn::BitXor{});
          break;
        case Op::Shl:
          map2(o, a, sa, b, sb, c.n, fn::Shl{});
          break;
        case Op::Shr:
          map2(o, a, sa, b, sb, c.n, fn::Shr{});
          break;
        default:
          break;
      }
    }
  }
}

/// Per (thread, lane) loops for select / splat / extract / insert / fma.
template <Elem E>
void shaped(Ctx c) {
  using T = Reg<E>;
  Frame& f = c.f;
  const Inst& i = c.i;
  T* o = f.reg<T>(i.out);
  const std::size_t L = f.info(i.out).type.lanes;
  const std::size_t threads = f.uniform(i.out) ? 1 : f.n();
  switch (i.op) {
    case Op::Select: {
      const auto* cond = f.reg<std::uint8_t>(i.in[0]);
      const std::size_t cl = f.info(i.in[0]).type.lanes, sc = c.s(0);
      const T *a = c.in<T>(1), *b = c.in<T>(2);
      const std::size_t sa = c.s(1), sb = c.s(2);
      for (std::size_t t = 0; t < threads; ++t)
        for (std::size_t l = 0; l < L; ++l) {
          const std::size_t e = t * L + l;
          const bool k = cond[(cl == 1 ? t : e) * sc] != 0;
          o[e] = k ? a[e * sa] : b[e * sb];
        }
      break;
    }
    case Op::Splat: {
      const T* a = c.in<T>(0);
      const std::size_t sa = c.s(0);
      for (std::size_t t = 0; t < threads; ++t)
        for (std::size_t l = 0; l < L; ++l) o[t * L + l] = a[t * sa];
      break;
    }
    case Op::Extract: {
      const T* a = c.in<T>(0);
      const std::size_t al = f.info(i.in[0]).type.lanes;
      for (std::size_t t = 0; t < threads; ++t) o[t] = a[t * al + i.aux];
      break;
    }
    case Op::Insert: {
      const T *a = c.in<T>(0), *x = c.in<T>(1);
      const std::size_t sx = c.s(1);
      for (std::size_t t = 0; t < threads; ++t)
        for (std::size_t l = 0; l < L; ++l) o[t * L + l] = l == i.aux ? x[t * sx] : a[t * L + l];
      break;
    }
    case Op::Fma: {
      if constexpr (std::is_floating_point_v<T>) {
        const T *a = c.in<T>(0), *b = c.in<T>(1), *d = c.in<T>(2);
        const std::size_t sa = c.s(0), sb = c.s(1), sd = c.s(2);
        for (std::size_t e = 0; e < c.n; ++e) o[e] = eval::fma<E>(a[e * sa], b[e * sb], d[e * sd]);
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace

void Frame::exec_pure(const Inst& i) {
  Ctx c{*this, i, count(i.out)};
  const Elem in_elem = info(i.in[0]).type.elem;
  if (i.op == Op::Cast) {
    with_elem(in_elem, [&](auto from) {
      with_elem(info(i.out).type.elem, [&](auto to) {
        constexpr Elem F = decltype(from)::value, E = decltype(to)::value;
        map1(reg<Reg<E>>(i.out), reg<Reg<F>>(i.in[0]), c.s(0), c.n,
             [](Reg<F> x) { return eval::cast_elem<E, F>(x); });
      });
    });
  } else if (i.op == Op::Bitcast) {
    const std::size_t bytes = static_cast<std::size_t>(eval::reg_bytes(in_elem));
    const std::byte* a = reg<std::byte>(i.in[0]);
    std::byte* o = reg<std::byte>(i.out);
    if (c.s(0))
      std::memcpy(o, a, c.n * bytes);
    else
      for (std::size_t e = 0; e < c.n; ++e) std::memcpy(o + e * bytes, a, bytes);
  } else if (eval::is_unary(i.op)) {
    with_elem(in_elem, [&](auto e) { unary<decltype(e)::value>(c); });
  } else if (eval::is_binary(i.op)) {
    with_elem(in_elem, [&](auto e) { binary<decltype(e)::value>(c); });
  } else {
    with_elem(info(i.out).type.elem, [&](auto e) { shaped<decltype(e)::value>(c); });
  }
}

// ---- subgroups -------------------------------------------------------------------------------

void Frame::exec_subgroup(const Inst& i) {
  const std::uint32_t S = p_.subgroup_, T = p_.wg_threads_;
  const std::size_t L = info(i.out).type.lanes;
  with_elem(info(i.out).type.elem, [&](auto te) {
    constexpr Elem E = decltype(te)::value;
    using R = Reg<E>;
    const R* v = reg<R>(i.in[0]);
    const std::size_t sv = uniform(i.in[0]) ? 0 : 1;
    R* o = reg<R>(i.out);
    std::vector<R> cur(std::size_t{n_} * L), nxt(std::size_t{n_} * L);
    for (std::size_t e = 0; e < cur.size(); ++e) cur[e] = v[e * sv];
    // lane of thread t, first thread of its subgroup, and threads in that subgroup
    const auto lane = [&](std::uint32_t t) { return (t % T) % S; };
    const auto sub_size = [&](std::uint32_t t) {
      const std::uint32_t first_local = (t % T) - lane(t);
      return std::min(S, T - first_local);
    };
    const auto source = [&](std::uint32_t t, std::uint32_t src_lane) {
      return src_lane < sub_size(t) ? t - lane(t) + src_lane : t;
    };
    if (i.op == Op::SgBroadcast || i.op == Op::SgShuffle || i.op == Op::SgShuffleXor) {
      const auto* l = reg<std::uint32_t>(i.in[1]);
      const std::size_t sl = uniform(i.in[1]) ? 0 : 1;
      for (std::uint32_t t = 0; t < n_; ++t) {
        const std::uint32_t arg = l[t * sl];
        const std::uint32_t src_lane = i.op == Op::SgShuffleXor ? lane(t) ^ arg : arg % S;
        const std::uint32_t src = source(t, src_lane);
        for (std::size_t k = 0; k < L; ++k) o[t * L + k] = cur[src * L + k];
      }
      return;
    }
    const auto combine = [&](R a, R b) -> R {
      switch (i.op) {
        case Op::SgSum:
          if constexpr (E == Elem::Bool)
            return a;
          else
            return eval::round_to<E>(fn::Add{}(a, b));
        case Op::SgMin:
          if constexpr (E == Elem::Bool)
            return a;
          else
            return fn::Min{}(a, b);
        case Op::SgMax:
          if constexpr (E == Elem::Bool)
            return a;
          else
            return fn::Max{}(a, b);
        case Op::SgAll:
          return static_cast<R>(a && b);
        default:
          return static_cast<R>(a || b);
      }
    };
    for (std::uint32_t off = S / 2; off >= 1; off /= 2) {
      for (std::uint32_t t = 0; t < n_; ++t) {
        const std::uint32_t src = source(t, lane(t) ^ off);
        for (std::size_t k = 0; k < L; ++k)
          nxt[t * L + k] = combine(cur[t * L + k], cur[src * L + k]);
      }
      std::swap(cur, nxt);
    }
    std::copy(cur.begin(), cur.end(), o);
  });
}

// ---- matrix units (one tile per subgroup, computed in f32) --------------------------------------

void Frame::exec_matrix(const Inst& i, const Mask& mask) {
  const std::uint32_t S = p_.subgroup_, T = p_.wg_threads_;
  const std::uint32_t subs_per_wg = (T + S - 1) / S;
  // first active thread of each subgroup
  std::vector<std::uint32_t> leaders;
  for (std::uint32_t t = 0; t < n_; ++t) {
    const std::uint32_t local = t % T;
    if (local % S != 0) continue;
    for (std::uint32_t u = t; u < std::min(n_, t + S) && (u % T) / S == local / S; ++u)
      if (mask[u]) {
        leaders.push_back(u);
        break;
      }
  }
  const auto tile = [&](VarId frag, std::uint32_t t) {
    const MatrixInfo& m = info(frag).matrix;
    const std::uint32_t elems = m.use == MatrixUse::A   ? std::uint32_t{m.m} * m.k
                                : m.use == MatrixUse::B ? std::uint32_t{m.k} * m.n
                                                        : std::uint32_t{m.m} * m.n;
    const std::uint32_t sub = (t / T) * subs_per_wg + (t % T) / S;
    return reg<float>(frag) + std::size_t{sub} * elems;
  };
  const auto dims = [&](VarId frag, std::uint32_t& rows, std::uint32_t& cols) {
    const MatrixInfo& m = info(frag).matrix;
    rows = m.use == MatrixUse::B ? m.k : m.m;
    cols = m.use == MatrixUse::A ? m.k : m.n;
  };
  const auto round_frag = [&](VarId frag, float x) {
    return info(frag).type.elem == Elem::F16 ? eval::round_to<Elem::F16>(x) : x;
  };
  for (std::uint32_t t : leaders) {
    switch (i.op) {
      case Op::MatFill: {
        float v;
        with_elem(info(i.in[1]).type.elem, [&](auto te) {
          using R = Reg<decltype(te)::value>;
          v = static_cast<float>(reg<R>(i.in[1])[uniform(i.in[1]) ? 0 : t]);
        });
        std::uint32_t r, c;
        dims(i.in[0], r, c);
        std::fill_n(tile(i.in[0], t), r * c, v);
        break;
      }
      case Op::MatLoad:
      case Op::MatStore: {
        const bool load = i.op == Op::MatLoad;
        const VarId frag = load ? i.in[0] : i.in[3], mem = load ? i.in[1] : i.in[0];
        const VarId offv = load ? i.in[2] : i.in[1], stv = load ? i.in[3] : i.in[2];
        const std::uint32_t off = reg<std::uint32_t>(offv)[uniform(offv) ? 0 : t];
        const std::uint32_t st = reg<std::uint32_t>(stv)[uniform(stv) ? 0 : t];
        const bool row = static_cast<MatrixLayout>(i.aux) == MatrixLayout::RowMajor;
        std::uint32_t rows, cols;
        dims(frag, rows, cols);
        float* tl = tile(frag, t);
        std::uint64_t len;
        std::byte* base = mem_base(mem, t, len);
        const bool buf = info(mem).kind == VarKind::Buffer;
        with_elem(info(mem).type.elem, [&](auto te) {
          constexpr Elem E = decltype(te)::value;
          if constexpr (std::is_floating_point_v<Reg<E>>) {
            for (std::uint32_t r = 0; r < rows; ++r)
              for (std::uint32_t c = 0; c < cols; ++c) {
                const std::uint64_t e = off + std::uint64_t{row ? r : c} * st + (row ? c : r);
                if (e >= len)
                  out_of_bounds(load ? "mat_load" : "mat_store", static_cast<std::int64_t>(e), len);
                float& x = tl[r * cols + c];
                if (load) {
                  x = static_cast<float>(buf ? read_mem_elem<E>(base, e)
                                             : reinterpret_cast<Reg<E>*>(base)[e]);
                } else if (buf) {
                  write_mem_elem<E>(base, e, static_cast<Reg<E>>(x));
                } else {
                  reinterpret_cast<Reg<E>*>(base)[e] = static_cast<Reg<E>>(x);
                }
              }
          }
        });
        break;
      }
      case Op::MatMma: {
        const VarId d = i.in[0], a = i.in[1], b = i.in[2], cc = i.in[3];
        const MatrixInfo& m = info(a).matrix;
        const float *ta = tile(a, t), *tb = tile(b, t), *tc = tile(cc, t);
        std::vector<float> res(std::size_t{m.m} * m.n);
        for (std::uint32_t r = 0; r < m.m; ++r)
          for (std::uint32_t c = 0; c < m.n; ++c) {
            float acc = tc[r * m.n + c];
            for (std::uint32_t k = 0; k < m.k; ++k) acc += ta[r * m.k + k] * tb[k * m.n + c];
            res[r * m.n + c] = round_frag(d, acc);
          }
        std::copy(res.begin(), res.end(), tile(d, t));
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace ember::kernel::cpu
