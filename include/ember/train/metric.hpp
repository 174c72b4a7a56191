// Training metrics (Burn's burn-train metrics): loss, accuracy, top-k accuracy, precision /
// recall / F1, learning rate, throughput and memory.
//
//   train::AccuracyMetric acc;
//   acc.reset();
//   double batch = acc.update(input, ctx);   // this batch's accuracy, in %
//   double epoch = acc.value();              // the epoch's so far (all items seen since reset)
//
// A metric sees each batch as a MetricInput (host copies of the step's loss, scores and
// targets) and aggregates over an epoch. The epoch value of a numeric metric is the mean of
// its batch values weighted by the items of each batch (for accuracy-like metrics this is the
// same as counting over all items); precision, recall and F1 are computed from the counts of
// the whole epoch. Accuracy-like metrics are percentages (Burn's convention).
//
// Metrics are not thread-safe: the Learner calls them from its training thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/dispatch/device.hpp"

namespace ember::train {

/// The two passes of an epoch.
enum class Split { Train, Valid };

/// "train" or "valid".
std::string_view split_name(Split split);
/// Parses "train" / "valid"; throws ValueError for anything else.
Split parse_split(std::string_view text);

/// Which values of a metric are better (for best checkpoints, early stopping and summaries).
enum class Direction { Lowest, Highest };

/// What a metric sees of one batch, copied to the host by the step's output
/// (ClassificationOutput::metric_input()).
struct MetricInput {
  /// Items in the batch (the weight of its values in epoch means). Must be > 0.
  std::size_t batch_size = 0;
  /// The batch's mean loss, when the step computed one.
  std::optional<double> loss{};
  /// Scores (logits or probabilities) [batch_size, num_classes], any float dtype.
  std::optional<TensorData> output{};
  /// Class indices [batch_size], any int dtype (or float regression targets).
  std::optional<TensorData> targets{};
};

/// Facts of the training loop a metric may use besides the batch.
struct MetricContext {
  /// 1-based epoch number.
  std::size_t epoch = 0;
  /// Batches of this split done in this epoch, including this one (1-based).
  std::size_t iteration = 0;
  /// The learning rate of the current optimizer step (NaN during validation).
  double learning_rate = 0.0;
  /// The device the model runs on.
  Device device = Device::cpu();
};

/// A metric: aggregates batches over an epoch. Subclass it for custom metrics and register
/// an instance with LearnerBuilder::metric / metric_train / metric_valid.
class Metric {
 public:
  virtual ~Metric() = default;

  /// Display name, unique among a learner's metrics ("Loss", "Top-5 Accuracy").
  virtual std::string name() const = 0;
  /// Unit shown after values ("%", "items/s", "MiB"); empty for none.
  virtual std::string unit() const { return {}; }
  /// Which values are better.
  virtual Direction direction() const = 0;
  /// True for metrics that only make sense while training (the learning rate):
  /// LearnerBuilder::metric() then registers them for the train split only.
  virtual bool train_only() const { return false; }

  /// Starts an epoch: forgets every batch seen.
  virtual void reset() = 0;
  /// Adds one batch and returns the batch's own value. Throws ValueError when the input lacks
  /// what the metric needs (e.g. no loss), ShapeError when shapes disagree.
  virtual double update(const MetricInput& input, const MetricContext& context) = 0;
  /// The epoch's value over the batches since reset(); NaN before the first batch.
  virtual double value() const = 0;

  /// The accumulators as JSON (checkpoints written in the middle of an epoch).
  virtual nlohmann::json state() const = 0;
  /// Restores state(). Throws ValueError when the JSON is not this metric's state.
  virtual void load_state(const nlohmann::json& state) = 0;
  /// A fresh copy with the same settings and accumulators.
  virtual std::unique_ptr<Metric> clone() const = 0;
};

/// Helper of numeric metrics: the mean of batch values weighted by batch sizes.
class WeightedMean {
 public:
  void reset() { sum_ = weight_ = 0.0; }
  void add(double value, double weight) {
    sum_ += value * weight;
    weight_ += weight;
  }
  /// sum(value * weight) / sum(weight); NaN when empty.
  double value() const;
  nlohmann::json state() const;
  /// Throws ValueError for malformed JSON; `op` names the metric in the message.
  void load_state(const nlohmann::json& j, std::string_view op);

