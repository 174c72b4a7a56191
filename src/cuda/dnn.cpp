// cuDNN loaded at run time and the three convolution functions through it (see dnn.hpp).
#include "dnn.hpp"

#include <cudnn.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "api.hpp"
#include "ember/core/error.hpp"
#include "native.hpp"

namespace ember::cuda::dnn {

namespace {

#define EMBER_DNN_STR2(x) #x
#define EMBER_DNN_STR(x) EMBER_DNN_STR2(x)

// The cuDNN functions Ember calls (the table is filled by dlsym, as api.hpp's).
#define EMBER_DNN_FUNCS(X)                          \
  X(cudnnGetVersion)                                \
  X(cudnnGetErrorString)                            \
  X(cudnnCreate)                                    \
  X(cudnnSetStream)                                 \
  X(cudnnCreateTensorDescriptor)                    \
  X(cudnnSetTensorNdDescriptor)                     \
  X(cudnnDestroyTensorDescriptor)                   \
  X(cudnnCreateFilterDescriptor)                    \
  X(cudnnSetFilterNdDescriptor)                     \
  X(cudnnDestroyFilterDescriptor)                   \
  X(cudnnCreateConvolutionDescriptor)               \
  X(cudnnSetConvolutionNdDescriptor)                \
  X(cudnnSetConvolutionGroupCount)                  \
  X(cudnnSetConvolutionMathType)                    \
  X(cudnnDestroyConvolutionDescriptor)              \
  X(cudnnGetConvolutionForwardAlgorithm_v7)         \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)    \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)  \
  X(cudnnGetConvolutionForwardWorkspaceSize)        \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize)   \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) \
  X(cudnnConvolutionForward)                        \
  X(cudnnConvolutionBackwardData)                   \
  X(cudnnConvolutionBackwardFilter)

struct Lib {
  EMBER_DNN_FUNCS(EMBER_API_MEMBER)
  std::string path;
  std::size_t version = 0;
};

struct LibState {
  Lib lib;
  std::string error;
  bool ok = false;
};

constexpr const char* kShim = "libcudnn.so.9";
// The sub-libraries of the legacy convolution API (cuDNN 9's shim opens them by name).
constexpr const char* kParts[] = {"libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9"};

/// The places to look, in order (dnn.hpp).
std::vector<std::string> candidates() {
  namespace fs = std::filesystem;
  std::vector<std::string> c;
  const auto in_folder = [&](const fs::path& dir) { c.push_back((dir / kShim).string()); };
  if (const char* p = std::getenv("EMBER_CUDNN_LIB"); p && *p) {
    std::error_code ec;
    if (fs::is_directory(p, ec))
      in_folder(p);
    else
      c.emplace_back(p);
  }
  c.emplace_back(kShim);  // the loader's search path
#ifdef EMBER_CUDA_LIBRARY_DIR
  in_folder(EMBER_CUDA_LIBRARY_DIR);
  in_folder(fs::path(EMBER_CUDA_LIBRARY_DIR).parent_path() / "lib");
#endif
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* p = std::getenv(env); p && *p) in_folder(fs::path(p) / "lib64");
  in_folder("/usr/local/cuda/lib64");
  if (const detail::Nvrtc* n = detail::nvrtc(); n && !n->path.empty()) {
    const fs::path dir = fs::path(n->path).parent_path();  // pip: nvidia/cu13/lib
    in_folder(dir);
    in_folder(dir.parent_path().parent_path() / "cudnn" / "lib");
  }
  return c;
}

