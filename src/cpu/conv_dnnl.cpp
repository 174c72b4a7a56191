// oneDNN path of the CPU conv1d/2d/3d and conv_transpose1d/2d/3d for f32 (used when Ember is built
// with oneDNN, i.e. EMBER_HAVE_DNNL). Primitives are cached by shape and options; src/weights/dst
// are handed to oneDNN in plain layout (NC[D]HW / [G]OI[D]HW) and reordered to the layout oneDNN
// picks for the fastest kernel.
#include "conv_kernels.hpp"

#ifdef EMBER_HAVE_DNNL

#include <list>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>

namespace ember::cpu::conv {

namespace {

using dnnl::memory;

struct Entry {
  dnnl::primitive prim;
  memory::desc k_src, k_w, k_dst, k_bias;          // the layouts the kernel wants
  memory::desc src_md, w_md, dst_md;               // the user's plain layouts
  std::optional<dnnl::reorder> r_src, r_w, r_dst;  // plain <-> oneDNN's layouts, when they differ
  bool bias;
};

dnnl::engine& engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

/// Bounded cache of primitives (least recently used out first).
class Cache {
 public:
  std::shared_ptr<Entry> get(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second.second);
    return it->second.first;
  }
  void put(const std::string& key, std::shared_ptr<Entry> e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.count(key)) return;
    order_.push_front(key);
    map_.emplace(key, std::make_pair(std::move(e), order_.begin()));
    if (map_.size() > kMax) {
      map_.erase(order_.back());
      order_.pop_back();
    }
  }

 private:
  static constexpr std::size_t kMax = 128;
  std::mutex mu_;
  std::list<std::string> order_;
  std::unordered_map<std::string,
                     std::pair<std::shared_ptr<Entry>, std::list<std::string>::iterator>>
      map_;
};

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

/// A forward (or, when `transposed`, a backward-data style deconvolution) primitive for
/// x `xs`, weight `ws` ([C_out, C_in/g, k] or, transposed, [C_in, C_out/g, k]), y `ys`.
std::shared_ptr<Entry> build(bool transposed, const Shape& xs, const Shape& ws, const Shape& ys,
                             bool bias, const std::vector<i64>& s, const std::vector<i64>& p,
                             const std::vector<i64>& d, i64 groups) {
  using dt = memory::data_type;
  const std::size_t nd = xs.rank() - 2;
  auto e = std::make_shared<Entry>();
  e->bias = bias;
  e->src_md = memory::desc(to_dims(xs), dt::f32, plain_tag(xs.rank()));
  e->dst_md = memory::desc(to_dims(ys), dt::f32, plain_tag(ys.rank()));
  const i64 c_out = ys[1];
  if (!transposed && groups == 1) {
    e->w_md = memory::desc(to_dims(ws), dt::f32, plain_tag(ws.rank()));
  } else if (transposed && groups == 1) {
    // Logical dims [C_out, C_in, k], stored [C_in, C_out, k] (io[d]hw).
    memory::dims wd{ws[1], ws[0]};
    for (std::size_t i = 2; i < ws.rank(); ++i) wd.push_back(ws[i]);
    const auto tag = nd == 1   ? memory::format_tag::bac
                     : nd == 2 ? memory::format_tag::iohw
                               : memory::format_tag::iodhw;
    e->w_md = memory::desc(wd, dt::f32, tag);
  } else {
    // Logical dims [G, C_out/G, C_in/G, k]; stored goi.. (conv) or gio.. (transposed).
    const i64 c_in = xs[1];
    memory::dims wd{groups, c_out / groups, c_in / groups};
    for (std::size_t i = 2; i < ws.rank(); ++i) wd.push_back(ws[i]);
    using ft = memory::format_tag;
    const auto tag = transposed ? (nd == 1   ? ft::acbd
                                   : nd == 2 ? ft::giohw
                                             : ft::giodhw)
                                : (nd == 1   ? ft::goiw
                                   : nd == 2 ? ft::goihw
                                             : ft::goidhw);
    e->w_md = memory::desc(wd, dt::f32, tag);
  }
  const memory::desc src_any(e->src_md.dims(), dt::f32, memory::format_tag::any);
  const memory::desc dst_any(e->dst_md.dims(), dt::f32, memory::format_tag::any);
  const memory::desc w_any(e->w_md.dims(), dt::f32, memory::format_tag::any);
  const memory::desc b_md =
      bias ? memory::desc({c_out}, dt::f32, memory::format_tag::x) : memory::desc();
  memory::dims dil(d.begin(), d.end());
  for (auto& v : dil) v -= 1;  // oneDNN counts dilation from 0
  const memory::dims strides(s.begin(), s.end()), pad(p.begin(), p.end());
  // Right padding that makes oneDNN's output size equal PyTorch's floor formula.
  memory::dims pad_r(nd);
  for (std::size_t i = 0; i < nd; ++i) {
    const i64 ker = (ws[2 + i] - 1) * d[i] + 1;
    pad_r[i] = (ys[2 + i] - 1) * s[i] + ker - xs[2 + i] - p[i];
  }
  if (transposed) {
    // oneDNN's deconvolution: dst = (src - 1)s + ker - pad_l - pad_r.
    for (std::size_t i = 0; i < nd; ++i) {
      const i64 ker = (ws[2 + i] - 1) * d[i] + 1;
      pad_r[i] = (xs[2 + i] - 1) * s[i] + ker - p[i] - ys[2 + i];
    }
    dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::deconvolution_direct, src_any, w_any,
                                           b_md, dst_any, strides, dil, pad, pad_r);
    dnnl::deconvolution_forward::primitive_desc pd(desc, engine());
    e->prim = dnnl::deconvolution_forward(pd);
    e->k_src = pd.src_desc(), e->k_w = pd.weights_desc(), e->k_dst = pd.dst_desc();
    e->k_bias = pd.bias_desc();
  } else {
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         dnnl::algorithm::convolution_direct, src_any, w_any, b_md,
                                         dst_any, strides, dil, pad, pad_r);
    dnnl::convolution_forward::primitive_desc pd(desc, engine());
    e->prim = dnnl::convolution_forward(pd);
    e->k_src = pd.src_desc(), e->k_w = pd.weights_desc(), e->k_dst = pd.dst_desc();
    e->k_bias = pd.bias_desc();
  }
  auto& eng = engine();
  if (e->k_src != e->src_md)
    e->r_src = dnnl::reorder(dnnl::reorder::primitive_desc(eng, e->src_md, eng, e->k_src));
  if (e->k_w != e->w_md)
    e->r_w = dnnl::reorder(dnnl::reorder::primitive_desc(eng, e->w_md, eng, e->k_w));
  if (e->k_dst != e->dst_md)
    e->r_dst = dnnl::reorder(dnnl::reorder::primitive_desc(eng, e->k_dst, eng, e->dst_md));
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

}  // namespace

