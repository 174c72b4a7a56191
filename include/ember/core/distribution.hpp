// Distributions for random tensors (Burn's Distribution).
#pragma once

#include <cstdint>

namespace ember {

/// How random values are drawn. Default is U[0, 1).
struct Distribution {
  enum class Kind { Default, Uniform, Normal, Bernoulli };
  Kind kind = Kind::Default;
  double a = 0.0;  ///< Uniform: low;  Normal: mean; Bernoulli: p
  double b = 1.0;  ///< Uniform: high; Normal: std

  /// U[0, 1).
  static Distribution default_() { return {}; }
  /// U[low, high). Throws ValueError from the front end if high < low.
  static Distribution uniform(double low, double high) { return {Kind::Uniform, low, high}; }
  /// N(mean, std^2). Throws ValueError from the front end if std < 0.
  static Distribution normal(double mean, double std) { return {Kind::Normal, mean, std}; }
  /// 1 with probability p, else 0. Throws ValueError from the front end if p not in [0, 1].
  static Distribution bernoulli(double p) { return {Kind::Bernoulli, p, 0.0}; }

  bool operator==(const Distribution&) const = default;
};

}  // namespace ember
