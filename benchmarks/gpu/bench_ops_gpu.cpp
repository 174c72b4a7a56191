// GPU benchmarks of backend functions of ember::Cuda and ember::Vulkan (issue 15's
// memory-bound cases): softmax, log_softmax, layer_norm, rms_norm and cross-entropy with class
// indices over [8192, 8192] f32, and
// softmax over [262144, 512] (attention's rows: batch 32 x 16 heads x 512 queries). Device time
// from the device's timers (CUDA events, Vulkan timestamps) around each call, median of 50
// after 5 warm-up calls; the effective bandwidth counts the input read once and the output
// written once (4 + 4 bytes per element; cross-entropy only reads: 4), as PyTorch's
// benchmarks do. Matrix products (issue 13's compute-bound cases): 4096^3 and 8192^3 in f32,
// f16 and bf16, TFLOP/s = 2 n^3 / time; each candidate forced (EMBER_MATMUL_CANDIDATE: the
// tiled kernel, cuBLASLt on CUDA), then as autotune chooses (the winner is reported), median
// of 10 after 2 warm-up calls; 16 entries of each result checked against f64 sums on the
// host. Convolutions (issue 13): 2-d, 3x3, 256 -> 256 channels, 14 x 14, padding 1, batch 128,
// in f32 and bf16, the forward convolution and its input and weight gradients (fwd, dgrad,
// wgrad), TFLOP/s = 2 B C_out 14^2 C_in 9 / time; each candidate forced (EMBER_CONV_CANDIDATE:
// im2col, cuDNN on CUDA), then as autotune chooses, median of 10 after 2 warm-up calls; 8
// entries of each result checked against f64 sums on the host. Attention (issue 15): fused
// scaled dot-product attention, q, k, v [32, 16, S, 64] (batch, heads, L = S, head dim) in
// bf16 for S = 512 and 4096, scale 0.125, causal and not; fwd times
// float_scaled_dot_product_attention, bwd float_scaled_dot_product_attention_backward (dq, dk,
// dv) after one float_scaled_dot_product_attention_train; median of 10 after 2 warm-up calls;
// TFLOP/s counts FlashAttention-2's flops: fwd 4 B H L S E (halved when causal), bwd 2.5 times
// the fwd's count; 4 entries of out (fwd) or of dv (bwd) checked against f64 sums on the host.
// ops_side_by_side.py runs PyTorch's equivalents on the same GPU and prints the ratios.
//
//   bench_ops_gpu [OUT.json]     (default ember_ops.json)
//   EMBER_BENCH_ROW_DIVISOR=N    divides the row counts (a quick run on a small device)
//   EMBER_BENCH_MATMUL=0         leaves the matrix products out; =N runs only N^3 (e.g. 4096)
//   EMBER_BENCH_CONV=0           leaves the convolutions out
//   EMBER_BENCH_ATTENTION=0      leaves the attention cases out
//   EMBER_BENCH_ATTENTION_BATCH=N  overrides attention's batch (32)
//   EMBER_BENCH_ATTENTION_SEQ=N    runs only sequence length N (the names say the sizes run)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember/gpu/gpu.hpp"
#include "ember/tune/tune.hpp"
#ifdef EMBER_HAVE_CUDA
#include "ember/gpu/cuda.hpp"
#endif
#ifdef EMBER_HAVE_VULKAN
#include "ember/gpu/vulkan.hpp"
#endif

