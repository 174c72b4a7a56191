// Tensor basics: create tensors on the CPU backend, reshape them and read them back.
#include <iostream>

#include "ember/cpu/cpu.hpp"
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

  auto idx = Tensor<Cpu, 1, ember::Int>::arange(0, 5);
  std::cout << "arange(0, 5) = " << idx << "\n";
  return 0;
}
