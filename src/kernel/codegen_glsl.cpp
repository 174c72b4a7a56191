// The GLSL 4.50 compute generator (compiled to SPIR-V by shaderc, see src/vulkan/).
#include <climits>
#include <cmath>
#include <map>
#include <set>

#include "ember/kernel/codegen.hpp"
#include "emit_c.hpp"
#include "glsl_lib.hpp"

namespace ember::kernel {

namespace {

const char* storage_type(Elem e) {
  switch (e) {
    case Elem::F32:
      return "float";
    case Elem::F16:
    case Elem::BF16:
      return "uint16_t";
    case Elem::F64:
      return "double";
    case Elem::I32:
      return "int";
    case Elem::I64:
      return "int64_t";
    case Elem::U32:
      return "uint";
    case Elem::U8:
    case Elem::Bool:
      return "uint8_t";
  }
  return "?";
}

class GlslEmitter final : public detail::CEmitter {
 public:
  GlslEmitter(const Kernel& k, const GlslOptions& o) : CEmitter(k), o_(o) {}

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
        return "int";
      case Elem::I64:
        return "int64_t";
      case Elem::U32:
      case Elem::U8:
        return "uint";
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
        if (x != x) return "ember_nan";
        if (std::isinf(x)) return x > 0 ? "ember_inf" : "(-ember_inf)";
        return "(" + detail::float_text(x, "") + ")";
      }
      case Elem::F64:
        if (f != f) return "double(ember_nan)";
        if (std::isinf(f)) return f > 0 ? "double(ember_inf)" : "double(-ember_inf)";
        return "(" + detail::double_text(f, "lf") + ")";
      case Elem::I32:
        if (i == INT32_MIN) return "int(0x80000000u)";
        return "(" + std::to_string(i) + ")";
      case Elem::I64:
        if (i == INT64_MIN) return "int64_t(0x8000000000000000ul)";
        return "(" + std::to_string(i) + "l)";
      case Elem::U32:
      case Elem::U8:
        return std::to_string(static_cast<std::uint32_t>(i)) + "u";
      case Elem::Bool:
        return i ? "true" : "false";
    }
    return "?";
  }

  std::string round_half(Elem e, const std::string& x) const override {
    if (e == Elem::F16) return "ember_round_f16(" + x + ")";
    if (e == Elem::BF16) return "ember_round_bf16(" + x + ")";
    return x;
  }

  std::string declare(Elem e, const std::string& name, const std::string& expr) const override {
    // `precise`: no contraction of a * b + c across statements either
    return std::string(is_float(e) && !k().contract ? "precise " : "") + type(e) + " " + name +
           " = " + expr + ";";
  }
  std::string shuffle(const std::string& v, const std::string& lane, bool x) const override {
    return std::string(x ? "subgroupShuffleXor(" : "subgroupShuffle(") + v + ", " + lane + ")";
  }
  std::string butterfly_loop() const override {
    return "for (uint o = gl_SubgroupSize / 2u; o > 0u; o >>= 1u) {";
  }
  std::string combine(Op op, Elem e, const std::string& a, const std::string& b) const override {
    if (op == Op::SgMin || op == Op::SgMax) {
      const bool mn = op == Op::SgMin;
      if (is_float(e))
        return std::string(mn ? "ember_min_" : "ember_max_") + (e == Elem::F64 ? "f64(" : "f32(") +
               a + ", " + b + ")";
      return "(" + a + (mn ? " < " : " > ") + b + " ? " + a + " : " + b + ")";
    }
    if (is_float(e)) return round_half(e, "(" + a + " + " + b + ")");
    return e == Elem::U8 ? "((" + a + " + " + b + ") & 0xffu)" : "(" + a + " + " + b + ")";
  }
  void prologue() override;
  std::string builtin(const Inst& i) override;
  std::string pure(const Inst& i, int l) override;
  void special(const Inst& i) override;

 private:
  [[noreturn]] void unsupported(const std::string& what) const {
    ember::detail::fail<UnsupportedError>("glsl " + k().name, what);
  }
  std::string view(VarId b, int bytes) const {
    return name(b) + "_w" + std::to_string(bytes >= 16 ? 16 : bytes) + ".d";
  }
  std::string cast(Elem from, Elem to, const std::string& a) const;
  std::string bitcast(Elem from, Elem to, const std::string& a) const;
  void load(const Inst& i);
  void store(const Inst& i);
  void atomic(const Inst& i);
  void matrix(const Inst& i);

  GlslOptions o_;
  std::map<VarId, std::set<int>> views_;  // buffer -> wide access sizes (4, 8, 16)
  std::set<VarId> half_views_;            // buffers read as float16_t by coop-matrix loads
};

