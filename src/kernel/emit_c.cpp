// Shared walker of the CUDA and GLSL generators.
#include "emit_c.hpp"

#include <algorithm>
#include <cstdio>

namespace ember::kernel::detail {

namespace {
std::string with_point(std::string s) {
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}
}  // namespace

std::string float_text(float f, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  return with_point(buf) + suffix;
}

std::string double_text(double d, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return with_point(buf) + suffix;
}

std::string CEmitter::generate() {
  prologue();
  block(k_.body);
  epilogue();
  return out_.str();
}

std::string CEmitter::name(VarId v, int lane) const {
  const VarInfo& i = k_.vars[v];
  if (i.kind == VarKind::Constant) return literal(i.type.elem, i.f, i.i);
  std::string n;
  switch (i.kind) {
    case VarKind::Mutable:
      n = "m";
      break;
    case VarKind::Shared:
      return "s" + std::to_string(v);
    case VarKind::Local:
      return "l" + std::to_string(v);
    case VarKind::Buffer:
      return "b" + std::to_string(v);
    case VarKind::Matrix:
      return "f" + std::to_string(v);
    default:
      n = "v";
      break;
  }
  n += std::to_string(v);
  if (i.type.lanes > 1) n += "_" + std::to_string(std::min<int>(lane, i.type.lanes - 1));
  return n;
}

void CEmitter::line(const std::string& s) {
  out_ << std::string(static_cast<std::size_t>(depth_) * 2, ' ') << s << "\n";
}

void CEmitter::define(const Inst& i, const std::vector<std::string>& lanes) {
  const Elem e = type_of(i.out).elem;
  for (std::size_t l = 0; l < lanes.size(); ++l)
    line(declare(e, name(i.out, static_cast<int>(l)), lanes[l]));
}

std::uint32_t CEmitter::info_offset(VarId v) const {
  for (std::size_t a = 0; a < k_.args.size(); ++a)
    if (k_.args[a] == v) return layout_.offset[a];
  return 0;
}

void CEmitter::block(const Block& b) {
  for (const Inst& i : b) inst(i);
}

void CEmitter::inst(const Inst& i) {
  const auto nested = [&](const Block& b) {
    ++depth_;
    block(b);
    --depth_;
  };
  switch (i.op) {
    case Op::Read: {
      std::vector<std::string> l;
      for (int x = 0; x < type_of(i.out).lanes; ++x) l.push_back(name(i.in[0], x));
      define(i, l);
      return;
    }
    case Op::Assign:
      for (int x = 0; x < type_of(i.in[0]).lanes; ++x)
        line(name(i.in[0], x) + " = " + name(i.in[1], x) + ";");
      return;
    case Op::If:
      line("if (" + name(i.in[0]) + ") {");
      nested(i.blocks[0]);
      if (!i.blocks[1].empty()) {
        line("} else {");
        nested(i.blocks[1]);
      }
      line("}");
      return;
    case Op::IfInBounds:
      line("if (" + name(i.in[0]) + " < " + name(i.in[1]) + ") {");
      nested(i.blocks[0]);
      line("}");
      return;
    case Op::For: {
      const std::string v = name(i.out);
      line("for (" + type(type_of(i.out).elem) + " " + v + " = " + name(i.in[0]) + "; " + v +
           " < " + name(i.in[1]) + "; " + v + " += " + name(i.in[2]) + ") {");
      nested(i.blocks[0]);
      line("}");
      return;
    }
    case Op::Loop:
      line("while (true) {");
      nested(i.blocks[0]);
      line("}");
      return;
    case Op::Break:
      line("break;");
      return;
    case Op::Return:
      line("return;");
      return;
    default:
      break;
  }
  if (i.op <= Op::BufStride) {
    define(i, {builtin(i)});
  } else if (is_pure(i.op)) {
    std::vector<std::string> l;
    for (int x = 0; x < type_of(i.out).lanes; ++x) l.push_back(pure(i, x));
    define(i, l);
  } else {
    special(i);
  }
}

std::string CEmitter::common_expr(const Inst& i, int l) const {
  const auto arg = [&](int k) { return name(i.in[k], l); };
  const auto bin = [&](const char* op) { return "(" + arg(0) + " " + op + " " + arg(1) + ")"; };
  switch (i.op) {
    case Op::Not:
      return "(!" + arg(0) + ")";
    case Op::And:
      return bin("&&");
    case Op::Or:
      return bin("||");
    case Op::Eq:
      return bin("==");
    case Op::Ne:
      return bin("!=");
    case Op::Lt:
      return bin("<");
    case Op::Le:
      return bin("<=");
    case Op::Gt:
      return bin(">");
    case Op::Ge:
      return bin(">=");
    case Op::Select:
      return "(" + name(i.in[0], type_of(i.in[0]).lanes == 1 ? 0 : l) + " ? " + arg(1) + " : " +
             arg(2) + ")";
    case Op::Splat:
      return name(i.in[0], 0);
    case Op::Extract:
      return name(i.in[0], static_cast<int>(i.aux));
    case Op::Insert:
      return l == static_cast<int>(i.aux) ? name(i.in[1], 0) : arg(0);
    default:
      return "";
  }
}

void CEmitter::subgroup(const Inst& i) {
  const Type t = type_of(i.out);
  const Elem e = t.elem;
  std::vector<std::string> lanes;
  for (int x = 0; x < t.lanes; ++x) {
    const std::string v = name(i.in[0], x);
    if (i.op == Op::SgBroadcast || i.op == Op::SgShuffle || i.op == Op::SgShuffleXor) {
      lanes.push_back(shuffle(v, name(i.in[1]), i.op == Op::SgShuffleXor));
      continue;
    }
    // The partner's value goes into a temporary first: a shuffle inside a short-circuit or a
    // ternary would run in diverged lanes (undefined in GLSL, an illegal instruction in CUDA).
    const std::string r = fresh("r"), q = fresh("q");
    line(type(e) + " " + r + " = " + v + ";");
    std::string comb;
    if (i.op == Op::SgAll || i.op == Op::SgAny)
      comb = "(" + r + (i.op == Op::SgAll ? " && " : " || ") + q + ")";
    else
      comb = combine(i.op, e, r, q);
    line(butterfly_loop());
    line("  " + type(e) + " " + q + " = " + shuffle(r, "o", true) + ";");
    line("  " + r + " = " + comb + ";");
    line("}");
    lanes.push_back(r);
  }
  define(i, lanes);
}

}  // namespace ember::kernel::detail