LibState load() {
  namespace fs = std::filesystem;
  LibState s;
  std::string tried;
  void* h = detail::open_first(candidates(), tried);
  if (!h) {
    s.error = "no cuDNN 9 library (" + tried + ")";
    return s;
  }
#define EMBER_DNN_LOAD(fn)                                                    \
  s.lib.fn##_ = reinterpret_cast<decltype(&fn)>(dlsym(h, EMBER_DNN_STR(fn))); \
  if (!s.lib.fn##_) {                                                         \
    s.error = "the cuDNN library lacks " EMBER_DNN_STR(fn);                   \
    return s;                                                                 \
  }
  EMBER_DNN_FUNCS(EMBER_DNN_LOAD)
#undef EMBER_DNN_LOAD
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(s.lib.cudnnConvolutionForward_), &info) && info.dli_fname)
    s.lib.path = info.dli_fname;
  s.lib.version = s.lib.cudnnGetVersion_();
  if (s.lib.version / 10000 != 9) {  // the API compiled against: cuDNN 9
    s.error = "cuDNN " + std::to_string(s.lib.version) + " at " + s.lib.path + " is not 9.x";
    return s;
  }
  // The sub-libraries beside the shim, opened before the shim asks for them by name.
  const fs::path dir = fs::path(s.lib.path).parent_path();
  for (const char* part : kParts) {
    std::error_code ec;
    const fs::path p = dir / part;
    if (!fs::exists(p, ec)) continue;  // then the shim searches the loader's path
    if (!dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      const char* e = dlerror();
      s.error = "cuDNN's " + std::string(part) + ": " + (e ? e : "dlopen failed");
      return s;
    }
  }
  // A descriptor of libcudnn_cnn: fails here when the shim cannot open it.
  cudnnConvolutionDescriptor_t probe = nullptr;
  const cudnnStatus_t r = s.lib.cudnnCreateConvolutionDescriptor_(&probe);
  if (r != CUDNN_STATUS_SUCCESS) {
    const char* name = s.lib.cudnnGetErrorString_(r);
    s.error = "cuDNN at " + s.lib.path + " cannot create a convolution descriptor (" +
              (name ? name : std::to_string(static_cast<int>(r))) + "; libcudnn_cnn.so.9 missing?)";
    return s;
  }
  s.lib.cudnnDestroyConvolutionDescriptor_(probe);
  s.ok = true;
  return s;
}

const Lib* lib(std::string* why = nullptr) {
  static const LibState s = load();
  if (!s.ok) {
    if (why) *why = s.error;
    return nullptr;
  }
  return &s.lib;
}

const char* op_name(ConvOp op) {
  switch (op) {
    case ConvOp::Forward:
      return "conv";
    case ConvOp::BackwardData:
      return "conv_x_backward";
    default:
      return "conv_weight_backward";
  }
}

void check(const Lib& l, cudnnStatus_t r, ConvOp op, const char* fn) {
  if (r == CUDNN_STATUS_SUCCESS) return;
  const char* name = l.cudnnGetErrorString_(r);
  ember::detail::fail<DeviceError>(op_name(op), "cuDNN ", fn, ": ",
                                   name ? name : std::to_string(static_cast<int>(r)));
}

constexpr std::size_t kMaxPlans = 512;                         // per device, then cleared
constexpr std::size_t kMaxWorkspace = std::size_t{256} << 20;  // as the im2col columns' budget

/// Descriptors and the chosen algorithm of one case, or why cuDNN refuses it.
struct Plan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  std::size_t workspace = 0;
  bool f64 = false;
  std::string refused;  // not empty: cuDNN has no algorithm (the other fields are unset)

  void destroy(const Lib& l) {
    if (x) l.cudnnDestroyTensorDescriptor_(x);
    if (y) l.cudnnDestroyTensorDescriptor_(y);
    if (w) l.cudnnDestroyFilterDescriptor_(w);
    if (conv) l.cudnnDestroyConvolutionDescriptor_(conv);
    x = y = nullptr;
    w = nullptr;
    conv = nullptr;
  }
};

/// Per device: the handle and the plans, used under the device's lock (detail::with_stream).
struct DeviceState {
  cudnnHandle_t handle = nullptr;
  std::map<std::vector<std::int64_t>, Plan> plans;
};

DeviceState& state_of(const kernel::ComputeDevice& device) {
  static std::mutex mu;
  static std::map<const kernel::ComputeDevice*, std::unique_ptr<DeviceState>> states;
  std::lock_guard lock(mu);
  auto& s = states[&device];
  if (!s) s = std::make_unique<DeviceState>();
  return *s;
}

