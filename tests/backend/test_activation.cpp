// Activation family conformance: fixture-driven cases from tests/fixtures/activation.json
// (produced by tests/fixtures/gen_activation.py with PyTorch).
#include <optional>
#include <string>

#include "activation_backends.hpp"
#include "backends.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/loss.hpp"
#include "ember/tensor/module/nn.hpp"
#include "fixtures.hpp"

namespace {

using namespace ember;
using ember::test::FixtureCase;

template <class B, std::size_t D>
Tensor<B, D> elementwise(const std::string& op, const Tensor<B, D>& x, const FixtureCase& c) {
  auto par = [&](const char* k, double def) { return c.has(k) ? c.param<double>(k) : def; };
  namespace A = ember::activation;
  if (op == "relu") return A::relu(x);
  if (op == "relu6") return A::relu6(x);
  if (op == "leaky_relu") return A::leaky_relu(x, par("a", 0.01));
  if (op == "gelu") return A::gelu(x);
  if (op == "gelu_tanh") return A::gelu_tanh(x);
  if (op == "silu") return A::silu(x);
  if (op == "mish") return A::mish(x);
  if (op == "sigmoid") return A::sigmoid(x);
  if (op == "hard_sigmoid") return A::hard_sigmoid(x, par("a", 0.2), par("b", 0.5));
  if (op == "hard_swish") return A::hard_swish(x);
  if (op == "log_sigmoid") return A::log_sigmoid(x);
  if (op == "softplus") return A::softplus(x, par("a", 1.0), par("b", 20.0));
  if (op == "softsign") return A::softsign(x);
  if (op == "elu") return A::elu(x, par("a", 1.0));
  if (op == "celu") return A::celu(x, par("a", 1.0));
  if (op == "selu") return A::selu(x);
  if (op == "tanhshrink") return A::tanhshrink(x);
  if (op == "hard_shrink") return A::hard_shrink(x, par("a", 0.5));
  if (op == "soft_shrink") return A::soft_shrink(x, par("a", 0.5));
  if (op == "glu") return A::glu(x, c.param<std::int64_t>("dim"));
  if (op == "softmax") return A::softmax(x, c.param<std::int64_t>("dim"));
  if (op == "log_softmax") return A::log_softmax(x, c.param<std::int64_t>("dim"));
  if (op == "softmin") return A::softmin(x, c.param<std::int64_t>("dim"));
  if (op == "quiet_softmax") return A::quiet_softmax(x, c.param<std::int64_t>("dim"));
  if (op == "prelu") return A::prelu(x, Tensor<B, 1>::from_data(c.tensor("w")));
  if (op == "linear") {
    std::optional<Tensor<B, 1>> b;
    if (c.has("b")) b = Tensor<B, 1>::from_data(c.tensor("b"));
    return module::linear(x, Tensor<B, 2>::from_data(c.tensor("w")), b);
  }
  if (op == "rms_norm") {
    std::optional<Tensor<B, 1>> w;
    if (c.has("w")) w = Tensor<B, 1>::from_data(c.tensor("w"));
    return module::rms_norm(x, w, c.has("eps") ? c.param<double>("eps") : 1e-5);
  }
  if (op == "layer_norm") {
    const double eps = c.has("eps") ? c.param<double>("eps") : 1e-5;
    if (!c.has("w")) return module::layer_norm<1>(x, eps);
    const auto wd = c.tensor("w");
    if (wd.shape().rank() == 1) {
      std::optional<Tensor<B, 1>> b;
      if (c.has("b")) b = Tensor<B, 1>::from_data(c.tensor("b"));
      return module::layer_norm(x, Tensor<B, 1>::from_data(wd), b, eps);
    }
    if constexpr (D >= 2) {
      return module::layer_norm(x, Tensor<B, 2>::from_data(wd),
                                Tensor<B, 2>::from_data(c.tensor("b")), eps);
    }
  }
  if constexpr (D >= 2) {
    if (op == "group_norm" || op == "batch_norm") {
      std::optional<Tensor<B, 1>> w, b;
      if (c.has("w")) w = Tensor<B, 1>::from_data(c.tensor("w"));
      if (c.has("b")) b = Tensor<B, 1>::from_data(c.tensor("b"));
      const double eps = c.has("eps") ? c.param<double>("eps") : 1e-5;
      if (op == "group_norm")
        return module::group_norm(x, c.param<std::int64_t>("groups"), w, b, eps);
      return module::batch_norm(x, Tensor<B, 1>::from_data(c.tensor("mean")),
                                Tensor<B, 1>::from_data(c.tensor("var")), w, b, eps);
    }
  }
  ADD_FAILURE() << "unknown op " << op << " for rank " << D;
  return x;
}

template <class B, std::size_t D>
void run_rank(const FixtureCase& c, const std::string& op) {
  const TensorData xd = c.tensor(c.has("x") ? "x" : "q");
  if constexpr (D >= 2) {
    if (op == "sdpa") {
      auto q = Tensor<B, D>::from_data(xd);
      auto k = Tensor<B, D>::from_data(c.tensor("k"));
      auto v = Tensor<B, D>::from_data(c.tensor("v"));
      std::optional<double> scale;
      if (c.has("scale")) scale = c.param<double>("scale");
      const bool causal = c.has("causal") && c.param<bool>("causal");
      Tensor<B, D> out = [&] {
        if (c.has("mask")) {
          const auto md = c.tensor("mask");
          if (md.shape().rank() == 2) {
            return module::scaled_dot_product_attention(q, k, v, Tensor<B, 2, Bool>::from_data(md),
                                                        scale);
          }
          return module::scaled_dot_product_attention(q, k, v, Tensor<B, D, Bool>::from_data(md),
                                                      scale);
        }
        std::optional<Tensor<B, D>> bias;
        if (c.has("bias")) bias = Tensor<B, D>::from_data(c.tensor("bias"));
        return module::scaled_dot_product_attention(q, k, v, std::nullopt, bias, causal, scale);
      }();
      ember::test::expect_approx(out.into_data(), c.tensor("out"));
      return;
    }
  }
  auto x = Tensor<B, D>::from_data(xd);
  ember::test::expect_approx(elementwise<B, D>(op, x, c).into_data(), c.tensor("out"));
}

template <class B>
void run_case(const FixtureCase& c) {
  const std::string op = c.param<std::string>("op");
  if (op == "embedding") {
    auto w = Tensor<B, 2>::from_data(c.tensor("w"));
    const auto id = c.tensor("idx");
    if (id.shape().rank() == 1) {
      ember::test::expect_approx(module::embedding(w, Tensor<B, 1, Int>::from_data(id)).into_data(),
                                 c.tensor("out"));
    } else {
      ember::test::expect_approx(module::embedding(w, Tensor<B, 2, Int>::from_data(id)).into_data(),
                                 c.tensor("out"));
    }
    return;
  }
  if (op == "cross_entropy_probs" || op == "cross_entropy_indices") {
    auto x = Tensor<B, 2>::from_data(c.tensor("x"));
    Tensor<B, 1> out =
        op == "cross_entropy_probs"
            ? loss::cross_entropy_with_logits(x, Tensor<B, 2>::from_data(c.tensor("t")))
            : loss::cross_entropy_with_logits(x, Tensor<B, 1, Int>::from_data(c.tensor("idx")));
    ember::test::expect_approx(out.into_data(), c.tensor("out"));
    return;
  }
  switch (c.tensor(c.has("x") ? "x" : "q").shape().rank()) {
    case 1:
      return run_rank<B, 1>(c, op);
    case 2:
      return run_rank<B, 2>(c, op);
    case 3:
      return run_rank<B, 3>(c, op);
    case 4:
      return run_rank<B, 4>(c, op);
    default:
      ADD_FAILURE() << "unsupported rank";
  }
}

const bool registered = [] {
  ember::test::for_each_activation_backend([]<class B>() {
    ember::test::register_fixture_tests<B>("ActivationFixture", "activation", "", run_case<B>);
  });
  return true;
}();

}  // namespace