void GlslEmitter::prologue() {
  const Features f = features(k());
  // which wide views each buffer needs
  bool float_cas = false, sg64 = false;
  for_each_inst(k().body, [&](const Inst& i) {
    if ((i.op == Op::Load || i.op == Op::Store) && var(i.in[0]).kind == VarKind::Buffer) {
      const int lanes = type_of(i.op == Op::Load ? i.out : i.in[2]).lanes;
      const int bytes = lanes * elem_bytes(var(i.in[0]).type.elem);
      if (lanes > 1 && bytes >= 4) views_[i.in[0]].insert(bytes >= 16 ? 16 : bytes);
    }
    if (i.op == Op::Atomic && var(i.in[0]).type.elem == Elem::F32) {
      const auto op = static_cast<AtomicOp>(i.aux);
      if (op == AtomicOp::Min || op == AtomicOp::Max || op == AtomicOp::CompareExchange) {
        if (var(i.in[0]).kind != VarKind::Buffer)
          unsupported("f32 atomic min/max/compare-exchange on shared memory");
        views_[i.in[0]].insert(4);
        float_cas = true;
      }
    }
    if (i.op >= Op::SgSum && i.op <= Op::SgShuffleXor && i.out != kNoVar &&
        elem_bytes(type_of(i.out).elem) == 8)
      sg64 = true;
    if (i.op == Op::MatLoad || i.op == Op::MatStore) {
      const VarId mem = i.op == Op::MatLoad ? i.in[1] : i.in[0];
      if (var(mem).kind != VarKind::Buffer) unsupported("matrix loads/stores from shared memory");
      if (is_half(var(mem).type.elem)) half_views_.insert(mem);
    }
  });
  (void)float_cas;
  if ((f.u8) && !o_.int8) unsupported("8-bit buffers (the device lacks 8-bit storage)");
  if ((f.f16 || f.bf16) && !o_.int16)
    unsupported("16-bit buffers (the device lacks 16-bit storage)");
  if (f.f64_math) unsupported("transcendental functions on f64 (GLSL has none)");
  if (f.float_atomics && !o_.float_atomics) unsupported("f32 atomics");
  if (f.i64_atomics && !o_.int64_atomics) unsupported("i64 atomics");
  if (f.matrix && !o_.coop_matrix) unsupported("matrix units (no VK_NV_cooperative_matrix)");
  if (f.bf16 && f.matrix) unsupported("bf16 fragments (VK_NV_cooperative_matrix has none)");

  auto& os = out();
  os << "#version 450\n// ember kernel " << k().name << " (GLSL, generated)\n";
  if (f.i64) os << "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
  if (f.f16 || f.bf16) {
    os << "#extension GL_EXT_shader_16bit_storage : require\n";
    os << "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n";
  }
  if (f.u8) {
    os << "#extension GL_EXT_shader_8bit_storage : require\n";
    os << "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n";
  }
  if (f.subgroups) {
    os << "#extension GL_KHR_shader_subgroup_basic : require\n";
    os << "#extension GL_KHR_shader_subgroup_shuffle : require\n";
    if (sg64) os << "#extension GL_EXT_shader_subgroup_extended_types_int64 : require\n";
  }
  if (f.float_atomics) os << "#extension GL_EXT_shader_atomic_float : require\n";
  if (f.i64_atomics) os << "#extension GL_EXT_shader_atomic_int64 : require\n";
  if (f.matrix) {
    os << "#extension GL_NV_cooperative_matrix : require\n";
    os << "#extension GL_KHR_memory_scope_semantics : require\n";
    os << "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n";
  }
  // SPV_KHR_float_controls: keep f32 subnormals (DenormPreserve) and NaN/inf/-0 semantics
  // (SignedZeroInfNanPreserve) where the device offers them.
  if (o_.denorm_preserve || o_.nan_preserve) os << "#extension GL_EXT_spirv_intrinsics : require\n";
  if (o_.denorm_preserve)
    os << "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4464], "
          "4459, 32);\n";
  if (o_.nan_preserve)
    os << "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4466], "
          "4461, 32);\n";
  const auto& wg = k().workgroup;
  os << "layout(local_size_x = " << wg[0] << ", local_size_y = " << wg[1]
     << ", local_size_z = " << wg[2] << ") in;\n";
  int binding = 0;
  for (VarId a : k().args) {
    const VarInfo& v = var(a);
    if (v.kind != VarKind::Buffer) continue;
    const char* q = v.access == Access::Read    ? "readonly "
                    : v.access == Access::Write ? "writeonly "
                                                : "";
    const std::string lay =
        "layout(std430, set = 0, binding = " + std::to_string(binding) + ") " + q + "buffer ";
    os << lay << "B" << a << " { " << storage_type(v.type.elem) << " d[]; } " << name(a) << ";\n";
    for (int w : views_[a])
      os << lay << "B" << a << "_w" << w << " { "
         << (w == 4   ? "uint"
             : w == 8 ? "uvec2"
                      : "uvec4")
         << " d[]; } " << name(a) << "_w" << w << ";\n";
    if (half_views_.count(a))
      os << lay << "B" << a << "_h { float16_t d[]; } " << name(a) << "_h;\n";
    ++binding;
  }
  os << "layout(std430, set = 0, binding = " << binding
     << ") readonly buffer EmberInfo { uint w[]; } info;\n";
  for (VarId id = 0; id < k().vars.size(); ++id) {
    const VarInfo& v = var(id);
    if (v.kind == VarKind::Shared)
      os << "shared " << type(v.type.elem) << " " << name(id) << "[" << v.length << "];\n";
  }
  os << detail::glsl_library(f.i64, f.f64);
  os << "void main() {\n";
  for (VarId a : k().args) {
    const VarInfo& v = var(a);
    if (v.kind != VarKind::Scalar) continue;
    const std::uint32_t o = info_offset(a);
    const std::string w = "info.w[" + std::to_string(o) + "]",
                      w2 = "info.w[" + std::to_string(o + 1) + "]";
    std::string e;
    switch (v.type.elem) {
      case Elem::F32:
      case Elem::F16:
      case Elem::BF16:
        e = "uintBitsToFloat(" + w + ")";
        break;
      case Elem::F64:
        e = "packDouble2x32(uvec2(" + w + ", " + w2 + "))";
        break;
      case Elem::I64:
        e = "int64_t((uint64_t(" + w2 + ") << 32) | uint64_t(" + w + "))";
        break;
      case Elem::I32:
        e = "int(" + w + ")";
        break;
      case Elem::U32:
      case Elem::U8:
        e = w;
        break;
      case Elem::Bool:
        e = "(" + w + " != 0u)";
        break;
    }
    line(type(v.type.elem) + " " + name(a) + " = " + e + ";");
  }
  for (VarId id = 0; id < k().vars.size(); ++id) {
    const VarInfo& v = var(id);
    if (v.kind == VarKind::Local) {
      line(type(v.type.elem) + " " + name(id) + "[" + std::to_string(v.length) + "];");
    } else if (v.kind == VarKind::Mutable) {
      for (int l = 0; l < v.type.lanes; ++l)
        line(type(v.type.elem) + " " + name(id, l) + " = " + literal(v.type.elem, 0, 0) + ";");
    } else if (v.kind == VarKind::Matrix) {
      const int bits = v.type.elem == Elem::F32 ? 32 : 16;
      line("fcoopmatNV<" + std::to_string(bits) + ", gl_ScopeSubgroup, 16, 16> " + name(id) + ";");
    }
  }
}

