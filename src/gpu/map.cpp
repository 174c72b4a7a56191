// The element-wise kernel generator of the GPU backends: one kernel per expression, dtypes,
// rank and layout, written in ember::kernel and compiled by the device's runtime.
#include "map.hpp"

#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "ember/core/error.hpp"
#include "ember/gpu/ops.hpp"
#include "ember/kernel/cache.hpp"
#include "kernels.hpp"

namespace ember::gpu {

namespace {

using namespace detail::names;

kernel::LruCache<kernel::CompiledPtr>& compiled_cache() {
  static kernel::LruCache<kernel::CompiledPtr> cache(4096);
  return cache;
}

/// Keys of kernels the device cannot run (a feature it lacks, e.g. f64 exp on Vulkan).
struct Unsupported {
  std::mutex mu;
  std::set<std::string> keys;
  bool has(const std::string& k) {
    std::lock_guard lock(mu);
    return keys.count(k) != 0;
  }
  void add(const std::string& k) {
    std::lock_guard lock(mu);
    keys.insert(k);
  }
};
Unsupported& unsupported() {
  static Unsupported u;
  return u;
}

/// "x0", "s1", ...: argument names (appended, which keeps GCC 12's -Wrestrict quiet).
std::string numbered(char c, std::size_t i) {
  std::string s(1, c);
  s += std::to_string(i);
  return s;
}

/// True when every input is a contiguous tensor of the output's shape.
bool flat(std::span<const GpuTensor> in, const Shape& out) {
  for (const GpuTensor& t : in)
    if (!(t.shape == out) || !t.is_contiguous()) return false;
  return true;
}

std::uint32_t u32_of(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<std::uint32_t>::max())
    throw UnsupportedError(std::string("[gpu] ") + what + " " + std::to_string(v) +
                           " exceeds the kernels' 32-bit indices");
  return static_cast<std::uint32_t>(v);
}

kernel::Kernel build(const detail::MultiMapSpec& spec, std::span<const GpuTensor> in,
                     std::uint32_t rank, bool is_flat, int lanes) {
  const char* what = spec.key.c_str();
  KernelBuilder kb("map_" + (spec.name.empty() ? spec.key : spec.name), {kGroup, 1, 1});
  std::vector<Mem> xs;
  for (std::size_t i = 0; i < in.size(); ++i)
    xs.push_back(kb.buffer(numbered('x', i), elem_of(in[i].dtype, what), kernel::Access::Read,
                           is_flat ? 1 : rank));
  std::vector<Mem> ys;
  for (std::size_t j = 0; j < spec.outs.size(); ++j)
    ys.push_back(kb.buffer(spec.outs.size() == 1 ? std::string("y") : numbered('y', j),
                           elem_of(spec.outs[j], what), kernel::Access::Write, is_flat ? 1 : rank));
  std::vector<Val> scalars;
  for (std::size_t s = 0; s < spec.scalar_elems.size(); ++s)
    scalars.push_back(kb.scalar(numbered('s', s), spec.scalar_elems[s]));
  // Each input's first element (in vectors of `lanes` on the flat path) from the start of its
  // buffer: buffers are bound from their start, since a runtime may only bind at aligned
  // offsets (Vulkan: 16 to 256 bytes) and a view may begin anywhere.
  std::vector<Val> starts;
  for (std::size_t i = 0; i < in.size(); ++i)
    starts.push_back(kb.scalar(numbered('o', i), Elem::U32));
  Val n = kb.scalar("n", Elem::U32);  // threads' work items: elements, or vectors of `lanes`
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    std::vector<Val> vals;
    if (is_flat) {
      for (std::size_t i = 0; i < xs.size(); ++i)
        vals.push_back(lanes == 1 ? Val(xs[i][pos + starts[i]])
                                  : xs[i].load(pos + starts[i], lanes));
    } else {
      // Decompose the output's linear index over its shape; each input's offset follows
      // its own strides (0 along broadcast dims).
      std::vector<Val> off = starts;
      Val rem = pos;
      for (std::uint32_t d = rank; d-- > 0;) {
        Val extent = ys[0].shape(d);
        Val c = d == 0 ? rem : rem % extent;
        if (d) rem = rem / extent;
        for (std::size_t i = 0; i < xs.size(); ++i) off[i] = off[i] + c * xs[i].stride(d);
      }
      for (std::size_t i = 0; i < xs.size(); ++i) vals.push_back(xs[i][off[i]]);
    }
    const std::vector<Val> rs = spec.expr(vals, scalars);
    for (std::size_t j = 0; j < ys.size(); ++j) {
      Val r = rs.at(j);
      const Elem out = elem_of(spec.outs[j], what);
      if (r.elem() != out) r = kernel::cast(r, out);
      if (lanes == 1)
        ys[j][pos] = r;
      else
        ys[j].store(pos, r);
    }
  });
  return kb.build();
}

/// One output of a single-output spec.
detail::MultiMapSpec multi(const MapSpec& spec) {
  detail::MultiMapSpec m{spec.key, {spec.out}, spec.scalar_elems, {}, 1, {}, nullptr};
  m.expr = [f = spec.expr](std::span<const Val> in, std::span<const Val> sc) {
    return std::vector<Val>{f(in, sc)};
  };
  return m;
}

}  // namespace

GpuTensor map(const MapSpec& spec, std::span<const GpuTensor> inputs, const Shape& out_shape,
              std::span<const ScalarArg> scalars, unsigned reusable) {
  std::optional<GpuTensor> r = try_map(spec, inputs, out_shape, scalars, reusable);
  if (!r) {
    const kernel::DeviceProperties& props = inputs.front().compute().properties();
    const kernel::Kernel k = build(multi(spec), inputs, 1, true, 1);
    ember::detail::fail<UnsupportedError>("gpu " + spec.key, props.name, " lacks ",
                                          kernel::missing_features(props, kernel::features(k)));
  }
  return std::move(*r);
}

