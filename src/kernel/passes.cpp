// Constant folding, common subexpressions, dead code and bounds-check elision.
#include "ember/kernel/passes.hpp"

#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "eval.hpp"

namespace ember::kernel {

namespace {

/// Rewrites operands through `repl` (resolving chains).
void apply_replacements(Block& b, const std::vector<VarId>& repl) {
  for (Inst& i : b) {
    for (VarId& v : i.in) {
      while (v != kNoVar && repl[v] != v) v = repl[v];
    }
    for (Block& c : i.blocks) apply_replacements(c, repl);
  }
}

std::vector<VarId> identity(const Kernel& k) {
  std::vector<VarId> r(k.vars.size());
  for (VarId i = 0; i < r.size(); ++i) r[i] = i;
  return r;
}

bool is_const(const Kernel& k, VarId v) {
  return v != kNoVar && k.vars[v].kind == VarKind::Constant;
}

template <Elem E>
eval::Reg<E> const_reg(const VarInfo& c) {
  if constexpr (E == Elem::F32 || E == Elem::F16 || E == Elem::BF16 || E == Elem::F64)
    return static_cast<eval::Reg<E>>(c.f);
  else
    return static_cast<eval::Reg<E>>(c.i);
}

template <class T>
void set_const(VarInfo& out, T v) {
  if constexpr (std::is_floating_point_v<T>)
    out.f = static_cast<double>(v);
  else
    out.i = static_cast<std::int64_t>(v);
}

class Folder {
 public:
  explicit Folder(Kernel& k) : k_(k), repl_(identity(k)) {}

  bool run() {
    block(k_.body);
    if (!changed_) return false;
    apply_replacements(k_.body, repl_);
    return true;
  }

 private:
  VarId make_const(const VarInfo& proto) {
    VarInfo v = proto;
    v.kind = VarKind::Constant;
    v.name.clear();
    k_.vars.push_back(v);
    repl_.push_back(static_cast<VarId>(k_.vars.size() - 1));
    return static_cast<VarId>(k_.vars.size() - 1);
  }
  void replace(VarId from, VarId to) {
    repl_[from] = to;
    changed_ = true;
  }
  VarId resolve(VarId v) const {
    while (v != kNoVar && v < repl_.size() && repl_[v] != v) v = repl_[v];
    return v;
  }

  void block(Block& b) {
    for (Inst& i : b) {
      for (VarId& v : i.in) v = resolve(v);
      if (i.out != kNoVar && is_pure(i.op)) inst(i);
      for (Block& c : i.blocks) block(c);
    }
  }

  void inst(const Inst& i) {
    const VarInfo& out = k_.vars[i.out];
    const Op op = i.op;
    const bool all_const = [&] {
      bool any = false;
      for (VarId v : i.in) {
        if (v == kNoVar) continue;
        if (!is_const(k_, v)) return false;
        any = true;
      }
      return any;
    }();
    if (op == Op::Select && is_const(k_, i.in[0]) && k_.vars[i.in[0]].type.lanes == 1) {
      replace(i.out, k_.vars[i.in[0]].i ? i.in[1] : i.in[2]);
      return;
    }
    if (!all_const) {
      simplify(i);
      return;
    }
    if (op == Op::Insert || op == Op::BufShape || op == Op::BufStride) return;
    VarInfo r = out;
    const VarInfo& a = k_.vars[i.in[0]];
    if (op == Op::Splat || op == Op::Extract) {
      r.f = a.f;
      r.i = a.i;
    } else if (op == Op::Cast) {
      eval::with_elem(a.type.elem, [&](auto from) {
        eval::with_elem(out.type.elem, [&](auto to) {
          set_const(r, eval::cast_elem<decltype(to)::value, decltype(from)::value>(
                           const_reg<decltype(from)::value>(a)));
        });
      });
    } else if (op == Op::Bitcast) {
      const bool from_float = is_float(a.type.elem);
      if (elem_bytes(a.type.elem) == 4) {
        std::uint32_t u;
        if (from_float) {
          const float f = static_cast<float>(a.f);
          std::memcpy(&u, &f, 4);
        } else {
          u = static_cast<std::uint32_t>(a.i);
        }
        if (out.type.elem == Elem::F32) {
          float f;
          std::memcpy(&f, &u, 4);
          r.f = f;
        } else {
          r.i = out.type.elem == Elem::I32 ? static_cast<std::int64_t>(static_cast<std::int32_t>(u))
                                           : static_cast<std::int64_t>(u);
        }
      } else {
        std::uint64_t u;
        if (from_float)
          std::memcpy(&u, &a.f, 8);
        else
          u = static_cast<std::uint64_t>(a.i);
        if (out.type.elem == Elem::F64)
          std::memcpy(&r.f, &u, 8);
        else
          r.i = static_cast<std::int64_t>(u);
      }
    } else if (eval::is_unary(op) || eval::is_binary(op) || op == Op::Fma) {
      eval::with_elem(a.type.elem, [&](auto e) {
        constexpr Elem E = decltype(e)::value;
        const auto x = const_reg<E>(a);
        if (op == Op::IsNan || op == Op::IsInf) {
          r.i = eval::Unary<E>::test(op, x);
        } else if (eval::is_unary(op)) {
          set_const(r, eval::Unary<E>::apply(op, x));
        } else if (op == Op::Fma) {
          if constexpr (std::is_floating_point_v<eval::Reg<E>>)
            set_const(
                r, eval::fma<E>(x, const_reg<E>(k_.vars[i.in[1]]), const_reg<E>(k_.vars[i.in[2]])));
        } else if (eval::is_compare(op)) {
          r.i = eval::Binary<E>::compare(op, x, const_reg<E>(k_.vars[i.in[1]]));
        } else {
          set_const(r, eval::Binary<E>::apply(op, x, const_reg<E>(k_.vars[i.in[1]])));
        }
      });
    } else {
      return;  // builtins, metadata, subgroup ops: not constant
    }
    replace(i.out, make_const(r));
  }