std::string GlslEmitter::builtin(const Inst& i) {
  static const char* xyz[] = {"x", "y", "z"};
  const std::string ax = xyz[i.aux % 3];
  switch (i.op) {
    case Op::ThreadIdx:
      return "gl_LocalInvocationID." + ax;
    case Op::BlockIdx:
      return "gl_WorkGroupID." + ax;
    case Op::BlockDim:
      return std::to_string(k().workgroup[i.aux % 3]) + "u";
    case Op::GridDim:
      return "gl_NumWorkGroups." + ax;
    case Op::GlobalIdx:
      return "gl_GlobalInvocationID." + ax;
    case Op::LocalLinearIdx:
      return "gl_LocalInvocationIndex";
    case Op::AbsolutePos:
      return "((gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * "
             "gl_WorkGroupID.z)) * " +
             std::to_string(k().workgroup_threads()) + "u + gl_LocalInvocationIndex)";
    case Op::SubgroupSize:
      return "gl_SubgroupSize";
    case Op::LaneId:
      return "gl_SubgroupInvocationID";
    default:
      break;
  }
  const std::uint32_t o = info_offset(i.in[0]);
  if (i.op == Op::BufLen) return "info.w[" + std::to_string(o) + "]";
  const std::uint32_t base = i.op == Op::BufShape ? o + 1 : o + 1 + var(i.in[0]).rank;
  const VarInfo& d = var(i.in[1]);
  if (d.kind == VarKind::Constant) return "info.w[" + std::to_string(base + d.i) + "]";
  return "info.w[" + std::to_string(base) + "u + " + name(i.in[1]) + "]";
}

