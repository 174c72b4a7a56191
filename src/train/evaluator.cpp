#include "ember/train/evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "ember/core/error.hpp"
#include "ember/store/file.hpp"
#include "ember/train/history.hpp"

namespace ember::train {

namespace {

double ratio0(double num, double den) {
  return den == 0.0 ? 0.0 : num / den;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

ConfusionMatrix::ConfusionMatrix(std::size_t num_classes)
    : n_(num_classes), counts_(num_classes * num_classes, 0) {}

void ConfusionMatrix::add(const MetricInput& input) {
  const auto [n, c] = detail::check_classification("ConfusionMatrix", input);
  if (n_ == 0) {
    n_ = c;
    counts_.assign(c * c, 0);
  }
  if (c != n_) {
    ember::detail::fail<ShapeError>("ConfusionMatrix", "output has ", c, " classes, the matrix ",
                                    n_);
  }
  const std::vector<std::int64_t> t = input.targets->to_vec<std::int64_t>();
  const std::vector<std::int64_t> p = detail::argmax_rows(*input.output);
  for (std::size_t i = 0; i < n; ++i) {
    if (t[i] < 0 || static_cast<std::size_t>(t[i]) >= n_) {
      ember::detail::fail<ValueError>("ConfusionMatrix", "target ", t[i], " of item ", i,
                                      " is not a class index in [0, ", n_, ")");
    }
  }
  for (std::size_t i = 0; i < n; ++i) add(t[i], p[i]);
}

void ConfusionMatrix::add(std::int64_t target, std::int64_t predicted) {
  if (target < 0 || predicted < 0 || static_cast<std::size_t>(target) >= n_ ||
      static_cast<std::size_t>(predicted) >= n_) {
    ember::detail::fail<ValueError>("ConfusionMatrix", "classes (", target, ", ", predicted,
                                    ") are not in [0, ", n_, ")");
  }
  ++counts_[static_cast<std::size_t>(target) * n_ + static_cast<std::size_t>(predicted)];
}

std::uint64_t ConfusionMatrix::count(std::size_t target, std::size_t predicted) const {
  if (target >= n_ || predicted >= n_) {
    ember::detail::fail<ValueError>("ConfusionMatrix::count", "classes (", target, ", ", predicted,
                                    ") are not in [0, ", n_, ")");
  }
  return counts_[target * n_ + predicted];
}

std::uint64_t ConfusionMatrix::total() const {
  std::uint64_t t = 0;
  for (auto c : counts_) t += c;
  return t;
}

std::uint64_t ConfusionMatrix::support(std::size_t c) const {
  std::uint64_t s = 0;
  for (std::size_t j = 0; j < n_; ++j) s += count(c, j);
  return s;
}

double ConfusionMatrix::accuracy() const {
  const std::uint64_t t = total();
  if (t == 0) return std::numeric_limits<double>::quiet_NaN();
  std::uint64_t diag = 0;
  for (std::size_t c = 0; c < n_; ++c) diag += counts_[c * n_ + c];
  return static_cast<double>(diag) / static_cast<double>(t);
}

double ConfusionMatrix::precision(std::size_t c) const {
  std::uint64_t predicted = 0;
  for (std::size_t i = 0; i < n_; ++i) predicted += count(i, c);
  return ratio0(static_cast<double>(count(c, c)), static_cast<double>(predicted));
}

double ConfusionMatrix::recall(std::size_t c) const {
  return ratio0(static_cast<double>(count(c, c)), static_cast<double>(support(c)));
}

double ConfusionMatrix::f1(std::size_t c) const {
  const double p = precision(c), r = recall(c);
  return ratio0(2.0 * p * r, p + r);
}

namespace {

template <class F>
double macro(const ConfusionMatrix& m, F score) {
  double sum = 0.0;
  std::size_t k = 0;
  for (std::size_t c = 0; c < m.num_classes(); ++c) {
    std::uint64_t predicted = 0;
    for (std::size_t i = 0; i < m.num_classes(); ++i) predicted += m.count(i, c);
    if (m.support(c) == 0 && predicted == 0) continue;
    sum += score(c);
    ++k;
  }
  return k == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(k);
}

}  // namespace

double ConfusionMatrix::macro_precision() const {
  return macro(*this, [&](std::size_t c) { return precision(c); });
}
double ConfusionMatrix::macro_recall() const {
  return macro(*this, [&](std::size_t c) { return recall(c); });
}
double ConfusionMatrix::macro_f1() const {
  return macro(*this, [&](std::size_t c) { return f1(c); });
}

void ConfusionMatrix::check_names(const std::vector<std::string>& names) const {
  if (!names.empty() && names.size() != n_) {
    ember::detail::fail<ValueError>("ConfusionMatrix", names.size(), " class names for ", n_,
                                    " classes");
  }
}

std::string ConfusionMatrix::csv(const std::vector<std::string>& names) const {
  check_names(names);
  const auto name = [&](std::size_t c) {
    return csv_field(names.empty() ? std::to_string(c) : names[c]);
  };
  std::string out = "true\\predicted";
  for (std::size_t c = 0; c < n_; ++c) {
    out += ',';
    out += name(c);
  }
  out += "\n";
  for (std::size_t t = 0; t < n_; ++t) {
    out += name(t);
    for (std::size_t p = 0; p < n_; ++p) {
      out += ',';
      out += std::to_string(count(t, p));
    }
    out += "\n";
  }
  return out;
}

void ConfusionMatrix::write_csv(const std::filesystem::path& path,
                                const std::vector<std::string>& names) const {
  store::write_file_atomic(path, csv(names), "confusion_matrix");
}

std::string ConfusionMatrix::table(const std::vector<std::string>& names) const {
  check_names(names);
  std::vector<std::string> labels;
  std::size_t w = 5;
  for (std::size_t c = 0; c < n_; ++c) {
    labels.push_back(std::to_string(c) + (names.empty() ? "" : " " + names[c]));
    w = std::max(w, labels.back().size());
  }
  w = std::max<std::size_t>(w, 9);
  std::ostringstream os;
  char buf[160];
  std::snprintf(buf, sizeof buf, "Accuracy: %.2f %% (%llu items)\n\n", 100.0 * accuracy(),
                static_cast<unsigned long long>(total()));
  os << buf;
  std::snprintf(buf, sizeof buf, "%-*s %10s %10s %10s %9s\n", static_cast<int>(w), "Class",
                "Precision", "Recall", "F1", "Support");
  os << buf;
  for (std::size_t c = 0; c < n_; ++c) {
    std::snprintf(buf, sizeof buf, "%-*s %8.2f %% %8.2f %% %8.2f %% %9llu\n", static_cast<int>(w),
                  labels[c].c_str(), 100.0 * precision(c), 100.0 * recall(c), 100.0 * f1(c),
                  static_cast<unsigned long long>(support(c)));
    os << buf;
  }
  std::snprintf(buf, sizeof buf, "%-*s %8.2f %% %8.2f %% %8.2f %% %9llu\n", static_cast<int>(w),
                "Macro avg", 100.0 * macro_precision(), 100.0 * macro_recall(), 100.0 * macro_f1(),
                static_cast<unsigned long long>(total()));
  os << buf << "\nConfusion matrix (rows: true class, columns: predicted class)\n";
  std::size_t cw = 3;
  for (auto c : counts_) cw = std::max(cw, std::to_string(c).size());
  for (std::size_t c = 0; c < n_; ++c) cw = std::max(cw, std::to_string(c).size());
  os << std::string(w, ' ');
  for (std::size_t c = 0; c < n_; ++c) {
    std::snprintf(buf, sizeof buf, " %*zu", static_cast<int>(cw), c);
    os << buf;
  }
  os << "\n";
  for (std::size_t t = 0; t < n_; ++t) {
    std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(w), labels[t].c_str());
    os << buf;
    for (std::size_t p = 0; p < n_; ++p) {
      std::snprintf(buf, sizeof buf, " %*llu", static_cast<int>(cw),
                    static_cast<unsigned long long>(count(t, p)));
      os << buf;
    }
    os << "\n";
  }
  return os.str();
}

std::string EvaluationReport::table() const {
  std::string out = confusion.table(class_names);
  if (loss) out = "Loss: " + format_value(*loss) + "\n" + out;
  return out;
}

}  // namespace ember::train
