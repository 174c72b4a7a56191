// oneDNN path of the CPU conv1d/2d/3d and conv_transpose1d/2d/3d for f32 and of the conv
// gradients (convolution backward-data and backward-weights primitives), used when Ember is
// built with oneDNN (EMBER_HAVE_DNNL). Primitives are cached by kind, shape and options;
// tensors are handed to oneDNN in plain layout (NC[D]HW / [G]OI[D]HW) and reordered to the
// layout oneDNN picks for the fastest kernel.
#include "conv_kernels.hpp"
#include "ember/cpu/conv_fused.hpp"

#ifdef EMBER_HAVE_DNNL

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <list>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>

#include "dnnl_cache.hpp"

namespace ember::cpu::conv {

namespace {

using dnnl::memory;

/// What a cached primitive computes.
enum class Kind : char {
  Forward = 'C',     ///< y = conv(x, w) (+ bias)
  Transposed = 'T',  ///< y = conv_transpose(x, w) (+ bias), oneDNN's deconvolution
  BackData = 'D',    ///< dx = convolution backward-data(dy, w)
  BackWeights = 'W'  ///< dw = convolution backward-weights(x, dy)
};

/// One cached primitive: two inputs and one output, each with the user's plain layout, the
/// layout the kernel wants and a reorder between them when they differ (user -> kernel for
/// inputs, kernel -> user for the output).
struct Entry {
  dnnl::primitive prim;
  std::array<int, 3> arg{};  // DNNL_ARG_* of input 0, input 1, output
  std::array<memory::desc, 3> user, kern;
  std::array<std::optional<dnnl::reorder>, 3> reo;
  memory::desc k_bias;
  bool bias = false;
  /// Fused forward with a sum post-op: reorders the residual (plain) into the kernel's dst.
  std::optional<dnnl::reorder> reo_dst_in;
};

using dnnl_util::engine;
using Cache = dnnl_util::LruCache<Entry, 128>;

Cache& cache() {
  static Cache c;
  return c;
}

memory::dims to_dims(const Shape& s) {
  return memory::dims(s.dims.begin(), s.dims.end());
}

memory::format_tag plain_tag(std::size_t rank) {
  switch (rank) {
    case 3:
      return memory::format_tag::ncw;
    case 4:
      return memory::format_tag::nchw;
    case 5:
      return memory::format_tag::ncdhw;
    default:
      return memory::format_tag::goidhw;
  }
}

/// A primitive of kind `kind` for a convolution from x `xs` to y `ys` with weight `ws`
/// ([C_out, C_in/g, k], or for Transposed [C_in, C_out/g, k]).
std::shared_ptr<Entry> build(Kind kind, const Shape& xs, const Shape& ws, const Shape& ys,
                             bool bias, const std::vector<i64>& s, const std::vector<i64>& p,
                             const std::vector<i64>& d, i64 groups, bool relu = false,
                             bool sum = false, bool winograd = false) {
  using dt = memory::data_type;
  using ft = memory::format_tag;
  const bool transposed = kind == Kind::Transposed;
  const std::size_t nd = xs.rank() - 2;
  auto e = std::make_shared<Entry>();
  e->bias = bias;
  const memory::desc src_md(to_dims(xs), dt::f32, plain_tag(xs.rank()));
  const memory::desc dst_md(to_dims(ys), dt::f32, plain_tag(ys.rank()));
  memory::desc w_md;
  const i64 c_out = ys[1];
  if (!transposed && groups == 1) {
    w_md = memory::desc(to_dims(ws), dt::f32, plain_tag(ws.rank()));
  } else if (transposed && groups == 1) {
    // Logical dims [C_out, C_in, k], stored [C_in, C_out, k] (io[d]hw).
    memory::dims wd{ws[1], ws[0]};
    for (std::size_t i = 2; i < ws.rank(); ++i) wd.push_back(ws[i]);
    const auto tag = nd == 1 ? ft::bac : nd == 2 ? ft::iohw : ft::iodhw;
    w_md = memory::desc(wd, dt::f32, tag);
  } else {
    // Logical dims [G, C_out/G, C_in/G, k]; stored goi.. (conv) or gio.. (transposed).
    const i64 c_in = xs[1];
    memory::dims wd{groups, c_out / groups, c_in / groups};
    for (std::size_t i = 2; i < ws.rank(); ++i) wd.push_back(ws[i]);
    const auto tag = transposed ? (nd == 1   ? ft::acbd
                                   : nd == 2 ? ft::giohw
                                             : ft::giodhw)
                                : (nd == 1   ? ft::goiw
                                   : nd == 2 ? ft::goihw
                                             : ft::goidhw);
    w_md = memory::desc(wd, dt::f32, tag);
  }
  // Few input channels (an image stem, C_in 3) and a small batch: the plain source as it
  // is (oneDNN's jit kernel reads NCHW there) instead of a reorder to brgconv's layout.
  // ResNet-18's stem: batch 1 1.2 ms instead of 1.2 + 1.0 (reorder); batch 32 46.0 ms
  // instead of 42.6 + 2.1, hence the batch bound.
  const bool plain_src = kind == Kind::Forward && groups == 1 && xs[1] < 8 && xs[0] <= 4;
  const memory::desc src_any = plain_src ? src_md : memory::desc(src_md.dims(), dt::f32, ft::any);
  const memory::desc dst_any(dst_md.dims(), dt::f32, ft::any);
  const memory::desc w_any(w_md.dims(), dt::f32, ft::any);
  const memory::desc b_md = bias ? memory::desc({c_out}, dt::f32, ft::x) : memory::desc();
  memory::dims dil(d.begin(), d.end());
  for (auto& v : dil) v -= 1;  // oneDNN counts dilation from 0
  const memory::dims strides(s.begin(), s.end()), pad(p.begin(), p.end());
  // Right padding that makes oneDNN's output size equal PyTorch's floor formula (for the
  // backward kinds: the x and y sizes given, whatever rows the forward formula drops).
  memory::dims pad_r(nd);
  for (std::size_t i = 0; i < nd; ++i) {
    const i64 ker = (ws[2 + i] - 1) * d[i] + 1;
    pad_r[i] = transposed ? (xs[2 + i] - 1) * s[i] + ker - p[i] - ys[2 + i]
                          : (ys[2 + i] - 1) * s[i] + ker - xs[2 + i] - p[i];
  }
  const auto alg = dnnl::algorithm::convolution_direct;
  auto& eng = engine();
  switch (kind) {
    case Kind::Transposed: {
      dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                             dnnl::algorithm::deconvolution_direct, src_any, w_any,
                                             b_md, dst_any, strides, dil, pad, pad_r);
      dnnl::deconvolution_forward::primitive_desc pd(desc, eng);
      e->prim = dnnl::deconvolution_forward(pd);
      e->arg = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
      e->user = {src_md, w_md, dst_md};
      e->kern = {pd.src_desc(), pd.weights_desc(), pd.dst_desc()};
      e->k_bias = pd.bias_desc();
      break;
    }
    case Kind::Forward: {
      // Fused epilogue (conv_fused): dst += residual (sum), then ReLU.
      dnnl::primitive_attr attr;
      if (relu || sum) {
        dnnl::post_ops po;
        if (sum) po.append_sum(1.f);
        if (relu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
        attr.set_post_ops(po);
      }
      // Winograd when asked for and oneDNN has a kernel for the case (3x3, stride 1, channels
      // in multiples of its vector width), else direct.
      std::optional<dnnl::convolution_forward::primitive_desc> pdo;
      if (winograd) {
        try {
          dnnl::convolution_forward::desc wdesc(dnnl::prop_kind::forward_inference,
                                                dnnl::algorithm::convolution_winograd,
                                                memory::desc(src_md.dims(), dt::f32, ft::any),
                                                w_any, b_md, dst_any, strides, dil, pad, pad_r);
          pdo.emplace(wdesc, attr, eng);
        } catch (const dnnl::error&) {
          pdo.reset();
        }
      }
      if (!pdo) {
        dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src_any,
                                             w_any, b_md, dst_any, strides, dil, pad, pad_r);
        pdo.emplace(desc, attr, eng);
      }
      const auto& pd = *pdo;
      e->prim = dnnl::convolution_forward(pd);
      e->arg = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
      e->user = {src_md, w_md, dst_md};
      e->kern = {pd.src_desc(), pd.weights_desc(), pd.dst_desc()};
      e->k_bias = pd.bias_desc();
      break;
    }
    case Kind::BackData:
    case Kind::BackWeights: {
      // The backward primitives take a forward-training primitive as a hint.
      dnnl::convolution_forward::desc fdesc(dnnl::prop_kind::forward_training, alg, src_any, w_any,
                                            dst_any, strides, dil, pad, pad_r);
      dnnl::convolution_forward::primitive_desc hint(fdesc, eng);
      if (kind == Kind::BackData) {
        dnnl::convolution_backward_data::desc desc(alg, src_any, w_any, dst_any, strides, dil, pad,
                                                   pad_r);
        dnnl::convolution_backward_data::primitive_desc pd(desc, eng, hint);
        e->prim = dnnl::convolution_backward_data(pd);
        e->arg = {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC};
        e->user = {dst_md, w_md, src_md};
        e->kern = {pd.diff_dst_desc(), pd.weights_desc(), pd.diff_src_desc()};
      } else {
        dnnl::convolution_backward_weights::desc desc(alg, src_any, w_any, dst_any, strides, dil,
                                                      pad, pad_r);
        dnnl::convolution_backward_weights::primitive_desc pd(desc, eng, hint);
        e->prim = dnnl::convolution_backward_weights(pd);
        e->arg = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS};
        e->user = {src_md, dst_md, w_md};
        e->kern = {pd.src_desc(), pd.diff_dst_desc(), pd.diff_weights_desc()};
      }
      break;
    }
  }
  for (int i = 0; i < 3; ++i) {
    if (e->kern[i] == e->user[i]) continue;
    e->reo[i] =
        i < 2 ? dnnl::reorder(dnnl::reorder::primitive_desc(eng, e->user[i], eng, e->kern[i]))
              : dnnl::reorder(dnnl::reorder::primitive_desc(eng, e->kern[i], eng, e->user[i]));
  }
  if (sum && e->reo[2])
    e->reo_dst_in = dnnl::reorder(dnnl::reorder::primitive_desc(eng, e->user[2], eng, e->kern[2]));
  return e;
}