std::string GlslEmitter::pure(const Inst& i, int l) {
  if (std::string c = common_expr(i, l); !c.empty()) return c;
  const Elem e = type_of(i.out).elem;
  const Elem ae = type_of(i.in[0]).elem;
  const std::string a = name(i.in[0], l);
  const std::string b = i.in[1] != kNoVar ? name(i.in[1], l) : "";
  const std::string c = i.in[2] != kNoVar ? name(i.in[2], l) : "";
  const bool f64 = ae == Elem::F64;
  const bool u8 = ae == Elem::U8;
  const std::string sfx = ae == Elem::I32   ? "i32"
                          : ae == Elem::I64 ? "i64"
                          : ae == Elem::U8  ? "u8"
                                            : "u32";
  const auto wrap8 = [&](const std::string& x) { return u8 ? "((" + x + ") & 0xffu)" : x; };
  std::string r;
  switch (i.op) {
    case Op::Neg:
      r = wrap8("(-" + a + ")");
      break;
    case Op::Abs:
      r = is_float(ae)        ? "abs(" + a + ")"
          : is_signed_int(ae) ? "(" + a + " < " + literal(ae, 0, 0) + " ? -" + a + " : " + a + ")"
                              : a;
      break;
    case Op::BitNot:
      r = wrap8("(~" + a + ")");
      break;
    case Op::Sqrt:
      r = "sqrt(" + a + ")";
      break;
    case Op::Exp:
      r = "ember_exp_f32(" + a + ")";
      break;
    case Op::Log:
      r = "ember_log_f32(" + a + ")";
      break;
    case Op::Log1p:
      r = "ember_log1p_f32(" + a + ")";
      break;
    case Op::Tanh:
      r = "ember_tanh_f32(" + a + ")";
      break;
    case Op::Erf:
      r = "ember_erf_f32(" + a + ")";
      break;
    case Op::Sin:
      r = "ember_sin_f32(" + a + ")";
      break;
    case Op::Cos:
      r = "ember_cos_f32(" + a + ")";
      break;
    case Op::Floor:
      r = "floor(" + a + ")";
      break;
    case Op::Ceil:
      r = "ceil(" + a + ")";
      break;
    case Op::Round:
      r = "roundEven(" + a + ")";
      break;
    case Op::Trunc:
      r = "trunc(" + a + ")";
      break;
    case Op::Recip:
      r = f64 ? "(1.0lf / " + a + ")" : "ember_div_f32(1.0, " + a + ")";
      break;
    case Op::IsNan:
      r = "isnan(" + a + ")";
      break;
    case Op::IsInf:
      r = "isinf(" + a + ")";
      break;
    case Op::Add:
      r = wrap8("(" + a + " + " + b + ")");
      break;
    case Op::Sub:
      r = wrap8("(" + a + " - " + b + ")");
      break;
    case Op::Mul:
      r = wrap8("(" + a + " * " + b + ")");
      break;
    case Op::Div:
      r = !is_float(ae) ? "ember_div_" + std::string(u8 ? "u32" : sfx) + "(" + a + ", " + b + ")"
          : f64         ? "(" + a + " / " + b + ")"
                        : "ember_div_f32(" + a + ", " + b + ")";
      break;
    case Op::Rem:
      r = is_float(ae) ? std::string(f64 ? "ember_rem_f64(" : "ember_rem_f32(") + a + ", " + b + ")"
                       : "ember_rem_" + std::string(u8 ? "u32" : sfx) + "(" + a + ", " + b + ")";
      break;
    case Op::Min:
    case Op::Max: {
      const bool mn = i.op == Op::Min;
      if (is_float(ae))
        r = std::string(mn ? "ember_min_" : "ember_max_") + (f64 ? "f64(" : "f32(") + a + ", " + b +
            ")";
      else
        r = "(" + a + (mn ? " < " : " > ") + b + " ? " + a + " : " + b + ")";
      break;
    }
    case Op::Pow:
      r = "ember_pow_f32(" + a + ", " + b + ")";
      break;
    case Op::BitAnd:
      r = "(" + a + " & " + b + ")";
      break;
    case Op::BitOr:
      r = "(" + a + " | " + b + ")";
      break;
    case Op::BitXor:
      r = "(" + a + " ^ " + b + ")";
      break;
    case Op::Shl:
      r = "ember_shl_" + sfx + "(" + a + ", " + b + ")";
      break;
    case Op::Shr:
      r = "ember_shr_" + sfx + "(" + a + ", " + b + ")";
      break;
    case Op::Fma:
      r = "fma(" + a + ", " + b + ", " + c + ")";
      break;
    case Op::Cast:
      r = cast(ae, e, a);
      break;
    case Op::Bitcast:
      return bitcast(ae, e, a);
    default:
      return "0";
  }
  return is_half(e) ? round_half(e, r) : r;
}

