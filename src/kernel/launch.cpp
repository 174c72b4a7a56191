// Launch arguments, grids, info words, and the ComputeDevice methods shared by all runtimes.
#include "ember/kernel/launch.hpp"

#include <cstring>
#include <iostream>
#include <string>

#include "ember/kernel/device.hpp"
#include "ember/kernel/passes.hpp"
#include "eval.hpp"

namespace ember::kernel {

// ---- arguments -----------------------------------------------------------------------------

Arg Arg::buf(const Buffer& b, std::uint64_t offset, std::uint64_t len) {
  Arg a;
  a.kind = Kind::Buffer;
  a.buffer = b.get();
  a.offset = offset;
  a.len = len;
  return a;
}

Arg Arg::view(const Buffer& b, const std::vector<std::uint32_t>& shape,
              const std::vector<std::uint32_t>& strides, std::uint64_t offset) {
  if (shape.empty() || shape.size() > kMaxRank)
    detail::fail<ValueError>("launch", "a view needs 1 to ", kMaxRank, " dims, got ", shape.size());
  if (!strides.empty() && strides.size() != shape.size())
    detail::fail<ValueError>("launch", "a view of rank ", shape.size(), " got ", strides.size(),
                             " strides");
  Arg a = buf(b, offset);
  a.rank = static_cast<std::uint32_t>(shape.size());
  std::uint32_t s = 1;
  for (std::size_t d = a.rank; d-- > 0;) {
    a.shape[d] = shape[d];
    a.strides[d] = strides.empty() ? s : strides[d];
    s *= shape[d];
  }
  return a;
}

Arg Arg::view(const Buffer& b, std::initializer_list<std::uint32_t> shape,
              std::initializer_list<std::uint32_t> strides, std::uint64_t offset) {
  return view(b, std::vector<std::uint32_t>(shape), std::vector<std::uint32_t>(strides), offset);
}

Arg Arg::scalar(Elem e, double v) {
  Arg a;
  a.kind = Kind::Scalar;
  a.elem = e;
  eval::with_elem(e, [&](auto te) {
    constexpr Elem E = decltype(te)::value;
    using T = eval::Reg<E>;
    T r;
    if constexpr (std::is_floating_point_v<T>)
      r = eval::round_to<E>(static_cast<T>(v));
    else
      r = eval::cast_elem<E, Elem::F64>(v);
    std::memcpy(&a.bits, &r, sizeof(T));
  });
  return a;
}

Arg Arg::i64(std::int64_t v) {
  Arg a;
  a.kind = Kind::Scalar;
  a.elem = Elem::I64;
  std::memcpy(&a.bits, &v, 8);
  return a;
}

// ---- grids and layout ------------------------------------------------------------------------

Grid grid_for(const Kernel& k, std::uint64_t threads, std::uint32_t max_x) {
  const std::uint64_t wg = k.workgroup_threads();
  const std::uint64_t groups = std::max<std::uint64_t>(1, (threads + wg - 1) / wg);
  if (groups <= max_x) return Grid{static_cast<std::uint32_t>(groups), 1, 1};
  const std::uint64_t y = (groups + max_x - 1) / max_x;
  if (y > 65535)
    detail::fail<UnsupportedError>("launch " + k.name, threads, " threads need more than ", max_x,
                                   " x 65535 workgroups");
  return Grid{max_x, static_cast<std::uint32_t>(y), 1};
}

bool covers_exactly(const Kernel& k, Grid g, std::uint64_t threads) {
  return g.count() * k.workgroup_threads() == threads;
}

InfoLayout::InfoLayout(const Kernel& k) {
  for (VarId a : k.args) {
    offset.push_back(words);
    const VarInfo& v = k.vars[a];
    if (v.kind == VarKind::Buffer)
      words += 1 + 2 * v.rank;
    else
      words += elem_bytes(v.type.elem) == 8 ? 2 : 1;
  }
  if (words > kMaxInfoWords)
    detail::fail<UnsupportedError>("kernel " + k.name, "arguments need ", words,
                                   " info words; at most ", kMaxInfoWords);
}

void pack_info(const Kernel& k, const InfoLayout& layout, const ComputeDevice& device, Grid grid,
               const Arg* args, std::size_t nargs, std::uint32_t* words) {
  const std::string op = "launch " + k.name;
  if (nargs != k.args.size())
    detail::fail<ValueError>(op, "expects ", k.args.size(), " arguments, got ", nargs);
  const auto& mg = device.properties().max_grid;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > mg[0] || grid.y > mg[1] ||
      grid.z > mg[2])
    detail::fail<ValueError>(op, "grid (", grid.x, ", ", grid.y, ", ", grid.z,
                             ") is empty or exceeds the device's (", mg[0], ", ", mg[1], ", ",
                             mg[2], ")");
  for (std::size_t i = 0; i < nargs; ++i) {
    const VarInfo& v = k.vars[k.args[i]];
    const Arg& a = args[i];
    std::uint32_t* w = words + layout.offset[i];
    const std::string what = "argument " + std::to_string(i) + " '" + v.name + "'";
    if (v.kind == VarKind::Scalar) {
      if (a.kind != Arg::Kind::Scalar)
        detail::fail<ValueError>(op, what, " is a scalar, got a buffer");
      if (a.elem != v.type.elem)
        detail::fail<DTypeError>(op, what, " is ", elem_name(v.type.elem), ", got ",
                                 elem_name(a.elem));
      w[0] = static_cast<std::uint32_t>(a.bits);
      if (elem_bytes(v.type.elem) == 8) w[1] = static_cast<std::uint32_t>(a.bits >> 32);
      continue;
    }
    if (a.kind != Arg::Kind::Buffer || a.buffer == nullptr)
      detail::fail<ValueError>(op, what, " is a buffer, got a scalar or a null buffer");
    if (&a.buffer->device() != &device)
      detail::fail<DeviceError>(op, what, " is on ", a.buffer->device().properties().name,
                                ", not on ", device.properties().name);
    const std::uint64_t cap =
        a.buffer->bytes() / static_cast<std::uint64_t>(elem_bytes(v.type.elem));
    if (a.offset > cap)
      detail::fail<ValueError>(op, what, ": offset ", a.offset, " beyond the buffer's ", cap,
                               " elements");
    const std::uint64_t len = a.len ? a.len : cap - a.offset;
    if (a.offset + len > cap)
      detail::fail<ValueError>(op, what, ": ", len, " elements from offset ", a.offset,
                               " exceed the buffer's ", cap);
    if (len >= (std::uint64_t{1} << 32))
      detail::fail<UnsupportedError>(op, what, " has ", len,
                                     " elements; kernels index with u32 (< 2^32)");
    const std::uint32_t rank = a.rank ? a.rank : 1;
    if (rank != v.rank)
      detail::fail<ValueError>(op, what, " has rank ", v.rank, " in the kernel, got a rank-", rank,
                               " view");
    w[0] = static_cast<std::uint32_t>(len);
    std::uint64_t last = 0;
    bool empty = false;
    for (std::uint32_t d = 0; d < rank; ++d) {
      const std::uint32_t s = a.rank ? a.shape[d] : static_cast<std::uint32_t>(len);
      const std::uint32_t st = a.rank ? a.strides[d] : 1;
      w[1 + d] = s;
      w[1 + rank + d] = st;
      if (s == 0)
        empty = true;
      else
        last += std::uint64_t{s - 1} * st;
    }
    if (!empty && len > 0 && last >= len)
      detail::fail<ValueError>(op, what, ": the view reaches element ", last, " of ", len);
  }
}