/// Sets OpenMP's thread count for oneDNN in this scope.
class OmpThreads {
 public:
  explicit OmpThreads(int n) : prev_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~OmpThreads() { omp_set_num_threads(prev_); }

 private:
  int prev_;
};

/// Runs the cached (or new) primitive of `kind` on in0, in1 -> out. `xs`, `ws`, `ys`: the
/// shapes of the convolution's x, weight and y (see build). False when oneDNN declines.
bool run(Kind kind, const Shape& xs, const Shape& ws, const Shape& ys, const CpuTensor& in0,
         const CpuTensor& in1, const std::optional<CpuTensor>& b, CpuTensor& out,
         const std::vector<i64>& s, const std::vector<i64>& p, const std::vector<i64>& d,
         i64 groups) {
  if (in0.dtype != DType::F32 || in0.numel() == 0 || in1.numel() == 0 || out.numel() == 0)
    return false;
  // Depthwise: the reorders to and from oneDNN's layouts cost more than the im2col path
  // (measured: 32x64x28x28, 3x3 took about twice the CPU time through oneDNN).
  if (kind != Kind::Transposed && groups > 1 && ws[1] == 1) return false;
  try {
    // oneDNN fixes a primitive's thread decomposition when it is created: set the count
    // first, and key the cache by it.
    const int nt = threads();
    OmpThreads omp(nt);
    std::ostringstream k;
    k << static_cast<char>(kind) << nt << xs << ws << ys << (b ? 1 : 0) << groups;
    for (auto v : s) k << ',' << v;
    for (auto v : p) k << ';' << v;
    for (auto v : d) k << ':' << v;
    const std::string key = k.str();
    auto e = cache().get(key);
    if (!e) {
      e = build(kind, xs, ws, ys, b.has_value(), s, p, d, groups);
      cache().put(key, e);
    }
    auto& eng = engine();
    dnnl::stream st(eng);
    const std::array<void*, 3> ptr{in0.raw(), in1.raw(), out.raw()};
    std::unordered_map<int, memory> args;
    memory user_out;
    // Buffers in oneDNN's layouts come from Ember's pool (no fresh pages per call).
    std::array<CpuTensor, 3> bufs;
    for (int i = 0; i < 3; ++i) {
      memory user(e->user[i], eng, ptr[i]);
      if (!e->reo[i]) {
        args.emplace(e->arg[i], user);
        continue;
      }
      const i64 floats = static_cast<i64>(e->kern[i].get_size() / sizeof(float)) + 1;
      bufs[i] = alloc(Shape{floats}, DType::F32);
      memory kern(e->kern[i], eng, bufs[i].raw());
      if (i < 2) e->reo[i]->execute(st, user, kern);
      if (i == 2) user_out = user;
      args.emplace(e->arg[i], kern);
    }
    if (b) args.emplace(DNNL_ARG_BIAS, memory(e->k_bias, eng, b->raw()));
    e->prim.execute(st, args);
    if (e->reo[2]) e->reo[2]->execute(st, args.at(e->arg[2]), user_out);
    st.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace

bool dnnl_conv(const CpuTensor& x, const CpuTensor& w, const std::optional<CpuTensor>& b,
               CpuTensor& out, const std::vector<i64>& s, const std::vector<i64>& p,
               const std::vector<i64>& d, i64 groups) {
  return run(Kind::Forward, x.shape, w.shape, out.shape, x, w, b, out, s, p, d, groups);
}

bool dnnl_conv_transpose(const CpuTensor& x, const CpuTensor& w, const std::optional<CpuTensor>& b,
                         CpuTensor& out, const std::vector<i64>& s, const std::vector<i64>& p,
                         const std::vector<i64>& d, i64 groups) {
  return run(Kind::Transposed, x.shape, w.shape, out.shape, x, w, b, out, s, p, d, groups);
}

bool dnnl_conv_backward_data(const CpuTensor& dy, const CpuTensor& w, CpuTensor& dx,
                             const std::vector<i64>& s, const std::vector<i64>& p,
                             const std::vector<i64>& d, i64 groups) {
  return run(Kind::BackData, dx.shape, w.shape, dy.shape, dy, w, std::nullopt, dx, s, p, d, groups);
}

bool dnnl_conv_backward_weights(const CpuTensor& x, const CpuTensor& dy, CpuTensor& dw,
                                const std::vector<i64>& s, const std::vector<i64>& p,
                                const std::vector<i64>& d, i64 groups) {
  return run(Kind::BackWeights, x.shape, dw.shape, dy.shape, x, dy, std::nullopt, dw, s, p, d,
             groups);
}

}  // namespace ember::cpu::conv

namespace ember::cpu {

using i64 = std::int64_t;

/// Packed weights, one slot per (weight storage, offset, kernel layout) seen (a few at most:
/// the layout may differ with the batch size or thread count).
struct ConvWeightPack::Impl {
  struct Slot {
    std::shared_ptr<Storage> src;  // held, so the identity cannot be recycled by the pool
    i64 offset = 0;
    dnnl::memory::desc kern;
    CpuTensor packed;
    bool finite = true;  // the weight has no NaN or infinity
  };
  std::mutex mu;
  std::vector<Slot> slots;
};

ConvWeightPack::ConvWeightPack() : impl_(std::make_unique<Impl>()) {}
ConvWeightPack::~ConvWeightPack() = default;

namespace {

bool dnnl_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("EMBER_CONV_IMPL");
    return !(v && std::string(v) == "gemm");
  }();
  return on;
}

CpuTensor alloc_desc(const dnnl::memory::desc& md) {
  return alloc(Shape{static_cast<i64>(md.get_size() / sizeof(float)) + 1}, DType::F32);
}

}  // namespace

