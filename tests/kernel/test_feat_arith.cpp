// Every arithmetic, math, comparison and conversion instruction on every target, checked
// against the host reference (ember::scalar's functions and C++ semantics).
#include <bit>
#include <functional>
#include <limits>

#include "eval.hpp"
#include "kernel_test.hpp"

namespace ember::kernel::test {
namespace {

namespace fn = eval::fn;

using Unary = std::function<Val(Val)>;
using Binary = std::function<Val(Val, Val)>;

/// y[i] = f(x[i]) over a buffer of `e`.
Kernel unary_kernel(const std::string& name, Elem in, Elem out, const Unary& f) {
  KernelBuilder kb(name, {64, 1, 1});
  Mem x = kb.buffer("x", in, Access::Read);
  Mem y = kb.buffer("y", out, Access::Write);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, y.len(), [&] { y[i] = f(x[i]); });
  return kb.build();
}

Kernel binary_kernel(const std::string& name, Elem in, Elem out, const Binary& f) {
  KernelBuilder kb(name, {64, 1, 1});
  Mem a = kb.buffer("a", in, Access::Read);
  Mem b = kb.buffer("b", in, Access::Read);
  Mem y = kb.buffer("y", out, Access::Write);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, y.len(), [&] { y[i] = f(a[i], b[i]); });
  return kb.build();
}

class Arith : public KernelTest {
 protected:
  template <class In, class Out>
  std::vector<Out> unary(const std::string& name, Elem in, Elem out, const Unary& f,
                         const std::vector<In>& x) {
    const Kernel k = unary_kernel(name, in, out, f);
    auto c = compile(k);
    Buffer bx = up(x), by = poisoned<Out>(x.size());
    run(c, grid_for(k, x.size()), {Arg::buf(bx), Arg::buf(by)});
    return down<Out>(by, x.size());
  }
  template <class In, class Out>
  std::vector<Out> binary(const std::string& name, Elem in, Elem out, const Binary& f,
                          const std::vector<In>& a, const std::vector<In>& b) {
    const Kernel k = binary_kernel(name, in, out, f);
    auto c = compile(k);
    Buffer ba = up(a), bb = up(b), by = poisoned<Out>(a.size());
    run(c, grid_for(k, a.size()), {Arg::buf(ba), Arg::buf(bb), Arg::buf(by)});
    return down<Out>(by, a.size());
  }
  /// ulps allowed for the shared f32 polynomials: the CPU runs the same code; CUDA compiles
  /// the same text without contraction; GLSL's division is not correctly rounded.
  std::int64_t poly_ulps() const { return target() == "vulkan" ? 4 : 0; }
};

TEST_P(Arith, F32BinaryOps) {
  const std::size_t n = 1000;
  auto a = test_floats(n, -50, 50, 1), b = test_floats(n, -50, 50, 2);
  std::rotate(b.begin(), b.begin() + 3, b.end());  // pair the edge values differently
  if (!props().denormals)  // a device that may flush subnormals: keep them out of b
    for (float& v : b)
      if (v != 0 && std::fabs(v) < std::numeric_limits<float>::min()) v = 0.5f;
  struct Case {
    const char* name;
    Binary f;
    std::function<float(float, float)> ref;
    std::int64_t ulps;
  };
  const std::int64_t div_ulps = target() == "vulkan" ? 3 : 0;
  const std::vector<Case> cases = {
      {"add", [](Val x, Val y) { return x + y; }, fn::Add{}, 0},
      {"sub", [](Val x, Val y) { return x - y; }, fn::Sub{}, 0},
      {"mul", [](Val x, Val y) { return x * y; }, fn::Mul{}, 0},
      {"div", [](Val x, Val y) { return x / y; }, fn::Div{}, div_ulps},
      {"min", [](Val x, Val y) { return min(x, y); }, fn::Min{}, 0},
      {"max", [](Val x, Val y) { return max(x, y); }, fn::Max{}, 0},
  };
  for (const Case& c : cases) {
    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = c.ref(a[i], b[i]);
    expect_ulp(binary<float, float>(std::string("f32_") + c.name, Elem::F32, Elem::F32, c.f, a, b),
               want, c.ulps, a, c.name, !props().denormals, !props().nans);
  }
}