int choose_lanes(Elem e, std::uint64_t n, std::uint64_t offset, int max_lanes) {
  for (int l : {8, 4, 2}) {
    if (l <= max_lanes && l * elem_bytes(e) <= 16 && n % l == 0 && offset % l == 0) return l;
  }
  return 1;
}

// ---- ComputeDevice -----------------------------------------------------------------------------

BufferStorage::~BufferStorage() {
  device_->free_block(block_);
}

Buffer ComputeDevice::alloc(std::size_t bytes) {
  const CachingPool::Block b = allocate_block(bytes);
  return std::make_shared<BufferStorage>(this, b, bytes);
}

Buffer ComputeDevice::upload(const void* src, std::size_t bytes) {
  Buffer b = alloc(bytes);
  write(b, 0, src, bytes);
  return b;
}

void ComputeDevice::launch(const CompiledKernel& k, Grid grid, std::span<const Arg> args) {
  std::uint32_t words[kMaxInfoWords];
  pack_info(k.kernel(), k.layout(), *this, grid, args.data(), args.size(), words);
  enqueue(k, grid, args, words);
}

void ComputeDevice::check_range(const char* op, const Buffer& b, std::size_t offset,
                                std::size_t bytes) const {
  if (!b) detail::fail<ValueError>(op, "null buffer");
  if (&b->device() != this)
    detail::fail<DeviceError>(op, "the buffer is on ", b->device().properties().name, ", not on ",
                              properties().name);
  if (offset > b->bytes() || bytes > b->bytes() - offset)
    detail::fail<ValueError>(op, "bytes [", offset, ", ", offset + bytes, ") exceed the buffer's ",
                             b->bytes());
}

void ComputeDevice::log_kernel(const Kernel& k, const std::string& target,
                               const std::string& code) {
  if (!kernel_log_enabled()) return;
  std::cerr << "==== ember kernel " << k.name << " (" << target << ")\n" << to_string(k);
  if (!code.empty()) std::cerr << "---- generated code\n" << code << "\n";
  std::cerr << "====\n";
}

std::string missing_features(const DeviceProperties& p, const Features& f) {
  std::string m;
  const auto need = [&](bool used, bool has, const char* what) {
    if (used && !has) m += (m.empty() ? "" : ", ") + std::string(what);
  };
  need(f.f16, p.f16, "f16");
  need(f.bf16, p.bf16, "bf16");
  need(f.f64, p.f64, "f64");
  need(f.i64, p.i64, "i64");
  need(f.u8, p.u8, "8-bit storage");
  need(f.f64_math, p.f64_math, "f64 transcendental functions");
  need(f.float_atomics, p.float_atomics, "f32 atomics");
  need(f.i64_atomics, p.i64_atomics, "i64 atomics");
  need(f.subgroups, p.subgroups, "subgroup operations");
  need(f.matrix, p.matrix, "matrix units (16x16x16 fragments)");
  return m;
}

}  // namespace ember::kernel
