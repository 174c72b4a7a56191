// The CUDA C++ generator (compiled at run time by NVRTC, see src/cuda/).
#include <climits>
#include <cmath>
#include <cstdint>

#include "ember/kernel/codegen.hpp"
#include "emit_c.hpp"

namespace ember::kernel {

namespace detail {
extern const char* const kScalarHeaderText;  // generated from EMBER_SCALAR_HEADER
}  // namespace detail

const char* scalar_header_text() {
  return detail::kScalarHeaderText;
}

namespace {

// Helpers every kernel may call (namespace ek). Semantics match eval.hpp.
constexpr const char* kCudaPrelude = R"(
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;
typedef unsigned char u8;
namespace ek {
__device__ __forceinline__ float min_(float a, float b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
__device__ __forceinline__ float max_(float a, float b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
__device__ __forceinline__ double min_(double a, double b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
__device__ __forceinline__ double max_(double a, double b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
template <class T> __device__ __forceinline__ T min_(T a, T b) { return a < b ? a : b; }
template <class T> __device__ __forceinline__ T max_(T a, T b) { return a > b ? a : b; }
template <class T> struct uns;
template <> struct uns<i32> { typedef u32 t; };
template <> struct uns<i64> { typedef u64 t; };
template <> struct uns<u32> { typedef u32 t; };
template <> struct uns<u8> { typedef u8 t; };
template <class T> __device__ __forceinline__ T shl(T a, T b) {
  return (b < T(0) || b >= T(sizeof(T) * 8)) ? T(0) : T(typename uns<T>::t(a) << b);
}
template <class T> __device__ __forceinline__ T shr(T a, T b) {
  return (b < T(0) || b >= T(sizeof(T) * 8)) ? T(a < T(0) ? -1 : 0) : T(a >> b);
}
template <class T> __device__ __forceinline__ T iabs(T a) { return a < T(0) ? T(typename uns<T>::t(0) - typename uns<T>::t(a)) : a; }
template <class T, class F> __device__ __forceinline__ T f2i(F x, T lo, T hi) {
  return x != x ? T(0) : (x <= F(lo) ? lo : (x >= F(hi) ? hi : T(x)));
}
template <bool kMin> __device__ __forceinline__ float atomic_extreme_f32(float* p, float v) {
  u32* q = reinterpret_cast<u32*>(p);
  u32 old = *q, assumed;
  do {
    assumed = old;
    const float a = __uint_as_float(assumed);
    old = atomicCAS(q, assumed, __float_as_uint(kMin ? min_(a, v) : max_(a, v)));
  } while (old != assumed);
  return __uint_as_float(old);
}
template <class T> __device__ __forceinline__ T shfl(T v, u32 l) { return __shfl_sync(0xffffffffu, v, int(l)); }
template <class T> __device__ __forceinline__ T shfl_xor(T v, u32 m) { return __shfl_xor_sync(0xffffffffu, v, int(m)); }
__device__ __forceinline__ u8 shfl(u8 v, u32 l) { return u8(__shfl_sync(0xffffffffu, u32(v), int(l))); }
__device__ __forceinline__ u8 shfl_xor(u8 v, u32 m) { return u8(__shfl_xor_sync(0xffffffffu, u32(v), int(m))); }
__device__ __forceinline__ bool shfl(bool v, u32 l) { return __shfl_sync(0xffffffffu, int(v), int(l)) != 0; }
__device__ __forceinline__ bool shfl_xor(bool v, u32 m) { return __shfl_xor_sync(0xffffffffu, int(v), int(m)) != 0; }
}  // namespace ek
)";

constexpr const char* kHalfPrelude = R"(
namespace ek {
__device__ __forceinline__ float round_f16(float x) { return __half2float(__float2half_rn(x)); }
__device__ __forceinline__ float round_bf16(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }
}  // namespace ek
)";

const char* mem_type(Elem e) {
  switch (e) {
    case Elem::F32:
      return "float";
    case Elem::F16:
      return "__half";
    case Elem::BF16:
      return "__nv_bfloat16";
    case Elem::F64:
      return "double";
    case Elem::I32:
      return "i32";
    case Elem::I64:
      return "i64";
    case Elem::U32:
      return "u32";
    case Elem::U8:
    case Elem::Bool:
      return "u8";
  }
  return "?";
}

class CudaEmitter final : public detail::CEmitter {
 public:
  using CEmitter::CEmitter;

 protected:
  std::string type(Elem e) const override {
    switch (e) {
      case Elem::F32:
      case Elem::F16:
      case Elem::BF16:
        return "float";
      case Elem::F64:
        return "double";
      case Elem::I32:
        return "i32";
      case Elem::I64:
        return "i64";
      case Elem::U32:
        return "u32";
      case Elem::U8:
        return "u8";
      case Elem::Bool:
        return "bool";
    }
    return "?";
  }

  std::string literal(Elem e, double f, std::int64_t i) const override {
    switch (e) {
      case Elem::F32:
      case Elem::F16:
      case Elem::BF16: {
        const float x = static_cast<float>(f);
        if (x != x) return "__int_as_float(0x7fffffff)";
        if (std::isinf(x))
          return x > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
        return "(" + detail::float_text(x, "f") + ")";
      }
      case Elem::F64:
        if (f != f) return "__longlong_as_double(0x7fffffffffffffffll)";
        if (std::isinf(f))
          return f > 0 ? "__longlong_as_double(0x7ff0000000000000ll)"
                       : "__longlong_as_double(0xfff0000000000000ull)";
        return "(" + detail::double_text(f, "") + ")";
      case Elem::I32:
        if (i == INT32_MIN) return "(-2147483647 - 1)";
        return "(" + std::to_string(i) + ")";
      case Elem::I64:
        if (i == INT64_MIN) return "(-9223372036854775807ll - 1)";
        return "(" + std::to_string(i) + "ll)";
      case Elem::U32:
        return std::to_string(static_cast<std::uint32_t>(i)) + "u";
      case Elem::U8:
        return "u8(" + std::to_string(i) + ")";
      case Elem::Bool:
        return i ? "true" : "false";
    }
    return "?";
  }

  std::string round_half(Elem e, const std::string& x) const override {
    if (e == Elem::F16) return "ek::round_f16(" + x + ")";
    if (e == Elem::BF16) return "ek::round_bf16(" + x + ")";
    return x;
  }

  void prologue() override {
    const Features f = features(k());
    out() << "// ember kernel " << k().name << " (CUDA C++, generated"
          << (k().contract ? ", --fmad=true" : "") << ")\n";
    out() << "#include \"ember_scalar.hpp\"\n";
    if (f.f16 || f.bf16 || f.matrix) out() << "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";
    if (f.matrix) out() << "#include <mma.h>\n";
    out() << kCudaPrelude;
    if (f.f16 || f.bf16 || f.matrix) out() << kHalfPrelude;
    out() << "struct EmberInfo { u32 w[" << std::max<std::uint32_t>(1, InfoLayout(k()).words)
          << "]; };\n";
    out() << "extern \"C\" __global__ void __launch_bounds__(" << k().workgroup_threads() << ") "
          << k().name << "(";
    for (VarId a : k().args) {
      const VarInfo& v = var(a);
      if (v.kind != VarKind::Buffer) continue;
      out() << (v.access == Access::Read ? "const " : "") << mem_type(v.type.elem) << "* "
            << name(a) << ", ";
    }
    out() << "const EmberInfo info) {\n";
    for (VarId a : k().args) {
      const VarInfo& v = var(a);
      if (v.kind != VarKind::Scalar) continue;
      const std::uint32_t o = info_offset(a);
      const std::string w = "info.w[" + std::to_string(o) + "]";
      const std::string w2 = "info.w[" + std::to_string(o + 1) + "]";
      std::string e;
      switch (v.type.elem) {
        case Elem::F32:
        case Elem::F16:
        case Elem::BF16:
          e = "__uint_as_float(" + w + ")";
          break;
        case Elem::F64:
          e = "__longlong_as_double(i64(((u64)" + w2 + " << 32) | " + w + "))";
          break;
        case Elem::I64:
          e = "i64(((u64)" + w2 + " << 32) | " + w + ")";
          break;
        case Elem::I32:
          e = "i32(" + w + ")";
          break;
        case Elem::U32:
          e = w;
          break;
        case Elem::U8:
          e = "u8(" + w + ")";
          break;
        case Elem::Bool:
          e = "(" + w + " != 0u)";
          break;
      }
      line("const " + type(v.type.elem) + " " + name(a) + " = " + e + ";");
    }
    for (VarId id = 0; id < k().vars.size(); ++id) {
      const VarInfo& v = var(id);
      if (v.kind == VarKind::Shared)
        line("__shared__ __align__(16) " + std::string(mem_type(v.type.elem)) + " " + name(id) +
             "[" + std::to_string(v.length) + "];");
      else if (v.kind == VarKind::Local)
        line("__align__(16) " + std::string(mem_type(v.type.elem)) + " " + name(id) + "[" +
             std::to_string(v.length) + "];");
      else if (v.kind == VarKind::Mutable)
        for (int l = 0; l < v.type.lanes; ++l)
          line(type(v.type.elem) + " " + name(id, l) + " = " + literal(v.type.elem, 0, 0) + ";");
      else if (v.kind == VarKind::Matrix)
        line(fragment_type(v) + " " + name(id) + ";");
    }
  }

  std::string builtin(const Inst& i) override {
    static const char* xyz[] = {"x", "y", "z"};
    const std::string ax = xyz[i.aux % 3];
    const auto& wg = k().workgroup;
    const std::string local = "(threadIdx.x + " + std::to_string(wg[0]) + "u * (threadIdx.y + " +
                              std::to_string(wg[1]) + "u * threadIdx.z))";
    switch (i.op) {
      case Op::ThreadIdx:
        return "threadIdx." + ax;
      case Op::BlockIdx:
        return "blockIdx." + ax;
      case Op::BlockDim:
        return std::to_string(wg[i.aux % 3]) + "u";
      case Op::GridDim:
        return "gridDim." + ax;
      case Op::GlobalIdx:
        return "(blockIdx." + ax + " * " + std::to_string(wg[i.aux % 3]) + "u + threadIdx." + ax +
               ")";
      case Op::LocalLinearIdx:
        return local;
      case Op::AbsolutePos:
        return "((blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) * " +
               std::to_string(k().workgroup_threads()) + "u + " + local + ")";
      case Op::SubgroupSize:
        return "32u";
      case Op::LaneId:
        return "(" + local + " & 31u)";
      default:
        break;
    }
    const std::uint32_t o = info_offset(i.in[0]);
    if (i.op == Op::BufLen) return "info.w[" + std::to_string(o) + "]";
    const std::uint32_t base = i.op == Op::BufShape ? o + 1 : o + 1 + var(i.in[0]).rank;
    const VarInfo& d = var(i.in[1]);
    if (d.kind == VarKind::Constant) return "info.w[" + std::to_string(base + d.i) + "]";
    return "info.w[" + std::to_string(base) + " + " + name(i.in[1]) + "]";
  }

  std::string pure(const Inst& i, int l) override {
    if (std::string c = common_expr(i, l); !c.empty()) return c;
    const Elem e = type_of(i.out).elem;
    const Elem ae = type_of(i.in[0]).elem;
    const std::string a = name(i.in[0], l);
    const std::string b = i.in[1] != kNoVar ? name(i.in[1], l) : "";
    const std::string c = i.in[2] != kNoVar ? name(i.in[2], l) : "";
    const bool f32 = ae == Elem::F32 || is_half(ae);
    const bool sgn = is_signed_int(ae);
    const std::string t = type(e);
    const std::string u = ae == Elem::I64 ? "u64" : "u32";
    const auto fn = [&](const char* name32, const char* name64) {
      return std::string(f32 ? name32 : name64) + "(" + a + ")";
    };
    const auto wrap = [&](const std::string& op) {  // integer arithmetic without signed overflow
      if (sgn) return t + "(" + u + "(" + a + ") " + op + " " + u + "(" + b + "))";
      return t + "(" + a + " " + op + " " + b + ")";
    };
    std::string r;
    switch (i.op) {
      case Op::Neg:
        r = is_float(ae) ? "(-" + a + ")"
            : sgn        ? t + "(" + u + "(0) - " + u + "(" + a + "))"
                         : t + "(-" + a + ")";
        break;
      case Op::Abs:
        r = is_float(ae) ? fn("fabsf", "fabs") : sgn ? "ek::iabs(" + a + ")" : a;
        break;
      case Op::BitNot:
        r = t + "(~" + a + ")";
        break;
      case Op::Sqrt:
        r = fn("sqrtf", "sqrt");
        break;
      case Op::Exp:
        r = fn("ember::scalar::exp_f32", "exp");
        break;
      case Op::Log:
        r = fn("ember::scalar::log_f32", "log");
        break;
      case Op::Log1p:
        r = fn("ember::scalar::log1p_f32", "log1p");
        break;
      case Op::Tanh:
        r = fn("ember::scalar::tanh_f32", "tanh");
        break;
      case Op::Erf:
        r = fn("ember::scalar::erf_f32", "erf");
        break;
      case Op::Sin:
        r = fn("sinf", "sin");
        break;
      case Op::Cos:
        r = fn("cosf", "cos");
        break;
      case Op::Floor:
        r = fn("floorf", "floor");
        break;
      case Op::Ceil:
        r = fn("ceilf", "ceil");
        break;
      case Op::Round:
        r = fn("rintf", "rint");
        break;
      case Op::Trunc:
        r = fn("truncf", "trunc");
        break;
      case Op::Recip:
        r = f32 ? "(1.0f / " + a + ")" : "(1.0 / " + a + ")";
        break;
      case Op::IsNan:
        r = "(" + a + " != " + a + ")";
        break;
      case Op::IsInf:
        r = f32 ? "(fabsf(" + a + ") == __int_as_float(0x7f800000))"
                : "(fabs(" + a + ") == __longlong_as_double(0x7ff0000000000000ll))";
        break;
      case Op::Add:
        r = is_float(ae) ? "(" + a + " + " + b + ")" : wrap("+");
        break;
      case Op::Sub:
        r = is_float(ae) ? "(" + a + " - " + b + ")" : wrap("-");
        break;
      case Op::Mul:
        r = is_float(ae) ? "(" + a + " * " + b + ")" : wrap("*");
        break;
      case Op::Div:
        r = is_float(ae) ? "(" + a + " / " + b + ")"
                         : "ember::scalar::int_floor_div(" + a + ", " + b + ")";
        break;
      case Op::Rem:
        r = is_float(ae) ? "ember::scalar::float_remainder(" + a + ", " + b + ")"
                         : "ember::scalar::int_remainder(" + a + ", " + b + ")";
        break;
      case Op::Min:
        r = "ek::min_(" + a + ", " + b + ")";
        break;
      case Op::Max:
        r = "ek::max_(" + a + ", " + b + ")";
        break;
      case Op::Pow:
        r = std::string(f32 ? "powf(" : "pow(") + a + ", " + b + ")";
        break;
      case Op::BitAnd:
        r = t + "(" + a + " & " + b + ")";
        break;
      case Op::BitOr:
        r = t + "(" + a + " | " + b + ")";
        break;
      case Op::BitXor:
        r = t + "(" + a + " ^ " + b + ")";
        break;
      case Op::Shl:
        r = "ek::shl(" + a + ", " + b + ")";
        break;
      case Op::Shr:
        r = "ek::shr(" + a + ", " + b + ")";
        break;
      case Op::Fma:
        r = std::string(f32 ? "fmaf(" : "fma(") + a + ", " + b + ", " + c + ")";
        break;
      case Op::Cast:
        r = cast(ae, e, a);
        break;
      case Op::Bitcast:
        return bitcast(ae, e, a);
      default:
        return "/*?*/0";
    }
    return is_half(e) ? round_half(e, r) : r;
  }

  std::string cast(Elem from, Elem to, const std::string& a) const {
    if (to == Elem::Bool) return "(" + a + " != " + literal(from, 0, 0) + ")";
    if (from == Elem::Bool) return type(to) + "(" + a + " ? 1 : 0)";
    if (is_float(from) && is_int(to)) {
      const char* lim[] = {"(-2147483647 - 1), 2147483647",
                           "(-9223372036854775807ll - 1), 9223372036854775807ll", "0u, 4294967295u",
                           "u8(0), u8(255)"};
      const int which = to == Elem::I32 ? 0 : to == Elem::I64 ? 1 : to == Elem::U32 ? 2 : 3;
      return "ek::f2i<" + type(to) + ">(" + a + ", " + lim[which] + ")";
    }
    return type(to) + "(" + a + ")";  // int <-> int wraps; float conversions round to nearest
  }

  std::string bitcast(Elem from, Elem to, const std::string& a) const {
    if (to == Elem::F32)
      return from == Elem::U32 ? "__uint_as_float(" + a + ")" : "__int_as_float(" + a + ")";
    if (from == Elem::F32)
      return to == Elem::U32 ? "__float_as_uint(" + a + ")" : "__float_as_int(" + a + ")";
    if (to == Elem::F64) return "__longlong_as_double(" + a + ")";
    if (from == Elem::F64) return "__double_as_longlong(" + a + ")";
    return type(to) + "(" + a + ")";
  }

  void special(const Inst& i) override;

  std::string shuffle(const std::string& v, const std::string& lane, bool x) const override {
    return std::string(x ? "ek::shfl_xor(" : "ek::shfl(") + v + ", " + lane + ")";
  }
  std::string butterfly_loop() const override { return "for (u32 o = 16u; o > 0u; o >>= 1) {"; }
  std::string combine(Op op, Elem e, const std::string& a, const std::string& b) const override {
    if (op == Op::SgMin) return "ek::min_(" + a + ", " + b + ")";
    if (op == Op::SgMax) return "ek::max_(" + a + ", " + b + ")";
    if (is_float(e)) return round_half(e, "(" + a + " + " + b + ")");
    if (is_signed_int(e)) {
      const std::string u = e == Elem::I64 ? "u64" : "u32";
      return type(e) + "(" + u + "(" + a + ") + " + u + "(" + b + "))";
    }
    return type(e) + "(" + a + " + " + b + ")";
  }

 private:
  std::string fragment_type(const VarInfo& v) const {
    const MatrixInfo& m = v.matrix;
    const std::string dims =
        ", " + std::to_string(m.m) + ", " + std::to_string(m.n) + ", " + std::to_string(m.k);
    const std::string el = v.type.elem == Elem::F32 ? "float" : mem_type(v.type.elem);
    if (m.use == MatrixUse::Acc)
      return "nvcuda::wmma::fragment<nvcuda::wmma::accumulator" + dims + ", " + el + ">";
    const std::string layout =
        m.layout == MatrixLayout::RowMajor ? "nvcuda::wmma::row_major" : "nvcuda::wmma::col_major";
    return std::string("nvcuda::wmma::fragment<nvcuda::wmma::") +
           (m.use == MatrixUse::A ? "matrix_a" : "matrix_b") + dims + ", " + el + ", " + layout +
           ">";
  }
  void load(const Inst& i);
  void store(const Inst& i);
  void atomic(const Inst& i);
};

/// Lane l of a vector of `e` packed in 32-bit words `w`.
std::string unpack(Elem e, const std::string& w, int l) {
  const int off = l * elem_bytes(e), k = off / 4, sh = (off % 4) * 8;
  const std::string wk = w + "[" + std::to_string(k) + "]";
  const std::string shifted = "(" + wk + " >> " + std::to_string(sh) + ")";
  const std::string wide = "(((u64)" + w + "[" + std::to_string(k + 1) + "] << 32) | " + wk + ")";
  switch (e) {
    case Elem::F32:
      return "__uint_as_float(" + wk + ")";
    case Elem::I32:
      return "i32(" + wk + ")";
    case Elem::U32:
      return wk;
    case Elem::F64:
      return "__longlong_as_double(i64" + wide + ")";
    case Elem::I64:
      return "i64" + wide;
    case Elem::F16:
      return "__half2float(__ushort_as_half((unsigned short)(" + shifted + " & 0xffffu)))";
    case Elem::BF16:
      return "__uint_as_float((" + shifted + " & 0xffffu) << 16)";
    case Elem::U8:
      return "u8(" + shifted + " & 0xffu)";
    case Elem::Bool:
      return "((" + shifted + " & 0xffu) != 0u)";
  }
  return "0";
}

void CudaEmitter::load(const Inst& i) {
  const Elem e = var(i.in[0]).type.elem;
  const int lanes = type_of(i.out).lanes;
  const std::string mem = name(i.in[0]), idx = name(i.in[1]);
  const int bytes = lanes * elem_bytes(e);
  std::vector<std::string> l;
  const auto scalar = [&](const std::string& ref) {
    if (e == Elem::F16) return "__half2float(" + ref + ")";
    if (e == Elem::BF16) return "__bfloat162float(" + ref + ")";
    if (e == Elem::Bool) return "(" + ref + " != 0)";
    return ref;
  };
  if (lanes == 1 || bytes < 4) {
    for (int x = 0; x < lanes; ++x)
      l.push_back(scalar(
          mem + "[" +
          (lanes == 1 ? idx
                      : idx + " * " + std::to_string(lanes) + "u + " + std::to_string(x) + "u") +
          "]"));
    define(i, l);
    return;
  }
  const std::string w = fresh("w");
  const int words = bytes / 4;
  if (bytes == 4) {
    line("const u32 " + w + "[1] = {reinterpret_cast<const u32*>(" + mem + ")[" + idx + "]};");
  } else if (bytes == 8) {
    const std::string t = fresh("t");
    line("const uint2 " + t + " = reinterpret_cast<const uint2*>(" + mem + ")[" + idx + "];");
    line("const u32 " + w + "[2] = {" + t + ".x, " + t + ".y};");
  } else {  // 16, 32 or 64 bytes: uint4 loads
    const int q = bytes / 16;
    const std::string t = fresh("t");
    std::string init;
    for (int j = 0; j < q; ++j) {
      const std::string tj = t + std::to_string(j);
      line("const uint4 " + tj + " = reinterpret_cast<const uint4*>(" + mem + ")[" +
           (q == 1 ? idx : std::to_string(q) + "u * " + idx + " + " + std::to_string(j) + "u") +
           "];");
      init += (j ? ", " : "") + tj + ".x, " + tj + ".y, " + tj + ".z, " + tj + ".w";
    }
    line("const u32 " + w + "[" + std::to_string(words) + "] = {" + init + "};");
  }
  for (int x = 0; x < lanes; ++x) l.push_back(unpack(e, w, x));
  define(i, l);
}

void CudaEmitter::store(const Inst& i) {
  const Elem e = var(i.in[0]).type.elem;
  const VarId val = i.in[2];
  const int lanes = type_of(val).lanes;
  const std::string mem = name(i.in[0]), idx = name(i.in[1]);
  const int bytes = lanes * elem_bytes(e);
  const auto scalar = [&](const std::string& v) {
    if (e == Elem::F16) return "__float2half_rn(" + v + ")";
    if (e == Elem::BF16) return "__float2bfloat16_rn(" + v + ")";
    if (e == Elem::Bool) return "u8(" + v + " ? 1 : 0)";
    return v;
  };
  if (lanes == 1 || bytes < 4) {
    for (int x = 0; x < lanes; ++x)
      line(mem + "[" +
           (lanes == 1 ? idx
                       : idx + " * " + std::to_string(lanes) + "u + " + std::to_string(x) + "u") +
           "] = " + scalar(name(val, x)) + ";");
    return;
  }
  const int words = bytes / 4;
  const std::string w = fresh("w");
  line("u32 " + w + "[" + std::to_string(words) + "] = {};");
  for (int x = 0; x < lanes; ++x) {
    const int off = x * elem_bytes(e), k = off / 4, sh = (off % 4) * 8;
    const std::string v = name(val, x), wk = w + "[" + std::to_string(k) + "]";
    const std::string s = " << " + std::to_string(sh);
    switch (e) {
      case Elem::F32:
        line(wk + " = __float_as_uint(" + v + ");");
        break;
      case Elem::I32:
        line(wk + " = u32(" + v + ");");
        break;
      case Elem::U32:
        line(wk + " = " + v + ";");
        break;
      case Elem::F64:
      case Elem::I64: {
        const std::string p =
            e == Elem::F64 ? "u64(__double_as_longlong(" + v + "))" : "u64(" + v + ")";
        line(wk + " = u32(" + p + ");");
        line(w + "[" + std::to_string(k + 1) + "] = u32(" + p + " >> 32);");
        break;
      }
      case Elem::F16:
        line(wk + " |= u32(__half_as_ushort(__float2half_rn(" + v + ")))" + s + ";");
        break;
      case Elem::BF16:
        line(wk + " |= (__float_as_uint(" + v + ") >> 16)" + s + ";");
        break;
      case Elem::U8:
        line(wk + " |= u32(" + v + ")" + s + ";");
        break;
      case Elem::Bool:
        line(wk + " |= (" + v + " ? 1u : 0u)" + s + ";");
        break;
    }
  }
  if (bytes == 4)
    line("reinterpret_cast<u32*>(" + mem + ")[" + idx + "] = " + w + "[0];");
  else if (bytes == 8)
    line("reinterpret_cast<uint2*>(" + mem + ")[" + idx + "] = make_uint2(" + w + "[0], " + w +
         "[1]);");
  else {
    const int q = bytes / 16;
    for (int j = 0; j < q; ++j) {
      const std::string b = std::to_string(4 * j);
      line("reinterpret_cast<uint4*>(" + mem + ")[" +
           (q == 1 ? idx : std::to_string(q) + "u * " + idx + " + " + std::to_string(j) + "u") +
           "] = make_uint4(" + w + "[" + b + "], " + w + "[" + std::to_string(4 * j + 1) + "], " +
           w + "[" + std::to_string(4 * j + 2) + "], " + w + "[" + std::to_string(4 * j + 3) +
           "]);");
    }
  }
}

void CudaEmitter::atomic(const Inst& i) {
  const Elem e = var(i.in[0]).type.elem;
  const std::string p = "&" + name(i.in[0]) + "[" + name(i.in[1]) + "]";
  const std::string v = name(i.in[2]);
  const auto op = static_cast<AtomicOp>(i.aux);
  std::string r;
  if (e == Elem::I64) {
    const std::string q = "reinterpret_cast<u64*>(" + p + ")";
    switch (op) {
      case AtomicOp::Add:
        r = "i64(atomicAdd(" + q + ", u64(" + v + ")))";
        break;
      case AtomicOp::Exchange:
        r = "i64(atomicExch(" + q + ", u64(" + v + ")))";
        break;
      case AtomicOp::CompareExchange:
        r = "i64(atomicCAS(" + q + ", u64(" + name(i.in[3]) + "), u64(" + v + ")))";
        break;
      default:
        break;
    }
  } else if (e == Elem::F32 && op == AtomicOp::CompareExchange) {
    r = "__uint_as_float(atomicCAS(reinterpret_cast<u32*>(" + p + "), __float_as_uint(" +
        name(i.in[3]) + "), __float_as_uint(" + v + ")))";
  } else if (e == Elem::F32 && (op == AtomicOp::Min || op == AtomicOp::Max)) {
    r = std::string(op == AtomicOp::Min ? "ek::atomic_extreme_f32<true>("
                                        : "ek::atomic_extreme_f32<false>(") +
        p + ", " + v + ")";
  } else {
    switch (op) {
      case AtomicOp::Add:
        r = "atomicAdd(" + p + ", " + v + ")";
        break;
      case AtomicOp::Min:
        r = "atomicMin(" + p + ", " + v + ")";
        break;
      case AtomicOp::Max:
        r = "atomicMax(" + p + ", " + v + ")";
        break;
      case AtomicOp::Exchange:
        r = "atomicExch(" + p + ", " + v + ")";
        break;
      case AtomicOp::CompareExchange:
        r = "atomicCAS(" + p + ", " + name(i.in[3]) + ", " + v + ")";
        break;
    }
  }
  define(i, {r});
}

void CudaEmitter::special(const Inst& i) {
  switch (i.op) {
    case Op::Load:
      load(i);
      return;
    case Op::Store:
      store(i);
      return;
    case Op::Atomic:
      atomic(i);
      return;
    case Op::Barrier:
      line("__syncthreads();");
      return;
    case Op::MatFill: {
      const Elem fe = var(i.in[0]).type.elem;
      const std::string v = fe == Elem::F32
                                ? name(i.in[1])
                                : (fe == Elem::F16 ? "__float2half_rn(" : "__float2bfloat16_rn(") +
                                      name(i.in[1]) + ")";
      line("nvcuda::wmma::fill_fragment(" + name(i.in[0]) + ", " + v + ");");
      return;
    }
    case Op::MatLoad: {
      const VarInfo& f = var(i.in[0]);
      std::string s = "nvcuda::wmma::load_matrix_sync(" + name(i.in[0]) + ", " + name(i.in[1]) +
                      " + " + name(i.in[2]) + ", " + name(i.in[3]);
      if (f.matrix.use == MatrixUse::Acc)
        s += static_cast<MatrixLayout>(i.aux) == MatrixLayout::RowMajor
                 ? ", nvcuda::wmma::mem_row_major"
                 : ", nvcuda::wmma::mem_col_major";
      line(s + ");");
      return;
    }
    case Op::MatStore:
      line("nvcuda::wmma::store_matrix_sync(" + name(i.in[0]) + " + " + name(i.in[1]) + ", " +
           name(i.in[3]) + ", " + name(i.in[2]) +
           (static_cast<MatrixLayout>(i.aux) == MatrixLayout::RowMajor
                ? ", nvcuda::wmma::mem_row_major"
                : ", nvcuda::wmma::mem_col_major") +
           ");");
      return;
    case Op::MatMma:
      line("nvcuda::wmma::mma_sync(" + name(i.in[0]) + ", " + name(i.in[1]) + ", " + name(i.in[2]) +
           ", " + name(i.in[3]) + ");");
      return;
    default:
      subgroup(i);
      return;
  }
}

}  // namespace

std::string generate_cuda(const Kernel& k) {
  verify(k);
  return CudaEmitter(k).generate();
}

}  // namespace ember::kernel