namespace {

struct Result {
  std::string name, target, device;
  double median_ms = 0, tbps = 0, tflops = 0;
  std::string error;
  std::string candidate;                                   // matmul: autotune's choice
  std::vector<std::pair<std::string, double>> candidates;  // matmul: each one forced, ms
};

std::vector<float> spread(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = -6.0f + 15.0f * std::fmod(0.618034f * static_cast<float>(i % 1000003 + 1), 1.0f);
  return v;
}

template <class B, class R>
void run_target(const std::string& target, std::vector<Result>& out) {
  using ember::GpuTensor;
  using ember::Shape;
  using ember::TensorData;
  const typename B::Device dev{0};
  ember::kernel::ComputeDevice& cd = R::device(0);
  const char* div_env = std::getenv("EMBER_BENCH_ROW_DIVISOR");
  const std::int64_t div = div_env ? std::max(1LL, std::atoll(div_env)) : 1;
  const auto upload = [&](std::int64_t rows, std::int64_t cols) {
    return B::float_from_data(
        TensorData(spread(static_cast<std::size_t>(rows * cols)), Shape{rows, cols}), dev);
  };
  struct Case {
    std::string name;
    std::int64_t rows, cols;
    std::function<GpuTensor(const GpuTensor&, const GpuTensor&, const GpuTensor&,
                            const GpuTensor&)>
        fn;  // (x, weight, bias, class indices)
    std::function<bool(const std::vector<float>&, std::int64_t)> check;  // first row of the result
    double bytes = 8;                                                    // per element
  };
  const auto sums_to_one = [](const std::vector<float>& r, std::int64_t) {
    double s = 0;
    for (float v : r) s += v;
    return std::fabs(s - 1.0) < 1e-4;
  };
  const auto exp_sums_to_one = [](const std::vector<float>& r, std::int64_t) {
    double s = 0;
    for (float v : r) s += std::exp(static_cast<double>(v));
    return std::fabs(s - 1.0) < 1e-4;
  };
  const auto unit_rms = [](const std::vector<float>& r, std::int64_t) {  // weight 1
    double s = 0;
    for (float v : r) s += static_cast<double>(v) * v;
    return std::fabs(std::sqrt(s / static_cast<double>(r.size())) - 1.0) < 1e-3;
  };
  const auto standardised = [](const std::vector<float>& r, std::int64_t) {  // weight 1, bias 0
    double m = 0, q = 0;
    for (float v : r) m += v;
    m /= static_cast<double>(r.size());
    for (float v : r) q += (v - m) * (v - m);
    return std::fabs(m) < 1e-4 && std::fabs(q / static_cast<double>(r.size()) - 1.0) < 1e-3;
  };
  const std::vector<Case> cases{
      {"softmax_8192x8192", 8192, 8192,
       [](auto& x, auto&, auto&, auto&) { return B::float_softmax(x, 1); }, sums_to_one},
      {"log_softmax_8192x8192", 8192, 8192,
       [](auto& x, auto&, auto&, auto&) { return B::float_log_softmax(x, 1); }, exp_sums_to_one},
      {"layer_norm_8192x8192", 8192, 8192,
       [](auto& x, auto& w, auto& b, auto&) { return B::float_layer_norm(x, 1, w, b, 1e-5); },
       standardised},
      {"rms_norm_8192x8192", 8192, 8192,
       [](auto& x, auto& w, auto&, auto&) { return B::float_rms_norm(x, w, 1e-6); }, unit_rms},
      {"cross_entropy_8192x8192", 8192, 8192,
       [](auto& x, auto&, auto&, auto& t) { return B::float_cross_entropy_with_indices(x, t); },
       [](const std::vector<float>& r, std::int64_t) {  // r[0]: the mean loss, near log(C)
         return std::isfinite(r[0]) && r[0] > 0.0f && r[0] < 20.0f;
       },
       4},
      {"softmax_262144x512", 262144, 512,
       [](auto& x, auto&, auto&, auto&) { return B::float_softmax(x, 1); }, sums_to_one},
  };
  for (const Case& c : cases) {
    Result r;
    r.name = c.name;
    r.target = target;
    r.device = cd.properties().name;
    try {
      const std::int64_t rows = std::max<std::int64_t>(c.rows / div, 1);
      const GpuTensor x = upload(rows, c.cols);
      const GpuTensor w = B::float_from_data(
          TensorData(std::vector<float>(static_cast<std::size_t>(c.cols), 1.0f), Shape{c.cols}),
          dev);
      const GpuTensor b = B::float_from_data(
          TensorData(std::vector<float>(static_cast<std::size_t>(c.cols), 0.0f), Shape{c.cols}),
          dev);
      std::vector<std::int64_t> idx(static_cast<std::size_t>(rows));
      for (std::int64_t i = 0; i < rows; ++i) idx[i] = (i * 7 + 3) % c.cols;
      const GpuTensor t = B::int_from_data(TensorData(idx, Shape{rows}), dev);
      std::optional<GpuTensor> y;
      for (int i = 0; i < 5; ++i) y = c.fn(x, w, b, t);
      std::vector<double> ms;
      for (int i = 0; i < 50; ++i) ms.push_back(cd.time_ms([&] { y = c.fn(x, w, b, t); }));
      std::sort(ms.begin(), ms.end());
      r.median_ms = ms[ms.size() / 2];
      r.tbps = c.bytes * static_cast<double>(rows * c.cols) / (r.median_ms * 1e-3) / 1e12;
      std::vector<float> row = B::float_into_data(*y).template to_vec<float>();
      row.resize(std::min(row.size(), static_cast<std::size_t>(c.cols)));
      if (!c.check(row, c.cols)) r.error = "wrong result";
    } catch (const std::exception& e) {
      r.error = e.what();
      std::replace(r.error.begin(), r.error.end(), '"', '\'');
    }
    std::printf("%-24s %-7s %9.4f ms %7.3f TB/s %s\n", r.name.c_str(), target.c_str(), r.median_ms,
                r.tbps, r.error.c_str());
    out.push_back(r);
  }
}

/// Matrix products n^3 per dtype: each candidate forced, then autotuned (see the top).
template <class B, class R>
void run_matmul(const std::string& target, std::vector<Result>& out) {
  using ember::DType;
  using ember::GpuTensor;
  using ember::Shape;
  using ember::TensorData;
  const char* env = std::getenv("EMBER_BENCH_MATMUL");
  const std::string only = env ? env : "";
  if (only == "0") return;
  const typename B::Device dev{0};
  ember::kernel::ComputeDevice& cd = R::device(0);
  std::vector<std::string> names{"ember_tiled"};
  if (target == "cuda") names.push_back("cublaslt");
  const auto time = [&](const std::function<GpuTensor()>& fn, GpuTensor& y) {
    for (int i = 0; i < 2; ++i) y = fn();
    std::vector<double> ms;
    for (int i = 0; i < 10; ++i) ms.push_back(cd.time_ms([&] { y = fn(); }));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  std::vector<std::int64_t> sizes{4096, 8192};
  if (!only.empty()) sizes = {std::max<std::int64_t>(std::atoll(only.c_str()), 1)};
  for (std::int64_t n : sizes) {
    const auto count = static_cast<std::size_t>(n * n);
    std::vector<float> av(count), bv(count);  // in [-1, 1]: sums stay far from f16's range
    for (std::size_t i = 0; i < count; ++i) {
      av[i] = -1.0f + 2.0f * std::fmod(0.618034f * static_cast<float>(i % 1000003 + 1), 1.0f);
      bv[i] = -1.0f + 2.0f * std::fmod(0.414214f * static_cast<float>(i % 999983 + 1), 1.0f);
    }
    for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
      Result r;
      r.name = "matmul_" + std::to_string(n) + "_" + std::string(ember::dtype_name(dt));
      r.target = target;
      r.device = cd.properties().name;
      try {
        if (!ember::gpu::native_dtype(dt, cd))
          throw ember::UnsupportedError("no " + std::string(ember::dtype_name(dt)) + " here");
        const TensorData ad = TensorData(av, Shape{n, n}).convert(dt);
        const TensorData bd = TensorData(bv, Shape{n, n}).convert(dt);
        const GpuTensor a = B::float_from_data(ad, dev), b = B::float_from_data(bd, dev);
        GpuTensor y;
        const auto product = [&] { return B::float_matmul(a, b); };
        for (const std::string& c : names) {
          ::setenv("EMBER_MATMUL_CANDIDATE", c.c_str(), 1);
          try {
            r.candidates.emplace_back(c, time(product, y));
          } catch (const std::exception& e) {
            std::fprintf(stderr, "%s %s %s: %s\n", r.name.c_str(), target.c_str(), c.c_str(),
                         e.what());
            r.candidates.emplace_back(c, -1.0);
          }
        }
        ::unsetenv("EMBER_MATMUL_CANDIDATE");
        r.median_ms = time(product, y);
        const ember::tune::Key key =
            ember::tune::make_key("matmul",
                                  {1, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(n),
                                   static_cast<std::uint64_t>(n)},
                                  std::string(ember::dtype_name(dt)), cd);
        // No winner: nothing was tuned (one candidate, or EMBER_AUTOTUNE=0): the tiled kernel.
        r.candidate = ember::tune::Tuner::enabled()
                          ? ember::tune::Tuner::global().winner(key).value_or("ember_tiled")
                          : "ember_tiled";
        r.tflops = 2.0 * static_cast<double>(n) * n * n / (r.median_ms * 1e-3) / 1e12;
        // 16 entries against f64 sums of the inputs as the device saw them (rounded to dt).
        const std::vector<double> got = B::float_into_data(y).template to_vec<double>();
        const std::vector<double> ah = ad.to_vec<double>(), bh = bd.to_vec<double>();
        const double tol = dt == DType::F32 ? 1e-5 : dt == DType::F16 ? 2e-3 : 1.6e-2;
        for (int s = 0; s < 16 && r.error.empty(); ++s) {
          const std::int64_t i = (s * 977 + 13) % n, j = (s * 613 + 101) % n;
          double want = 0, scale = 0;
          for (std::int64_t q = 0; q < n; ++q) {
            want += ah[i * n + q] * bh[q * n + j];
            scale += std::fabs(ah[i * n + q] * bh[q * n + j]);
          }
          if (!(std::fabs(got[i * n + j] - want) <= tol * scale))
            r.error = "wrong result at (" + std::to_string(i) + ", " + std::to_string(j) + ")";
        }
      } catch (const std::exception& e) {
        r.error = e.what();
        std::replace(r.error.begin(), r.error.end(), '"', '\'');
      }
      ::unsetenv("EMBER_MATMUL_CANDIDATE");
      std::printf("%-24s %-7s %9.4f ms %7.1f TFLOP/s %-12s", r.name.c_str(), target.c_str(),
                  r.median_ms, r.tflops, r.candidate.c_str());
      for (const auto& [c, ms] : r.candidates) std::printf(" %s %.4f ms", c.c_str(), ms);
      std::printf(" %s\n", r.error.c_str());
      out.push_back(r);
    }
  }
}

/// The convolution cases (see the top): each function per dtype, each candidate forced, then
/// autotuned.
template <class B, class R>
void run_conv(const std::string& target, std::vector<Result>& out) {
  using ember::DType;
  using ember::GpuTensor;
  using ember::Shape;
  using ember::TensorData;
  if (const char* env = std::getenv("EMBER_BENCH_CONV"); env && std::string(env) == "0") return;
  const typename B::Device dev{0};
  ember::kernel::ComputeDevice& cd = R::device(0);
  std::vector<std::string> names{"ember"};
  if (target == "cuda") names.push_back("cudnn");
  constexpr std::int64_t kB = 128, kC = 256, kS = 14, kK = 3;
  const auto fill = [](std::size_t n, float f) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
      v[i] = -1.0f + 2.0f * std::fmod(f * static_cast<float>(i % 1000003 + 1), 1.0f);
    return v;
  };
  const Shape xs{kB, kC, kS, kS}, ws{kC, kC, kK, kK};
  const std::vector<float> xv = fill(static_cast<std::size_t>(xs.numel()), 0.618034f);
  const std::vector<float> wv = fill(static_cast<std::size_t>(ws.numel()), 0.414214f);
  const std::vector<float> dv = fill(static_cast<std::size_t>(xs.numel()), 0.302775f);
  ember::ConvOptions<2> o;
  o.padding = {1, 1};
  const double flops = 2.0 * kB * kC * kS * kS * kC * kK * kK;
  const auto time = [&](const std::function<GpuTensor()>& fn, GpuTensor& y) {
    for (int i = 0; i < 2; ++i) y = fn();
    std::vector<double> ms;
    for (int i = 0; i < 10; ++i) ms.push_back(cd.time_ms([&] { y = fn(); }));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  for (DType dt : {DType::F32, DType::BF16}) {
    const TensorData xd = TensorData(xv, xs).convert(dt), wd = TensorData(wv, ws).convert(dt);
    const TensorData dd = TensorData(dv, xs).convert(dt);  // dy: the output is 14 x 14 too
    const std::vector<double> xh = xd.to_vec<double>(), wh = wd.to_vec<double>(),
                              dh = dd.to_vec<double>();
    const auto at = [&](const std::vector<double>& v, std::int64_t n, std::int64_t c,
                        std::int64_t i, std::int64_t j) {
      return i < 0 || j < 0 || i >= kS || j >= kS ? 0.0 : v[((n * kC + c) * kS + i) * kS + j];
    };
    for (const char* fn : {"fwd", "dgrad", "wgrad"}) {
      const std::string f = fn;
      Result r;
      r.name = "conv2d_3x3_256c_14x14_b128_" + f + "_" + std::string(ember::dtype_name(dt));
      r.target = target;
      r.device = cd.properties().name;
      try {
        if (!ember::gpu::native_dtype(dt, cd))
          throw ember::UnsupportedError("no " + std::string(ember::dtype_name(dt)) + " here");
        const GpuTensor x = B::float_from_data(xd, dev), w = B::float_from_data(wd, dev);
        const GpuTensor dy = B::float_from_data(dd, dev);
        const std::function<GpuTensor()> run = [&]() -> GpuTensor {
          if (f == "fwd") return B::template conv<2>(x, w, std::nullopt, o);
          if (f == "dgrad") return B::template conv_x_backward<2>(dy, w, xs, o);
          return B::template conv_weight_backward<2>(x, dy, ws, o);
        };
        GpuTensor y;
        for (const std::string& c : names) {
          ::setenv("EMBER_CONV_CANDIDATE", c.c_str(), 1);
          try {
            r.candidates.emplace_back(c, time(run, y));
          } catch (const std::exception& e) {
            std::fprintf(stderr, "%s %s %s: %s\n", r.name.c_str(), target.c_str(), c.c_str(),
                         e.what());
            r.candidates.emplace_back(c, -1.0);
          }
        }
        ::unsetenv("EMBER_CONV_CANDIDATE");
        r.median_ms = time(run, y);
        const std::string op = f == "fwd"     ? "conv2d"
                               : f == "dgrad" ? "conv2d_x_backward"
                                              : "conv2d_weight_backward";
        const ember::tune::Key key =
            ember::tune::make_key(op, {kB, kC, kC, 1, kS, kS, kK, kK, 1, 1, 1, 1, 1, 1},
                                  std::string(ember::dtype_name(dt)), cd);
        r.candidate = ember::tune::Tuner::enabled()
                          ? ember::tune::Tuner::global().winner(key).value_or("ember")
                          : "ember";
        r.tflops = flops / (r.median_ms * 1e-3) / 1e12;
        // 8 entries against f64 sums of the inputs as the device saw them (rounded to dt).
        const std::vector<double> got = B::float_into_data(y).template to_vec<double>();
        const double tol = dt == DType::F32 ? 2e-5 : 1.6e-2;
        for (std::int64_t s = 0; s < 8 && r.error.empty(); ++s) {
          const std::int64_t a = (s * 37 + 5) % kB, b = (s * 101 + 7) % kC;
          const std::int64_t i = (s * 5 + 1) % kS, j = (s * 3) % kS;
          double want = 0, scale = 0;
          std::int64_t index = 0;
          const auto add = [&](double t) {
            want += t;
            scale += std::fabs(t);
          };
          if (f == "fwd") {  // y[a, b, i, j]
            for (std::int64_t c = 0; c < kC; ++c)
              for (std::int64_t p = 0; p < kK; ++p)
                for (std::int64_t q = 0; q < kK; ++q)
                  add(at(xh, a, c, i + p - 1, j + q - 1) * wh[((b * kC + c) * kK + p) * kK + q]);
            index = ((a * kC + b) * kS + i) * kS + j;
          } else if (f == "dgrad") {  // dx[a, b, i, j]
            for (std::int64_t c = 0; c < kC; ++c)
              for (std::int64_t p = 0; p < kK; ++p)
                for (std::int64_t q = 0; q < kK; ++q)
                  add(at(dh, a, c, i - p + 1, j - q + 1) * wh[((c * kC + b) * kK + p) * kK + q]);
            index = ((a * kC + b) * kS + i) * kS + j;
          } else {  // dw[b, c = a, p, q]
            const std::int64_t c = a, p = s % kK, q = (s / kK) % kK;
            for (std::int64_t n = 0; n < kB; ++n)
              for (std::int64_t u = 0; u < kS; ++u)
                for (std::int64_t v = 0; v < kS; ++v)
                  add(at(dh, n, b, u, v) * at(xh, n, c, u + p - 1, v + q - 1));
            index = ((b * kC + c) * kK + p) * kK + q;
          }
          if (!(std::fabs(got[static_cast<std::size_t>(index)] - want) <= tol * scale))
            r.error = "wrong result at element " + std::to_string(index);
        }
      } catch (const std::exception& e) {
        r.error = e.what();
        std::replace(r.error.begin(), r.error.end(), '"', '\'');
      }
      ::unsetenv("EMBER_CONV_CANDIDATE");
      std::printf("%-38s %-7s %9.4f ms %7.1f TFLOP/s %-12s", r.name.c_str(), target.c_str(),
                  r.median_ms, r.tflops, r.candidate.c_str());
      for (const auto& [c, ms] : r.candidates) std::printf(" %s %.4f ms", c.c_str(), ms);
      std::printf(" %s\n", r.error.c_str());
      out.push_back(r);
    }
  }
}

/// The attention cases (see the top): fused scaled dot-product attention in bf16, forward and
/// backward, causal and not, for each sequence length.
template <class B, class R>
void run_attention(const std::string& target, std::vector<Result>& out) {
  using ember::DType;
  using ember::GpuTensor;
  using ember::Shape;
  using ember::TensorData;
  if (const char* env = std::getenv("EMBER_BENCH_ATTENTION"); env && std::string(env) == "0")
    return;
  const auto env_int = [](const char* name, std::int64_t fallback) {
    const char* v = std::getenv(name);
    return v ? std::max<std::int64_t>(std::atoll(v), 1) : fallback;
  };
  const typename B::Device dev{0};
  ember::kernel::ComputeDevice& cd = R::device(0);
  const std::int64_t kB = env_int("EMBER_BENCH_ATTENTION_BATCH", 32), kH = 16, kE = 64;
  constexpr double kScale = 0.125;
  std::vector<std::int64_t> seqs{512, 4096};
  if (std::getenv("EMBER_BENCH_ATTENTION_SEQ")) seqs = {env_int("EMBER_BENCH_ATTENTION_SEQ", 1)};
  constexpr float kQ = 0.618034f, kK = 0.414214f, kV = 0.302775f, kD = 0.707107f;  // fills
  const auto value = [](std::int64_t i, float f) {                                 // in [-1, 1]
    return -1.0f + 2.0f * std::fmod(f * static_cast<float>(i % 1000003 + 1), 1.0f);
  };
  // Entries [begin, begin + n) of a fill as the device sees them (rounded to bf16), in f64.
  const auto host = [&](std::int64_t begin, std::int64_t n, float f) {
    std::vector<float> h(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) h[i] = value(begin + i, f);
    return TensorData(std::move(h), Shape{n}).convert(DType::BF16).to_vec<double>();
  };
  const auto time = [&](const std::function<void()>& fn) {
    for (int i = 0; i < 2; ++i) fn();
    std::vector<double> ms;
    for (int i = 0; i < 10; ++i) ms.push_back(cd.time_ms(fn));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  for (const std::int64_t kS : seqs) {
    const Shape shape{kB, kH, kS, kE};
    const std::int64_t n = shape.numel(), slice = kS * kE;  // slice: one (batch, head)
    std::optional<GpuTensor> q, k, v, dout;                 // [B, H, S, E], once per length
    std::string setup_error;
    try {
      if (!ember::gpu::native_dtype(DType::BF16, cd)) throw ember::UnsupportedError("no bf16 here");
      const auto upload = [&](float f) {
        std::vector<float> h(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) h[i] = value(i, f);
        return B::float_from_data(TensorData(std::move(h), shape).convert(DType::BF16), dev);
      };
      q = upload(kQ);
      k = upload(kK);
      v = upload(kV);
      dout = upload(kD);
    } catch (const std::exception& e) {
      setup_error = e.what();
    }
    for (const bool backward : {false, true}) {
      for (const bool causal : {false, true}) {
        Result r;
        r.name = "attention_b" + std::to_string(kB) + "_h" + std::to_string(kH) + "_s" +
                 std::to_string(kS) + "_d" + std::to_string(kE) + "_bf16" +
                 (causal ? "_causal" : "") + (backward ? "_bwd" : "_fwd");
        r.target = target;
        r.device = cd.properties().name;
        try {
          if (!setup_error.empty()) throw std::runtime_error(setup_error);
          // {out, lse}; empty where the fused kernels do not serve the case (the forward
          // function then runs the composite instead).
          const auto train = B::float_scaled_dot_product_attention_train(
              *q, *k, *v, std::nullopt, std::nullopt, causal, kScale);
          if (backward && !train)
            throw std::runtime_error("the fused kernels do not serve this case (train: nullopt)");
          r.candidate = train ? "fused" : "composite";
          GpuTensor y;  // fwd: out; bwd: dv
          if (!backward) {
            r.median_ms = time([&] {
              y = B::float_scaled_dot_product_attention(*q, *k, *v, std::nullopt, std::nullopt,
                                                        causal, kScale);
            });
          } else {
            std::vector<GpuTensor> grads;
            r.median_ms = time([&] {
              grads = B::float_scaled_dot_product_attention_backward(
                  *q, *k, *v, train->first, *dout, train->second, std::nullopt, std::nullopt,
                  causal, kScale);
            });
            if (grads.size() != 3) throw std::runtime_error("backward: not {dq, dk, dv}");
            y = grads[2];
          }
          const double flops = 4.0 * static_cast<double>(kB * kH) * static_cast<double>(kS) *
                               static_cast<double>(kS * kE) * (causal ? 0.5 : 1.0) *
                               (backward ? 2.5 : 1.0);
          r.tflops = flops / (r.median_ms * 1e-3) / 1e12;
          // 4 entries against f64 sums of the inputs as the device saw them (rounded to bf16).
          const std::vector<float> got = B::float_into_data(y).template to_vec<float>();
          const auto probs = [&](const std::vector<double>& qh, const std::vector<double>& kh,
                                 std::int64_t l) {  // softmax of query l's scaled scores
            std::vector<double> p(static_cast<std::size_t>(causal ? l + 1 : kS));
            double m = -HUGE_VAL, z = 0;
            for (std::size_t j = 0; j < p.size(); ++j) {
              double dot = 0;
              for (std::int64_t t = 0; t < kE; ++t) dot += qh[l * kE + t] * kh[j * kE + t];
              m = std::max(m, p[j] = kScale * dot);
            }
            for (double& x : p) z += (x = std::exp(x - m));
            for (double& x : p) x /= z;
            return p;
          };
          const auto compare = [&](std::int64_t index, double want, double scale) {
            if (r.error.empty() && !(std::fabs(got[index] - want) <= 1e-2 * scale))
              r.error = "wrong result at element " + std::to_string(index) + ": " +
                        std::to_string(got[index]) + ", want " + std::to_string(want);
          };
          if (!backward) {  // out[bh, l, e] = sum_j P[l, j] v[j, e], 4 (bh, l, e)
            for (std::int64_t c = 0; c < 4; ++c) {
              const std::int64_t bh = (c * 7 + 3) % (kB * kH), l = (c * 131 + 17) % kS;
              const std::int64_t e = (c * 23 + 5) % kE;
              const std::vector<double> qh = host(bh * slice, slice, kQ),
                                        kh = host(bh * slice, slice, kK),
                                        vh = host(bh * slice, slice, kV);
              const std::vector<double> p = probs(qh, kh, l);
              double want = 0, scale = 0;
              for (std::size_t j = 0; j < p.size(); ++j) {
                want += p[j] * vh[j * kE + e];
                scale += p[j] * std::fabs(vh[j * kE + e]);
              }
              compare(bh * slice + l * kE + e, want, scale);
            }
          } else {  // dv[bh, j, e] = sum_l P[l, j] dout[l, e]: one key row j, 4 e
            const std::int64_t bh = 5 % (kB * kH), j = (kS / 4 + 3) % kS;
            const std::vector<double> qh = host(bh * slice, slice, kQ),
                                      kh = host(bh * slice, slice, kK),
                                      dh = host(bh * slice, slice, kD);
            std::vector<double> want(4), scale(4);
            for (std::int64_t l = causal ? j : 0; l < kS; ++l) {
              const double p = probs(qh, kh, l)[j];
              for (std::int64_t c = 0; c < 4; ++c) {
                want[c] += p * dh[l * kE + c * 19 + 2];
                scale[c] += p * std::fabs(dh[l * kE + c * 19 + 2]);
              }
            }
            for (std::int64_t c = 0; c < 4; ++c)
              compare(bh * slice + j * kE + c * 19 + 2, want[c], scale[c]);
          }
        } catch (const std::exception& e) {
          r.error = e.what();
          std::replace(r.error.begin(), r.error.end(), '"', '\'');
        }
        std::printf("%-44s %-7s %9.4f ms %7.1f TFLOP/s %-9s %s\n", r.name.c_str(), target.c_str(),
                    r.median_ms, r.tflops, r.candidate.c_str(), r.error.c_str());
        out.push_back(r);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "ember_ops.json";
  std::vector<Result> results;
  std::string why;
#ifdef EMBER_HAVE_CUDA
  if (ember::CudaRuntime::device_count(&why) > 0) {
    run_target<ember::Cuda, ember::CudaRuntime>("cuda", results);
    run_matmul<ember::Cuda, ember::CudaRuntime>("cuda", results);
    run_conv<ember::Cuda, ember::CudaRuntime>("cuda", results);
    run_attention<ember::Cuda, ember::CudaRuntime>("cuda", results);
  } else
    std::fprintf(stderr, "cuda: %s\n", why.c_str());
#endif
#ifdef EMBER_HAVE_VULKAN
  if (ember::VulkanRuntime::device_count(&why) > 0) {
    run_target<ember::Vulkan, ember::VulkanRuntime>("vulkan", results);
    run_matmul<ember::Vulkan, ember::VulkanRuntime>("vulkan", results);
    run_conv<ember::Vulkan, ember::VulkanRuntime>("vulkan", results);
    run_attention<ember::Vulkan, ember::VulkanRuntime>("vulkan", results);
  } else
    std::fprintf(stderr, "vulkan: %s\n", why.c_str());
#endif
  std::ofstream f(path);
  f << "{\"results\": [\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    f << "  {\"case\": \"" << r.name << "\", \"target\": \"" << r.target << "\", \"device\": \""
      << r.device << "\", \"median_ms\": " << r.median_ms << ", \"TBps\": " << r.tbps
      << ", \"TFLOPs\": " << r.tflops << ", \"candidate\": \"" << r.candidate
      << "\", \"candidates_ms\": {";
    for (std::size_t c = 0; c < r.candidates.size(); ++c)
      f << (c ? ", " : "") << "\"" << r.candidates[c].first << "\": " << r.candidates[c].second;
    f << "}, \"error\": \"" << r.error << "\"}" << (i + 1 < results.size() ? ",\n" : "\n");
  }
  f << "]}\n";
  return 0;
}
