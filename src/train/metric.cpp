#include "ember/train/metric.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "ember/core/error.hpp"

namespace ember::train {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMiB = 1024.0 * 1024.0;

double percent(std::uint64_t num, std::uint64_t den) {
  return den == 0 ? kNaN : 100.0 * static_cast<double>(num) / static_cast<double>(den);
}

double ratio0(double num, double den) {
  return den == 0.0 ? 0.0 : num / den;
}

const nlohmann::json& field(const nlohmann::json& j, const char* key, std::string_view op) {
  if (!j.is_object() || !j.contains(key)) {
    ember::detail::fail<ValueError>(op, "state has no '", key, "': ", j.dump());
  }
  return j.at(key);
}

std::uint64_t read_u64(const nlohmann::json& j, const char* key, std::string_view op) {
  const auto& v = field(j, key, op);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
    ember::detail::fail<ValueError>(op, "state field '", key, "' is not a count: ", v.dump());
  }
  return v.get<std::uint64_t>();
}

double read_double(const nlohmann::json& j, const char* key, std::string_view op) {
  const auto& v = field(j, key, op);
  if (v.is_null()) return kNaN;
  if (!v.is_number()) {
    ember::detail::fail<ValueError>(op, "state field '", key, "' is not a number: ", v.dump());
  }
  return v.get<double>();
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

void check_batch(std::string_view op, const MetricInput& input) {
  if (input.batch_size == 0) ember::detail::fail<ValueError>(op, "batch_size must be > 0");
}

}  // namespace

std::string_view split_name(Split split) {
  return split == Split::Train ? "train" : "valid";
}

Split parse_split(std::string_view text) {
  if (text == "train") return Split::Train;
  if (text == "valid") return Split::Valid;
  ember::detail::fail<ValueError>("parse_split", "unknown split '", text,
                                  "' (expected train or valid)");
}

// ---- WeightedMean -------------------------------------------------------------------------

double WeightedMean::value() const {
  return weight_ == 0.0 ? kNaN : sum_ / weight_;
}

nlohmann::json WeightedMean::state() const {
  return {{"sum", sum_}, {"weight", weight_}};
}

void WeightedMean::load_state(const nlohmann::json& j, std::string_view op) {
  const double s = read_double(j, "sum", op), w = read_double(j, "weight", op);
  if (!std::isfinite(w) || w < 0.0) ember::detail::fail<ValueError>(op, "bad weight in state");
  sum_ = s;
  weight_ = w;
}

// ---- Loss ---------------------------------------------------------------------------------

double LossMetric::update(const MetricInput& input, const MetricContext&) {
  check_batch("LossMetric", input);
  if (!input.loss) {
    ember::detail::fail<ValueError>("LossMetric",
                                    "the step's output has no loss (MetricInput::loss is empty)");
  }
  mean_.add(*input.loss, static_cast<double>(input.batch_size));
  return *input.loss;
}
nlohmann::json LossMetric::state() const {
  return mean_.state();
}
void LossMetric::load_state(const nlohmann::json& state) {
  mean_.load_state(state, "LossMetric");
}

// ---- classification helpers ---------------------------------------------------------------

