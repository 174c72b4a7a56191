// Helpers for writing backward rules with Autodiff's own ops (so that rules are recorded
// when backward runs with create_graph). Included by the op implementations only.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "ember/autodiff/autodiff.hpp"
#include "ember/autodiff/record.hpp"

namespace ember::autodiff::rules {

template <class B>
using AP = AdTensor<B>;
template <class B>
using O = AdOps<B>;

template <class B>
Shape shape_of(const AP<B>& t) {
  return B::float_shape(t.inner);
}

/// The inner value of an optional operand.
template <class B>
std::optional<typename B::FloatTensor> inner_opt(const std::optional<AP<B>>& t) {
  if (!t) return std::nullopt;
  return t->inner;
}
/// `ins` with `t` appended when present.
template <class B>
std::vector<AP<B>> with_opt(std::vector<AP<B>> ins, const std::optional<AP<B>>& t) {
  if (t) ins.push_back(*t);
  return ins;
}

/// A constant of `like`'s shape, dtype and device filled with `value`.
template <class B>
AP<B> full_like(const AP<B>& like, double value) {
  return AP<B>{B::float_full(B::float_shape(like.inner), value, B::float_device(like.inner),
                             B::float_dtype(like.inner)),
               nullptr, like.checkpointing};
}
template <class B>
AP<B> full_shape(const AP<B>& like, const Shape& shape, double value) {
  return AP<B>{B::float_full(shape, value, B::float_device(like.inner), B::float_dtype(like.inner)),
               nullptr, like.checkpointing};
}

/// Sums `g` over the dims where `target` has size 1 and g does not (undoes broadcasting;
/// same rank).
template <class B>
AP<B> sum_to(AP<B> g, const Shape& target) {
  const Shape s = shape_of<B>(g);
  for (std::size_t d = 0; d < s.rank(); ++d) {
    if (target[d] == 1 && s[d] != 1)
      g = O<B>::float_sum_dim(std::move(g), static_cast<std::int64_t>(d));
  }
  return g;
}

/// 1.0 where `mask` holds, 0.0 elsewhere, as a float constant shaped like `like`.
template <class B>
AP<B> mask_to_float(const typename B::BoolTensor& mask, const AP<B>& like) {
  return AP<B>{B::bool_into_float(mask, B::float_dtype(like.inner)), nullptr, like.checkpointing};
}

/// `g` where `mask` holds, 0 elsewhere.
template <class B>
AP<B> keep_where(AP<B> g, const typename B::BoolTensor& mask) {
  return O<B>::float_mask_fill(std::move(g), B::template bool_unary<ir::op::Not>(mask), 0.0);
}

/// Records an op whose backward rule is not written yet: forward works, backward through
/// it throws UnsupportedError naming the op.
template <class B>
AP<B> no_rule(const char* op, std::vector<AP<B>> ins, typename B::FloatTensor out) {
  return Recorder<B>::record(
      op, Bound::Compute, kSaveNothing, std::move(ins),
      [out](std::vector<typename B::FloatTensor>&) { return out; },
      [op](BackwardContext<B>&) {
        ember::detail::fail<UnsupportedError>("backward", "no backward rule for '", op, "' yet");
      });
}

}  // namespace ember::autodiff::rules