 private:
  double sum_ = 0.0, weight_ = 0.0;
};

/// The batch's mean loss, averaged over the epoch weighted by items. Needs input.loss.
class LossMetric final : public Metric {
 public:
  std::string name() const override { return "Loss"; }
  Direction direction() const override { return Direction::Lowest; }
  void reset() override { mean_.reset(); }
  double update(const MetricInput& input, const MetricContext& context) override;
  double value() const override { return mean_.value(); }
  nlohmann::json state() const override;
  void load_state(const nlohmann::json& state) override;
  std::unique_ptr<Metric> clone() const override { return std::make_unique<LossMetric>(*this); }

 private:
  WeightedMean mean_;
};

/// Top-k accuracy in %: an item counts as correct when its target class is among the k
/// highest scores (ties go to the lower class index, as argmax). Items whose target equals
/// `pad_token` are left out (Burn's pad token for sequence tasks). Needs input.output
/// [N, C] and input.targets [N].
class TopKAccuracyMetric : public Metric {
 public:
  /// Throws ValueError when k < 1.
  explicit TopKAccuracyMetric(std::size_t k, std::optional<std::int64_t> pad_token = std::nullopt);

  /// "Accuracy" for k = 1, else "Top-<k> Accuracy".
  std::string name() const override;
  std::string unit() const override { return "%"; }
  Direction direction() const override { return Direction::Highest; }
  void reset() override { correct_ = total_ = 0; }
  double update(const MetricInput& input, const MetricContext& context) override;
  double value() const override;
  nlohmann::json state() const override;
  void load_state(const nlohmann::json& state) override;
  std::unique_ptr<Metric> clone() const override {
    return std::make_unique<TopKAccuracyMetric>(*this);
  }

 private:
  std::size_t k_;
  std::optional<std::int64_t> pad_;
  std::uint64_t correct_ = 0, total_ = 0;
};

/// Accuracy in % (top-1: argmax of the scores equals the target).
class AccuracyMetric final : public TopKAccuracyMetric {
 public:
  explicit AccuracyMetric(std::optional<std::int64_t> pad_token = std::nullopt)
      : TopKAccuracyMetric(1, pad_token) {}
  std::unique_ptr<Metric> clone() const override { return std::make_unique<AccuracyMetric>(*this); }
};

/// How per-class values are combined: Macro = the unweighted mean over classes (classes that
/// occur neither as a target nor as a prediction are left out, as scikit-learn's default
/// labels); Micro = computed from the counts summed over classes (for single-label data,
/// micro precision = micro recall = accuracy).
enum class ClassAverage { Macro, Micro };

/// Which of precision, recall or F1 a ClassificationMetric reports.
enum class ClassScore { Precision, Recall, F1 };

/// Precision, recall or F1 in % for single-label classification, the predicted class being
/// the argmax of the scores. Per class c: precision = TP / (TP + FP), recall = TP / (TP + FN),
/// F1 = 2 P R / (P + R), each 0 when its denominator is 0 (scikit-learn's zero_division=0).
/// The epoch value comes from the counts of all the epoch's items. Needs input.output [N, C]
/// and input.targets [N] with values in [0, C).
class ClassificationMetric : public Metric {
 public:
  ClassificationMetric(ClassScore score, ClassAverage average = ClassAverage::Macro);

  /// "Precision", "Recall" or "F1", with " (micro)" for micro averaging.
  std::string name() const override;
  std::string unit() const override { return "%"; }
  Direction direction() const override { return Direction::Highest; }
  void reset() override;
  double update(const MetricInput& input, const MetricContext& context) override;
  double value() const override;
  nlohmann::json state() const override;
  void load_state(const nlohmann::json& state) override;
  std::unique_ptr<Metric> clone() const override {
    return std::make_unique<ClassificationMetric>(*this);
  }

