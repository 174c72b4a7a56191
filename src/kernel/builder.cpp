// The kernel builder: type checks and emission of instructions.
#include "ember/kernel/builder.hpp"

#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

namespace ember::kernel {

namespace {

bool valid_lanes(int l) {
  return l == 1 || l == 2 || l == 4 || l == 8;
}

/// The value a constant of `e` holds after rounding `v` to the type.
void round_constant(Elem e, double v, VarInfo& out) {
  switch (e) {
    case Elem::F32:
      out.f = static_cast<float>(v);
      break;
    case Elem::F16:
      out.f = f16::to_float(f16::from_float(static_cast<float>(v)));
      break;
    case Elem::BF16:
      out.f = bf16::to_float(bf16::from_float(static_cast<float>(v)));
      break;
    case Elem::F64:
      out.f = v;
      break;
    case Elem::I32:
      out.i = static_cast<std::int32_t>(static_cast<std::int64_t>(v));
      break;
    case Elem::I64:
      out.i = static_cast<std::int64_t>(v);
      break;
    case Elem::U32:
      out.i = static_cast<std::uint32_t>(static_cast<std::int64_t>(v));
      break;
    case Elem::U8:
      out.i = static_cast<std::uint8_t>(static_cast<std::int64_t>(v));
      break;
    case Elem::Bool:
      out.i = v != 0 ? 1 : 0;
      break;
  }
}

}  // namespace

// ---- Val, Var, Mem ---------------------------------------------------------------------------

Type Val::type() const {
  return b_->info(id_).type;
}
KernelBuilder& Val::builder() const {
  if (!b_) detail::fail<ValueError>("kernel", "use of an empty Val");
  return *b_;
}

Var& Var::operator=(const Val& v) {
  Val x = v;
  const Type t = b_->info(id_).type;
  if (x.elem() != t.elem)
    b_->fail_type("assign",
                  "a " + type_name(x.type()) + " value to a " + type_name(t) + " variable");
  if (x.lanes() != t.lanes) {
    if (x.lanes() != 1)
      b_->fail_type("assign",
                    "a " + type_name(x.type()) + " value to a " + type_name(t) + " variable");
    x = splat(x, t.lanes);
  }
  b_->emit_void(Op::Assign, {id_, x.id()});
  return *this;
}
Val Var::get() const {
  return b_->emit(Op::Read, b_->info(id_).type, {id_});
}

ElemRef::operator Val() const {
  return m_.load(i_);
}
const ElemRef& ElemRef::operator=(const Val& v) const {
  m_.store(i_, v);
  return *this;
}

Elem Mem::elem() const {
  return b_->info(id_).type.elem;
}

static void check_index(KernelBuilder& b, const char* op, Val index) {
  if (!is_int(index.elem()) || index.lanes() != 1)
    b.fail_type(op, "index must be a scalar integer, not " + type_name(index.type()));
}

static void check_access(KernelBuilder& b, const VarInfo& m, const char* op, bool reads,
                         bool writes) {
  if (m.kind != VarKind::Buffer) return;
  if (reads && m.access == Access::Write)
    b.fail_value(op, "buffer '" + m.name + "' is write-only (Access::Write)");
  if (writes && m.access == Access::Read)
    b.fail_value(op, "buffer '" + m.name + "' is read-only (Access::Read)");
}

Val Mem::load(Val index, int lanes) const {
  check_index(*b_, "load", index);
  check_access(*b_, b_->info(id_), "load", true, false);
  if (!valid_lanes(lanes)) b_->fail_value("load", "lanes must be 1, 2, 4 or 8");
  return b_->emit(Op::Load, Type{elem(), static_cast<std::uint8_t>(lanes)}, {id_, index.id()});
}
void Mem::store(Val index, Val value) const {
  check_index(*b_, "store", index);
  check_access(*b_, b_->info(id_), "store", false, true);
  if (value.elem() != elem())
    b_->fail_type("store", "a " + type_name(value.type()) + " value into " +
                               std::string(elem_name(elem())) + " memory");
  b_->emit_void(Op::Store, {id_, index.id(), value.id()});
}
ElemRef Mem::operator[](std::uint32_t index) const {
  return (*this)[b_->u32(index)];
}

Val Mem::len() const {
  if (b_->info(id_).kind != VarKind::Buffer) b_->fail_value("len", "not a buffer");
  return b_->emit(Op::BufLen, scalar_type(Elem::U32), {id_});
}
Val Mem::shape(Val dim) const {
  return b_->emit(Op::BufShape, scalar_type(Elem::U32), {id_, cast(dim, Elem::U32).id()});
}
Val Mem::stride(Val dim) const {
  return b_->emit(Op::BufStride, scalar_type(Elem::U32), {id_, cast(dim, Elem::U32).id()});
}
Val Mem::shape(std::uint32_t dim) const {
  if (dim >= b_->info(id_).rank)
    b_->fail_value("shape", "dim " + std::to_string(dim) + " of a rank-" +
                                std::to_string(b_->info(id_).rank) + " buffer");
  return shape(b_->u32(dim));
}
Val Mem::stride(std::uint32_t dim) const {
  if (dim >= b_->info(id_).rank)
    b_->fail_value("stride", "dim " + std::to_string(dim) + " of a rank-" +
                                 std::to_string(b_->info(id_).rank) + " buffer");
  return stride(b_->u32(dim));
}

Val Mem::atomic(AtomicOp op, Val index, Val v, Val cmp) const {
  check_index(*b_, "atomic", index);
  check_access(*b_, b_->info(id_), "atomic", true, true);
  const Elem e = elem();
  const bool ok_type = e == Elem::I32 || e == Elem::U32 || e == Elem::F32 || e == Elem::I64;
  if (!ok_type || v.lanes() != 1 || v.elem() != e)
    b_->fail_type("atomic",
                  "atomics take scalar i32, u32, i64 or f32 values on memory of "
                  "that type; got " +
                      type_name(v.type()) + " on " + std::string(elem_name(e)));
  if (e == Elem::I64 && (op == AtomicOp::Min || op == AtomicOp::Max))
    b_->fail_type("atomic", "atomic min/max on i64 is not supported");
  if (cmp.valid()) {
    if (cmp.type() != v.type()) b_->fail_type("atomic", "comparand type differs from value");
    return b_->emit(Op::Atomic, v.type(), {id_, index.id(), v.id(), cmp.id()},
                    static_cast<std::uint32_t>(op));
  }
  return b_->emit(Op::Atomic, v.type(), {id_, index.id(), v.id()}, static_cast<std::uint32_t>(op));
}
Val Mem::atomic_add(Val i, Val v) const {
  return atomic(AtomicOp::Add, i, v, {});
}
Val Mem::atomic_min(Val i, Val v) const {
  return atomic(AtomicOp::Min, i, v, {});
}
Val Mem::atomic_max(Val i, Val v) const {
  return atomic(AtomicOp::Max, i, v, {});
}
Val Mem::atomic_exchange(Val i, Val v) const {
  return atomic(AtomicOp::Exchange, i, v, {});
}
Val Mem::atomic_compare_exchange(Val i, Val cmp, Val v) const {
  return atomic(AtomicOp::CompareExchange, i, v, cmp);
}

// ---- KernelBuilder ---------------------------------------------------------------------------

KernelBuilder::KernelBuilder(std::string name, std::array<std::uint32_t, 3> workgroup) {
  k_.name = std::move(name);
  k_.workgroup = workgroup;
  for (char c : k_.name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      detail::fail<ValueError>("kernel", "kernel name '", k_.name,
                               "' must be letters, digits and '_'");
  if (k_.name.empty() || std::isdigit(static_cast<unsigned char>(k_.name[0])))
    detail::fail<ValueError>("kernel", "kernel name '", k_.name, "' must start with a letter");
  stack_.push_back(&k_.body);
}

void KernelBuilder::fail_type(const char* op, const std::string& what) const {
  detail::fail<DTypeError>("kernel " + k_.name, op, ": ", what);
}
void KernelBuilder::fail_value(const char* op, const std::string& what) const {
  detail::fail<ValueError>("kernel " + k_.name, op, ": ", what);
}

VarId KernelBuilder::new_var(VarInfo v) {
  k_.vars.push_back(std::move(v));
  return static_cast<VarId>(k_.vars.size() - 1);
}

Mem KernelBuilder::buffer(const std::string& name, Elem elem, Access access, std::uint32_t rank) {
  if (rank == 0 || rank > 8) fail_value("buffer", "rank must be 1..8");
  VarInfo v;
  v.kind = VarKind::Buffer;
  v.type = scalar_type(elem);
  v.name = name;
  v.rank = rank;
  v.access = access;
  const VarId id = new_var(v);
  k_.args.push_back(id);
  return Mem(this, id);
}

Val KernelBuilder::scalar(const std::string& name, Elem elem) {
  VarInfo v;
  v.kind = VarKind::Scalar;
  v.type = scalar_type(elem);
  v.name = name;
  const VarId id = new_var(v);
  k_.args.push_back(id);
  return Val(this, id);
}

Val KernelBuilder::define(const std::string& name, Elem elem, double value) {
  const Val c = constant(elem, value);
  const VarInfo& i = info(c.id());
  k_.defines.emplace_back(name, is_float(elem) ? std::to_string(i.f) : std::to_string(i.i));
  return c;
}

Val KernelBuilder::constant(Elem elem, double value, int lanes) {
  if (!valid_lanes(lanes)) fail_value("constant", "lanes must be 1, 2, 4 or 8");
  VarInfo v;
  v.kind = VarKind::Constant;
  v.type = Type{elem, static_cast<std::uint8_t>(lanes)};
  round_constant(elem, value, v);
  // One variable per distinct constant (by bits, so -0.0 and NaN payloads stay apart).
  for (VarId id = 0; id < k_.vars.size(); ++id) {
    const VarInfo& o = k_.vars[id];
    if (o.kind == VarKind::Constant && o.type == v.type && o.i == v.i &&
        std::memcmp(&o.f, &v.f, sizeof(double)) == 0)
      return Val(this, id);
  }
  return Val(this, new_var(v));
}

Mem KernelBuilder::shared(Elem elem, std::uint32_t length) {
  if (length == 0) fail_value("shared", "length must be > 0");
  VarInfo v;
  v.kind = VarKind::Shared;
  v.type = scalar_type(elem);
  v.length = length;
  return Mem(this, new_var(v));
}

Mem KernelBuilder::local(Elem elem, std::uint32_t length) {
  if (length == 0) fail_value("local", "length must be > 0");
  VarInfo v;
  v.kind = VarKind::Local;
  v.type = scalar_type(elem);
  v.length = length;
  return Mem(this, new_var(v));
}

Var KernelBuilder::var(Val init) {
  VarInfo v;
  v.kind = VarKind::Mutable;
  v.type = init.type();
  Var r(this, new_var(v));
  r = init;
  return r;
}

Var KernelBuilder::var(Type type) {
  return var(constant(type.elem, 0, type.lanes));
}

Fragment KernelBuilder::fragment(MatrixInfo mi, Elem elem) {
  const bool ab = mi.use != MatrixUse::Acc;
  if (ab && !is_half(elem))
    fail_type("fragment",
              "A and B fragments hold f16 or bf16, not " + std::string(elem_name(elem)));
  if (!ab && elem != Elem::F32 && elem != Elem::F16)
    fail_type("fragment", "accumulators hold f32 or f16");
  if (!(mi.m == 16 && mi.n == 16 && mi.k == 16))
    fail_value("fragment", "only 16x16x16 tiles are supported");
  VarInfo v;
  v.kind = VarKind::Matrix;
  v.type = scalar_type(elem);
  v.matrix = mi;
  return Fragment(this, new_var(v));
}

Val KernelBuilder::thread_idx(int a) {
  return emit(Op::ThreadIdx, scalar_type(Elem::U32), {}, a);
}
Val KernelBuilder::block_idx(int a) {
  return emit(Op::BlockIdx, scalar_type(Elem::U32), {}, a);
}
Val KernelBuilder::block_dim(int a) {
  return emit(Op::BlockDim, scalar_type(Elem::U32), {}, a);
}
Val KernelBuilder::grid_dim(int a) {
  return emit(Op::GridDim, scalar_type(Elem::U32), {}, a);
}
Val KernelBuilder::global_idx(int a) {
  return emit(Op::GlobalIdx, scalar_type(Elem::U32), {}, a);
}
Val KernelBuilder::local_linear_idx() {
  return emit(Op::LocalLinearIdx, scalar_type(Elem::U32), {});
}
Val KernelBuilder::absolute_pos() {
  return emit(Op::AbsolutePos, scalar_type(Elem::U32), {});
}
Val KernelBuilder::subgroup_size() {
  return emit(Op::SubgroupSize, scalar_type(Elem::U32), {});
}
Val KernelBuilder::lane_id() {
  return emit(Op::LaneId, scalar_type(Elem::U32), {});
}

Inst& KernelBuilder::open(Op op, std::initializer_list<VarId> in, int nblocks) {
  Inst inst;
  inst.op = op;
  std::size_t n = 0;
  for (VarId v : in) inst.in[n++] = v;
  inst.blocks.resize(nblocks);
  if (op == Op::If || op == Op::IfInBounds) {
    const Type t = info(inst.in[0]).type;
    if (op == Op::If && (t.elem != Elem::Bool || t.lanes != 1))
      fail_type("if", "condition must be a scalar bool, not " + type_name(t));
    if (op == Op::IfInBounds) {
      const Type l = info(inst.in[1]).type;
      if (!is_int(t.elem) || t.lanes != 1 || l != t)
        fail_type("if_in_bounds", "pos and len must be one scalar integer type");
    }
  }
  stack_.back()->push_back(std::move(inst));
  return stack_.back()->back();
}

Inst& KernelBuilder::open_for(Val start, Val end, Val step) {
  unify("for", start, end);
  unify("for", start, step);
  if (!is_int(start.elem()) || start.lanes() != 1)
    fail_type("for", "bounds must be scalar integers, not " + type_name(start.type()));
  Inst& inst = open(Op::For, {start.id(), end.id(), step.id()}, 1);
  VarInfo v;
  v.type = start.type();
  inst.out = new_var(v);
  return inst;
}

void KernelBuilder::break_() {
  emit_void(Op::Break, {});
}
void KernelBuilder::return_() {
  emit_void(Op::Return, {});
}
void KernelBuilder::barrier() {
  emit_void(Op::Barrier, {});
}

Val KernelBuilder::emit(Op op, Type type, std::initializer_list<VarId> in, std::uint32_t aux) {
  VarInfo v;
  v.type = type;
  const VarId out = new_var(v);
  Inst inst;
  inst.op = op;
  inst.out = out;
  inst.aux = aux;
  std::size_t n = 0;
  for (VarId x : in) inst.in[n++] = x;
  stack_.back()->push_back(std::move(inst));
  return Val(this, out);
}

void KernelBuilder::emit_void(Op op, std::initializer_list<VarId> in, std::uint32_t aux) {
  Inst inst;
  inst.op = op;
  inst.aux = aux;
  std::size_t n = 0;
  for (VarId x : in) inst.in[n++] = x;
  stack_.back()->push_back(std::move(inst));
}

void KernelBuilder::unify(const char* op, Val& a, Val& b) {
  if (a.elem() != b.elem())
    fail_type(op, "operands " + type_name(a.type()) + " and " + type_name(b.type()) +
                      " differ; cast one");
  if (a.lanes() == b.lanes()) return;
  if (a.lanes() == 1)
    a = splat(a, b.lanes());
  else if (b.lanes() == 1)
    b = splat(b, a.lanes());
  else
    fail_type(op, "operands " + type_name(a.type()) + " and " + type_name(b.type()) +
                      " have different widths");
}

Kernel KernelBuilder::build() {
  if (stack_.size() != 1) fail_value("build", "called inside a control-flow body");
  verify(k_);
  Kernel out = std::move(k_);
  k_ = Kernel{};
  k_.name = out.name;
  k_.workgroup = out.workgroup;
  stack_.assign(1, &k_.body);
  return out;
}

// ---- operators and functions -----------------------------------------------------------------

namespace {

enum Cls : unsigned { kF = 1, kI = 2, kB = 4, kNum = kF | kI, kAll = 7 };

unsigned cls(Elem e) {
  return is_float(e) ? kF : e == Elem::Bool ? kB : kI;
}

Val unary(Op op, Val a, unsigned allowed, Elem out = Elem::Bool, bool to_bool = false) {
  KernelBuilder& b = a.builder();
  if (!(cls(a.elem()) & allowed))
    b.fail_type(op_name(op), "not defined for " + type_name(a.type()));
  Type t = a.type();
  if (to_bool) t.elem = out;
  return b.emit(op, t, {a.id()});
}

Val binary(Op op, Val a, Val b, unsigned allowed, bool compare = false) {
  KernelBuilder& kb = a.builder();
  kb.unify(op_name(op), a, b);
  if (!(cls(a.elem()) & allowed))
    kb.fail_type(op_name(op), "not defined for " + type_name(a.type()));
  Type t = a.type();
  if (compare) t.elem = Elem::Bool;
  return kb.emit(op, t, {a.id(), b.id()});
}

}  // namespace

Val operator+(Val a, Val b) {
  return binary(Op::Add, a, b, kNum);
}
Val operator-(Val a, Val b) {
  return binary(Op::Sub, a, b, kNum);
}
Val operator*(Val a, Val b) {
  return binary(Op::Mul, a, b, kNum);
}
Val operator/(Val a, Val b) {
  return binary(Op::Div, a, b, kNum);
}
Val operator%(Val a, Val b) {
  return binary(Op::Rem, a, b, kNum);
}
Val operator-(Val a) {
  return unary(Op::Neg, a, kNum);
}
Val operator&(Val a, Val b) {
  return a.elem() == Elem::Bool ? binary(Op::And, a, b, kB) : binary(Op::BitAnd, a, b, kI);
}
Val operator|(Val a, Val b) {
  return a.elem() == Elem::Bool ? binary(Op::Or, a, b, kB) : binary(Op::BitOr, a, b, kI);
}
Val operator^(Val a, Val b) {
  return a.elem() == Elem::Bool ? binary(Op::Ne, a, b, kB) : binary(Op::BitXor, a, b, kI);
}
Val operator!(Val a) {
  return unary(Op::Not, a, kB);
}
Val operator~(Val a) {
  return unary(Op::BitNot, a, kI);
}
Val operator<<(Val a, Val b) {
  return binary(Op::Shl, a, b, kI);
}
Val operator>>(Val a, Val b) {
  return binary(Op::Shr, a, b, kI);
}
Val operator==(Val a, Val b) {
  return binary(Op::Eq, a, b, kAll, true);
}
Val operator!=(Val a, Val b) {
  return binary(Op::Ne, a, b, kAll, true);
}
Val operator<(Val a, Val b) {
  return binary(Op::Lt, a, b, kNum, true);
}
Val operator<=(Val a, Val b) {
  return binary(Op::Le, a, b, kNum, true);
}
Val operator>(Val a, Val b) {
  return binary(Op::Gt, a, b, kNum, true);
}
Val operator>=(Val a, Val b) {
  return binary(Op::Ge, a, b, kNum, true);
}

Val abs(Val a) {
  return unary(Op::Abs, a, kNum);
}
Val sqrt(Val a) {
  return unary(Op::Sqrt, a, kF);
}
Val exp(Val a) {
  return unary(Op::Exp, a, kF);
}
Val log(Val a) {
  return unary(Op::Log, a, kF);
}
Val log1p(Val a) {
  return unary(Op::Log1p, a, kF);
}
Val tanh(Val a) {
  return unary(Op::Tanh, a, kF);
}
Val erf(Val a) {
  return unary(Op::Erf, a, kF);
}
Val sin(Val a) {
  return unary(Op::Sin, a, kF);
}
Val cos(Val a) {
  return unary(Op::Cos, a, kF);
}
Val floor(Val a) {
  return unary(Op::Floor, a, kF);
}
Val ceil(Val a) {
  return unary(Op::Ceil, a, kF);
}
Val round(Val a) {
  return unary(Op::Round, a, kF);
}
Val trunc(Val a) {
  return unary(Op::Trunc, a, kF);
}
Val recip(Val a) {
  return unary(Op::Recip, a, kF);
}
Val is_nan(Val a) {
  return unary(Op::IsNan, a, kF, Elem::Bool, true);
}
Val is_inf(Val a) {
  return unary(Op::IsInf, a, kF, Elem::Bool, true);
}
Val min(Val a, Val b) {
  return binary(Op::Min, a, b, kNum);
}
Val max(Val a, Val b) {
  return binary(Op::Max, a, b, kNum);
}
Val pow(Val a, Val b) {
  return binary(Op::Pow, a, b, kF);
}

Val fma(Val a, Val b, Val c) {
  KernelBuilder& kb = a.builder();
  kb.unify("fma", a, b);
  kb.unify("fma", a, c);
  kb.unify("fma", b, c);
  if (!is_float(a.elem())) kb.fail_type("fma", "not defined for " + type_name(a.type()));
  return kb.emit(Op::Fma, a.type(), {a.id(), b.id(), c.id()});
}

Val select(Val cond, Val a, Val b) {
  KernelBuilder& kb = a.builder();
  kb.unify("select", a, b);
  if (cond.elem() != Elem::Bool) kb.fail_type("select", "condition must be bool");
  if (cond.lanes() != 1 && cond.lanes() != a.lanes()) {
    if (a.lanes() != 1) kb.fail_type("select", "condition and value widths differ");
    a = splat(a, cond.lanes());
    b = splat(b, cond.lanes());
  }
  return kb.emit(Op::Select, a.type(), {cond.id(), a.id(), b.id()});
}

Val cast(Val a, Elem to) {
  if (a.elem() == to) return a;
  return a.builder().emit(Op::Cast, Type{to, static_cast<std::uint8_t>(a.lanes())}, {a.id()});
}

Val bitcast(Val a, Elem to) {
  KernelBuilder& kb = a.builder();
  const Elem from = a.elem();
  if (from == to) return a;
  if (is_half(from) || is_half(to) || elem_bytes(from) != elem_bytes(to) || from == Elem::Bool ||
      to == Elem::Bool || elem_bytes(from) < 4)
    kb.fail_type("bitcast", "between " + std::string(elem_name(from)) + " and " +
                                std::string(elem_name(to)) +
                                " (only between 32-bit or between 64-bit types)");
  return kb.emit(Op::Bitcast, Type{to, static_cast<std::uint8_t>(a.lanes())}, {a.id()});
}

Val splat(Val a, int lanes) {
  KernelBuilder& kb = a.builder();
  if (a.lanes() == lanes) return a;
  if (a.lanes() != 1 || !valid_lanes(lanes))
    kb.fail_type("splat", "of " + type_name(a.type()) + " to " + std::to_string(lanes));
  const VarInfo& i = kb.info(a.id());
  if (i.kind == VarKind::Constant)
    return kb.constant(a.elem(), is_float(a.elem()) ? i.f : static_cast<double>(i.i), lanes);
  return kb.emit(Op::Splat, Type{a.elem(), static_cast<std::uint8_t>(lanes)}, {a.id()});
}

Val extract(Val v, int lane) {
  KernelBuilder& kb = v.builder();
  if (lane < 0 || lane >= v.lanes())
    kb.fail_value("extract", "lane " + std::to_string(lane) + " of " + type_name(v.type()));
  if (v.lanes() == 1) return v;
  return kb.emit(Op::Extract, scalar_type(v.elem()), {v.id()}, lane);
}

Val insert(Val v, int lane, Val x) {
  KernelBuilder& kb = v.builder();
  if (lane < 0 || lane >= v.lanes())
    kb.fail_value("insert", "lane " + std::to_string(lane) + " of " + type_name(v.type()));
  if (x.type() != scalar_type(v.elem()))
    kb.fail_type("insert", "value must be a scalar of v's type");
  return kb.emit(Op::Insert, v.type(), {v.id(), x.id()}, lane);
}

namespace {
Val subgroup(Op op, Val a, unsigned allowed) {
  KernelBuilder& b = a.builder();
  if (!(cls(a.elem()) & allowed))
    b.fail_type(op_name(op), "not defined for " + type_name(a.type()));
  return b.emit(op, a.type(), {a.id()});
}
Val subgroup2(Op op, Val a, Val lane) {
  KernelBuilder& b = a.builder();
  if (!is_int(lane.elem()) || lane.lanes() != 1)
    b.fail_type(op_name(op), "lane must be a scalar integer");
  return b.emit(op, a.type(), {a.id(), cast(lane, Elem::U32).id()});
}
}  // namespace

Val subgroup_sum(Val a) {
  return subgroup(Op::SgSum, a, kNum);
}
Val subgroup_min(Val a) {
  return subgroup(Op::SgMin, a, kNum);
}
Val subgroup_max(Val a) {
  return subgroup(Op::SgMax, a, kNum);
}
Val subgroup_all(Val a) {
  return subgroup(Op::SgAll, a, kB);
}
Val subgroup_any(Val a) {
  return subgroup(Op::SgAny, a, kB);
}
Val subgroup_broadcast(Val a, Val lane) {
  return subgroup2(Op::SgBroadcast, a, lane);
}
Val shuffle(Val a, Val src) {
  return subgroup2(Op::SgShuffle, a, src);
}
Val shuffle_xor(Val a, Val mask) {
  return subgroup2(Op::SgShuffleXor, a, mask);
}

void mat_fill(const Fragment& f, Val v) {
  KernelBuilder& b = f.builder();
  const Elem e = b.info(f.id()).type.elem;
  if (v.lanes() != 1) b.fail_type("mat_fill", "value must be a scalar");
  b.emit_void(Op::MatFill, {f.id(), cast(v, e).id()});
}

void mat_load(const Fragment& f, const Mem& mem, Val offset, Val stride, MatrixLayout layout) {
  KernelBuilder& b = f.builder();
  const VarInfo& fi = b.info(f.id());
  if (mem.elem() != fi.type.elem)
    b.fail_type("mat_load", "fragment of " + std::string(elem_name(fi.type.elem)) +
                                " from memory of " + std::string(elem_name(mem.elem())));
  const MatrixLayout l = fi.matrix.use == MatrixUse::Acc ? layout : fi.matrix.layout;
  b.emit_void(Op::MatLoad,
              {f.id(), mem.id(), cast(offset, Elem::U32).id(), cast(stride, Elem::U32).id()},
              static_cast<std::uint32_t>(l));
}

void mat_store(const Mem& mem, Val offset, Val stride, const Fragment& f, MatrixLayout layout) {
  KernelBuilder& b = f.builder();
  const VarInfo& fi = b.info(f.id());
  if (fi.matrix.use != MatrixUse::Acc) b.fail_value("mat_store", "only accumulators are stored");
  if (mem.elem() != fi.type.elem)
    b.fail_type("mat_store", "fragment of " + std::string(elem_name(fi.type.elem)) +
                                 " into memory of " + std::string(elem_name(mem.elem())));
  b.emit_void(Op::MatStore,
              {mem.id(), cast(offset, Elem::U32).id(), cast(stride, Elem::U32).id(), f.id()},
              static_cast<std::uint32_t>(layout));
}

void mat_mma(const Fragment& d, const Fragment& a, const Fragment& b, const Fragment& c) {
  KernelBuilder& kb = d.builder();
  const VarInfo &di = kb.info(d.id()), &ai = kb.info(a.id()), &bi = kb.info(b.id()),
                &ci = kb.info(c.id());
  if (ai.matrix.use != MatrixUse::A || bi.matrix.use != MatrixUse::B ||
      ci.matrix.use != MatrixUse::Acc || di.matrix.use != MatrixUse::Acc)
    kb.fail_value("mat_mma", "operands must be (Acc, A, B, Acc) fragments");
  if (ai.type.elem != bi.type.elem || ci.type.elem != di.type.elem)
    kb.fail_type("mat_mma", "A and B (and C and D) must have one element type");
  kb.emit_void(Op::MatMma, {d.id(), a.id(), b.id(), c.id()});
}

}  // namespace ember::kernel