std::string GlslEmitter::cast(Elem from, Elem to, const std::string& a) const {
  if (to == Elem::Bool) return "(" + a + " != " + literal(from, 0, 0) + ")";
  if (from == Elem::Bool) return type(to) + "(" + a + ")";
  if (is_float(from) && is_int(to)) {
    const char* f = to == Elem::I32   ? "ember_f2i32("
                    : to == Elem::I64 ? "ember_f2i64("
                    : to == Elem::U32 ? "ember_f2u32("
                                      : "ember_f2u8(";
    return f + a + ")";
  }
  if (to == Elem::U8) return "(uint(" + a + ") & 0xffu)";
  return type(to) + "(" + a + ")";
}

std::string GlslEmitter::bitcast(Elem from, Elem to, const std::string& a) const {
  if (to == Elem::F32)
    return from == Elem::U32 ? "uintBitsToFloat(" + a + ")" : "intBitsToFloat(" + a + ")";
  if (from == Elem::F32)
    return to == Elem::U32 ? "floatBitsToUint(" + a + ")" : "floatBitsToInt(" + a + ")";
  if (to == Elem::F64) return "int64BitsToDouble(" + a + ")";
  if (from == Elem::F64) return "doubleBitsToInt64(" + a + ")";
  return type(to) + "(" + a + ")";
}

