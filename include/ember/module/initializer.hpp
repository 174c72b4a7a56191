// nn::Initializer: how a layer fills its Params (Burn's burn-nn Initializer, PyTorch's
// torch.nn.init). A value type; configs hold one and save it as JSON.
//
// Formulas (fan_in / fan_out come from the layer: Linear fan_in = d_input; Conv fan_in =
// in_channels/groups * prod(kernel)):
//   constant(v), zeros(), ones()
//   uniform(lo, hi)                      U(lo, hi)
//   normal(mean, std)                    N(mean, std^2)
//   kaiming_uniform(gain, fan_out_only)  U(-b, b), b = gain * sqrt(3 / fan)      (He et al. 2015)
//   kaiming_normal(gain, fan_out_only)   N(0, (gain / sqrt(fan))^2)
//       fan = fan_out when fan_out_only, else fan_in
//   xavier_uniform(gain)                 U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out))
//   xavier_normal(gain)                  N(0, gain^2 * 2 / (fan_in + fan_out))  (Glorot 2010)
//   orthogonal(gain)                     gain * Q, Q from the QR decomposition of a
//                                        [shape[0], numel / shape[0]] standard normal matrix,
//                                        signs fixed by diag(R) (Saxe et al. 2013; torch's
//                                        orthogonal_)
// PyTorch's default Linear/Conv init is kaiming_uniform(1 / sqrt(3), false): b = 1/sqrt(fan_in).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/distribution.hpp"
#include "ember/core/error.hpp"
#include "ember/core/shape.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn {

class Initializer {
 public:
  enum class Kind {
    Constant,
    Uniform,
    Normal,
    KaimingUniform,
    KaimingNormal,
    XavierUniform,
    XavierNormal,
    Orthogonal
  };

  static Initializer constant(double value) { return {Kind::Constant, value, 0, false}; }
  static Initializer zeros() { return constant(0.0); }
  static Initializer ones() { return constant(1.0); }
  static Initializer uniform(double low, double high) { return {Kind::Uniform, low, high, false}; }
  static Initializer normal(double mean, double std) { return {Kind::Normal, mean, std, false}; }
  static Initializer kaiming_uniform(double gain, bool fan_out_only = false) {
    return {Kind::KaimingUniform, gain, 0, fan_out_only};
  }
  static Initializer kaiming_normal(double gain, bool fan_out_only = false) {
    return {Kind::KaimingNormal, gain, 0, fan_out_only};
  }
  static Initializer xavier_uniform(double gain = 1.0) {
    return {Kind::XavierUniform, gain, 0, false};
  }
  static Initializer xavier_normal(double gain = 1.0) {
    return {Kind::XavierNormal, gain, 0, false};
  }
  static Initializer orthogonal(double gain = 1.0) { return {Kind::Orthogonal, gain, 0, false}; }

  Initializer() = default;  // zeros

  Kind kind() const { return kind_; }
  /// constant: value; uniform: low; normal: mean; kaiming/xavier/orthogonal: gain.
  double a() const { return a_; }
  /// uniform: high; normal: std.
  double b() const { return b_; }
  bool fan_out_only() const { return fan_out_only_; }

  /// Throws ValueError "[Initializer] ..." when the parameters cannot give finite values: a
  /// NaN or infinite value, bound, mean, std or gain; uniform low > high; normal std < 0;
  /// a negative gain for the kaiming and xavier kinds (orthogonal allows any finite gain).
  void validate() const;

  /// The distribution used for `shape` with the given fans (Constant for constant,
  /// Orthogonal handled by init()). Throws ValueError as validate(), and when a fan the
  /// formula needs is missing or not positive.
  Distribution distribution(std::optional<std::int64_t> fan_in,
                            std::optional<std::int64_t> fan_out) const;

  /// Host values for `shape` (f64, row-major) of an orthogonal init; the generator is
  /// seeded from the backend's random stream through `normal` values. Throws ShapeError for
  /// rank < 2.
  static std::vector<double> orthogonalize(const Shape& shape, std::vector<double> normal,
                                           double gain);

  /// A new tensor of `shape` on `device`. Throws ValueError as distribution(), ShapeError for
  /// orthogonal on rank < 2.
  template <class B, std::size_t D>
  Tensor<B, D> init(const Shape& shape, const typename B::Device& device,
                    std::optional<std::int64_t> fan_in = std::nullopt,
                    std::optional<std::int64_t> fan_out = std::nullopt,
                    DType dtype = DType::F32) const {
    validate();
    if (kind_ == Kind::Constant) return Tensor<B, D>::full(shape, a_, device, dtype);
    if (kind_ == Kind::Orthogonal) {
      auto g = Tensor<B, D>::random(shape, Distribution::normal(0, 1), device, DType::F64);
      auto q = orthogonalize(shape, g.into_data().template to_vec<double>(), a_);
      return Tensor<B, D>::from_data(TensorData(std::move(q), shape), device, dtype);
    }
    return Tensor<B, D>::random(shape, distribution(fan_in, fan_out), device, dtype);
  }

  bool operator==(const Initializer&) const = default;

 private:
  Initializer(Kind k, double a, double b, bool fo) : kind_(k), a_(a), b_(b), fan_out_only_(fo) {}
  Kind kind_ = Kind::Constant;
  double a_ = 0.0;
  double b_ = 0.0;
  bool fan_out_only_ = false;
};

/// JSON: {"kind": "kaiming_uniform", "gain": 0.577, "fan_out_only": false},
/// {"kind": "uniform", "low": -1, "high": 1}, {"kind": "normal", "mean": 0, "std": 1},
/// {"kind": "constant", "value": 0}, {"kind": "xavier_normal", "gain": 1}, ...
void to_json(nlohmann::json& j, const Initializer& init);
/// Throws ValueError for an unknown kind, missing fields, keys the kind does not have, and
/// parameters validate() refuses.
void from_json(const nlohmann::json& j, Initializer& init);

}  // namespace ember::nn