std::optional<GpuTensor> try_map(const MapSpec& spec, std::span<const GpuTensor> inputs,
                                 const Shape& out_shape, std::span<const ScalarArg> scalars,
                                 unsigned reusable) {
  auto r = detail::try_map_multi(multi(spec), inputs, out_shape, scalars, reusable);
  if (!r) return std::nullopt;
  return std::move(r->front());
}

std::optional<std::vector<GpuTensor>> detail::try_map_multi(const MultiMapSpec& spec,
                                                            std::span<const GpuTensor> inputs,
                                                            const Shape& out_shape,
                                                            std::span<const ScalarArg> scalars,
                                                            unsigned reusable) {
  kernel::ComputeDevice& dev = inputs.front().compute();
  for (const GpuTensor& t : inputs)
    if (&t.compute() != &dev)
      throw DeviceError("[gpu] " + spec.key + ": inputs on different devices");
  const std::uint32_t n = u32_of(out_shape.numel(), "element count");
  std::vector<GpuTensor> outs;
  if (n == 0) {
    for (DType d : spec.outs) outs.push_back(empty(out_shape, d, dev, inputs.front().device));
    return outs;
  }
  const bool is_flat = flat(inputs, out_shape);
  const auto rank = static_cast<std::uint32_t>(std::max<std::size_t>(out_shape.dims.size(), 1));
  if (rank > kernel::kMaxRank)
    throw UnsupportedError("[gpu] " + spec.key + ": rank " + std::to_string(rank) +
                           " exceeds the kernels' " + std::to_string(kernel::kMaxRank));
  // Vectors of `lanes` elements where the flat layout keeps every access aligned.
  int lanes = 1;
  if (spec.lanes > 1 && is_flat && n % static_cast<std::uint32_t>(spec.lanes) == 0) {
    lanes = spec.lanes;
    for (const GpuTensor& t : inputs)
      if (t.offset % spec.lanes != 0) lanes = 1;
  }

  std::ostringstream key;
  key << static_cast<const void*>(&dev) << '|' << spec.key << '|';
  for (DType d : spec.outs) key << static_cast<int>(d) << ',';
  for (const GpuTensor& t : inputs) key << ',' << static_cast<int>(t.dtype);
  key << '|' << (is_flat ? 0u : rank) << '|' << lanes;
  auto compiled = compiled_cache().get(key.str());
  if (!compiled) {
    if (unsupported().has(key.str())) return std::nullopt;
    kernel::Kernel k = build(spec, inputs, rank, is_flat, lanes);
    if (!kernel::missing_features(dev.properties(), kernel::features(k)).empty()) {
      unsupported().add(key.str());
      return std::nullopt;
    }
    compiled = dev.compile(k);
    compiled_cache().put(key.str(), *compiled);
    if (spec.compiles) ++*spec.compiles;
  }

  // Each result: a moved-in input's buffer when the caller allows it and it fits (each such
  // input serves one result), else new.
  unsigned free = reusable;
  for (DType d : spec.outs) {
    GpuTensor out;
    for (std::size_t i = 0; i < inputs.size() && !out.buffer; ++i) {
      const GpuTensor& t = inputs[i];
      if ((free >> i & 1u) && t.dtype == d && t.shape == out_shape && t.offset == 0 &&
          t.is_contiguous()) {
        out = t;
        free &= ~(1u << i);
      }
    }
    if (!out.buffer) out = empty(out_shape, d, dev, inputs.front().device);
    outs.push_back(std::move(out));
  }

  std::vector<std::uint32_t> shape(rank, 1);
  for (std::size_t d = 0; d < out_shape.dims.size(); ++d)
    shape[d] = u32_of(out_shape.dims[d], "dim");
  std::vector<Arg> args;
  for (const GpuTensor& t : inputs) {
    // The elements the kernel may address: from the buffer's start to the view's last.
    const std::uint64_t len = u32_of(span_of(t).second + 1, "view's last element");
    if (is_flat) {
      args.push_back(Arg::buf(t.buffer, 0, len));
      continue;
    }
    std::vector<std::uint32_t> st(rank, 0);
    for (std::size_t d = 0; d < t.shape.dims.size(); ++d)
      st[d] = t.shape.dims[d] == 1 ? 0 : u32_of(t.strides[d], "stride");
    Arg a = Arg::view(t.buffer, shape, st, 0);
    a.len = len;
    args.push_back(a);
  }
  for (const GpuTensor& out : outs)
    args.push_back(is_flat ? Arg::buf(out.buffer, 0, n) : Arg::view(out.buffer, shape));
  for (std::size_t s = 0; s < scalars.size(); ++s) {
    const ScalarArg& a = scalars[s];
    if (a.elem == Elem::I64)
      args.push_back(Arg::i64(a.i));
    else if (kernel::is_int(a.elem) || a.elem == Elem::Bool)
      args.push_back(Arg::scalar(a.elem, static_cast<double>(a.i)));
    else
      args.push_back(Arg::scalar(a.elem, a.f));
  }
  const auto per = static_cast<std::uint32_t>(lanes);
  for (const GpuTensor& t : inputs) args.push_back(Arg::u32(u32_of(t.offset, "offset") / per));
  args.push_back(Arg::u32(n / per));
  dev.launch(**compiled, kernel::grid_for((*compiled)->kernel(), n / per), args);
  return outs;
}

}  // namespace ember::gpu