namespace detail {

std::pair<std::size_t, std::size_t> check_classification(std::string_view op,
                                                         const MetricInput& input) {
  check_batch(op, input);
  if (!input.output || !input.targets) {
    ember::detail::fail<ValueError>(op, "needs the step's scores and targets (MetricInput::",
                                    !input.output ? "output" : "targets", " is empty)");
  }
  const Shape& os = input.output->shape();
  const Shape& ts = input.targets->shape();
  if (os.rank() != 2 || ts.rank() != 1 || os[0] != ts[0] ||
      static_cast<std::size_t>(os[0]) != input.batch_size || os[1] < 1) {
    ember::detail::fail<ShapeError>(
        op, "expected output [N, C] and targets [N] with N = ", input.batch_size,
        ", C >= 1; got output ", os, " and targets ", ts);
  }
  if (!is_float(input.output->dtype())) {
    ember::detail::fail<DTypeError>(op, "output must be a float tensor, got ",
                                    input.output->dtype());
  }
  return {static_cast<std::size_t>(os[0]), static_cast<std::size_t>(os[1])};
}

std::vector<std::int64_t> argmax_rows(const TensorData& output) {
  const std::vector<double> v = output.to_vec<double>();
  const auto n = static_cast<std::size_t>(output.shape()[0]);
  const auto c = static_cast<std::size_t>(output.shape()[1]);
  std::vector<std::int64_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double* row = v.data() + i * c;
    std::size_t best = 0;
    for (std::size_t j = 1; j < c; ++j) {
      if (std::isnan(row[best])) break;
      if (std::isnan(row[j]) || row[j] > row[best]) best = j;
    }
    out[i] = static_cast<std::int64_t>(best);
  }
  return out;
}

}  // namespace detail

namespace {

/// Targets as class indices, each checked against [0, classes).
std::vector<std::int64_t> class_targets(std::string_view op, const TensorData& targets,
                                        std::size_t classes, std::optional<std::int64_t> pad) {
  std::vector<std::int64_t> t = targets.to_vec<std::int64_t>();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (pad && t[i] == *pad) continue;
    if (t[i] < 0 || static_cast<std::size_t>(t[i]) >= classes) {
      ember::detail::fail<ValueError>(op, "target ", t[i], " of item ", i,
                                      " is not a class index in [0, ", classes, ")");
    }
  }
  return t;
}

}  // namespace

// ---- Top-k accuracy -----------------------------------------------------------------------

TopKAccuracyMetric::TopKAccuracyMetric(std::size_t k, std::optional<std::int64_t> pad_token)
    : k_(k), pad_(pad_token) {
  if (k == 0) ember::detail::fail<ValueError>("TopKAccuracyMetric", "k must be >= 1");
}

std::string TopKAccuracyMetric::name() const {
  return k_ == 1 ? std::string("Accuracy") : "Top-" + std::to_string(k_) + " Accuracy";
}

double TopKAccuracyMetric::update(const MetricInput& input, const MetricContext&) {
  const std::string op = name();
  const auto [n, c] = detail::check_classification(op, input);
  const std::vector<std::int64_t> t = class_targets(op, *input.targets, c, pad_);
  const std::vector<double> s = input.output->to_vec<double>();
  std::uint64_t correct = 0, total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (pad_ && t[i] == *pad_) continue;
    ++total;
    const double* row = s.data() + i * c;
    const auto target = static_cast<std::size_t>(t[i]);
    const double ts = row[target];
    // Rank of the target: classes ranked before it (a larger score, or an equal score at a
    // lower index). NaN ranks above every number, as in argmax.
    std::size_t rank = 0;
    for (std::size_t j = 0; j < c && rank < k_; ++j) {
      if (j == target) continue;
      const double sj = row[j];
      const bool above = std::isnan(ts) ? (std::isnan(sj) && j < target)
                                        : (std::isnan(sj) || sj > ts || (sj == ts && j < target));
      if (above) ++rank;
    }
    if (rank < k_) ++correct;
  }
  correct_ += correct;
  total_ += total;
  return percent(correct, total);
}

double TopKAccuracyMetric::value() const {
  return percent(correct_, total_);
}

nlohmann::json TopKAccuracyMetric::state() const {
  return {{"correct", correct_}, {"total", total_}};
}

void TopKAccuracyMetric::load_state(const nlohmann::json& state) {
  const std::string op = name();
  const std::uint64_t c = read_u64(state, "correct", op), t = read_u64(state, "total", op);
  if (c > t) ember::detail::fail<ValueError>(op, "state has more correct items than items");
  correct_ = c;
  total_ = t;
}

// ---- precision / recall / F1 --------------------------------------------------------------

ClassificationMetric::ClassificationMetric(ClassScore score, ClassAverage average)
    : score_(score), average_(average) {}