CpuTensor to_plain(const ConvActivation& a) {
  using dnnl::memory;
  const auto& kern = *static_cast<const memory::desc*>(a.layout.get());
  CpuTensor out = alloc(a.shape, DType::F32);
  const int nt = threads();
  conv::OmpThreads omp(nt);
  auto& eng = conv::engine();
  dnnl::stream st(eng);
  const memory::desc plain(conv::to_dims(a.shape), memory::data_type::f32,
                           conv::plain_tag(a.shape.rank()));
  memory src(kern, eng, a.buffer.raw()), dst(plain, eng, out.raw());
  dnnl::reorder(src, dst).execute(st, src, dst);
  st.wait();
  return out;
}

std::optional<ConvActivation> max_pool_blocked(const ConvActivation& x,
                                               const std::vector<i64>& kernel,
                                               const std::vector<i64>& stride,
                                               const std::vector<i64>& padding) {
  using dnnl::memory;
  if (!dnnl_enabled()) return std::nullopt;
  const Shape& xs = x.shape;
  const std::size_t rank = xs.rank();
  if (rank < 4 || rank > 5) return std::nullopt;
  const std::size_t nd = rank - 2;
  if (kernel.size() != nd || stride.size() != nd || padding.size() != nd) return std::nullopt;
  Shape ys = xs;
  memory::dims pad_r(nd);
  for (std::size_t i = 0; i < nd; ++i) {
    const i64 k = kernel[i], s = stride[i], p = padding[i];
    if (k <= 0 || s <= 0 || p < 0 || p >= k) return std::nullopt;
    const i64 span = xs[2 + i] + 2 * p - k;
    if (span < 0) return std::nullopt;
    ys.dims[2 + i] = span / s + 1;
    pad_r[i] = (ys[2 + i] - 1) * s + k - xs[2 + i] - p;
    if (pad_r[i] < 0 || pad_r[i] >= k) return std::nullopt;
  }
  if (ys.numel() == 0) return std::nullopt;
  try {
    const int nt = threads();
    conv::OmpThreads omp(nt);
    auto& eng = conv::engine();
    dnnl::stream st(eng);
    const auto& src_md = *static_cast<const memory::desc*>(x.layout.get());
    const memory::desc dst_any(conv::to_dims(ys), memory::data_type::f32, memory::format_tag::any);
    dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max,
                                  src_md, dst_any, memory::dims(stride.begin(), stride.end()),
                                  memory::dims(kernel.begin(), kernel.end()),
                                  memory::dims(padding.begin(), padding.end()), pad_r);
    dnnl::pooling_forward::primitive_desc pd(d, eng);
    CpuTensor ybuf = alloc_desc(pd.dst_desc());
    memory src(src_md, eng, x.buffer.raw()), dst(pd.dst_desc(), eng, ybuf.raw());
    dnnl::pooling_forward(pd).execute(st, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    st.wait();
    return ConvActivation{ys, ybuf, std::make_shared<memory::desc>(pd.dst_desc())};
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

namespace {

/// Whether conv_fused tries oneDNN's Winograd kernels for 3x3 stride-1 convolutions:
/// EMBER_CONV_WINOGRAD=0 / 1 decides, else on (measured on ResNet-18, docs/benchmarks.md).
bool winograd_wanted(const Shape& ws, const std::vector<i64>& s, const std::vector<i64>& d,
                     i64 groups) {
  static const bool on = [] {
    const char* e = std::getenv("EMBER_CONV_WINOGRAD");
    return e == nullptr || std::string(e) != "0";
  }();
  return on && groups == 1 && ws.rank() == 4 && ws[2] == 3 && ws[3] == 3 && s[0] == 1 &&
         s[1] == 1 && d[0] == 1 && d[1] == 1;
}

/// Whether all `n` floats at `p` are finite: the largest exponent field is not all ones
/// (an unsigned max reduction, which vectorises).
bool all_finite(const float* p, std::size_t n) {
  std::uint32_t m = 0;
  const auto len = static_cast<std::int64_t>(n);
  // Memory-bound: the threads oneDNN uses read it faster than one (large batches).
#pragma omp parallel for reduction(max : m) num_threads(threads()) if (len > (1 << 18))
  for (std::int64_t i = 0; i < len; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, p + i, sizeof bits);
    m = std::max(m, bits & 0x7f800000u);
  }
  return m != 0x7f800000u;
}

bool all_finite(const CpuTensor& t) {
  const CpuTensor c = contiguous(t);
  return all_finite(static_cast<const float*>(c.raw()), static_cast<std::size_t>(c.numel()));
}

bool all_finite(const ConvOperand& v) {
  if (v.index() == 0) return all_finite(std::get<0>(v));
  const CpuTensor& buf = std::get<1>(v).buffer;  // padding lanes hold zeros
  return all_finite(static_cast<const float*>(buf.raw()), static_cast<std::size_t>(buf.numel()));
}

}  // namespace

std::optional<ConvOperand> conv_fused(const ConvOperand& x0, const CpuTensor& w0,
                                      const std::optional<CpuTensor>& b0, const ConvOperand* r0,
                                      const ConvFusedOptions& opt, ConvWeightPack* pack) {
  using dnnl::memory;
  const auto shape_of = [](const ConvOperand& v) -> const Shape& {
    return v.index() == 0 ? std::get<0>(v).shape : std::get<1>(v).shape;
  };
  const auto f32 = [](const ConvOperand& v) {
    return v.index() == 1 || std::get<0>(v).dtype == DType::F32;
  };
  if (!f32(x0) || w0.dtype != DType::F32 || (b0 && b0->dtype != DType::F32) || (r0 && !f32(*r0)))
    return std::nullopt;
  if (!dnnl_enabled()) return std::nullopt;
  const Shape& xs = shape_of(x0);
  const Shape& ws = w0.shape;
  const std::size_t rank = xs.rank();
  if (rank < 3 || rank > 5 || ws.rank() != rank) return std::nullopt;
  const std::size_t nd = rank - 2;
  if (opt.stride.size() != nd || opt.padding.size() != nd || opt.dilation.size() != nd)
    return std::nullopt;
  const i64 g = opt.groups;
  if (g <= 0 || ws[0] % g != 0 || xs[1] != ws[1] * g) return std::nullopt;
  if (g > 1 && ws[1] == 1) return std::nullopt;  // depthwise: im2col is faster (see run)
  if (b0 && (b0->shape.rank() != 1 || b0->shape[0] != ws[0])) return std::nullopt;
  Shape ys = xs;
  ys.dims[1] = ws[0];
  for (std::size_t i = 0; i < nd; ++i) {
    const i64 s = opt.stride[i], p = opt.padding[i], d = opt.dilation[i];
    if (s <= 0 || p < 0 || d <= 0) return std::nullopt;
    const i64 span = xs[2 + i] + 2 * p - ((ws[2 + i] - 1) * d + 1);
    if (span < 0) return std::nullopt;
    ys.dims[2 + i] = span / s + 1;
  }
  if (r0 && shape_of(*r0) != ys) return std::nullopt;
  if (xs.numel() == 0 || w0.numel() == 0 || ys.numel() == 0) return std::nullopt;
  const CpuTensor w = contiguous(w0);
  std::optional<CpuTensor> b;
  if (b0) b = contiguous(*b0);
  // A NaN or an infinity among the inputs: Winograd's transforms would spread it over its
  // whole output tile, and oneDNN's ReLU post-op maps NaN to 0. Such calls take the direct
  // kernel with the ReLU applied afterwards, keeping NaN (as Conv then Relu one by one).
  // The weight's check is done once per pack.
  std::optional<bool> w_finite;
  if (pack) {
    std::lock_guard<std::mutex> lock(pack->impl().mu);
    for (const auto& sl : pack->impl().slots) {
      if (sl.src == w.storage && sl.offset == w.offset) w_finite = sl.finite;
    }
  }
  if (!w_finite) w_finite = all_finite(w);
  const bool exact =
      !*w_finite || !all_finite(x0) || (b && !all_finite(*b)) || (r0 && !all_finite(*r0));
  const bool relu_post = opt.relu && !exact;
  try {
    const int nt = threads();
    conv::OmpThreads omp(nt);
    std::ostringstream k;
    const bool wino = !exact && winograd_wanted(ws, opt.stride, opt.dilation, g);
    k << 'F' << nt << xs << ws << ys << (b ? 1 : 0) << g << (relu_post ? 'r' : '-')
      << (r0 ? 's' : '-') << (wino ? 'w' : '-');
    for (auto v : opt.stride) k << ',' << v;
    for (auto v : opt.padding) k << ';' << v;
    for (auto v : opt.dilation) k << ':' << v;
    const std::string key = k.str();
    auto e = conv::cache().get(key);
    if (!e) {
      e = conv::build(conv::Kind::Forward, xs, ws, ys, b.has_value(), opt.stride, opt.padding,
                      opt.dilation, g, relu_post, r0 != nullptr, wino);
      conv::cache().put(key, e);
    }
    // A blocked operand in the layout `md`, or nothing (then the plain tensor is used).
    const auto blocked_as = [](const ConvOperand& v, const memory::desc& md) -> const CpuTensor* {
      if (v.index() != 1) return nullptr;
      const auto& a = std::get<1>(v);
      return *static_cast<const memory::desc*>(a.layout.get()) == md ? &a.buffer : nullptr;
    };
    const auto plain_of = [](const ConvOperand& v) {
      return v.index() == 0 ? contiguous(std::get<0>(v)) : to_plain(std::get<1>(v));
    };
    auto& eng = conv::engine();
    dnnl::stream st(eng);
    std::unordered_map<int, memory> args;
    // Source: as is when it is in the kernel's layout, else reordered.
    CpuTensor xbuf, xplain;
    if (const CpuTensor* xb = blocked_as(x0, e->kern[0])) {
      args.emplace(DNNL_ARG_SRC, memory(e->kern[0], eng, xb->raw()));
    } else {
      xplain = plain_of(x0);
      if (e->reo[0]) {
        xbuf = alloc_desc(e->kern[0]);
        memory kern(e->kern[0], eng, xbuf.raw());
        memory user(e->user[0], eng, xplain.raw());
        e->reo[0]->execute(st, user, kern);
        args.emplace(DNNL_ARG_SRC, kern);
      } else {
        args.emplace(DNNL_ARG_SRC, memory(e->user[0], eng, xplain.raw()));
      }
    }
    // Weights: from the pack when it has them in the kernel's layout.
    CpuTensor wk = w;
    if (e->reo[1]) {
      const auto pack_now = [&] {
        CpuTensor t = alloc_desc(e->kern[1]);
        memory user(e->user[1], eng, w.raw()), kern(e->kern[1], eng, t.raw());
        e->reo[1]->execute(st, user, kern);
        st.wait();
        return t;
      };
      if (pack) {
        auto& im = pack->impl();
        std::lock_guard<std::mutex> lock(im.mu);
        bool found = false;
        for (const auto& sl : im.slots) {
          if (sl.src == w.storage && sl.offset == w.offset && sl.kern == e->kern[1]) {
            wk = sl.packed;
            found = true;
            break;
          }
        }
        if (!found) {
          wk = pack_now();
          if (im.slots.size() >= 4) im.slots.erase(im.slots.begin());
          im.slots.push_back({w.storage, w.offset, e->kern[1], wk, *w_finite});
        }
      } else {
        wk = pack_now();
      }
    }
    args.emplace(DNNL_ARG_WEIGHTS, memory(e->kern[1], eng, wk.raw()));
    // Destination: the kernel's layout (holding the residual for the sum post-op), then
    // kept (keep_blocked) or reordered into the plain result.
    const bool blocked_out = opt.keep_blocked && e->reo[2].has_value();
    CpuTensor out, ybuf;
    if (e->reo[2]) {
      const CpuTensor* rb = r0 ? blocked_as(*r0, e->kern[2]) : nullptr;
      ybuf = rb && opt.reuse_residual ? *rb : alloc_desc(e->kern[2]);
      memory kern(e->kern[2], eng, ybuf.raw());
      if (r0) {
        if (rb) {
          if (!opt.reuse_residual) std::memcpy(ybuf.raw(), rb->raw(), e->kern[2].get_size());
        } else {
          const CpuTensor rc = plain_of(*r0);
          memory user(e->user[2], eng, rc.raw());
          e->reo_dst_in->execute(st, user, kern);
        }
      }
      args.emplace(DNNL_ARG_DST, kern);
    } else {
      out = alloc(ys, DType::F32);
      if (r0) {
        const CpuTensor rc = plain_of(*r0);
        std::memcpy(out.raw(), rc.raw(), static_cast<std::size_t>(ys.numel()) * sizeof(float));
      }
      args.emplace(DNNL_ARG_DST, memory(e->user[2], eng, out.raw()));
    }
    if (b) args.emplace(DNNL_ARG_BIAS, memory(e->k_bias, eng, b->raw()));
    e->prim.execute(st, args);
    // The ReLU left out of the primitive: max(0, y) that keeps NaN.
    const auto relu_after = [&](CpuTensor& t, std::size_t n) {
      if (!opt.relu || relu_post) return;
      float* p = static_cast<float*>(t.raw());
      for (std::size_t i = 0; i < n; ++i) {
        if (p[i] < 0.f) p[i] = 0.f;
      }
    };
    if (blocked_out) {
      st.wait();
      relu_after(ybuf, static_cast<std::size_t>(ybuf.numel()));
      return ConvOperand(ConvActivation{ys, ybuf, std::make_shared<memory::desc>(e->kern[2])});
    }
    if (e->reo[2]) {
      out = alloc(ys, DType::F32);
      memory user(e->user[2], eng, out.raw());
      e->reo[2]->execute(st, args.at(DNNL_ARG_DST), user);
    }
    st.wait();
    relu_after(out, static_cast<std::size_t>(ys.numel()));
    return ConvOperand(out);
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

std::optional<CpuTensor> conv_fused(const CpuTensor& x, const CpuTensor& w,
                                    const std::optional<CpuTensor>& b,
                                    const std::optional<CpuTensor>& r, const ConvFusedOptions& opt,
                                    ConvWeightPack* pack) {
  ConvFusedOptions o = opt;
  o.keep_blocked = false;
  const ConvOperand xo(x);
  std::optional<ConvOperand> ro;
  if (r) ro.emplace(*r);
  auto y = conv_fused(xo, w, b, ro ? &*ro : nullptr, o, pack);
  if (!y) return std::nullopt;
  return std::get<0>(std::move(*y));
}

}  // namespace ember::cpu

#else

namespace ember::cpu::conv {
bool dnnl_conv(const CpuTensor&, const CpuTensor&, const std::optional<CpuTensor>&, CpuTensor&,
               const std::vector<i64>&, const std::vector<i64>&, const std::vector<i64>&, i64) {
  return false;
}
bool dnnl_conv_transpose(const CpuTensor&, const CpuTensor&, const std::optional<CpuTensor>&,
                         CpuTensor&, const std::vector<i64>&, const std::vector<i64>&,
                         const std::vector<i64>&, i64) {
  return false;
}
bool dnnl_conv_backward_data(const CpuTensor&, const CpuTensor&, CpuTensor&,
                             const std::vector<i64>&, const std::vector<i64>&,
                             const std::vector<i64>&, i64) {
  return false;
}
bool dnnl_conv_backward_weights(const CpuTensor&, const CpuTensor&, CpuTensor&,
                                const std::vector<i64>&, const std::vector<i64>&,
                                const std::vector<i64>&, i64) {
  return false;
}
}  // namespace ember::cpu::conv

namespace ember::cpu {
struct ConvWeightPack::Impl {};
ConvWeightPack::ConvWeightPack() : impl_(std::make_unique<Impl>()) {}
ConvWeightPack::~ConvWeightPack() = default;
std::optional<CpuTensor> conv_fused(const CpuTensor&, const CpuTensor&,
                                    const std::optional<CpuTensor>&,
                                    const std::optional<CpuTensor>&, const ConvFusedOptions&,
                                    ConvWeightPack*) {
  return std::nullopt;
}
std::optional<ConvOperand> conv_fused(const ConvOperand&, const CpuTensor&,
                                      const std::optional<CpuTensor>&, const ConvOperand*,
                                      const ConvFusedOptions&, ConvWeightPack*) {
  return std::nullopt;
}
CpuTensor to_plain(const ConvActivation& a) {
  return a.buffer;  // never made without oneDNN
}
std::optional<ConvActivation> max_pool_blocked(const ConvActivation&,
                                               const std::vector<std::int64_t>&,
                                               const std::vector<std::int64_t>&,
                                               const std::vector<std::int64_t>&) {
  return std::nullopt;
}
}  // namespace ember::cpu

#endif