/// cuDNN's data type of `e`, and the type it computes in; false for other types.
bool types_of(kernel::Elem e, cudnnDataType_t& data, cudnnDataType_t& compute) {
  compute = CUDNN_DATA_FLOAT;
  switch (e) {
    case kernel::Elem::F32:
      data = CUDNN_DATA_FLOAT;
      return true;
    case kernel::Elem::F16:
      data = CUDNN_DATA_HALF;
      return true;
    case kernel::Elem::BF16:
      data = CUDNN_DATA_BFLOAT16;
      return true;
    case kernel::Elem::F64:
      data = compute = CUDNN_DATA_DOUBLE;
      return true;
    default:
      return false;
  }
}

/// The plan cache's key: the type, the op and every number of the shape.
std::vector<std::int64_t> key_of(kernel::Elem e, ConvOp op, const ConvShape& s) {
  std::vector<std::int64_t> k{static_cast<std::int64_t>(e),
                              static_cast<std::int64_t>(op),
                              s.spatial,
                              s.batch,
                              s.in_channels,
                              s.out_channels,
                              s.groups};
  for (const auto* a : {&s.in, &s.kernel, &s.out, &s.stride, &s.pad, &s.dil})
    k.insert(k.end(), a->begin(), a->begin() + s.spatial);
  return k;
}

/// Why a shape does not fit cuDNN's int dims (empty when it does).
std::string too_large(const ConvShape& s) {
  const auto count = [&](std::int64_t c, const std::array<std::int64_t, 3>& sp) {
    std::int64_t n = s.batch * c;
    for (int i = 0; i < s.spatial; ++i) n *= sp[static_cast<std::size_t>(i)];
    return n;
  };
  std::int64_t wn = s.out_channels * (s.in_channels / std::max<std::int64_t>(s.groups, 1));
  for (int i = 0; i < s.spatial; ++i) wn *= s.kernel[static_cast<std::size_t>(i)];
  const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
  if (count(s.in_channels, s.in) > limit || count(s.out_channels, s.out) > limit || wn > limit)
    return "an array of more than 2^31 - 1 elements";
  return "";
}

/// Packed strides of dims `d` (nb of them).
void packed_strides(const int* d, int nb, int* strides) {
  strides[nb - 1] = 1;
  for (int i = nb - 2; i >= 0; --i) strides[i] = strides[i + 1] * d[i + 1];
}