TEST_P(Arith, F32RemainderPowFma) {
  std::vector<float> a, b;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(0.1f, 9.0f), s(-3.0f, 3.0f);
  for (int i = 0; i < 500; ++i) {
    a.push_back((i % 2 ? -1.0f : 1.0f) * d(rng));
    b.push_back((i % 3 ? 1.0f : -1.0f) * d(rng));
  }
  std::vector<float> want(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) want[i] = fn::Rem{}(a[i], b[i]);
  // fmod is exact everywhere; the sign fix-up adds b (one rounding)
  expect_close(binary<float, float>(
                   "f32_rem", Elem::F32, Elem::F32, [](Val x, Val y) { return x % y; }, a, b),
               want, 1e-6, 0, "rem");
  std::vector<float> px, py;
  for (std::size_t i = 0; i < a.size(); ++i) {
    px.push_back(std::fabs(a[i]));
    py.push_back(s(rng));
  }
  for (std::size_t i = 0; i < a.size(); ++i) want[i] = std::pow(px[i], py[i]);
  expect_close(binary<float, float>(
                   "f32_pow", Elem::F32, Elem::F32, [](Val x, Val y) { return pow(x, y); }, px, py),
               want, 0, target() == "vulkan" ? 2e-5 : 1e-6, "pow");
  for (std::size_t i = 0; i < a.size(); ++i) want[i] = std::fma(a[i], b[i], 0.25f);
  // llvmpipe computes GLSL's fma as a multiply and an add (allowed by the Vulkan spec).
  expect_ulp(binary<float, float>(
                 "f32_fma", Elem::F32, Elem::F32,
                 [](Val x, Val y) { return fma(x, y, lit(x, 0.25f)); }, a, b),
             want, target() == "vulkan" ? 1 : 0, a, "fma", !props().denormals, !props().nans);
}

TEST_P(Arith, F32UnaryOps) {
  const auto x = test_floats(1000, -20, 20, 4);
  struct Case {
    const char* name;
    Unary f;
    std::function<float(float)> ref;
    std::int64_t ulps;
  };
  const bool vk = target() == "vulkan";
  const std::vector<Case> cases = {
      {"neg", [](Val v) { return -v; }, fn::Neg{}, 0},
      {"abs", [](Val v) { return abs(v); }, fn::Abs{}, 0},
      {"floor", [](Val v) { return floor(v); }, [](float v) { return std::floor(v); }, 0},
      {"ceil", [](Val v) { return ceil(v); }, [](float v) { return std::ceil(v); }, 0},
      {"round", [](Val v) { return round(v); }, fn::Round{}, 0},
      {"trunc", [](Val v) { return trunc(v); }, [](float v) { return std::trunc(v); }, 0},
      {"recip", [](Val v) { return recip(v); }, [](float v) { return 1.0f / v; }, vk ? 3 : 0},
  };
  for (const Case& c : cases) {
    std::vector<float> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = c.ref(x[i]);
    expect_ulp(unary<float, float>(std::string("f32_") + c.name, Elem::F32, Elem::F32, c.f, x),
               want, c.ulps, x, c.name, !props().denormals, !props().nans);
  }
  std::vector<float> pos;
  for (float v : x) pos.push_back(std::fabs(v));
  std::vector<float> want(pos.size());
  for (std::size_t i = 0; i < pos.size(); ++i) want[i] = std::sqrt(pos[i]);
  expect_ulp(unary<float, float>(
                 "f32_sqrt", Elem::F32, Elem::F32, [](Val v) { return sqrt(v); }, pos),
             want, vk ? 3 : 0, pos, "sqrt", !props().denormals, !props().nans);
  const auto nan = unary<float, std::uint8_t>(
      "f32_is_nan", Elem::F32, Elem::Bool, [](Val v) { return is_nan(v); }, x);
  const auto inf = unary<float, std::uint8_t>(
      "f32_is_inf", Elem::F32, Elem::Bool, [](Val v) { return is_inf(v); }, x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(nan[i], std::isnan(x[i]) ? 1 : 0) << x[i];
    EXPECT_EQ(inf[i], std::isinf(x[i]) ? 1 : 0) << x[i];
  }
}

