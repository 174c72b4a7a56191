// nn::Initializer: distributions, the orthogonal construction, JSON.
#include "ember/module/initializer.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace ember::nn {

namespace {

std::int64_t need_fan(const char* kind, const char* which, std::optional<std::int64_t> fan) {
  if (!fan) detail::fail<ValueError>("Initializer", kind, " needs ", which);
  if (*fan <= 0)
    detail::fail<ValueError>("Initializer", kind, " needs ", which, " > 0, got ", *fan);
  return *fan;
}

const char* kind_name(Initializer::Kind k) {
  using K = Initializer::Kind;
  switch (k) {
    case K::Constant:
      return "constant";
    case K::Uniform:
      return "uniform";
    case K::Normal:
      return "normal";
    case K::KaimingUniform:
      return "kaiming_uniform";
    case K::KaimingNormal:
      return "kaiming_normal";
    case K::XavierUniform:
      return "xavier_uniform";
    case K::XavierNormal:
      return "xavier_normal";
    case K::Orthogonal:
      return "orthogonal";
  }
  return "constant";
}

}  // namespace

void Initializer::validate() const {
  const char* name = kind_name(kind_);
  switch (kind_) {
    case Kind::Constant:
      if (!std::isfinite(a_))
        detail::fail<ValueError>("Initializer", "constant value must be finite, got ", a_);
      return;
    case Kind::Uniform:
      if (!std::isfinite(a_) || !std::isfinite(b_) || a_ > b_) {
        detail::fail<ValueError>("Initializer",
                                 "uniform bounds must be finite with low <= high, got low ", a_,
                                 ", high ", b_);
      }
      return;
    case Kind::Normal:
      if (!std::isfinite(a_) || !std::isfinite(b_) || b_ < 0.0) {
        detail::fail<ValueError>("Initializer",
                                 "normal needs a finite mean and a finite std >= 0, got mean ", a_,
                                 ", std ", b_);
      }
      return;
    case Kind::KaimingUniform:
    case Kind::KaimingNormal:
    case Kind::XavierUniform:
    case Kind::XavierNormal:
      if (!std::isfinite(a_) || a_ < 0.0)
        detail::fail<ValueError>("Initializer", name, " gain must be finite and >= 0, got ", a_);
      return;
    case Kind::Orthogonal:
      if (!std::isfinite(a_))
        detail::fail<ValueError>("Initializer", name, " gain must be finite, got ", a_);
      return;
  }
}

Distribution Initializer::distribution(std::optional<std::int64_t> fan_in,
                                       std::optional<std::int64_t> fan_out) const {
  validate();
  switch (kind_) {
    case Kind::Constant:
      return Distribution::uniform(a_, a_);
    case Kind::Uniform:
      return Distribution::uniform(a_, b_);
    case Kind::Normal:
      return Distribution::normal(a_, b_);
    case Kind::KaimingUniform:
    case Kind::KaimingNormal: {
      const char* name = kind_name(kind_);
      const double fan = static_cast<double>(fan_out_only_ ? need_fan(name, "fan_out", fan_out)
                                                           : need_fan(name, "fan_in", fan_in));
      if (kind_ == Kind::KaimingUniform) {
        const double bound = a_ * std::sqrt(3.0 / fan);
        return Distribution::uniform(-bound, bound);
      }
      return Distribution::normal(0.0, a_ / std::sqrt(fan));
    }
    case Kind::XavierUniform:
    case Kind::XavierNormal: {
      const char* name = kind_name(kind_);
      const double sum = static_cast<double>(need_fan(name, "fan_in", fan_in) +
                                             need_fan(name, "fan_out", fan_out));
      if (kind_ == Kind::XavierUniform) {
        const double bound = a_ * std::sqrt(6.0 / sum);
        return Distribution::uniform(-bound, bound);
      }
      return Distribution::normal(0.0, a_ * std::sqrt(2.0 / sum));
    }
    case Kind::Orthogonal:
      return Distribution::normal(0.0, 1.0);
  }
  return Distribution::default_();
}