/// Descriptors for `s` and the first algorithm of cuDNN's heuristics that runs within the
/// workspace limit (and, for f32/f64, with FMA math); `refused` says why when none does.
Plan make_plan(const Lib& l, cudnnHandle_t h, kernel::Elem e, ConvOp op, const ConvShape& s) {
  Plan p;
  cudnnDataType_t data{}, compute{};
  types_of(e, data, compute);
  p.f64 = e == kernel::Elem::F64;
  const bool exact = e == kernel::Elem::F32 || p.f64;
  const int nb = s.spatial + 2;
  int xd[5], yd[5], wd[5], xs[5], ys[5];
  xd[0] = yd[0] = static_cast<int>(s.batch);
  xd[1] = static_cast<int>(s.in_channels);
  yd[1] = wd[0] = static_cast<int>(s.out_channels);
  wd[1] = static_cast<int>(s.in_channels / s.groups);
  int pad[3], stride[3], dil[3];
  for (int i = 0; i < s.spatial; ++i) {
    const auto u = static_cast<std::size_t>(i);
    xd[2 + i] = static_cast<int>(s.in[u]);
    yd[2 + i] = static_cast<int>(s.out[u]);
    wd[2 + i] = static_cast<int>(s.kernel[u]);
    pad[i] = static_cast<int>(s.pad[u]);
    stride[i] = static_cast<int>(s.stride[u]);
    dil[i] = static_cast<int>(s.dil[u]);
  }
  packed_strides(xd, nb, xs);
  packed_strides(yd, nb, ys);
  try {
    check(l, l.cudnnCreateTensorDescriptor_(&p.x), op, "cudnnCreateTensorDescriptor");
    check(l, l.cudnnCreateTensorDescriptor_(&p.y), op, "cudnnCreateTensorDescriptor");
    check(l, l.cudnnCreateFilterDescriptor_(&p.w), op, "cudnnCreateFilterDescriptor");
    check(l, l.cudnnCreateConvolutionDescriptor_(&p.conv), op, "cudnnCreateConvolutionDescriptor");
    // Bad shapes for a type (cuDNN's BAD_PARAM / NOT_SUPPORTED) are refusals, not failures.
    const auto refuse = [&](cudnnStatus_t r, const char* fn) {
      if (r == CUDNN_STATUS_SUCCESS) return false;
      const char* name = l.cudnnGetErrorString_(r);
      p.refused = std::string(fn) + ": " + (name ? name : std::to_string(static_cast<int>(r)));
      return true;
    };
    if (refuse(l.cudnnSetTensorNdDescriptor_(p.x, data, nb, xd, xs),
               "cudnnSetTensorNdDescriptor") ||
        refuse(l.cudnnSetTensorNdDescriptor_(p.y, data, nb, yd, ys),
               "cudnnSetTensorNdDescriptor") ||
        refuse(l.cudnnSetFilterNdDescriptor_(p.w, data, CUDNN_TENSOR_NCHW, nb, wd),
               "cudnnSetFilterNdDescriptor") ||
        refuse(l.cudnnSetConvolutionNdDescriptor_(p.conv, s.spatial, pad, stride, dil,
                                                  CUDNN_CROSS_CORRELATION, compute),
               "cudnnSetConvolutionNdDescriptor") ||
        refuse(l.cudnnSetConvolutionGroupCount_(p.conv, static_cast<int>(s.groups)),
               "cudnnSetConvolutionGroupCount") ||
        refuse(
            l.cudnnSetConvolutionMathType_(p.conv, exact ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
            "cudnnSetConvolutionMathType")) {
      p.destroy(l);
      return p;
    }
    // The heuristics' list, best first; each entry's (algo, status, workspace, math type).
    struct Choice {
      int algo;
      cudnnStatus_t status;
      std::size_t memory;
      cudnnMathType_t math;
      bool deterministic;
    };
    std::vector<Choice> list;
    constexpr int kMax = 16;
    int found = 0;
    cudnnStatus_t r = CUDNN_STATUS_SUCCESS;
    if (op == ConvOp::Forward) {
      cudnnConvolutionFwdAlgoPerf_t perf[kMax];
      r = l.cudnnGetConvolutionForwardAlgorithm_v7_(h, p.x, p.w, p.conv, p.y, kMax, &found, perf);
      for (int i = 0; i < found && r == CUDNN_STATUS_SUCCESS; ++i)
        list.push_back({perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType,
                        perf[i].determinism == CUDNN_DETERMINISTIC});
    } else if (op == ConvOp::BackwardData) {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
      r = l.cudnnGetConvolutionBackwardDataAlgorithm_v7_(h, p.w, p.y, p.conv, p.x, kMax, &found,
                                                         perf);
      for (int i = 0; i < found && r == CUDNN_STATUS_SUCCESS; ++i)
        list.push_back({perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType,
                        perf[i].determinism == CUDNN_DETERMINISTIC});
    } else {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
      r = l.cudnnGetConvolutionBackwardFilterAlgorithm_v7_(h, p.x, p.y, p.conv, p.w, kMax, &found,
                                                           perf);
      for (int i = 0; i < found && r == CUDNN_STATUS_SUCCESS; ++i)
        list.push_back({perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType,
                        perf[i].determinism == CUDNN_DETERMINISTIC});
    }
    if (refuse(r, "cudnnGetConvolution*Algorithm_v7")) {
      p.destroy(l);
      return p;
    }
    // f32 must not use TF32 (FMA math only); f64 has no reduced mode, so cuDNN may list it
    // with the default math type.
    const auto usable = [&](const Choice& c) {
      return c.status == CUDNN_STATUS_SUCCESS && c.memory <= kMaxWorkspace &&
             (!exact || c.math == CUDNN_FMA_MATH || (p.f64 && c.math == CUDNN_DEFAULT_MATH));
    };
    // A deterministic algorithm first (the same bits on every run, as Ember's kernels), else
    // the heuristics' best usable one (e.g. a weight gradient summed with atomics).
    auto pick = std::find_if(list.begin(), list.end(),
                             [&](const Choice& c) { return usable(c) && c.deterministic; });
    if (pick == list.end()) pick = std::find_if(list.begin(), list.end(), usable);
    if (pick == list.end()) {
      p.refused = "no algorithm (of " + std::to_string(list.size()) + " from the heuristics) " +
                  (exact ? "with FMA math " : "") + "within 256 MiB of workspace";
      p.destroy(l);
      return p;
    }
    // The algorithm runs with the math type the heuristics listed it with.
    check(l, l.cudnnSetConvolutionMathType_(p.conv, pick->math), op, "cudnnSetConvolutionMathType");
    p.algo = pick->algo;
    std::size_t ws = 0;
    if (op == ConvOp::Forward)
      r = l.cudnnGetConvolutionForwardWorkspaceSize_(
          h, p.x, p.w, p.conv, p.y, static_cast<cudnnConvolutionFwdAlgo_t>(p.algo), &ws);
    else if (op == ConvOp::BackwardData)
      r = l.cudnnGetConvolutionBackwardDataWorkspaceSize_(
          h, p.w, p.y, p.conv, p.x, static_cast<cudnnConvolutionBwdDataAlgo_t>(p.algo), &ws);
    else
      r = l.cudnnGetConvolutionBackwardFilterWorkspaceSize_(
          h, p.x, p.y, p.conv, p.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(p.algo), &ws);
    check(l, r, op, "cudnnGetConvolution*WorkspaceSize");
    p.workspace = std::max(ws, pick->memory);
    if (p.workspace > kMaxWorkspace) {
      p.refused = "the algorithm needs " + std::to_string(p.workspace) +
                  " bytes of workspace, over 256 MiB";
      p.destroy(l);
      return p;
    }
  } catch (...) {
    p.destroy(l);
    throw;
  }
  return p;
}

/// The cached plan of a case (made under the device's lock, in `with_stream`).
const Plan& plan_of(const Lib& l, DeviceState& st, kernel::Elem e, ConvOp op, const ConvShape& s) {
  if (!st.handle) check(l, l.cudnnCreate_(&st.handle), op, "cudnnCreate");
  const std::vector<std::int64_t> key = key_of(e, op, s);
  auto it = st.plans.find(key);
  if (it == st.plans.end()) {
    if (st.plans.size() >= kMaxPlans) {
      for (auto& [unused, p] : st.plans) p.destroy(l);
      st.plans.clear();
    }
    it = st.plans.emplace(key, make_plan(l, st.handle, e, op, s)).first;
  }
  return it->second;
}

/// Why cuDNN cannot be asked at all (empty when it can).
std::string precheck(kernel::ComputeDevice& device, kernel::Elem e, const ConvShape& s) {
  std::string why;
  if (!lib(&why)) return why;
  if (!detail::is_cuda_device(device)) return device.properties().name + " is not a CUDA device";
  cudnnDataType_t data{}, compute{};
  if (!types_of(e, data, compute))
    return "no " + std::string(kernel::elem_name(e)) + " convolutions";
  if (s.spatial != 2 && s.spatial != 3) return "spatial dims must be 2 or 3";
  if (s.groups < 1 || s.in_channels % s.groups != 0 || s.out_channels % s.groups != 0)
    return "channels not divisible by the groups";
  if (s.batch == 0 || s.in_channels == 0 || s.out_channels == 0) return "an empty array";
  for (int i = 0; i < s.spatial; ++i) {
    // cuDNN checks y's dims against x's; a transposed convolution's extra output padding
    // past the stride (allowed below the dilation) makes x one larger than y implies.
    const auto u = static_cast<std::size_t>(i);
    const std::int64_t span = s.in[u] + 2 * s.pad[u] - s.dil[u] * (s.kernel[u] - 1) - 1;
    if (s.in[u] == 0 || span < 0 || span / s.stride[u] + 1 != s.out[u])
      return "the output size is not the convolution's of the input";
  }
  return too_large(s);
}

}  // namespace