// The shared f32 polynomials (exp, log, log1p, tanh, erf): the same algorithm on every target.
TEST_P(Arith, F32SharedPolynomials) {
  auto x = test_floats(2000, -12, 12, 5);
  const auto wide = test_floats(500, -100, 100, 6);
  x.insert(x.end(), wide.begin(), wide.end());
  struct Case {
    const char* name;
    Unary f;
    std::function<float(float)> ref;
  };
  const std::vector<Case> cases = {
      {"exp", [](Val v) { return exp(v); }, fn::Exp{}},
      {"log", [](Val v) { return log(v); }, fn::Log{}},
      {"log1p", [](Val v) { return log1p(v); }, fn::Log1p{}},
      {"tanh", [](Val v) { return tanh(v); }, fn::Tanh{}},
      {"erf", [](Val v) { return erf(v); }, fn::Erf{}},
  };
  for (const Case& c : cases) {
    std::vector<float> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = c.ref(x[i]);
    expect_ulp(unary<float, float>(std::string("f32_") + c.name, Elem::F32, Elem::F32, c.f, x),
               want, poly_ulps(), x, c.name, !props().denormals, !props().nans);
  }
}

TEST_P(Arith, F32Trigonometry) {
  std::vector<float> x;
  for (int i = -500; i <= 500; ++i) x.push_back(static_cast<float>(i) * 3.14159265f / 500.0f);
  // GLSL's sin/cos are only specified to 2^-11 absolute error on [-pi, pi].
  const double atol = target() == "vulkan" ? 5e-4 : 2e-7;
  std::vector<float> ws(x.size()), wc(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    ws[i] = std::sin(x[i]);
    wc[i] = std::cos(x[i]);
  }
  expect_close(unary<float, float>(
                   "f32_sin", Elem::F32, Elem::F32, [](Val v) { return sin(v); }, x),
               ws, atol, 0, "sin");
  expect_close(unary<float, float>(
                   "f32_cos", Elem::F32, Elem::F32, [](Val v) { return cos(v); }, x),
               wc, atol, 0, "cos");
}

template <class T>
std::vector<T> int_values(std::size_t n, std::uint32_t seed) {
  std::vector<T> v{
      T(0), T(1), T(2), T(3), T(7), std::numeric_limits<T>::max(), std::numeric_limits<T>::min()};
  if constexpr (std::is_signed_v<T>) {
    v.push_back(T(-1));
    v.push_back(T(-7));
    v.push_back(T(-3));
  }
  std::mt19937_64 rng(seed);
  while (v.size() < n) {
    const auto r = static_cast<T>(rng());
    v.push_back(v.size() % 2 ? r : static_cast<T>(r % 97));
  }
  v.resize(n);
  return v;
}