/// Lane l of a vector of `e` in the 32-bit words `w`.
std::string unpack_glsl(Elem e, const std::string& w, int l) {
  const int off = l * elem_bytes(e), k = off / 4, sh = (off % 4) * 8;
  const std::string wk = w + "[" + std::to_string(k) + "]",
                    wk1 = w + "[" + std::to_string(k + 1) + "]";
  const std::string part = "((" + wk + " >> " + std::to_string(sh) + "u)";
  switch (e) {
    case Elem::F32:
      return "uintBitsToFloat(" + wk + ")";
    case Elem::I32:
      return "int(" + wk + ")";
    case Elem::U32:
      return wk;
    case Elem::F64:
      return "packDouble2x32(uvec2(" + wk + ", " + wk1 + "))";
    case Elem::I64:
      return "int64_t((uint64_t(" + wk1 + ") << 32) | uint64_t(" + wk + "))";
    case Elem::F16:
      return "ember_f16_to_f32(" + part + " & 0xffffu))";
    case Elem::BF16:
      return "uintBitsToFloat(" + part + " & 0xffffu) << 16)";
    case Elem::U8:
      return part + " & 0xffu)";
    case Elem::Bool:
      return "(" + part + " & 0xffu) != 0u)";
  }
  return "0";
}

void GlslEmitter::load(const Inst& i) {
  const VarId m = i.in[0];
  const Elem e = var(m).type.elem;
  const int lanes = type_of(i.out).lanes;
  const std::string idx = name(i.in[1]);
  const bool buf = var(m).kind == VarKind::Buffer;
  const std::string mem = buf ? name(m) + ".d" : name(m);
  const int bytes = lanes * elem_bytes(e);
  const auto scalar = [&](const std::string& ref) {
    if (!buf) return ref;
    switch (e) {
      case Elem::F16:
        return "ember_f16_to_f32(uint(" + ref + "))";
      case Elem::BF16:
        return "uintBitsToFloat(uint(" + ref + ") << 16)";
      case Elem::U8:
        return "uint(" + ref + ")";
      case Elem::Bool:
        return "(" + ref + " != uint8_t(0))";
      default:
        return ref;
    }
  };
  std::vector<std::string> l;
  if (lanes == 1 || bytes < 4 || !buf) {
    for (int x = 0; x < lanes; ++x)
      l.push_back(scalar(
          mem + "[" +
          (lanes == 1 ? idx : idx + " * " + std::to_string(lanes) + " + " + std::to_string(x)) +
          "]"));
    define(i, l);
    return;
  }
  const std::string w = fresh("w");
  if (bytes == 4) {
    line("uint " + w + "[1] = uint[1](" + view(m, 4) + "[" + idx + "]);");
  } else if (bytes == 8) {
    const std::string t = fresh("t");
    line("uvec2 " + t + " = " + view(m, 8) + "[" + idx + "];");
    line("uint " + w + "[2] = uint[2](" + t + ".x, " + t + ".y);");
  } else {  // 16, 32 or 64 bytes: uvec4 loads
    const int q = bytes / 16;
    const std::string t = fresh("t");
    std::string init;
    for (int j = 0; j < q; ++j) {
      const std::string tj = t + std::to_string(j);
      line("uvec4 " + tj + " = " + view(m, 16) + "[" +
           (q == 1 ? idx : std::to_string(q) + "u * " + idx + " + " + std::to_string(j) + "u") +
           "];");
      init += (j ? ", " : "") + tj + ".x, " + tj + ".y, " + tj + ".z, " + tj + ".w";
    }
    line("uint " + w + "[" + std::to_string(bytes / 4) + "] = uint[" + std::to_string(bytes / 4) +
         "](" + init + ");");
  }
  for (int x = 0; x < lanes; ++x) l.push_back(unpack_glsl(e, w, x));
  define(i, l);
}