 private:
  ClassScore score_;
  ClassAverage average_;
  std::vector<std::uint64_t> tp_, fp_, fn_;
};

/// ClassificationMetric(Precision, average).
class PrecisionMetric final : public ClassificationMetric {
 public:
  explicit PrecisionMetric(ClassAverage average = ClassAverage::Macro)
      : ClassificationMetric(ClassScore::Precision, average) {}
};
/// ClassificationMetric(Recall, average).
class RecallMetric final : public ClassificationMetric {
 public:
  explicit RecallMetric(ClassAverage average = ClassAverage::Macro)
      : ClassificationMetric(ClassScore::Recall, average) {}
};
/// ClassificationMetric(F1, average).
class F1Metric final : public ClassificationMetric {
 public:
  explicit F1Metric(ClassAverage average = ClassAverage::Macro)
      : ClassificationMetric(ClassScore::F1, average) {}
};

/// The learning rate of each optimizer step (train only); the epoch value is its mean over
/// the epoch's batches.
class LearningRateMetric final : public Metric {
 public:
  std::string name() const override { return "Learning Rate"; }
  Direction direction() const override { return Direction::Lowest; }
  bool train_only() const override { return true; }
  void reset() override { mean_.reset(); }
  double update(const MetricInput& input, const MetricContext& context) override;
  double value() const override { return mean_.value(); }
  nlohmann::json state() const override;
  void load_state(const nlohmann::json& state) override;
  std::unique_ptr<Metric> clone() const override {
    return std::make_unique<LearningRateMetric>(*this);
  }

 private:
  WeightedMean mean_;
};

/// Items per second since the start of the epoch (wall clock; the time of the first batch
/// included). Batch value and epoch value are both items so far / seconds so far.
class ThroughputMetric final : public Metric {
 public:
  std::string name() const override { return "Throughput"; }
  std::string unit() const override { return "items/s"; }
  Direction direction() const override { return Direction::Highest; }
  void reset() override;
  double update(const MetricInput& input, const MetricContext& context) override;
  double value() const override;
  nlohmann::json state() const override;
  void load_state(const nlohmann::json& state) override;
  std::unique_ptr<Metric> clone() const override {
    return std::make_unique<ThroughputMetric>(*this);
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double items_ = 0.0;
  double last_ = 0.0;
};

/// The process's resident memory (RSS, from /proc/self/statm) in MiB, sampled after each
/// batch; the epoch value is the largest sample of the epoch.
class CpuMemoryMetric final : public Metric {
 public:
  std::string name() const override { return "CPU Memory"; }
  std::string unit() const override { return "MiB"; }
  Direction direction() const override { return Direction::Lowest; }
  void reset() override { peak_ = -1.0; }
  double update(const MetricInput& input, const MetricContext& context) override;
  double value() const override;
  nlohmann::json state() const override;
  void load_state(const nlohmann::json& state) override;
  std::unique_ptr<Metric> clone() const override {
    return std::make_unique<CpuMemoryMetric>(*this);
  }

 private:
  double peak_ = -1.0;
};

/// Bytes held by the live tensors of the training device (ember::memory_stats(device)
/// .live_bytes) in MiB, sampled after each batch; the epoch value is the largest sample.
class TensorMemoryMetric final : public Metric {
 public:
  std::string name() const override { return "Tensor Memory"; }
  std::string unit() const override { return "MiB"; }
  Direction direction() const override { return Direction::Lowest; }
  void reset() override { peak_ = -1.0; }
  double update(const MetricInput& input, const MetricContext& context) override;
  double value() const override;
  nlohmann::json state() const override;
  void load_state(const nlohmann::json& state) override;
  std::unique_ptr<Metric> clone() const override {
    return std::make_unique<TensorMemoryMetric>(*this);
  }

 private:
  double peak_ = -1.0;
};

/// Resident set size of this process in bytes (/proc/self/statm); 0 where unavailable.
std::size_t resident_memory_bytes();

namespace detail {
/// Checks a MetricInput for a classification metric and returns {N, C}: output [N, C] float,
/// targets [N] with N = batch_size. Throws ValueError naming `op` when one is missing,
/// ShapeError when shapes disagree.
std::pair<std::size_t, std::size_t> check_classification(std::string_view op,
                                                         const MetricInput& input);
/// Row-wise argmax of output [N, C] (lowest index on ties; NaN counts as the largest).
std::vector<std::int64_t> argmax_rows(const TensorData& output);
}  // namespace detail

}  // namespace ember::train
