// Fusion on the GPUs (issue 14's GPU targets): the custom GELU of plain tensor code,
// gelu(x) = x * (erf(x / sqrt(2)) + 1) / 2 over x [32, 512, 2048] f32, on Fusion<R> (one
// generated kernel) and on R itself (five kernels), for R = Cuda and Vulkan.
//   gelu_fwd       y = gelu(x), the value computed (read 4 + write 4 bytes per element when
//                  fused)
//   gelu_fwd_bwd   loss = gelu(x).sum(), loss.backward(), x's gradient computed; under
//                  Autodiff<Fusion<R>> / Autodiff<R>, and with checkpointing (the backward pass
//                  recomputes the forward's element-wise values instead of saving them:
//                  Autodiff's checkpointing, Burn's balanced strategy)
//   softmax_8192x8192  softmax over rows of x [8192, 8192] f32 through the stack (Fusion passes
//                  it to the backend's row kernel: the decorator's cost is what is measured)
//   cnn_step_bN    one training step (forward, backward, Adam) of the default Fashion-MNIST
//                  CNN (benchmarks/train_cnn_model.hpp) on a random batch of N = 64 and 256,
//                  on Autodiff<Fusion<R>> and Autodiff<R>; wall time per step over 20 steps
//                  after a warm-up that ends when 5 steps in a row compile no new kernel,
//                  from sync to sync (every pending value computed, the device idle)
//                  (fusion_side_by_side.py: PyTorch eager)
// TB/s is an effective figure for every stack: the fused kernels' traffic (what each case's
// comment counts) over the time, so unfused stacks, which move more, show less.
// Device time from the device's timers (CUDA events, Vulkan timestamps) around each call,
// recording included, median of 30 after 5 warm-up calls; 8 entries checked against the
// formula in f64. fusion_side_by_side.py times PyTorch eager and torch.compile on the same
// GPU and prints the ratios.
//
//   bench_fusion_gpu [OUT.json]     (default ember_fusion.json)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../train_cnn_model.hpp"
#include "ember/autodiff/autodiff.hpp"
#include "ember/fusion/fusion.hpp"
#include "ember/gpu/ops.hpp"
#include "ember/nn/loss.hpp"
#include "ember/optim/optim.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/tensor.hpp"
#ifdef EMBER_HAVE_CUDA
#include "ember/autodiff/cuda.hpp"
#include "ember/autodiff/fusion_cuda.hpp"
#endif
#ifdef EMBER_HAVE_VULKAN
#include "ember/autodiff/fusion_vulkan.hpp"
#include "ember/autodiff/vulkan.hpp"
#endif

namespace {

struct Result {
  std::string name, target, stack, device;
  double median_ms = 0, tbps = 0;
  std::string error;
};

constexpr std::int64_t kB = 32, kS = 512, kH = 2048;

std::vector<float> spread(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = -4.0f + 8.0f * std::fmod(0.618034f * static_cast<float>(i % 1000003 + 1), 1.0f);
  return v;
}

template <class B, std::size_t D>
ember::Tensor<B, D> custom_gelu(const ember::Tensor<B, D>& x) {
  return x.mul(x.div_scalar(std::sqrt(2.0)).erf().add_scalar(1.0)).div_scalar(2.0);
}

/// The computed primitive of a tensor of B or of Fusion<B> (a pending value is computed).
template <class B>
void force(const typename B::FloatTensor& p) {
  if constexpr (requires { B::float_value(p); }) (void)B::float_value(p);
}

double gelu_ref(double v) {
  return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
}
double gelu_grad_ref(double v) {
  return 0.5 * (1.0 + std::erf(v / std::sqrt(2.0))) +
         v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI);
}