void GlslEmitter::store(const Inst& i) {
  const VarId m = i.in[0], val = i.in[2];
  const Elem e = var(m).type.elem;
  const int lanes = type_of(val).lanes;
  const std::string idx = name(i.in[1]);
  const bool buf = var(m).kind == VarKind::Buffer;
  const std::string mem = buf ? name(m) + ".d" : name(m);
  const int bytes = lanes * elem_bytes(e);
  const auto scalar = [&](const std::string& v) {
    if (!buf) return v;
    switch (e) {
      case Elem::F16:
        return "uint16_t(ember_f16_bits(" + v + "))";
      case Elem::BF16:
        return "uint16_t(floatBitsToUint(" + v + ") >> 16)";
      case Elem::U8:
        return "uint8_t(" + v + ")";
      case Elem::Bool:
        return "uint8_t(" + v + " ? 1 : 0)";
      default:
        return v;
    }
  };
  if (lanes == 1 || bytes < 4 || !buf) {
    for (int x = 0; x < lanes; ++x)
      line(mem + "[" +
           (lanes == 1 ? idx : idx + " * " + std::to_string(lanes) + " + " + std::to_string(x)) +
           "] = " + scalar(name(val, x)) + ";");
    return;
  }
  const int words = bytes / 4;
  const std::string w = fresh("w");
  line("uint " + w + "[" + std::to_string(words) + "];");
  for (int k = 0; k < words; ++k) line(w + "[" + std::to_string(k) + "] = 0u;");
  for (int x = 0; x < lanes; ++x) {
    const int off = x * elem_bytes(e), k = off / 4, sh = (off % 4) * 8;
    const std::string v = name(val, x), wk = w + "[" + std::to_string(k) + "]";
    const std::string s = " << " + std::to_string(sh) + "u";
    switch (e) {
      case Elem::F32:
        line(wk + " = floatBitsToUint(" + v + ");");
        break;
      case Elem::I32:
        line(wk + " = uint(" + v + ");");
        break;
      case Elem::U32:
        line(wk + " = " + v + ";");
        break;
      case Elem::F64: {
        const std::string t = fresh("d");
        line("uvec2 " + t + " = unpackDouble2x32(" + v + ");");
        line(wk + " = " + t + ".x;");
        line(w + "[" + std::to_string(k + 1) + "] = " + t + ".y;");
        break;
      }
      case Elem::I64:
        line(wk + " = uint(uint64_t(" + v + ") & 0xfffffffful);");
        line(w + "[" + std::to_string(k + 1) + "] = uint(uint64_t(" + v + ") >> 32);");
        break;
      case Elem::F16:
        line(wk + " |= ember_f16_bits(" + v + ")" + s + ";");
        break;
      case Elem::BF16:
        line(wk + " |= (floatBitsToUint(" + v + ") >> 16)" + s + ";");
        break;
      case Elem::U8:
        line(wk + " |= (" + v + " & 0xffu)" + s + ";");
        break;
      case Elem::Bool:
        line(wk + " |= (" + v + " ? 1u : 0u)" + s + ";");
        break;
    }
  }
  if (bytes == 4)
    line(view(m, 4) + "[" + idx + "] = " + w + "[0];");
  else if (bytes == 8)
    line(view(m, 8) + "[" + idx + "] = uvec2(" + w + "[0], " + w + "[1]);");
  else {
    const int q = bytes / 16;
    for (int j = 0; j < q; ++j)
      line(view(m, 16) + "[" +
           (q == 1 ? idx : std::to_string(q) + "u * " + idx + " + " + std::to_string(j) + "u") +
           "] = uvec4(" + w + "[" + std::to_string(4 * j) + "], " + w + "[" +
           std::to_string(4 * j + 1) + "], " + w + "[" + std::to_string(4 * j + 2) + "], " + w +
           "[" + std::to_string(4 * j + 3) + "]);");
  }
}

