// cuBLASLt loaded at run time and the batched matrix product through it (see blaslt.hpp).
#include "blaslt.hpp"

#include <cublasLt.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "api.hpp"
#include "ember/core/error.hpp"
#include "native.hpp"

namespace ember::cuda::blaslt {

namespace {

#define EMBER_LT_STR2(x) #x
#define EMBER_LT_STR(x) EMBER_LT_STR2(x)

// The cuBLASLt functions Ember calls (the table is filled by dlsym, as api.hpp's).
// clang-format off
#define EMBER_LT_FUNCS(X) \
  X(cublasLtCreate) \
  X(cublasLtGetVersion) \
  X(cublasLtGetStatusName) \
  X(cublasLtMatmulDescCreate) \
  X(cublasLtMatmulDescDestroy) \
  X(cublasLtMatrixLayoutCreate) \
  X(cublasLtMatrixLayoutDestroy) \
  X(cublasLtMatrixLayoutSetAttribute) \
  X(cublasLtMatmulPreferenceCreate) \
  X(cublasLtMatmulPreferenceDestroy) \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic) \
  X(cublasLtMatmul)
// clang-format on

struct Lib {
  EMBER_LT_FUNCS(EMBER_API_MEMBER)
  std::string path;
  std::size_t version = 0;
};

struct LibState {
  Lib lib;
  std::string error;
  bool ok = false;
};

/// The places to look, in order (blaslt.hpp).
std::vector<std::string> candidates() {
  namespace fs = std::filesystem;
  const char* const files[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
  std::vector<std::string> c;
  const auto in_folder = [&](const std::string& dir) {
    for (const char* f : files) c.push_back((fs::path(dir) / f).string());
  };
  if (const char* p = std::getenv("EMBER_CUBLASLT_LIB"); p && *p) {
    std::error_code ec;
    if (fs::is_directory(p, ec))
      in_folder(p);
    else
      c.emplace_back(p);
  }
  c.emplace_back(files[0]);  // the loader's search path
  c.emplace_back(files[1]);
#ifdef EMBER_CUDA_LIBRARY_DIR
  in_folder(EMBER_CUDA_LIBRARY_DIR);
#endif
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* p = std::getenv(env); p && *p) in_folder(std::string(p) + "/lib64");
  in_folder("/usr/local/cuda/lib64");
  if (const detail::Nvrtc* n = detail::nvrtc(); n && !n->path.empty())
    in_folder(fs::path(n->path).parent_path().string());
  return c;
}

LibState load() {
  LibState s;
  std::string tried;
  void* h = detail::open_first(candidates(), tried);
  if (!h) {
    s.error = "no cuBLASLt library (" + tried + ")";
    return s;
  }
#define EMBER_LT_LOAD(fn)                                                    \
  s.lib.fn##_ = reinterpret_cast<decltype(&fn)>(dlsym(h, EMBER_LT_STR(fn))); \
  if (!s.lib.fn##_) {                                                        \
    s.error = "the cuBLASLt library lacks " EMBER_LT_STR(fn);                \
    return s;                                                                \
  }
  EMBER_LT_FUNCS(EMBER_LT_LOAD)
#undef EMBER_LT_LOAD
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(s.lib.cublasLtMatmul_), &info) && info.dli_fname)
    s.lib.path = info.dli_fname;
  s.lib.version = s.lib.cublasLtGetVersion_();
  if (s.lib.version < 110000) {  // the compute types and heuristics used here: CUDA 11+
    s.error =
        "cuBLASLt " + std::to_string(s.lib.version) + " at " + s.lib.path + " is older than 11.0";
    return s;
  }
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

void check(const Lib& l, cublasStatus_t r, const char* fn) {
  if (r == CUBLAS_STATUS_SUCCESS) return;
  const char* name = l.cublasLtGetStatusName_(r);
  ember::detail::fail<DeviceError>("matmul", "cuBLASLt ", fn, ": ",
                                   name ? name : std::to_string(static_cast<int>(r)));
}

/// What a product needs besides its pointers: descriptors and the heuristic's algorithm.
struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLASLt's A, B, C (= D)
  cublasLtMatmulAlgo_t algo{};
  std::size_t workspace = 0;
  bool f64 = false;

  void destroy(const Lib& l) {
    if (op) l.cublasLtMatmulDescDestroy_(op);
    for (cublasLtMatrixLayout_t x : {a, b, c})
      if (x) l.cublasLtMatrixLayoutDestroy_(x);
    op = nullptr;
    a = b = c = nullptr;
  }
};

// (elem, batches, m, n, k, A's batch stride, B's batch stride, alignments of A, B, C)
using PlanKey = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                           std::int64_t, std::int64_t, std::uint32_t, std::uint32_t, std::uint32_t>;