namespace {

bool run(bool transposed, const CpuTensor& x, const CpuTensor& w, const std::optional<CpuTensor>& b,
         CpuTensor& out, const std::vector<i64>& s, const std::vector<i64>& p,
         const std::vector<i64>& d, i64 groups) {
  if (x.dtype != DType::F32 || x.numel() == 0 || out.numel() == 0) return false;
  // Depthwise: the reorders to and from oneDNN's layouts cost more than the im2col path
  // (measured: 32x64x28x28, 3x3 took about twice the CPU time through oneDNN).
  if (!transposed && groups > 1 && w.shape[1] == 1) return false;
  try {
    std::ostringstream k;
    k << (transposed ? 'T' : 'C') << x.shape << w.shape << out.shape << (b ? 1 : 0) << groups;
    for (auto v : s) k << ',' << v;
    for (auto v : p) k << ';' << v;
    for (auto v : d) k << ':' << v;
    const std::string key = k.str();
    auto e = cache().get(key);
    if (!e) {
      e = build(transposed, x.shape, w.shape, out.shape, b.has_value(), s, p, d, groups);
      cache().put(key, e);
    }
    OmpThreads omp(threads());
    auto& eng = engine();
    dnnl::stream st(eng);
    memory src(e->src_md, eng, x.raw()), wts(e->w_md, eng, w.raw()), dst(e->dst_md, eng, out.raw());
    memory src_k = src, w_k = wts, dst_k = dst;
    if (e->r_src) {
      src_k = memory(e->k_src, eng);
      e->r_src->execute(st, src, src_k);
    }
    if (e->r_w) {
      w_k = memory(e->k_w, eng);
      e->r_w->execute(st, wts, w_k);
    }
    if (e->r_dst) dst_k = memory(e->k_dst, eng);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src_k}, {DNNL_ARG_WEIGHTS, w_k}, {DNNL_ARG_DST, dst_k}};
    if (b) args.emplace(DNNL_ARG_BIAS, memory(e->k_bias, eng, b->raw()));
    e->prim.execute(st, args);
    if (e->r_dst) e->r_dst->execute(st, dst_k, dst);
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
  return run(false, x, w, b, out, s, p, d, groups);
}

bool dnnl_conv_transpose(const CpuTensor& x, const CpuTensor& w, const std::optional<CpuTensor>& b,
                         CpuTensor& out, const std::vector<i64>& s, const std::vector<i64>& p,
                         const std::vector<i64>& d, i64 groups) {
  return run(true, x, w, b, out, s, p, d, groups);
}

}  // namespace ember::cpu::conv

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
}  // namespace ember::cpu::conv

#endif
