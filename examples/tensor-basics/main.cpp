// Tensor basics: create tensors on the CPU backend, reshape them and read them back.
#include <iostream>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/tensor.hpp"

int main() {
  using ember::Cpu;
  using ember::Tensor;

  auto a = Tensor<Cpu, 2>::from_floats({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  std::cout << "a = " << a << "\n";

  auto flat = a.reshape({-1});
  std::cout << "a.reshape({-1}) = " << flat << "\n";

  Cpu::seed(42);
  auto r = Tensor<Cpu, 2>::random({2, 2}, ember::Distribution::normal(0.0, 1.0));
  std::cout << "normal(0, 1) = " << r << "\n";

  auto c = a.matmul(a.transpose());  // [2, 3] x [3, 2] -> [2, 2]
  std::cout << "a.matmul(a^T) = " << c << "\n";
  std::cout << "softmax(c, -1) = " << ember::activation::softmax(c, -1) << "\n";
  std::cout << "a.sum_dim(1) = " << a.sum_dim(1) << ", argmax(1) = " << a.argmax(1) << "\n";

  try {
    (void)a.matmul(a);  // [2, 3] x [2, 3]: inner dims differ
  } catch (const ember::ShapeError& e) {
    std::cout << "error, as expected: " << e.what() << "\n";
  }

  auto idx = Tensor<Cpu, 1, ember::Int>::arange(0, 5);
  std::cout << "arange(0, 5) = " << idx << "\n";
  return 0;
}