std::string ClassificationMetric::name() const {
  std::string n = score_ == ClassScore::Precision ? "Precision"
                  : score_ == ClassScore::Recall  ? "Recall"
                                                  : "F1";
  return average_ == ClassAverage::Micro ? n + " (micro)" : n;
}

void ClassificationMetric::reset() {
  tp_.clear();
  fp_.clear();
  fn_.clear();
}

namespace {

double class_score(ClassScore score, ClassAverage average, const std::vector<std::uint64_t>& tp,
                   const std::vector<std::uint64_t>& fp, const std::vector<std::uint64_t>& fn) {
  const auto pick = [&](double t, double p, double n) {
    const double precision = ratio0(t, t + p), recall = ratio0(t, t + n);
    switch (score) {
      case ClassScore::Precision:
        return precision;
      case ClassScore::Recall:
        return recall;
      case ClassScore::F1:
        return ratio0(2.0 * precision * recall, precision + recall);
    }
    return 0.0;
  };
  if (average == ClassAverage::Micro) {
    double t = 0, p = 0, n = 0;
    for (std::size_t c = 0; c < tp.size(); ++c) {
      t += static_cast<double>(tp[c]);
      p += static_cast<double>(fp[c]);
      n += static_cast<double>(fn[c]);
    }
    return t + p + n == 0.0 ? kNaN : 100.0 * pick(t, p, n);
  }
  double sum = 0.0;
  std::size_t classes = 0;
  for (std::size_t c = 0; c < tp.size(); ++c) {
    if (tp[c] + fp[c] + fn[c] == 0) continue;  // neither a target nor a prediction
    sum += pick(static_cast<double>(tp[c]), static_cast<double>(fp[c]), static_cast<double>(fn[c]));
    ++classes;
  }
  return classes == 0 ? kNaN : 100.0 * sum / static_cast<double>(classes);
}

}  // namespace

double ClassificationMetric::update(const MetricInput& input, const MetricContext&) {
  const std::string op = name();
  const auto [n, c] = detail::check_classification(op, input);
  if (!tp_.empty() && tp_.size() != c) {
    ember::detail::fail<ShapeError>(op, "batch has ", c, " classes, earlier batches had ",
                                    tp_.size());
  }
  const std::vector<std::int64_t> t = class_targets(op, *input.targets, c, std::nullopt);
  const std::vector<std::int64_t> p = detail::argmax_rows(*input.output);
  std::vector<std::uint64_t> tp(c, 0), fp(c, 0), fn(c, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (t[i] == p[i]) {
      ++tp[static_cast<std::size_t>(t[i])];
    } else {
      ++fp[static_cast<std::size_t>(p[i])];
      ++fn[static_cast<std::size_t>(t[i])];
    }
  }
  if (tp_.empty()) {
    tp_.assign(c, 0);
    fp_.assign(c, 0);
    fn_.assign(c, 0);
  }
  for (std::size_t k = 0; k < c; ++k) {
    tp_[k] += tp[k];
    fp_[k] += fp[k];
    fn_[k] += fn[k];
  }
  return class_score(score_, average_, tp, fp, fn);
}

double ClassificationMetric::value() const {
  return class_score(score_, average_, tp_, fp_, fn_);
}

nlohmann::json ClassificationMetric::state() const {
  return {{"tp", tp_}, {"fp", fp_}, {"fn", fn_}};
}

void ClassificationMetric::load_state(const nlohmann::json& state) {
  const std::string op = name();
  std::vector<std::uint64_t> counts[3];
  const char* keys[3] = {"tp", "fp", "fn"};
  for (int i = 0; i < 3; ++i) {
    const auto& v = field(state, keys[i], op);
    if (!v.is_array()) ember::detail::fail<ValueError>(op, "state field '", keys[i], "'");
    for (const auto& x : v) {
      if (!x.is_number_unsigned() && !(x.is_number_integer() && x.get<std::int64_t>() >= 0)) {
        ember::detail::fail<ValueError>(op, "state field '", keys[i], "' holds ", x.dump());
      }
      counts[i].push_back(x.get<std::uint64_t>());
    }
  }
  if (counts[0].size() != counts[1].size() || counts[0].size() != counts[2].size()) {
    ember::detail::fail<ValueError>(op, "state counts have different lengths");
  }
  tp_ = std::move(counts[0]);
  fp_ = std::move(counts[1]);
  fn_ = std::move(counts[2]);
}