  bool const_is(VarId v, double x) const {
    if (!is_const(k_, v)) return false;
    const VarInfo& c = k_.vars[v];
    return is_float(c.type.elem) ? c.f == x : c.i == static_cast<std::int64_t>(x);
  }

  // Identities that keep exact results (no x + 0 for floats: -0 + 0 is +0).
  void simplify(const Inst& i) {
    const VarInfo& out = k_.vars[i.out];
    const bool integer = is_int(out.type.elem);
    const VarId a = i.in[0], b = i.in[1];
    switch (i.op) {
      case Op::Add:
        if (integer && const_is(b, 0))
          replace(i.out, a);
        else if (integer && const_is(a, 0))
          replace(i.out, b);
        break;
      case Op::Sub:
        if (integer && const_is(b, 0)) replace(i.out, a);
        break;
      case Op::Mul:
        if (const_is(b, 1) && k_.vars[a].type == out.type)
          replace(i.out, a);
        else if (const_is(a, 1) && k_.vars[b].type == out.type)
          replace(i.out, b);
        else if (integer && (const_is(a, 0) || const_is(b, 0)))
          replace(i.out, const_is(a, 0) ? a : b);
        break;
      case Op::Div:
        if (const_is(b, 1)) replace(i.out, a);
        break;
      default:
        break;
    }
  }

  Kernel& k_;
  std::vector<VarId> repl_;
  bool changed_ = false;
};

using CseKey = std::tuple<Op, Elem, std::uint8_t, VarId, VarId, VarId, VarId, std::uint32_t>;

class Cse {
 public:
  explicit Cse(Kernel& k) : k_(k), repl_(identity(k)) {}
  bool run() {
    block(k_.body);
    if (changed_) apply_replacements(k_.body, repl_);
    return changed_;
  }

 private:
  void block(Block& b) {
    scopes_.emplace_back();
    for (Inst& i : b) {
      for (VarId& v : i.in)
        while (v != kNoVar && repl_[v] != v) v = repl_[v];
      if (i.out != kNoVar && is_pure(i.op)) {
        const Type t = k_.vars[i.out].type;
        const CseKey key{i.op, t.elem, t.lanes, i.in[0], i.in[1], i.in[2], i.in[3], i.aux};
        VarId found = kNoVar;
        for (auto s = scopes_.rbegin(); s != scopes_.rend() && found == kNoVar; ++s) {
          auto it = s->find(key);
          if (it != s->end()) found = it->second;
        }
        if (found != kNoVar) {
          repl_[i.out] = found;
          changed_ = true;
        } else {
          scopes_.back().emplace(key, i.out);
        }
      }
      for (Block& c : i.blocks) block(c);
    }
    scopes_.pop_back();
  }

  Kernel& k_;
  std::vector<VarId> repl_;
  std::vector<std::map<CseKey, VarId>> scopes_;
  bool changed_ = false;
};

void count_uses(const Block& b, std::vector<std::uint32_t>& uses,
                std::vector<std::uint32_t>& reads) {
  for (const Inst& i : b) {
    for (VarId v : i.in)
      if (v != kNoVar) ++uses[v];
    if (i.op == Op::Read) ++reads[i.in[0]];
    for (const Block& c : i.blocks) count_uses(c, uses, reads);
  }
}

bool sweep(Block& b, const Kernel& k, const std::vector<std::uint32_t>& uses,
           const std::vector<std::uint32_t>& reads) {
  bool changed = false;
  for (Inst& i : b)
    for (Block& c : i.blocks) changed |= sweep(c, k, uses, reads);
  const auto dead = [&](const Inst& i) {
    if (i.out != kNoVar && uses[i.out] == 0 &&
        (is_pure(i.op) || i.op == Op::Load || i.op == Op::Read))
      return true;
    if (i.op == Op::Assign && reads[i.in[0]] == 0) return true;
    if (i.op == Op::If && i.blocks[0].empty() && i.blocks[1].empty()) return true;
    if ((i.op == Op::IfInBounds || i.op == Op::For) && i.blocks[0].empty()) return true;
    return false;
  };
  const auto n = b.size();
  std::erase_if(b, dead);
  return changed || b.size() != n;
}

bool inline_bounds(Block& b) {
  bool changed = false;
  Block out;
  out.reserve(b.size());
  for (Inst& i : b) {
    for (Block& c : i.blocks) changed |= inline_bounds(c);
    if (i.op == Op::IfInBounds) {
      for (Inst& x : i.blocks[0]) out.push_back(std::move(x));
      changed = true;
    } else {
      out.push_back(std::move(i));
    }
  }
  b = std::move(out);
  return changed;
}

}  // namespace

bool fold_constants(Kernel& k) {
  return Folder(k).run();
}
bool eliminate_common_subexpressions(Kernel& k) {
  return Cse(k).run();
}

bool eliminate_dead_code(Kernel& k) {
  bool any = false;
  for (;;) {
    std::vector<std::uint32_t> uses(k.vars.size(), 0), reads(k.vars.size(), 0);
    count_uses(k.body, uses, reads);
    if (!sweep(k.body, k, uses, reads)) break;
    any = true;
  }
  return any;
}

bool assume_in_bounds(Kernel& k) {
  return inline_bounds(k.body);
}

void optimize(Kernel& k) {
  for (int round = 0; round < 8; ++round) {
    bool changed = fold_constants(k);
    changed |= eliminate_common_subexpressions(k);
    changed |= eliminate_dead_code(k);
    if (!changed) break;
  }
  verify(k);
}

}  // namespace ember::kernel
