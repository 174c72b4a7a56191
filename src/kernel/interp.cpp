// The CPU interpreter: preparation, control flow, memory, builtins, subgroups, matrices.
#include <algorithm>
#include <atomic>
#include <exception>
#include <string>

#include "eval.hpp"
#include "interp_frame.hpp"

namespace ember::kernel::cpu {

using eval::Reg;
using eval::with_elem;

namespace {

std::size_t align64(std::size_t x) {
  return (x + 63) & ~std::size_t{63};
}

bool is_builtin(Op op) {
  return op <= Op::LaneId;
}
bool is_metadata(Op op) {
  return op == Op::BufLen || op == Op::BufShape || op == Op::BufStride;
}

std::uint32_t tile_elems(const MatrixInfo& m) {
  switch (m.use) {
    case MatrixUse::A:
      return std::uint32_t{m.m} * m.k;
    case MatrixUse::B:
      return std::uint32_t{m.k} * m.n;
    case MatrixUse::Acc:
      return std::uint32_t{m.m} * m.n;
  }
  return 0;
}

}  // namespace

// ---- Program ---------------------------------------------------------------------------------

Program::Program(Kernel k, std::uint32_t subgroup_size, std::uint32_t chunk_threads)
    : k_(std::move(k)), layout_(k_), subgroup_(subgroup_size) {
  wg_threads_ = k_.workgroup_threads();
  wgs_per_chunk_ = std::max<std::uint32_t>(1, chunk_threads / wg_threads_);
  n_ = wgs_per_chunk_ * wg_threads_;
  const std::size_t nv = k_.vars.size();
  uniform_.assign(nv, 0);
  arg_of_.assign(nv, -1);
  for (std::size_t a = 0; a < k_.args.size(); ++a) arg_of_[k_.args[a]] = static_cast<int>(a);
  for (VarId v = 0; v < nv; ++v) {
    const VarInfo& i = k_.vars[v];
    if (i.kind == VarKind::Scalar || (i.kind == VarKind::Constant && i.type.lanes == 1))
      uniform_[v] = 1;
  }
  for_each_inst(k_.body, [&](const Inst& i) {
    if (i.out == kNoVar) return;
    bool u = false;
    const auto all_uniform = [&] {
      for (VarId x : i.in)
        if (x != kNoVar && !uniform_[x]) return false;
      return true;
    };
    if (i.op == Op::BlockDim || i.op == Op::GridDim || i.op == Op::SubgroupSize ||
        i.op == Op::BufLen)
      u = true;
    else if (i.op == Op::BufShape || i.op == Op::BufStride)
      u = uniform_[i.in[1]] != 0;
    else if (i.op == Op::For)
      u = all_uniform();
    else if (is_pure(i.op) && !is_builtin(i.op))
      u = all_uniform() && k_.vars[i.out].type.lanes == 1;
    uniform_[i.out] = u;
  });
  offset_.assign(nv, 0);
  std::size_t at = 0;
  const std::uint32_t subgroups = wgs_per_chunk_ * ((wg_threads_ + subgroup_ - 1) / subgroup_);
  for (VarId v = 0; v < nv; ++v) {
    const VarInfo& i = k_.vars[v];
    const std::size_t rb = static_cast<std::size_t>(eval::reg_bytes(i.type.elem));
    std::size_t bytes = 0;
    switch (i.kind) {
      case VarKind::Buffer:
        break;
      case VarKind::Shared:
        bytes = std::size_t{wgs_per_chunk_} * i.length * rb;
        break;
      case VarKind::Local:
        bytes = std::size_t{n_} * i.length * rb;
        break;
      case VarKind::Matrix:
        bytes = std::size_t{subgroups} * tile_elems(i.matrix) * 4;
        break;
      default:
        bytes = (uniform_[v] ? 1 : n_) * std::size_t{i.type.lanes} * rb;
        break;
    }
    offset_[v] = at;
    at += align64(bytes);
  }
  frame_bytes_ = at;
}

Program::~Program() = default;

void Program::run(const RunArgs& args) const {
  const std::uint64_t groups = args.grid.count();
  const std::uint64_t chunks = (groups + wgs_per_chunk_ - 1) / wgs_per_chunk_;
  std::exception_ptr error;
  std::atomic<bool> failed{false};
#pragma omp parallel if (chunks > 1)
  {
    try {
      Frame f(*this, args);
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t c = 0; c < static_cast<std::int64_t>(chunks); ++c) {
        if (failed.load(std::memory_order_relaxed)) continue;
        try {
          f.run_chunk(static_cast<std::uint64_t>(c) * wgs_per_chunk_);
        } catch (...) {
          failed = true;
#pragma omp critical(ember_interp_error)
          if (!error) error = std::current_exception();
        }
      }
    } catch (...) {
      failed = true;
#pragma omp critical(ember_interp_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// ---- Frame: setup and control flow ----------------------------------------------------------

Frame::Frame(const Program& p, const RunArgs& args)
    : p_(p), a_(args), n_(p.n_), arena_(p.frame_bytes_), exited_(p.n_), idx_(p.n_) {
  const Kernel& k = p_.k_;
  for (VarId v = 0; v < k.vars.size(); ++v) {
    const VarInfo& i = k.vars[v];
    if (i.kind == VarKind::Constant) {
      with_elem(i.type.elem, [&](auto te) {
        constexpr Elem E = decltype(te)::value;
        using T = Reg<E>;
        T val;
        if constexpr (std::is_floating_point_v<T>)
          val = static_cast<T>(i.f);
        else
          val = static_cast<T>(i.i);
        std::fill_n(reg<T>(v), count(v), val);
      });
    } else if (i.kind == VarKind::Scalar) {
      const std::uint32_t* w =
          args.info + p_.layout_.offset[static_cast<std::size_t>(p_.arg_of_[v])];
      std::uint64_t bits = w[0];
      if (elem_bytes(i.type.elem) == 8) bits |= std::uint64_t{w[1]} << 32;
      std::memcpy(reg<std::byte>(v), &bits, static_cast<std::size_t>(eval::reg_bytes(i.type.elem)));
    }
  }
}

void Frame::out_of_bounds(const char* what, std::int64_t index, std::uint64_t len) const {
  detail::fail<DeviceError>("kernel " + p_.k_.name, what, ": index ", index, " is out of bounds (",
                            len, " elements)");
}

void Frame::run_chunk(std::uint64_t w0) {
  w0_ = w0;
  const std::uint64_t groups = a_.grid.count();
  Mask mask(n_);
  for (std::uint32_t t = 0; t < n_; ++t) mask[t] = w0 + t / p_.wg_threads_ < groups;
  std::fill(exited_.begin(), exited_.end(), 0);
  exec_block(p_.k_.body, mask);
}

void Frame::exec_block(const Block& b, Mask& mask) {
  if (!any(mask)) return;
  for (const Inst& i : b) {
    exec(i, mask);
    if (!i.blocks.empty() || i.op == Op::Break || i.op == Op::Return) {
      if (!any(mask)) return;
    }
  }
}

void Frame::exec(const Inst& i, Mask& mask) {
  switch (i.op) {
    case Op::Load:
      exec_load(i, mask);
      return;
    case Op::Store:
      exec_store(i, mask);
      return;
    case Op::Read:
      std::memcpy(reg<std::byte>(i.out), reg<std::byte>(i.in[0]),
                  count(i.out) * static_cast<std::size_t>(eval::reg_bytes(info(i.out).type.elem)));
      return;
    case Op::Assign:
      exec_assign(i, mask);
      return;
    case Op::Atomic:
      exec_atomic(i, mask);
      return;
    case Op::If:
      exec_if(i, mask, false);
      return;
    case Op::IfInBounds:
      exec_if(i, mask, true);
      return;
    case Op::Loop:
      exec_loop(i, mask);
      return;
    case Op::For:
      exec_for(i, mask);
      return;
    case Op::Break:
    case Op::Return: {
      const std::uint8_t bit = i.op == Op::Break ? 2 : 1;
      for (std::uint32_t t = 0; t < n_; ++t)
        if (mask[t]) {
          exited_[t] |= bit;
          mask[t] = 0;
        }
      return;
    }
    case Op::Barrier:
      return;  // every thread of the chunk is here
    case Op::SgSum:
    case Op::SgMin:
    case Op::SgMax:
    case Op::SgAll:
    case Op::SgAny:
    case Op::SgBroadcast:
    case Op::SgShuffle:
    case Op::SgShuffleXor:
      exec_subgroup(i);
      return;
    case Op::MatFill:
    case Op::MatLoad:
    case Op::MatStore:
    case Op::MatMma:
      exec_matrix(i, mask);
      return;
    default:
      break;
  }
  if (is_builtin(i.op))
    exec_builtin(i);
  else if (is_metadata(i.op))
    exec_metadata(i);
  else
    exec_pure(i);
}

void Frame::exec_if(const Inst& i, Mask& mask, bool bounds) {
  std::vector<std::uint8_t> cond(n_);
  if (bounds && uniform(i.in[1])) {  // the usual pos < len with one len
    load_index(i.in[1]);
    const std::int64_t len = idx_[0];
    load_index(i.in[0]);
    for (std::uint32_t t = 0; t < n_; ++t) cond[t] = idx_[t] < len;
  } else if (bounds) {
    load_index(i.in[1]);
    std::vector<std::int64_t> len(idx_);
    load_index(i.in[0]);
    for (std::uint32_t t = 0; t < n_; ++t) cond[t] = idx_[t] < len[t];
  } else {
    const std::uint8_t* c = reg<std::uint8_t>(i.in[0]);
    const bool u = uniform(i.in[0]);
    for (std::uint32_t t = 0; t < n_; ++t) cond[t] = c[u ? 0 : t];
  }
  Mask m(n_);
  for (std::uint32_t t = 0; t < n_; ++t) m[t] = mask[t] && cond[t];
  exec_block(i.blocks[0], m);
  if (i.blocks.size() > 1 && !i.blocks[1].empty()) {
    for (std::uint32_t t = 0; t < n_; ++t) m[t] = mask[t] && !cond[t];
    exec_block(i.blocks[1], m);
  }
  refresh(mask);
}

void Frame::exec_loop(const Inst& i, Mask& mask) {
  std::vector<std::uint8_t> saved(n_);
  for (std::uint32_t t = 0; t < n_; ++t) {
    saved[t] = exited_[t] & 2;
    exited_[t] &= 1;
  }
  Mask lm(mask), bm(n_);
  while (any(lm)) {
    bm = lm;
    exec_block(i.blocks[0], bm);
    refresh(lm);
  }
  for (std::uint32_t t = 0; t < n_; ++t) exited_[t] = (exited_[t] & 1) | saved[t];
  refresh(mask);
}

void Frame::exec_for(const Inst& i, Mask& mask) {
  std::vector<std::uint8_t> saved(n_);
  for (std::uint32_t t = 0; t < n_; ++t) {
    saved[t] = exited_[t] & 2;
    exited_[t] &= 1;
  }
  with_elem(info(i.out).type.elem, [&](auto te) {
    constexpr Elem E = decltype(te)::value;
    using T = Reg<E>;
    if constexpr (std::is_integral_v<T> && E != Elem::Bool) {
      const T* start = reg<T>(i.in[0]);
      const T* end = reg<T>(i.in[1]);
      const T* step = reg<T>(i.in[2]);
      T* iv = reg<T>(i.out);
      Mask lm(mask), bm(n_);
      if (uniform(i.out)) {
        for (T x = start[0]; x < end[0]; x = static_cast<T>(x + step[0])) {
          if (!any(lm)) break;
          iv[0] = x;
          bm = lm;
          exec_block(i.blocks[0], bm);
          refresh(lm);
        }
      } else {
        const std::size_t s0 = uniform(i.in[0]) ? 0 : 1, s1 = uniform(i.in[1]) ? 0 : 1,
                          s2 = uniform(i.in[2]) ? 0 : 1;
        for (std::uint32_t t = 0; t < n_; ++t) iv[t] = start[t * s0];
        for (;;) {
          bool live = false;
          for (std::uint32_t t = 0; t < n_; ++t) {
            lm[t] = lm[t] && iv[t] < end[t * s1];
            live |= lm[t] != 0;
          }
          if (!live) break;
          bm = lm;
          exec_block(i.blocks[0], bm);
          refresh(lm);
          for (std::uint32_t t = 0; t < n_; ++t) iv[t] = static_cast<T>(iv[t] + step[t * s2]);
        }
      }
    }
  });
  for (std::uint32_t t = 0; t < n_; ++t) exited_[t] = (exited_[t] & 1) | saved[t];
  refresh(mask);
}

// ---- memory ------------------------------------------------------------------------------------

void Frame::load_index(VarId v) {
  const bool u = uniform(v);
  with_elem(info(v).type.elem, [&](auto te) {
    using T = Reg<decltype(te)::value>;
    const T* r = reg<T>(v);
    for (std::uint32_t t = 0; t < n_; ++t) idx_[t] = static_cast<std::int64_t>(r[u ? 0 : t]);
  });
}

std::byte* Frame::mem_base(VarId m, std::uint32_t t, std::uint64_t& len) {
  const VarInfo& mi = info(m);
  const std::size_t rb = static_cast<std::size_t>(eval::reg_bytes(mi.type.elem));
  switch (mi.kind) {
    case VarKind::Buffer: {
      const auto a = static_cast<std::size_t>(p_.arg_of_[m]);
      len = a_.len[a];
      return a_.mem[a];
    }
    case VarKind::Shared:
      len = mi.length;
      return arena_.data() + p_.offset_[m] + std::size_t{t / p_.wg_threads_} * mi.length * rb;
    default:
      len = mi.length;
      return arena_.data() + p_.offset_[m] + std::size_t{t} * mi.length * rb;
  }
}

void Frame::exec_load(const Inst& i, const Mask& mask) {
  const VarId m = i.in[0];
  const VarInfo& mi = info(m);
  const int lanes = info(i.out).type.lanes;
  load_index(i.in[1]);
  with_elem(mi.type.elem, [&](auto te) {
    constexpr Elem E = decltype(te)::value;
    using T = Reg<E>;
    T* out = reg<T>(i.out);
    const bool buf = mi.kind == VarKind::Buffer;
    if constexpr (E != Elem::F16 && E != Elem::BF16 && E != Elem::Bool) {
      if (buf) {  // the common case: one base for every thread, elements in register layout
        std::uint64_t len;
        const T* src = reinterpret_cast<const T*>(mem_base(m, 0, len));
        for (std::uint32_t t = 0; t < n_; ++t) {
          if (!mask[t]) continue;
          const std::int64_t ix = idx_[t];
          if (ix < 0 || static_cast<std::uint64_t>(ix + 1) * lanes > len)
            out_of_bounds("load", ix, len);
          for (int l = 0; l < lanes; ++l)
            out[t * lanes + l] = src[static_cast<std::size_t>(ix) * lanes + l];
        }
        return;
      }
    }
    for (std::uint32_t t = 0; t < n_; ++t) {
      if (!mask[t]) continue;
      std::uint64_t len;
      std::byte* base = mem_base(m, t, len);
      const std::int64_t ix = idx_[t];
      if (ix < 0 || static_cast<std::uint64_t>(ix + 1) * lanes > len)
        out_of_bounds("load", ix, len);
      for (int l = 0; l < lanes; ++l) {
        const std::size_t e = static_cast<std::size_t>(ix) * lanes + l;
        out[t * lanes + l] = buf ? read_mem_elem<E>(base, e) : reinterpret_cast<T*>(base)[e];
      }
    }
  });
}

void Frame::exec_store(const Inst& i, const Mask& mask) {
  const VarId m = i.in[0], val = i.in[2];
  const VarInfo& mi = info(m);
  const int lanes = info(val).type.lanes;
  const std::size_t sv = uniform(val) ? 0 : 1;
  load_index(i.in[1]);
  with_elem(mi.type.elem, [&](auto te) {
    constexpr Elem E = decltype(te)::value;
    using T = Reg<E>;
    const T* v = reg<T>(val);
    const bool buf = mi.kind == VarKind::Buffer;
    if constexpr (E != Elem::F16 && E != Elem::BF16 && E != Elem::Bool) {
      if (buf) {
        std::uint64_t len;
        T* dst = reinterpret_cast<T*>(mem_base(m, 0, len));
        for (std::uint32_t t = 0; t < n_; ++t) {
          if (!mask[t]) continue;
          const std::int64_t ix = idx_[t];
          if (ix < 0 || static_cast<std::uint64_t>(ix + 1) * lanes > len)
            out_of_bounds("store", ix, len);
          for (int l = 0; l < lanes; ++l)
            dst[static_cast<std::size_t>(ix) * lanes + l] = v[(t * lanes + l) * sv];
        }
        return;
      }
    }
    for (std::uint32_t t = 0; t < n_; ++t) {
      if (!mask[t]) continue;
      std::uint64_t len;
      std::byte* base = mem_base(m, t, len);
      const std::int64_t ix = idx_[t];
      if (ix < 0 || static_cast<std::uint64_t>(ix + 1) * lanes > len)
        out_of_bounds("store", ix, len);
      for (int l = 0; l < lanes; ++l) {
        const std::size_t e = static_cast<std::size_t>(ix) * lanes + l;
        const T x = v[(t * lanes + l) * sv];
        if (buf)
          write_mem_elem<E>(base, e, x);
        else
          reinterpret_cast<T*>(base)[e] = x;
      }
    }
  });
}

void Frame::exec_assign(const Inst& i, const Mask& mask) {
  const VarId dst = i.in[0], src = i.in[1];
  const std::size_t bytes =
      static_cast<std::size_t>(eval::reg_bytes(info(dst).type.elem)) * info(dst).type.lanes;
  std::byte* d = reg<std::byte>(dst);
  const std::byte* s = reg<std::byte>(src);
  const std::size_t ss = uniform(src) ? 0 : bytes;
  for (std::uint32_t t = 0; t < n_; ++t)
    if (mask[t]) std::memcpy(d + t * bytes, s + t * ss, bytes);
}

namespace {

template <class T>
T atomic_apply(AtomicOp op, T* p, T v, T cmp, bool shared) {
  const auto combine = [&](T old) -> T {
    switch (op) {
      case AtomicOp::Add:
        return eval::fn::Add{}(old, v);
      case AtomicOp::Min:
        return eval::fn::Min{}(old, v);
      case AtomicOp::Max:
        return eval::fn::Max{}(old, v);
      case AtomicOp::Exchange:
        return v;
      case AtomicOp::CompareExchange:  // by bits, as GPUs compare (-0 != +0, NaN == NaN)
        return std::memcmp(&old, &cmp, sizeof(T)) == 0 ? v : old;
    }
    return old;
  };
  if (shared) {  // only this thread's chunk touches its shared memory
    const T old = *p;
    *p = combine(old);
    return old;
  }
  std::atomic_ref<T> ref(*p);
  T old = ref.load();
  while (!ref.compare_exchange_weak(old, combine(old))) {
  }
  return old;
}

}  // namespace

void Frame::exec_atomic(const Inst& i, const Mask& mask) {
  const VarId m = i.in[0];
  const VarInfo& mi = info(m);
  const auto op = static_cast<AtomicOp>(i.aux);
  load_index(i.in[1]);
  with_elem(mi.type.elem, [&](auto te) {
    constexpr Elem E = decltype(te)::value;
    using T = Reg<E>;
    if constexpr (E == Elem::I32 || E == Elem::U32 || E == Elem::F32 || E == Elem::I64) {
      const T* v = reg<T>(i.in[2]);
      const std::size_t sv = uniform(i.in[2]) ? 0 : 1;
      const T* c = i.in[3] != kNoVar ? reg<T>(i.in[3]) : nullptr;
      const std::size_t sc = (c && uniform(i.in[3])) ? 0 : 1;
      T* out = reg<T>(i.out);
      for (std::uint32_t t = 0; t < n_; ++t) {
        if (!mask[t]) continue;
        std::uint64_t len;
        std::byte* base = mem_base(m, t, len);
        const std::int64_t ix = idx_[t];
        if (ix < 0 || static_cast<std::uint64_t>(ix) >= len) out_of_bounds("atomic", ix, len);
        T* p = reinterpret_cast<T*>(base) + ix;
        out[t] = atomic_apply<T>(op, p, v[t * sv], c ? c[t * sc] : T{}, mi.kind != VarKind::Buffer);
      }
    }
  });
}

// ---- builtins and metadata ---------------------------------------------------------------------

void Frame::exec_builtin(const Inst& i) {
  const auto& wg = p_.k_.workgroup;
  const Grid& g = a_.grid;
  const std::uint32_t T = p_.wg_threads_;
  std::uint32_t* out = reg<std::uint32_t>(i.out);
  const auto axis = i.aux;
  const auto local3 = [&](std::uint32_t local, std::uint32_t ax) {
    return ax == 0 ? local % wg[0] : ax == 1 ? (local / wg[0]) % wg[1] : local / (wg[0] * wg[1]);
  };
  const auto block3 = [&](std::uint64_t w, std::uint32_t ax) {
    return static_cast<std::uint32_t>(ax == 0   ? w % g.x
                                      : ax == 1 ? (w / g.x) % g.y
                                                : w / (std::uint64_t{g.x} * g.y));
  };
  const std::uint32_t gd[3] = {g.x, g.y, g.z};
  switch (i.op) {
    case Op::BlockDim:
      out[0] = wg[axis];
      return;
    case Op::GridDim:
      out[0] = gd[axis];
      return;
    case Op::SubgroupSize:
      out[0] = p_.subgroup_;
      return;
    default:
      break;
  }
  if (i.op == Op::AbsolutePos || i.op == Op::LocalLinearIdx) {  // no division per thread
    const auto first = static_cast<std::uint32_t>(w0_ * T);
    for (std::uint32_t t = 0; t < n_; ++t) out[t] = i.op == Op::AbsolutePos ? first + t : t;
    if (i.op == Op::LocalLinearIdx)
      for (std::uint32_t t = 0; t < n_; ++t) out[t] %= T;
    return;
  }
  for (std::uint32_t t = 0; t < n_; ++t) {
    const std::uint32_t local = t % T;
    const std::uint64_t w = w0_ + t / T;
    std::uint32_t r = 0;
    switch (i.op) {
      case Op::ThreadIdx:
        r = local3(local, axis);
        break;
      case Op::BlockIdx:
        r = block3(w, axis);
        break;
      case Op::GlobalIdx:
        r = block3(w, axis) * wg[axis] + local3(local, axis);
        break;
      case Op::LocalLinearIdx:
        r = local;
        break;
      case Op::AbsolutePos:
        r = static_cast<std::uint32_t>(w * T + local);
        break;
      case Op::LaneId:
        r = local % p_.subgroup_;
        break;
      default:
        break;
    }
    out[t] = r;
  }
}

void Frame::exec_metadata(const Inst& i) {
  const VarId b = i.in[0];
  const auto a = static_cast<std::size_t>(p_.arg_of_[b]);
  const std::uint32_t* w = a_.info + p_.layout_.offset[a];
  const std::uint32_t rank = info(b).rank;
  std::uint32_t* out = reg<std::uint32_t>(i.out);
  if (i.op == Op::BufLen) {
    out[0] = w[0];
    return;
  }
  const std::uint32_t base = i.op == Op::BufShape ? 1 : 1 + rank;
  const std::uint32_t* dim = reg<std::uint32_t>(i.in[1]);
  const std::size_t n = uniform(i.out) ? 1 : n_;
  const std::size_t sd = uniform(i.in[1]) ? 0 : 1;
  for (std::size_t t = 0; t < n; ++t) {
    const std::uint32_t d = dim[t * sd];
    out[t] = d < rank ? w[base + d] : 0;
  }
}

}  // namespace ember::kernel::cpu
