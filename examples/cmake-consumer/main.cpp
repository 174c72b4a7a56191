// Built against an installed Ember (find_package(ember)); exits non-zero on a wrong result.
// Uses the tensor front end on Cpu, a gradient on Autodiff<Cpu> (ember::autodiff_cpu), then a
// Linear layer on Dispatch trained by one SGD step.
#include <cmath>
#include <iostream>

#include "ember/autodiff/cpu.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/nn.hpp"
#include "ember/optim/optim.hpp"
#include "ember/tensor/tensor.hpp"

int main() {
  using namespace ember;
  auto a = Tensor<Cpu, 2>::from_floats({{1, 2}, {3, 4}});
  auto b = a.reshape({4});
  const auto v = b.to_vec<float>();
  bool ok = v.size() == 4 && v[3] == 4.0f;

  // d/dx sum(x^2) = 2x on the static autodiff stack.
  using AD = Autodiff<Cpu>;
  auto x_ad = Tensor<AD, 1>::from_floats({1.0, -2.0}).require_grad();
  const auto dx = x_ad.mul(x_ad).sum().backward();
  const auto gx = x_ad.grad(dx)->to_vec<float>();
  ok = ok && gx.size() == 2 && gx[0] == 2.0f && gx[1] == -4.0f;

  // y = w x + c with w = c = 0, x = 1, target 2: MSE gradient -4 for both, so one SGD step
  // at lr 0.1 gives w = c = 0.4.
  const Device dev = Device::cpu().autodiff();
  auto fc =
      nn::LinearConfig{.d_input = 1, .d_output = 1, .initializer = nn::Initializer::zeros()}.init(
          dev);
  auto x = DTensor<2>::ones({1, 1}, dev);
  auto target = DTensor<2>::full({1, 1}, 2.0, dev);
  auto loss = nn::loss::mse_loss(fc.forward(x), target);
  auto grads = optim::GradientsParams::from_grads(loss.backward(), fc);
  auto sgd = optim::SgdConfig{}.init();
  sgd.step(0.1, fc, grads);
  const double w = fc.weight->into_scalar(), c = fc.bias->val().into_scalar();
  ok = ok && std::abs(w - 0.4) < 1e-6 && std::abs(c - 0.4) < 1e-6;
  std::cout << "cmake-consumer: " << b << " w=" << w << " c=" << c << (ok ? " ok" : " WRONG")
            << "\n";
  return ok ? 0 : 1;
}
