// The IR's tables (names, purity), feature detection and the verifier.
#include "ember/kernel/ir.hpp"

#include <string>
#include <unordered_set>

namespace ember::kernel {

std::string_view elem_name(Elem e) {
  switch (e) {
    case Elem::F32:
      return "f32";
    case Elem::F16:
      return "f16";
    case Elem::BF16:
      return "bf16";
    case Elem::F64:
      return "f64";
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

Elem elem_of(DType d) {
  switch (d) {
    case DType::F32:
      return Elem::F32;
    case DType::F16:
      return Elem::F16;
    case DType::BF16:
      return Elem::BF16;
    case DType::F64:
      return Elem::F64;
    case DType::I32:
      return Elem::I32;
    case DType::I64:
      return Elem::I64;
    case DType::U8:
      return Elem::U8;
    case DType::Bool:
      return Elem::Bool;
    default:
      break;
  }
  detail::fail<UnsupportedError>("kernel", "dtype ", d, " has no kernel element type");
}

std::string type_name(Type t) {
  std::string s(elem_name(t.elem));
  if (t.lanes > 1) {
    s += 'x';
    s += std::to_string(t.lanes);
  }
  return s;
}

namespace {

struct OpInfo {
  const char* name;
  bool pure;
};

constexpr OpInfo kOps[] = {
    {"thread_idx", true},
    {"block_idx", true},
    {"block_dim", true},
    {"grid_dim", true},
    {"global_idx", true},
    {"local_linear_idx", true},
    {"absolute_pos", true},
    {"subgroup_size", true},
    {"lane_id", true},
    {"buf_len", true},
    {"buf_shape", true},
    {"buf_stride", true},
    {"neg", true},
    {"abs", true},
    {"not", true},
    {"bit_not", true},
    {"sqrt", true},
    {"exp", true},
    {"log", true},
    {"log1p", true},
    {"tanh", true},
    {"erf", true},
    {"sin", true},
    {"cos", true},
    {"floor", true},
    {"ceil", true},
    {"round", true},
    {"trunc", true},
    {"recip", true},
    {"is_nan", true},
    {"is_inf", true},
    {"add", true},
    {"sub", true},
    {"mul", true},
    {"div", true},
    {"rem", true},
    {"min", true},
    {"max", true},
    {"pow", true},
    {"and", true},
    {"or", true},
    {"bit_and", true},
    {"bit_or", true},
    {"bit_xor", true},
    {"shl", true},
    {"shr", true},
    {"eq", true},
    {"ne", true},
    {"lt", true},
    {"le", true},
    {"gt", true},
    {"ge", true},
    {"select", true},
    {"fma", true},
    {"cast", true},
    {"bitcast", true},
    {"splat", true},
    {"extract", true},
    {"insert", true},
    {"load", false},
    {"store", false},
    {"read", false},
    {"assign", false},
    {"atomic", false},
    {"if", false},
    {"for", false},
    {"loop", false},
    {"break", false},
    {"return", false},
    {"barrier", false},
    {"if_in_bounds", false},
    {"subgroup_sum", false},
    {"subgroup_min", false},
    {"subgroup_max", false},
    {"subgroup_all", false},
    {"subgroup_any", false},
    {"subgroup_broadcast", false},
    {"shuffle", false},
    {"shuffle_xor", false},
    {"mat_fill", false},
    {"mat_load", false},
    {"mat_store", false},
    {"mat_mma", false},
};
static_assert(std::size(kOps) == static_cast<std::size_t>(Op::Count_), "op table out of date");

[[noreturn]] void bad(const Kernel& k, const Inst& i, const std::string& what) {
  detail::fail<ValueError>("kernel " + k.name, op_name(i.op), ": ", what);
}

// Definitions visible at a point: a stack of scopes.
struct Verifier {
  const Kernel& k;
  std::vector<std::unordered_set<VarId>> scopes;

  bool defined(VarId v) const {
    for (const auto& s : scopes)
      if (s.count(v)) return true;
    return false;
  }
  void use(const Inst& i, VarId v) {
    if (v == kNoVar) return;
    if (v >= k.vars.size()) bad(k, i, "operand " + std::to_string(v) + " does not exist");
    const VarInfo& info = k.vars[v];
    if (info.kind == VarKind::Value && !defined(v))
      bad(k, i,
          "value %" + std::to_string(v) +
              " is used outside the block that defines it (carry it out through a Var)");
  }
  void expect_kind(const Inst& i, VarId v, std::initializer_list<VarKind> kinds, const char* what) {
    for (VarKind kd : kinds)
      if (k.vars.at(v).kind == kd) return;
    bad(k, i, std::string("operand %") + std::to_string(v) + " is not " + what);
  }
  void block(const Block& b, int loop_depth) {
    scopes.emplace_back();
    for (const Inst& i : b) {
      for (VarId v : i.in) use(i, v);
      switch (i.op) {
        case Op::Load:
        case Op::Store:
          expect_kind(i, i.in[0], {VarKind::Buffer, VarKind::Shared, VarKind::Local},
                      "a buffer, shared or local array");
          break;
        case Op::Atomic:
          expect_kind(i, i.in[0], {VarKind::Buffer, VarKind::Shared}, "a buffer or shared array");
          break;
        case Op::Read:
        case Op::Assign:
          expect_kind(i, i.in[0], {VarKind::Mutable}, "a mutable variable");
          break;
        case Op::BufLen:
        case Op::BufShape:
        case Op::BufStride:
          expect_kind(i, i.in[0], {VarKind::Buffer}, "a buffer");
          break;
        case Op::Break:
          if (loop_depth == 0) bad(k, i, "break outside a loop");
          break;
        default:
          break;
      }
      if (i.op == Op::For) {
        scopes.emplace_back();
        scopes.back().insert(i.out);
        block(i.blocks.at(0), loop_depth + 1);
        scopes.pop_back();
      } else {
        const int depth = loop_depth + (i.op == Op::Loop ? 1 : 0);
        for (const Block& c : i.blocks) block(c, depth);
        if (i.out != kNoVar) scopes.back().insert(i.out);
      }
    }
    scopes.pop_back();
  }
};

}  // namespace

const char* op_name(Op op) {
  return kOps[static_cast<int>(op)].name;
}
bool is_pure(Op op) {
  return kOps[static_cast<int>(op)].pure;
}

Features features(const Kernel& k) {
  Features f;
  for (const VarInfo& v : k.vars) {
    switch (v.type.elem) {
      case Elem::F16:
        f.f16 = true;
        break;
      case Elem::BF16:
        f.bf16 = true;
        break;
      case Elem::F64:
        f.f64 = true;
        break;
      case Elem::I64:
        f.i64 = true;
        break;
      case Elem::U8:
      case Elem::Bool:
        if (v.kind == VarKind::Buffer || v.kind == VarKind::Shared) f.u8 = true;
        break;
      default:
        break;
    }
    if (v.kind == VarKind::Shared) f.shared = true;
    if (v.kind == VarKind::Matrix) f.matrix = true;
  }
  for_each_inst(k.body, [&](const Inst& i) {
    switch (i.op) {
      case Op::Atomic: {
        f.atomics = true;
        const Elem e = k.vars[i.in[0]].type.elem;
        if (is_float(e)) f.float_atomics = true;
        if (e == Elem::I64) f.i64_atomics = true;
        break;
      }
      case Op::Barrier:
        f.barrier = true;
        break;
      case Op::SgSum:
      case Op::SgMin:
      case Op::SgMax:
      case Op::SgAll:
      case Op::SgAny:
      case Op::SgBroadcast:
      case Op::SgShuffle:
      case Op::SgShuffleXor:
      case Op::SubgroupSize:
      case Op::LaneId:
        f.subgroups = true;
        break;
      case Op::Exp:
      case Op::Log:
      case Op::Log1p:
      case Op::Tanh:
      case Op::Erf:
      case Op::Sin:
      case Op::Cos:
      case Op::Pow:
        if (k.vars[i.out].type.elem == Elem::F64) f.f64_math = true;
        break;
      default:
        break;
    }
  });
  return f;
}

void verify(const Kernel& k) {
  for (VarId a : k.args) {
    const VarKind kd = k.vars.at(a).kind;
    if (kd != VarKind::Buffer && kd != VarKind::Scalar)
      detail::fail<ValueError>("kernel " + k.name, "argument %", a, " is not a buffer or scalar");
  }
  for (std::uint32_t w : k.workgroup)
    if (w == 0) detail::fail<ValueError>("kernel " + k.name, "workgroup size has a zero dimension");
  Verifier v{k, {}};
  v.block(k.body, 0);
}

std::uint64_t hash64(std::string_view s, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  // final avalanche (splitmix64's finaliser) so that nearby inputs spread over all bits
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

}  // namespace ember::kernel
