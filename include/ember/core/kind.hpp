// Tensor kinds: the K parameter of Tensor<B, D, K>.
#pragma once

#include <concepts>

namespace ember {

/// Floating-point tensors (f64, f32, f16, bf16).
struct Float {};
/// Integer tensors (i64, i32, i16, i8, u8).
struct Int {};
/// Boolean tensors.
struct Bool {};

template <class K>
concept TensorKind = std::same_as<K, Float> || std::same_as<K, Int> || std::same_as<K, Bool>;

/// Float and Int: kinds with arithmetic.
template <class K>
concept NumericKind = std::same_as<K, Float> || std::same_as<K, Int>;

}  // namespace ember