template <class T, Elem E>
void int_ops(Arith& t, std::function<std::vector<T>(const std::string&, const Binary&,
                                                    const std::vector<T>&, const std::vector<T>&)>
                           run) {
  auto a = int_values<T>(300, 7), b = int_values<T>(300, 8);
  std::rotate(b.begin(), b.begin() + 5, b.end());
  struct Case {
    const char* name;
    Binary f;
    std::function<T(T, T)> ref;
  };
  const std::vector<Case> cases = {
      {"add", [](Val x, Val y) { return x + y; }, fn::Add{}},
      {"sub", [](Val x, Val y) { return x - y; }, fn::Sub{}},
      {"mul", [](Val x, Val y) { return x * y; }, fn::Mul{}},
      {"div", [](Val x, Val y) { return x / y; }, fn::Div{}},
      {"rem", [](Val x, Val y) { return x % y; }, fn::Rem{}},
      {"min", [](Val x, Val y) { return min(x, y); }, fn::Min{}},
      {"max", [](Val x, Val y) { return max(x, y); }, fn::Max{}},
      {"and", [](Val x, Val y) { return x & y; }, fn::BitAnd{}},
      {"or", [](Val x, Val y) { return x | y; }, fn::BitOr{}},
      {"xor", [](Val x, Val y) { return x ^ y; }, fn::BitXor{}},
  };
  for (const Case& c : cases) {
    const auto got = run(std::string(elem_name(E)) + "_" + c.name, c.f, a, b);
    int bad = 0;
    for (std::size_t i = 0; i < a.size() && bad < 5; ++i)
      if (got[i] != c.ref(a[i], b[i])) {
        ADD_FAILURE() << elem_name(E) << " " << c.name << "(" << +a[i] << ", " << +b[i] << "): got "
                      << +got[i] << ", want " << +c.ref(a[i], b[i]);
        ++bad;
      }
  }
  // shifts by counts in [-2, bits + 2]
  std::vector<T> sh(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    sh[i] =
        static_cast<T>(static_cast<int>(i % (sizeof(T) * 8 + 5)) - (std::is_signed_v<T> ? 2 : 0));
  for (int left = 0; left < 2; ++left) {
    const auto got = run(
        std::string(elem_name(E)) + (left ? "_shl" : "_shr"),
        [&](Val x, Val y) { return left ? (x << y) : (x >> y); }, a, sh);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const T want = left ? fn::Shl{}(a[i], sh[i]) : fn::Shr{}(a[i], sh[i]);
      if (got[i] != want) {
        ADD_FAILURE() << (left ? "shl " : "shr ") << +a[i] << " by " << +sh[i] << ": got "
                      << +got[i] << ", want " << +want;
        break;
      }
    }
  }
  (void)t;
}

TEST_P(Arith, IntegerOps) {
  int_ops<std::int32_t, Elem::I32>(
      *this, [&](const std::string& n, const Binary& f, const auto& a, const auto& b) {
        return binary<std::int32_t, std::int32_t>(n, Elem::I32, Elem::I32, f, a, b);
      });
  int_ops<std::uint32_t, Elem::U32>(
      *this, [&](const std::string& n, const Binary& f, const auto& a, const auto& b) {
        return binary<std::uint32_t, std::uint32_t>(n, Elem::U32, Elem::U32, f, a, b);
      });
  int_ops<std::uint8_t, Elem::U8>(
      *this, [&](const std::string& n, const Binary& f, const auto& a, const auto& b) {
        return binary<std::uint8_t, std::uint8_t>(n, Elem::U8, Elem::U8, f, a, b);
      });
}

TEST_P(Arith, Int64Ops) {
  EMBER_REQUIRE(props().i64, "i64");
  int_ops<std::int64_t, Elem::I64>(
      *this, [&](const std::string& n, const Binary& f, const auto& a, const auto& b) {
        return binary<std::int64_t, std::int64_t>(n, Elem::I64, Elem::I64, f, a, b);
      });
}

TEST_P(Arith, IntegerUnaryOps) {
  const auto x = int_values<std::int32_t>(200, 9);
  const auto neg = unary<std::int32_t, std::int32_t>(
      "i32_neg", Elem::I32, Elem::I32, [](Val v) { return -v; }, x);
  const auto ab = unary<std::int32_t, std::int32_t>(
      "i32_abs", Elem::I32, Elem::I32, [](Val v) { return abs(v); }, x);
  const auto no = unary<std::int32_t, std::int32_t>(
      "i32_not", Elem::I32, Elem::I32, [](Val v) { return ~v; }, x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(neg[i], fn::Neg{}(x[i]));
    EXPECT_EQ(ab[i], fn::Abs{}(x[i]));
    EXPECT_EQ(no[i], ~x[i]);
  }
}