bool available(std::string* why) {
  return lib(why) != nullptr;
}

std::string library_path() {
  const Lib* l = lib();
  return l ? l->path : "";
}

std::size_t version() {
  const Lib* l = lib();
  return l ? l->version : 0;
}

std::string refusal(kernel::ComputeDevice& device, kernel::Elem elem, ConvOp op,
                    const ConvShape& shape) {
  if (std::string why = precheck(device, elem, shape); !why.empty()) return why;
  const Lib& l = *lib();
  DeviceState& st = state_of(device);
  std::string refused;
  detail::with_stream(device, "cuDNN plan",
                      [&](CUstream) { refused = plan_of(l, st, elem, op, shape).refused; });
  return refused.empty() ? "" : "cuDNN refuses it (" + refused + ")";
}

void conv(kernel::ComputeDevice& device, kernel::Elem elem, ConvOp op, const ConvShape& shape,
          const Operand& x, const Operand& w, const Operand& y) {
  if (std::string why = precheck(device, elem, shape); !why.empty())
    ember::detail::fail<UnsupportedError>(op_name(op), "cuDNN candidate: ", why);
  const Lib& l = *lib();
  const auto es = static_cast<std::uint64_t>(kernel::elem_bytes(elem));
  const CUdeviceptr px = detail::device_ptr(*x.buffer) + x.offset * es;
  const CUdeviceptr pw = detail::device_ptr(*w.buffer) + w.offset * es;
  const CUdeviceptr py = detail::device_ptr(*y.buffer) + y.offset * es;
  DeviceState& st = state_of(device);
  const char* what = op == ConvOp::Forward        ? "cudnnConvolutionForward"
                     : op == ConvOp::BackwardData ? "cudnnConvolutionBackwardData"
                                                  : "cudnnConvolutionBackwardFilter";
  detail::with_stream(device, what, [&](CUstream stream) {
    const Plan& p = plan_of(l, st, elem, op, shape);
    if (!p.refused.empty())
      ember::detail::fail<UnsupportedError>(op_name(op), "cuDNN candidate: cuDNN refuses it (",
                                            p.refused, ")");
    check(l, l.cudnnSetStream_(st.handle, stream), op, "cudnnSetStream");
    // The workspace returns to the pool when this call ends; the pool hands it to later work
    // of the same stream only, which runs after this convolution.
    kernel::Buffer ws;
    void* pws = nullptr;
    if (p.workspace > 0) {
      ws = device.alloc(p.workspace);
      pws = reinterpret_cast<void*>(detail::device_ptr(*ws));
    }
    const float one32 = 1.0f, zero32 = 0.0f;
    const double one64 = 1.0, zero64 = 0.0;
    const void* alpha = p.f64 ? static_cast<const void*>(&one64) : &one32;
    const void* beta = p.f64 ? static_cast<const void*>(&zero64) : &zero32;
    const auto* cx = reinterpret_cast<void*>(px);
    const auto* cw = reinterpret_cast<void*>(pw);
    const auto* cy = reinterpret_cast<void*>(py);
    cudnnStatus_t r = CUDNN_STATUS_SUCCESS;
    if (op == ConvOp::Forward)
      r = l.cudnnConvolutionForward_(st.handle, alpha, p.x, cx, p.w, cw, p.conv,
                                     static_cast<cudnnConvolutionFwdAlgo_t>(p.algo), pws,
                                     p.workspace, beta, p.y, reinterpret_cast<void*>(py));
    else if (op == ConvOp::BackwardData)
      r = l.cudnnConvolutionBackwardData_(st.handle, alpha, p.w, cw, p.y, cy, p.conv,
                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(p.algo), pws,
                                          p.workspace, beta, p.x, reinterpret_cast<void*>(px));
    else
      r = l.cudnnConvolutionBackwardFilter_(st.handle, alpha, p.x, cx, p.y, cy, p.conv,
                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(p.algo),
                                            pws, p.workspace, beta, p.w,
                                            reinterpret_cast<void*>(pw));
    check(l, r, op, what);
  });
}

}  // namespace ember::cuda::dnn