/// Per device: the handle and the plans, used under the device's lock (detail::with_stream).
struct DeviceState {
  cublasLtHandle_t handle = nullptr;
  std::map<PlanKey, Plan> plans;
};

constexpr std::size_t kMaxPlans = 512;                            // per device, then cleared
constexpr std::uint64_t kMaxWorkspace = std::uint64_t{32} << 20;  // NVIDIA's advice for Hopper

DeviceState& state_of(const kernel::ComputeDevice& device) {
  static std::mutex mu;
  static std::map<const kernel::ComputeDevice*, std::unique_ptr<DeviceState>> states;
  std::lock_guard lock(mu);
  auto& s = states[&device];
  if (!s) s = std::make_unique<DeviceState>();
  return *s;
}

/// The largest power of two (at most 256) dividing every batch's start address.
std::uint32_t alignment(std::uint64_t address, std::int64_t batch_stride_bytes,
                        std::int64_t batches) {
  std::uint64_t bits = address | 256u;
  if (batches > 1) bits |= static_cast<std::uint64_t>(batch_stride_bytes);
  return static_cast<std::uint32_t>(bits & (~bits + 1));
}

cudaDataType_t data_type(kernel::Elem e) {
  switch (e) {
    case kernel::Elem::F32:
      return CUDA_R_32F;
    case kernel::Elem::F16:
      return CUDA_R_16F;
    case kernel::Elem::BF16:
      return CUDA_R_16BF;
    case kernel::Elem::F64:
      return CUDA_R_64F;
    default:
      ember::detail::fail<UnsupportedError>("matmul", "cuBLASLt candidate: no ",
                                            kernel::elem_name(e), " products");
  }
}

/// A column-major layout of `rows` x `cols` (leading dimension `rows`), `batches` of them
/// `stride` elements apart.
cublasLtMatrixLayout_t layout(const Lib& l, cudaDataType_t t, std::int64_t rows, std::int64_t cols,
                              std::int64_t batches, std::int64_t stride) {
  cublasLtMatrixLayout_t x = nullptr;
  check(l,
        l.cublasLtMatrixLayoutCreate_(&x, t, static_cast<std::uint64_t>(rows),
                                      static_cast<std::uint64_t>(cols), rows),
        "cublasLtMatrixLayoutCreate");
  if (batches > 1) {
    const auto count = static_cast<std::int32_t>(batches);
    check(l,
          l.cublasLtMatrixLayoutSetAttribute_(x, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                              sizeof count),
          "cublasLtMatrixLayoutSetAttribute");
    check(l,
          l.cublasLtMatrixLayoutSetAttribute_(x, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                              &stride, sizeof stride),
          "cublasLtMatrixLayoutSetAttribute");
  }
  return x;
}

/// Descriptors and the heuristic's best algorithm for one case (cuBLASLt's view: the
/// column-major product C' [n, m] = A' [n, k] B' [k, m], A' = our B, B' = our A).
Plan make_plan(const Lib& l, cublasLtHandle_t h, kernel::Elem e, std::int64_t batches,
               std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t a_stride,
               std::int64_t b_stride, const std::uint32_t (&align)[3]) {
  Plan p;
  const cudaDataType_t t = data_type(e);
  p.f64 = e == kernel::Elem::F64;
  try {
    const cublasComputeType_t compute = p.f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
    check(l, l.cublasLtMatmulDescCreate_(&p.op, compute, p.f64 ? CUDA_R_64F : CUDA_R_32F),
          "cublasLtMatmulDescCreate");
    p.a = layout(l, t, n, k, batches, b_stride);
    p.b = layout(l, t, k, m, batches, a_stride);
    p.c = layout(l, t, n, m, batches, m * n);
    cublasLtMatmulPreference_t pref = nullptr;
    check(l, l.cublasLtMatmulPreferenceCreate_(&pref), "cublasLtMatmulPreferenceCreate");
    const auto set = [&](cublasLtMatmulPreferenceAttributes_t attr, const auto& v) {
      check(l, l.cublasLtMatmulPreferenceSetAttribute_(pref, attr, &v, sizeof v),
            "cublasLtMatmulPreferenceSetAttribute");
    };
    cublasLtMatmulHeuristicResult_t best{};
    int found = 0;
    cublasStatus_t r = CUBLAS_STATUS_SUCCESS;
    try {
      set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, kMaxWorkspace);
      // Split-K partial sums only in the compute type (f32/f64), never rounded to an f16/bf16
      // output in between: one rounding on store, the same result on every run.
      set(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
          static_cast<std::uint32_t>(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE));
      set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align[1]);  // cuBLASLt's A is our B
      set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align[0]);
      set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align[2]);
      set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align[2]);
      r = l.cublasLtMatmulAlgoGetHeuristic_(h, p.op, p.a, p.b, p.c, p.c, pref, 1, &best, &found);
    } catch (...) {
      l.cublasLtMatmulPreferenceDestroy_(pref);
      throw;
    }
    l.cublasLtMatmulPreferenceDestroy_(pref);
    // The result's fields are valid only when its own state is SUCCESS (cublasLt.h).
    if (r == CUBLAS_STATUS_NOT_SUPPORTED ||
        (r == CUBLAS_STATUS_SUCCESS && (found == 0 || best.state != CUBLAS_STATUS_SUCCESS)))
      ember::detail::fail<UnsupportedError>("matmul", "cuBLASLt has no algorithm for ", batches,
                                            " x [", m, ", ", k, "] x [", k, ", ", n, "] ",
                                            kernel::elem_name(e));
    check(l, r, "cublasLtMatmulAlgoGetHeuristic");
    p.algo = best.algo;
    p.workspace = best.workspaceSize;
  } catch (...) {
    p.destroy(l);
    throw;
  }
  return p;
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

