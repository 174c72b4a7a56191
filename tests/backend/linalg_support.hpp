// Helpers shared by the linalg conformance tests.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "backends.hpp"
#include "ember/tensor/linalg.hpp"
#include "fixtures.hpp"

namespace ember::test::linalg {

/// The same tensor with its last two dims swapped, as a strided view (no copy).
template <class B, std::size_t R, class K>
Tensor<B, R, K> transposed_view(const Tensor<B, R, K>& t) {
  if constexpr (std::is_same_v<B, Cpu>) {
    CpuTensor p = t.primitive();
    std::swap(p.shape[R - 1], p.shape[R - 2]);
    std::swap(p.strides[R - 1], p.strides[R - 2]);
    return Tensor<B, R, K>(p);
  } else {
    return t.transpose();
  }
}

/// Operand `key` of a fixture case; when the case holds `key`_t (the operand's
/// transpose, contiguous) the operand is built as a transposed view of it.
template <class B, std::size_t R, class K>
Tensor<B, R, K> operand(const FixtureCase& c, const std::string& key) {
  if (c.has(key)) return Tensor<B, R, K>::from_data(c.tensor(key));
  return transposed_view(Tensor<B, R, K>::from_data(c.tensor(key + "_t")));
}

/// Calls f.template operator()<R>() for the run-time rank r in [1, 5].
template <class F>
void with_rank(std::size_t r, F&& f) {
  switch (r) {
    case 1:
      return f.template operator()<1>();
    case 2:
      return f.template operator()<2>();
    case 3:
      return f.template operator()<3>();
    case 4:
      return f.template operator()<4>();
    case 5:
      return f.template operator()<5>();
    default:
      ADD_FAILURE() << "unsupported rank " << r;
  }
}

/// Compares with the expected tensor: exact for ints, else approximate (looser for
/// f16/bf16); the dtype must match.
inline void check(const TensorData& actual, const TensorData& expected) {
  EXPECT_EQ(actual.dtype(), expected.dtype());
  if (is_int(expected.dtype())) {
    expect_eq(actual, expected);
  } else if (expected.dtype() == DType::F16 || expected.dtype() == DType::BF16) {
    expect_approx(actual, expected, Tolerance::rel_abs(1e-2, 1e-2));
  } else {
    expect_approx(actual, expected, Tolerance::rel_abs(1e-4, 1e-5));
  }
}

/// A double parameter that may be written as "inf" / "-inf" / "nan".
inline double param_double(const FixtureCase& c, const std::string& key) {
  const auto& j = c.at(key);
  if (j.is_string())
    return fixture_tensor(json{{"shape", {1}}, {"dtype", "f64"}, {"data", {j}}})
        .to_vec<double>()[0];
  return j.get<double>();
}

}  // namespace ember::test::linalg