TEST_P(Arith, ComparisonsSelectAndLogic) {
  auto a = test_floats(300, -3, 3, 10), b = test_floats(300, -3, 3, 11);
  for (std::size_t i = 20; i < a.size(); i += 7) b[i] = a[i];  // some ties
  const auto got = binary<float, float>(
      "cmp_select", Elem::F32, Elem::F32,
      [](Val x, Val y) {
        Val lt = x<y, le = x <= y, gt = x> y, ge = x >= y, eq = x == y, ne = x != y;
        // encode the six comparisons as bits, then a select
        Val bits = select(lt, lit(x, 1), lit(x, 0)) + select(le, lit(x, 2), lit(x, 0)) +
                   select(gt, lit(x, 4), lit(x, 0)) + select(ge, lit(x, 8), lit(x, 0)) +
                   select(eq, lit(x, 16), lit(x, 0)) + select(ne, lit(x, 32), lit(x, 0));
        Val logic = select((lt & !eq) | (gt ^ ge), lit(x, 64), lit(x, 0));
        return bits + logic;
      },
      a, b);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float x = a[i], y = b[i];
    float want =
        (x < y) * 1 + (x <= y) * 2 + (x > y) * 4 + (x >= y) * 8 + (x == y) * 16 + (x != y) * 32;
    if (((x < y) && !(x == y)) || ((x > y) != (x >= y))) want += 64;
    EXPECT_EQ(got[i], want) << x << " vs " << y;
  }
}

TEST_P(Arith, Casts) {
  const auto x = test_floats(400, -300, 300, 12);
  const auto to_i32 = unary<float, std::int32_t>(
      "cast_f32_i32", Elem::F32, Elem::I32, [](Val v) { return cast(v, Elem::I32); }, x);
  const auto to_u32 = unary<float, std::uint32_t>(
      "cast_f32_u32", Elem::F32, Elem::U32, [](Val v) { return cast(v, Elem::U32); }, x);
  const auto to_u8 = unary<float, std::uint8_t>(
      "cast_f32_u8", Elem::F32, Elem::U8, [](Val v) { return cast(v, Elem::U8); }, x);
  const auto to_bool = unary<float, std::uint8_t>(
      "cast_f32_bool", Elem::F32, Elem::Bool, [](Val v) { return cast(v, Elem::Bool); }, x);
  const auto bits = unary<float, std::uint32_t>(
      "bitcast_f32_u32", Elem::F32, Elem::U32, [](Val v) { return bitcast(v, Elem::U32); }, x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const bool subnormal = x[i] != 0 && std::fabs(x[i]) < std::numeric_limits<float>::min();
    if ((subnormal && !props().denormals) || (x[i] != x[i] && !props().nans)) continue;
    EXPECT_EQ(to_i32[i], (eval::cast_elem<Elem::I32, Elem::F32>(x[i]))) << x[i];
    EXPECT_EQ(to_u32[i], (eval::cast_elem<Elem::U32, Elem::F32>(x[i]))) << x[i];
    EXPECT_EQ(to_u8[i], (eval::cast_elem<Elem::U8, Elem::F32>(x[i]))) << x[i];
    EXPECT_EQ(to_bool[i], x[i] != 0 ? 1 : 0) << x[i];
    EXPECT_EQ(bits[i], std::bit_cast<std::uint32_t>(x[i])) << x[i];
  }
  const auto ints = int_values<std::int32_t>(200, 13);
  const auto back = unary<std::int32_t, float>(
      "cast_i32_f32", Elem::I32, Elem::F32, [](Val v) { return cast(v, Elem::F32); }, ints);
  const auto to8 = unary<std::int32_t, std::uint8_t>(
      "cast_i32_u8", Elem::I32, Elem::U8, [](Val v) { return cast(v, Elem::U8); }, ints);
  for (std::size_t i = 0; i < ints.size(); ++i) {
    EXPECT_EQ(back[i], static_cast<float>(ints[i]));
    EXPECT_EQ(to8[i], static_cast<std::uint8_t>(ints[i]));
  }
}