void matmul(kernel::ComputeDevice& device, kernel::Elem elem, std::int64_t batches, std::int64_t m,
            std::int64_t n, std::int64_t k, const Operand& a, const Operand& b, const Operand& c) {
  std::string why;
  const Lib* l = lib(&why);
  if (!l) ember::detail::fail<UnsupportedError>("matmul", "cuBLASLt candidate: ", why);
  if (!detail::is_cuda_device(device))
    ember::detail::fail<UnsupportedError>(
        "matmul", "cuBLASLt candidate: ", device.properties().name, " is not a CUDA device");
  data_type(elem);  // throws for other types
  std::int64_t a_stride = a.batch_stride, b_stride = b.batch_stride;
  if (batches > 1 && b_stride == 0 && a_stride == m * k) {
    // A broadcast B: the batches of A stack into one [batches * m, k] matrix.
    m *= batches;
    batches = 1;
  }
  // The batch count is an int32 attribute, and rows / columns beyond int32 are not served.
  constexpr std::int64_t kInt32Max = 2147483647;
  if (batches > kInt32Max || m > kInt32Max || n > kInt32Max || k > kInt32Max)
    ember::detail::fail<UnsupportedError>("matmul", "cuBLASLt candidate: ", batches, " x [", m,
                                          ", ", k, "] x [", k, ", ", n,
                                          "] exceeds its 32-bit sizes");
  if (batches == 1) a_stride = b_stride = 0;
  const std::int64_t es = kernel::elem_bytes(elem);
  const CUdeviceptr pa = detail::device_ptr(*a.buffer) + a.offset * static_cast<std::uint64_t>(es);
  const CUdeviceptr pb = detail::device_ptr(*b.buffer) + b.offset * static_cast<std::uint64_t>(es);
  const CUdeviceptr pc = detail::device_ptr(*c.buffer) + c.offset * static_cast<std::uint64_t>(es);
  const std::uint32_t align[3] = {alignment(pa, a_stride * es, batches),
                                  alignment(pb, b_stride * es, batches),
                                  alignment(pc, m * n * es, batches)};
  DeviceState& st = state_of(device);
  detail::with_stream(device, "cublasLtMatmul", [&](CUstream stream) {
    if (!st.handle) check(*l, l->cublasLtCreate_(&st.handle), "cublasLtCreate");
    const PlanKey key{
        static_cast<int>(elem), batches, m, n, k, a_stride, b_stride, align[0], align[1], align[2]};
    auto it = st.plans.find(key);
    if (it == st.plans.end()) {
      if (st.plans.size() >= kMaxPlans) {
        for (auto& [unused, p] : st.plans) p.destroy(*l);
        st.plans.clear();
      }
      Plan p = make_plan(*l, st.handle, elem, batches, m, n, k, a_stride, b_stride, align);
      it = st.plans.emplace(key, p).first;
    }
    const Plan& p = it->second;
    // The workspace returns to the pool when this call ends; the pool hands it to later work
    // of the same stream only, which runs after this product.
    kernel::Buffer ws;
    CUdeviceptr pw = 0;
    if (p.workspace > 0) {
      ws = device.alloc(p.workspace);
      pw = detail::device_ptr(*ws);
    }
    const float one32 = 1.0f, zero32 = 0.0f;
    const double one64 = 1.0, zero64 = 0.0;
    const void* alpha = p.f64 ? static_cast<const void*>(&one64) : &one32;
    const void* beta = p.f64 ? static_cast<const void*>(&zero64) : &zero32;
    check(*l,
          l->cublasLtMatmul_(st.handle, p.op, alpha, reinterpret_cast<const void*>(pb), p.a,
                             reinterpret_cast<const void*>(pa), p.b, beta,
                             reinterpret_cast<const void*>(pc), p.c, reinterpret_cast<void*>(pc),
                             p.c, &p.algo, reinterpret_cast<void*>(pw), p.workspace, stream),
          "cublasLtMatmul");
  });
}

}  // namespace ember::cuda::blaslt