void GlslEmitter::atomic(const Inst& i) {
  const VarId m = i.in[0];
  const Elem e = var(m).type.elem;
  const bool buf = var(m).kind == VarKind::Buffer;
  const std::string ref = (buf ? name(m) + ".d" : name(m)) + "[" + name(i.in[1]) + "]";
  const std::string v = name(i.in[2]);
  const auto op = static_cast<AtomicOp>(i.aux);
  if (e == Elem::F32 && (op == AtomicOp::Min || op == AtomicOp::Max)) {
    const std::string u = view(m, 4) + "[" + name(i.in[1]) + "]";
    const std::string o = fresh("o"), n = fresh("n"), p = fresh("p");
    line("uint " + o + " = " + u + ";");
    line("while (true) {");
    line("  uint " + n + " = floatBitsToUint(" +
         (op == AtomicOp::Min ? "ember_min_f32(" : "ember_max_f32(") + "uintBitsToFloat(" + o +
         "), " + v + "));");
    line("  uint " + p + " = atomicCompSwap(" + u + ", " + o + ", " + n + ");");
    line("  if (" + p + " == " + o + ") break;");
    line("  " + o + " = " + p + ";");
    line("}");
    define(i, {"uintBitsToFloat(" + o + ")"});
    return;
  }
  std::string r;
  switch (op) {
    case AtomicOp::Add:
      r = "atomicAdd(" + ref + ", " + v + ")";
      break;
    case AtomicOp::Min:
      r = "atomicMin(" + ref + ", " + v + ")";
      break;
    case AtomicOp::Max:
      r = "atomicMax(" + ref + ", " + v + ")";
      break;
    case AtomicOp::Exchange:
      r = "atomicExchange(" + ref + ", " + v + ")";
      break;
    case AtomicOp::CompareExchange:
      if (e == Elem::F32)
        r = "uintBitsToFloat(atomicCompSwap(" + view(m, 4) + "[" + name(i.in[1]) +
            "], floatBitsToUint(" + name(i.in[3]) + "), floatBitsToUint(" + v + ")))";
      else
        r = "atomicCompSwap(" + ref + ", " + name(i.in[3]) + ", " + v + ")";
      break;
  }
  define(i, {r});
}

void GlslEmitter::matrix(const Inst& i) {
  const auto coop = [&](VarId f) {
    const VarInfo& v = var(f);
    return "fcoopmatNV<" + std::string(v.type.elem == Elem::F32 ? "32" : "16") +
           ", gl_ScopeSubgroup, 16, 16>";
  };
  const auto buffer = [&](VarId mem) {
    return is_half(var(mem).type.elem) ? name(mem) + "_h.d" : name(mem) + ".d";
  };
  const auto col = [&](std::uint32_t aux) {
    return static_cast<MatrixLayout>(aux) == MatrixLayout::ColMajor ? "true" : "false";
  };
  switch (i.op) {
    case Op::MatFill: {
      const Elem fe = var(i.in[0]).type.elem;
      const std::string v = fe == Elem::F32 ? name(i.in[1]) : "float16_t(" + name(i.in[1]) + ")";
      line(name(i.in[0]) + " = " + coop(i.in[0]) + "(" + v + ");");
      return;
    }
    case Op::MatLoad:
      line("coopMatLoadNV(" + name(i.in[0]) + ", " + buffer(i.in[1]) + ", " + name(i.in[2]) + ", " +
           name(i.in[3]) + ", " + col(i.aux) + ");");
      return;
    case Op::MatStore:
      line("coopMatStoreNV(" + name(i.in[3]) + ", " + buffer(i.in[0]) + ", " + name(i.in[1]) +
           ", " + name(i.in[2]) + ", " + col(i.aux) + ");");
      return;
    default:
      line(name(i.in[0]) + " = coopMatMulAddNV(" + name(i.in[1]) + ", " + name(i.in[2]) + ", " +
           name(i.in[3]) + ");");
      return;
  }
}

void GlslEmitter::special(const Inst& i) {
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
      line("memoryBarrierShared();");
      line("memoryBarrierBuffer();");
      line("barrier();");
      return;
    case Op::MatFill:
    case Op::MatLoad:
    case Op::MatStore:
    case Op::MatMma:
      matrix(i);
      return;
    default:
      subgroup(i);
      return;
  }
}

}  // namespace

std::string generate_glsl(const Kernel& k, const GlslOptions& options) {
  verify(k);
  return GlslEmitter(k, options).generate();
}

}  // namespace ember::kernel