// f16 and bf16: stored as 16 bits, computed in f32, rounded to nearest even after each op.
TEST_P(Arith, HalfTypes) {
  EMBER_REQUIRE(props().f16 && props().bf16, "f16 and bf16 storage");
  for (Elem e : {Elem::F16, Elem::BF16}) {
    const auto xf = test_floats(300, -70000, 70000, 14);
    std::vector<std::uint16_t> a, b;
    for (std::size_t i = 0; i < xf.size(); ++i) {
      const float u = xf[i] / (i % 3 ? 1000.0f : 1.0f);
      a.push_back(e == Elem::F16 ? f16::from_float(u) : bf16::from_float(u));
      b.push_back(e == Elem::F16 ? f16::from_float(0.37f * u + 1.0f)
                                 : bf16::from_float(0.37f * u + 1.0f));
    }
    const auto to_f = [&](std::uint16_t h) {
      return e == Elem::F16 ? f16::to_float(h) : bf16::to_float(h);
    };
    const auto to_h = [&](float f) {
      return e == Elem::F16 ? f16::from_float(f) : bf16::from_float(f);
    };
    const auto got = binary<std::uint16_t, std::uint16_t>(
        std::string(elem_name(e)) + "_ops", e, e,
        [](Val x, Val y) { return (x * y + x) / (y * y + lit(x, 1)) + exp(x * lit(x, 0.001)); }, a,
        b);
    const auto conv = unary<std::uint16_t, float>(
        std::string(elem_name(e)) + "_to_f32", e, Elem::F32,
        [](Val v) { return cast(v, Elem::F32); }, a);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const float x = to_f(a[i]), y = to_f(b[i]);
      // each step rounded to the type, as the generated code does
      const auto r = [&](float v) { return to_f(to_h(v)); };
      const float num = r(r(x * y) + x), den = r(r(y * y) + 1.0f);
      const float want = r(r(num / den) + r(fn::Exp{}(r(x * r(0.001f)))));
      const float g = to_f(got[i]);
      const bool ok = (g != g && want != want) || g == want ||
                      (target() == "vulkan" && std::fabs(g - want) <= 2e-3f * std::fabs(want));
      EXPECT_TRUE(ok) << elem_name(e) << " x=" << x << " y=" << y << ": got " << g << ", want "
                      << want;
      EXPECT_TRUE(conv[i] == x || (conv[i] != conv[i] && x != x)) << conv[i] << " vs " << x;
    }
  }
}

// Every f16 bit pattern widens to its f32 value exactly: zeros, subnormals (mant * 2^-24),
// normals, infinities; NaNs stay NaN (NVIDIA's conversion gives one NaN for all: sign and
// payload are not kept).
TEST_P(Arith, HalfWidensEveryBitPattern) {
  EMBER_REQUIRE(props().f16, "f16 storage");
  std::vector<std::uint16_t> all(1u << 16);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  const auto got = unary<std::uint16_t, float>(
      "f16_every_to_f32", Elem::F16, Elem::F32, [](Val v) { return cast(v, Elem::F32); }, all);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const float want = f16::to_float(all[i]);
    if (want != want) {
      EXPECT_TRUE(got[i] != got[i]) << "f16 bits 0x" << std::hex << i << ": got " << got[i];
      continue;
    }
    EXPECT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want))
        << "f16 bits 0x" << std::hex << i << ": got " << got[i] << ", want " << want;
  }
}

TEST_P(Arith, F64Ops) {
  EMBER_REQUIRE(props().f64, "f64");
  std::vector<double> a, b;
  std::mt19937_64 rng(15);
  std::uniform_real_distribution<double> d(-10, 10);
  for (int i = 0; i < 300; ++i) {
    a.push_back(d(rng));
    b.push_back(d(rng) + 20.5);
  }
  const auto got = binary<double, double>(
      "f64_ops", Elem::F64, Elem::F64,
      [](Val x, Val y) { return fma(x, y, x / y) - min(x, y) + floor(y) + sqrt(y); }, a, b);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double want = std::fma(a[i], b[i], a[i] / b[i]) - std::min(a[i], b[i]) +
                        std::floor(b[i]) + std::sqrt(b[i]);
    EXPECT_NEAR(got[i], want, target() == "vulkan" ? 1e-12 * std::fabs(want) : 0)
        << a[i] << ", " << b[i];
  }
  if (!props().f64_math) return;  // GLSL has no f64 exp/log
  const auto e = unary<double, double>(
      "f64_exp", Elem::F64, Elem::F64, [](Val v) { return exp(v) + log(v * v + lit(v, 1)); }, a);
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(e[i], std::exp(a[i]) + std::log(a[i] * a[i] + 1), 1e-13 * std::fabs(e[i]));
}

EMBER_KERNEL_INSTANTIATE(Arith);

}  // namespace
}  // namespace ember::kernel::test
