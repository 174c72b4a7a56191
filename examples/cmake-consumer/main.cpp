// Built against an installed Ember (find_package(ember)); exits non-zero on a wrong result.
#include <iostream>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/tensor.hpp"

int main() {
  using ember::Cpu;
  auto a = ember::Tensor<Cpu, 2>::from_floats({{1, 2}, {3, 4}});
  auto b = a.reshape({4});
  const auto v = b.to_vec<float>();
  const bool ok = v.size() == 4 && v[3] == 4.0f;
  std::cout << "cmake-consumer: " << b << (ok ? " ok" : " WRONG") << "\n";
  return ok ? 0 : 1;
}