/// The median of 30 timed calls after 5 warm-up calls.
double median(ember::kernel::ComputeDevice& cd, const std::function<void()>& fn) {
  for (int i = 0; i < 5; ++i) fn();
  std::vector<double> ms;
  for (int i = 0; i < 30; ++i) ms.push_back(cd.time_ms(fn));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// 8 entries of `got` (spread over it) against `ref` of the input's values.
std::string check(const std::vector<float>& got, const std::vector<float>& xs,
                  double (*ref)(double), double tol) {
  for (std::size_t k = 0; k < 8; ++k) {
    const std::size_t i = k * (got.size() / 8) + k;
    const double want = ref(xs[i]);
    if (!(std::fabs(got[i] - want) <= tol * (1.0 + std::fabs(want))))
      return "wrong result at " + std::to_string(i) + ": " + std::to_string(got[i]) + " vs " +
             std::to_string(want);
  }
  return "";
}

/// Runs `body` on a new result of case `name` (the time and bandwidth it fills in; an exception
/// becomes the result's error), prints it and appends it to `out`.
template <class R, class F>
void measure(const std::string& name, const std::string& target, const std::string& stack,
             std::vector<Result>& out, F&& body) {
  Result r{name, target, stack, R::device(0).properties().name, 0, 0, {}};
  try {
    body(r);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  std::printf("%-30s %-7s %-34s %9.4f ms %6.2f TB/s %s\n", r.name.c_str(), target.c_str(),
              stack.c_str(), r.median_ms, r.tbps, r.error.c_str());
  out.push_back(r);
}

template <class B, class R>
void forward(const std::string& target, const std::string& stack, std::vector<Result>& out) {
  measure<R>("gelu_32x512x2048_f32_fwd", target, stack, out, [&](Result& r) {
    ember::kernel::ComputeDevice& cd = R::device(0);
    const std::vector<float> xs = spread(static_cast<std::size_t>(kB * kS * kH));
    const auto x = ember::Tensor<B, 3>::from_data(ember::TensorData(xs, ember::Shape{kB, kS, kH}),
                                                  typename B::Device{0});
    ember::Tensor<B, 3> y = x;
    r.median_ms = median(cd, [&] {
      y = custom_gelu(x);
      force<B>(y.primitive());
    });
    r.tbps = 8.0 * static_cast<double>(xs.size()) / (r.median_ms * 1e-3) / 1e12;
    r.error = check(y.template to_vec<float>(), xs, gelu_ref, 1e-5);
  });
}

template <class B, class R>
void softmax_rows(const std::string& target, const std::string& stack, std::vector<Result>& out) {
  measure<R>("softmax_8192x8192_f32", target, stack, out, [&](Result& r) {
    ember::kernel::ComputeDevice& cd = R::device(0);
    const std::vector<float> xs = spread(8192u * 8192u);
    const auto x = ember::Tensor<B, 2>::from_data(ember::TensorData(xs, ember::Shape{8192, 8192}),
                                                  typename B::Device{0});
    ember::Tensor<B, 2> y = x;
    r.median_ms = median(cd, [&] {
      y = ember::activation::softmax(x, 1);
      force<B>(y.primitive());
    });
    r.tbps = 8.0 * static_cast<double>(xs.size()) / (r.median_ms * 1e-3) / 1e12;
    const std::vector<float> row = y.narrow(0, 0, 1).template to_vec<float>();
    double sum = 0;
    for (float v : row) sum += v;
    if (std::fabs(sum - 1.0) > 1e-4) r.error = "row 0 sums to " + std::to_string(sum);
  });
}

template <class B, class R>
void forward_backward(const std::string& target, const std::string& stack, bool checkpointing,
                      std::vector<Result>& out) {
  using AB = ember::Autodiff<B>;
  measure<R>("gelu_32x512x2048_f32_fwd_bwd", target, stack, out, [&](Result& r) {
    ember::kernel::ComputeDevice& cd = R::device(0);
    const std::vector<float> xs = spread(static_cast<std::size_t>(kB * kS * kH));
    auto x = ember::Tensor<AB, 3>::from_data(ember::TensorData(xs, ember::Shape{kB, kS, kH}),
                                             typename AB::Device{0});
    x = x.require_grad();
    std::optional<ember::Tensor<B, 3>> g;
    r.median_ms = median(cd, [&] {
      std::optional<ember::autodiff::Checkpointing> scope;
      if (checkpointing) scope.emplace();
      auto loss = custom_gelu(x).sum();
      scope.reset();
      auto grads = loss.backward();
      g = x.grad(grads);
      force<B>(g->primitive());
    });
    // Forward: read x, write y, read y (the sum); backward: read x, write dx.
    r.tbps = 20.0 * static_cast<double>(xs.size()) / (r.median_ms * 1e-3) / 1e12;
    r.error = check(g->template to_vec<float>(), xs, gelu_grad_ref, 1e-5);
  });
}

/// One CNN training step per call, wall time per step (see the top).
template <class B, class R>
void cnn_step(const std::string& target, const std::string& stack, std::int64_t n,
              std::vector<Result>& out) {
  using AB = ember::Autodiff<B>;
  measure<R>("cnn_step_b" + std::to_string(n), target, stack, out, [&](Result& r) {
    const typename AB::Device dev{0};
    ember::Cpu::seed(1);
    auto model = ember::bench::Cnn<AB>::init(dev);
    auto opt = ember::optim::AdamConfig{}.init();
    std::vector<std::int64_t> labels(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) labels[static_cast<std::size_t>(i)] = (i * 7 + 3) % 10;
    const auto x = ember::Tensor<AB, 4>::random(ember::Shape{n, 1, 28, 28},
                                                ember::Distribution::default_(), dev);
    const auto y = ember::Tensor<AB, 1, ember::Int>::from_data(
        ember::TensorData(std::move(labels), ember::Shape{n}), dev);
    double loss_value = 0;
    const auto step = [&] {
      auto loss = ember::nn::loss::cross_entropy(model.forward(x), y);
      auto grads = ember::optim::GradientsParams::from_grads(loss.backward(), model);
      opt.step(1e-3, model, grads);
      return loss;
    };
    // Warm-up: the timed steps themselves, until 5 in a row compile no new fused kernel (a
    // chain cut every few steps, such as batch norm's running statistics, brings its pattern
    // in late), at most 60 steps. Reading the loss would cut the recorded chains elsewhere.
    for (int i = 0, quiet = 0; i < 60 && quiet < 5; ++i) {
      const std::uint64_t before = ember::gpu::fused_kernels_compiled();
      (void)step();
      quiet = ember::gpu::fused_kernels_compiled() == before ? quiet + 1 : 0;
    }
    AB::sync(dev);  // every pending value computed (Fusion), the device idle
    constexpr int kSteps = 20;
    const std::uint64_t compiled = ember::gpu::fused_kernels_compiled();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kSteps; ++i) (void)step();
    AB::sync(dev);
    r.median_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
        kSteps;
    if (const std::uint64_t more = ember::gpu::fused_kernels_compiled() - compiled; more > 0)
      std::printf("  (%s: %llu fused kernels compiled while timed)\n", stack.c_str(),
                  static_cast<unsigned long long>(more));
    loss_value = step().template to_vec<float>()[0];
    if (!std::isfinite(loss_value)) r.error = "loss not finite";
  });
}

template <class G, class R>
void run(const std::string& target, const std::string& name, std::vector<Result>& out) {
  using F = ember::Fusion<G>;
  forward<F, R>(target, "Fusion<" + name + ">", out);
  forward<G, R>(target, name, out);
  forward_backward<F, R>(target, "Autodiff<Fusion<" + name + ">>", false, out);
  forward_backward<F, R>(target, "Autodiff<Fusion<" + name + ">>+checkpointing", true, out);
  forward_backward<G, R>(target, "Autodiff<" + name + ">", false, out);
  softmax_rows<F, R>(target, "Fusion<" + name + ">", out);
  softmax_rows<G, R>(target, name, out);
  for (std::int64_t n : {64, 256}) {
    cnn_step<F, R>(target, "Autodiff<Fusion<" + name + ">>", n, out);
    cnn_step<G, R>(target, "Autodiff<" + name + ">", n, out);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "ember_fusion.json";
  std::vector<Result> results;
  std::string why;
#ifdef EMBER_HAVE_CUDA
  if (ember::CudaRuntime::device_count(&why) > 0)
    run<ember::Cuda, ember::CudaRuntime>("cuda", "Cuda", results);
  else
    std::fprintf(stderr, "cuda: %s\n", why.c_str());
#endif
#ifdef EMBER_HAVE_VULKAN
  if (ember::VulkanRuntime::device_count(&why) > 0)
    run<ember::Vulkan, ember::VulkanRuntime>("vulkan", "Vulkan", results);
  else
    std::fprintf(stderr, "vulkan: %s\n", why.c_str());
#endif
  std::ofstream f(path);
  f << "{\"results\": [\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    std::string err = r.error;
    std::replace(err.begin(), err.end(), '"', '\'');
    f << "  {\"case\": \"" << r.name << "\", \"target\": \"" << r.target << "\", \"stack\": \""
      << r.stack << "\", \"device\": \"" << r.device << "\", \"median_ms\": " << r.median_ms
      << ", \"TBps\": " << r.tbps << ", \"error\": \"" << err << "\"}"
      << (i + 1 < results.size() ? ",\n" : "\n");
  }
  f << "]}\n";
  return 0;
}
