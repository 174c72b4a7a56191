// Checks of a tensor's values (index ranges, class targets, labels) without a hidden device
// synchronisation: the policy of ember/backend/core.hpp.
//
//   detail::check_values(op, t, [](const auto& t) { return t.lower_elem(0); /* bad values */ },
//                        [&](auto value, std::size_t flat) { fail<ValueError>(op, ...); });
//
// `make_bad` computes, with tensor ops, a Bool tensor marking the bad elements. A backend that
// queues its work on an asynchronous device defines bool_check_none(bad, op) -> true: the check
// then runs there and a bad element is reported at the next synchronising call, naming `op`.
// Otherwise (host devices) the mask is read back here and `on_bad(value, flat position)` is
// called with the first bad element (it throws the op's error).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ember/tensor/fwd.hpp"

namespace ember::detail {

template <class B, std::size_t D, class K, class MakeBad, class OnBad>
void check_values(const char* op, const Tensor<B, D, K>& t, MakeBad&& make_bad, OnBad&& on_bad) {
  if (t.numel() == 0) return;
  const Tensor<B, D, Bool> bad = make_bad(t);
  if constexpr (requires { B::bool_check_none(bad.primitive(), op); }) {
    if (B::bool_check_none(bad.primitive(), op)) return;  // queued on the device
  }
  const TensorData flags = bad.into_data();
  const auto& bytes = flags.bytes();
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == 0) continue;
    if constexpr (std::is_same_v<K, Float>)
      on_bad(t.into_data().value_as_double(static_cast<std::int64_t>(i)), i);
    else
      on_bad(t.template to_vec<std::int64_t>()[i], i);
    return;
  }
}

/// Ints of `t` outside [lo, hi) (a Bool mask, for check_values).
template <class B, std::size_t D>
Tensor<B, D, Bool> outside(const Tensor<B, D, Int>& t, std::int64_t lo, std::int64_t hi) {
  return t.lower_elem(lo).bool_or(t.greater_equal_elem(hi));
}

}  // namespace ember::detail