std::vector<double> Initializer::orthogonalize(const Shape& shape, std::vector<double> normal,
                                               double gain) {
  if (shape.rank() < 2) {
    detail::fail<ShapeError>("Initializer", "orthogonal needs a tensor of rank >= 2, got shape ",
                             shape);
  }
  const std::int64_t rows = shape[0];
  const std::int64_t cols = rows == 0 ? 0 : shape.numel() / rows;
  if (rows == 0 || cols == 0) return normal;
  // Work on the tall orientation [m, n] with m >= n: Householder QR of A gives Q [m, n] with
  // orthonormal columns; Q * sign(diag(R)) makes the result unique (torch's orthogonal_).
  const bool transpose = rows < cols;
  const std::int64_t m = transpose ? cols : rows;
  const std::int64_t n = transpose ? rows : cols;
  std::vector<double> a(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = normal[static_cast<std::size_t>(i * cols + j)];
      if (transpose)
        a[static_cast<std::size_t>(j * n + i)] = v;
      else
        a[static_cast<std::size_t>(i * n + j)] = v;
    }
  auto at = [&](std::vector<double>& x, std::int64_t i, std::int64_t j) -> double& {
    return x[static_cast<std::size_t>(i * n + j)];
  };
  // Householder vectors stored below the diagonal; R's diagonal in rdiag.
  std::vector<std::vector<double>> vs;
  std::vector<double> rdiag(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    double norm = 0;
    for (std::int64_t i = k; i < m; ++i) norm += at(a, i, k) * at(a, i, k);
    norm = std::sqrt(norm);
    const double alpha = at(a, k, k) > 0 ? -norm : norm;
    std::vector<double> v(static_cast<std::size_t>(m), 0.0);
    for (std::int64_t i = k; i < m; ++i) v[static_cast<std::size_t>(i)] = at(a, i, k);
    v[static_cast<std::size_t>(k)] -= alpha;
    double vnorm2 = 0;
    for (std::int64_t i = k; i < m; ++i) vnorm2 += v[i] * v[i];
    if (vnorm2 > 0) {
      for (std::int64_t j = k; j < n; ++j) {
        double dot = 0;
        for (std::int64_t i = k; i < m; ++i) dot += v[i] * at(a, i, j);
        const double s = 2.0 * dot / vnorm2;
        for (std::int64_t i = k; i < m; ++i) at(a, i, j) -= s * v[i];
      }
    }
    rdiag[static_cast<std::size_t>(k)] = at(a, k, k);
    vs.push_back(std::move(v));
  }
  // Q = H_0 H_1 ... H_{n-1} applied to the first n columns of the identity.
  std::vector<double> q(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t j = 0; j < n; ++j) at(q, j, j) = 1.0;
  for (std::int64_t k = n - 1; k >= 0; --k) {
    const auto& v = vs[static_cast<std::size_t>(k)];
    double vnorm2 = 0;
    for (std::int64_t i = k; i < m; ++i) vnorm2 += v[i] * v[i];
    if (vnorm2 == 0) continue;
    for (std::int64_t j = 0; j < n; ++j) {
      double dot = 0;
      for (std::int64_t i = k; i < m; ++i) dot += v[i] * at(q, i, j);
      const double s = 2.0 * dot / vnorm2;
      for (std::int64_t i = k; i < m; ++i) at(q, i, j) -= s * v[i];
    }
  }
  std::vector<double> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const double sign = rdiag[static_cast<std::size_t>(j)] < 0 ? -1.0 : 1.0;
      const double v = gain * sign * at(q, i, j);
      if (transpose)
        out[static_cast<std::size_t>(j * cols + i)] = v;
      else
        out[static_cast<std::size_t>(i * cols + j)] = v;
    }
  return out;
}

void to_json(nlohmann::json& j, const Initializer& init) {
  using K = Initializer::Kind;
  j = nlohmann::json{{"kind", kind_name(init.kind())}};
  switch (init.kind()) {
    case K::Constant:
      j["value"] = init.a();
      break;
    case K::Uniform:
      j["low"] = init.a();
      j["high"] = init.b();
      break;
    case K::Normal:
      j["mean"] = init.a();
      j["std"] = init.b();
      break;
    case K::KaimingUniform:
    case K::KaimingNormal:
      j["gain"] = init.a();
      j["fan_out_only"] = init.fan_out_only();
      break;
    case K::XavierUniform:
    case K::XavierNormal:
    case K::Orthogonal:
      j["gain"] = init.a();
      break;
  }
}

void from_json(const nlohmann::json& j, Initializer& init) {
  if (!j.is_object() || !j.contains("kind") || !j.at("kind").is_string())
    detail::fail<ValueError>("Initializer", "JSON ", j.dump(), " needs a string 'kind'");
  const std::string k = j.at("kind").get<std::string>();
  std::vector<std::string> keys{"kind"};  // the keys read, for the unknown-key check
  auto num = [&](const char* key) -> double {
    keys.emplace_back(key);
    if (!j.contains(key) || !j.at(key).is_number())
      detail::fail<ValueError>("Initializer", "JSON ", j.dump(), " needs a number '", key, "'");
    return j.at(key).get<double>();
  };
  auto fan_out_only = [&] {
    keys.emplace_back("fan_out_only");
    if (!j.contains("fan_out_only")) return false;
    if (!j.at("fan_out_only").is_boolean()) {
      detail::fail<ValueError>("Initializer", "JSON ", j.dump(),
                               " needs true or false for 'fan_out_only'");
    }
    return j.at("fan_out_only").get<bool>();
  };
  Initializer v;
  // One statement per key read, so that the key list (and the first missing key) follow
  // the order of the JSON form.
  if (k == "constant") {
    v = Initializer::constant(num("value"));
  } else if (k == "uniform") {
    const double low = num("low");
    v = Initializer::uniform(low, num("high"));
  } else if (k == "normal") {
    const double mean = num("mean");
    v = Initializer::normal(mean, num("std"));
  } else if (k == "kaiming_uniform") {
    const double gain = num("gain");
    v = Initializer::kaiming_uniform(gain, fan_out_only());
  } else if (k == "kaiming_normal") {
    const double gain = num("gain");
    v = Initializer::kaiming_normal(gain, fan_out_only());
  } else if (k == "xavier_uniform") {
    v = Initializer::xavier_uniform(num("gain"));
  } else if (k == "xavier_normal") {
    v = Initializer::xavier_normal(num("gain"));
  } else if (k == "orthogonal") {
    v = Initializer::orthogonal(num("gain"));
  } else {
    detail::fail<ValueError>("Initializer", "unknown kind '", k, "'");
  }
  for (const auto& [key, value] : j.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string list;
      for (const auto& n : keys) list += (list.empty() ? "" : ", ") + n;
      detail::fail<ValueError>("Initializer", "unknown key '", key, "' for kind ", k,
                               " (keys: ", list, ")");
    }
  }
  v.validate();
  init = v;
}

}  // namespace ember::nn