// ---- learning rate ------------------------------------------------------------------------

double LearningRateMetric::update(const MetricInput& input, const MetricContext& context) {
  check_batch("LearningRateMetric", input);
  if (std::isnan(context.learning_rate)) return kNaN;
  mean_.add(context.learning_rate, static_cast<double>(input.batch_size));
  return context.learning_rate;
}
nlohmann::json LearningRateMetric::state() const {
  return mean_.state();
}
void LearningRateMetric::load_state(const nlohmann::json& state) {
  mean_.load_state(state, "LearningRateMetric");
}

// ---- throughput ---------------------------------------------------------------------------

void ThroughputMetric::reset() {
  start_ = std::chrono::steady_clock::now();
  items_ = 0.0;
  last_ = kNaN;
}

double ThroughputMetric::update(const MetricInput& input, const MetricContext&) {
  check_batch("ThroughputMetric", input);
  items_ += static_cast<double>(input.batch_size);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  last_ = s > 0.0 ? items_ / s : kNaN;
  return last_;
}

double ThroughputMetric::value() const {
  return items_ == 0.0 ? kNaN : last_;
}

nlohmann::json ThroughputMetric::state() const {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return {{"items", items_}, {"seconds", s}};
}

void ThroughputMetric::load_state(const nlohmann::json& state) {
  const double items = read_double(state, "items", "ThroughputMetric");
  const double s = read_double(state, "seconds", "ThroughputMetric");
  if (!(items >= 0.0) || !(s >= 0.0)) {
    ember::detail::fail<ValueError>("ThroughputMetric", "bad state ", state.dump());
  }
  items_ = items;
  start_ = std::chrono::steady_clock::now() -
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(s));
  last_ = s > 0.0 && items > 0.0 ? items / s : kNaN;
}

// ---- memory -------------------------------------------------------------------------------

std::size_t resident_memory_bytes() {
  std::ifstream in("/proc/self/statm");
  std::size_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  const long page = sysconf(_SC_PAGESIZE);
  return resident * static_cast<std::size_t>(page > 0 ? page : 4096);
}

namespace {

double load_peak(const nlohmann::json& state, std::string_view op) {
  const double v = read_double(state, "peak", op);
  return std::isnan(v) ? -1.0 : v;
}

}  // namespace

double CpuMemoryMetric::update(const MetricInput& input, const MetricContext&) {
  check_batch("CpuMemoryMetric", input);
  const double mib = static_cast<double>(resident_memory_bytes()) / kMiB;
  peak_ = std::max(peak_, mib);
  return mib;
}

double CpuMemoryMetric::value() const {
  return peak_ < 0.0 ? kNaN : peak_;
}
nlohmann::json CpuMemoryMetric::state() const {
  return {{"peak", number_or_null(value())}};
}
void CpuMemoryMetric::load_state(const nlohmann::json& state) {
  peak_ = load_peak(state, "CpuMemoryMetric");
}

double TensorMemoryMetric::update(const MetricInput& input, const MetricContext& context) {
  check_batch("TensorMemoryMetric", input);
  const double mib = static_cast<double>(memory_stats(context.device).live_bytes) / kMiB;
  peak_ = std::max(peak_, mib);
  return mib;
}

double TensorMemoryMetric::value() const {
  return peak_ < 0.0 ? kNaN : peak_;
}
nlohmann::json TensorMemoryMetric::state() const {
  return {{"peak", number_or_null(value())}};
}
void TensorMemoryMetric::load_state(const nlohmann::json& state) {
  peak_ = load_peak(state, "TensorMemoryMetric");
}

}  // namespace ember::train
