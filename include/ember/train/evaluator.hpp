// Evaluation of a trained classifier on a test split: accuracy, per-class precision / recall /
// F1 and the confusion matrix (Burn's evaluator), written as `confusion_matrix.csv`.
//
//   auto report = train::Evaluator(model.valid(), [&](const Cnn<>& m, const Batch& b) {
//                   return m.forward_classification(b);   // a ClassificationOutput
//                 })
//                     .class_names(data::fashion_mnist_classes())
//                     .output_dir("runs/cnn")
//                     .eval(test_loader);
//   double acc = report.accuracy();          // in [0, 1]
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/train/loader.hpp"
#include "ember/train/metric.hpp"
#include "ember/train/output.hpp"

namespace ember::train {

/// Counts of (true class, predicted class) pairs.
class ConfusionMatrix {
 public:
  /// A matrix for `num_classes` classes; 0 takes the number of classes from the first batch.
  explicit ConfusionMatrix(std::size_t num_classes = 0);

  /// Adds a batch: predictions are the argmax of input.output [N, C], truths input.targets
  /// [N]. Throws ValueError / ShapeError as the classification metrics (a missing output,
  /// a target outside [0, C), C different from num_classes()).
  void add(const MetricInput& input);
  /// Adds one item. Throws ValueError when a class is outside [0, num_classes()).
  void add(std::int64_t target, std::int64_t predicted);

  std::size_t num_classes() const { return n_; }
  /// Items of true class `target` predicted as `predicted`.
  std::uint64_t count(std::size_t target, std::size_t predicted) const;
  /// All items.
  std::uint64_t total() const;
  /// Items whose true class is c.
  std::uint64_t support(std::size_t c) const;
  /// Correct items / all items, in [0, 1] (NaN when empty).
  double accuracy() const;
  /// TP / (TP + FP) of class c in [0, 1]; 0 when c was never predicted.
  double precision(std::size_t c) const;
  /// TP / (TP + FN) of class c in [0, 1]; 0 when c never occurs.
  double recall(std::size_t c) const;
  /// 2 P R / (P + R) of class c; 0 when P + R = 0.
  double f1(std::size_t c) const;
  /// Unweighted means over the classes that occur as a target or a prediction.
  double macro_precision() const;
  double macro_recall() const;
  double macro_f1() const;

  /// The matrix as CSV: a header `true\predicted,<name>,...`, then one row per true class
  /// `<name>,<count>,...` (names default to the class indices; quoted when needed). Throws
  /// ValueError when names are given and their number is not num_classes().
  std::string csv(const std::vector<std::string>& names = {}) const;
  /// Writes csv(names) atomically. Throws IoError.
  void write_csv(const std::filesystem::path& path,
                 const std::vector<std::string>& names = {}) const;
  /// A readable report: accuracy, a per-class table (precision, recall, F1, support in %),
  /// macro averages and the matrix (rows: true class, columns: predicted class index).
  std::string table(const std::vector<std::string>& names = {}) const;

 private:
  void check_names(const std::vector<std::string>& names) const;
  std::size_t n_;
  std::vector<std::uint64_t> counts_;  // [target * n + predicted]
};

/// What Evaluator::eval found.
struct EvaluationReport {
  ConfusionMatrix confusion{};
  /// The items' mean loss, when the step's outputs have one.
  std::optional<double> loss{};
  std::vector<std::string> class_names{};
  std::size_t num_items = 0;

  /// Correct / all, in [0, 1].
  double accuracy() const { return confusion.accuracy(); }
  /// confusion.table(class_names), with the loss when known.
  std::string table() const;
};

/// Runs a model (usually `trained.valid()`) over a test loader with a step function `F`:
/// `f(const M&, Batch&)` returning an output with `metric_input()` (ClassificationOutput) or a
/// MetricInput.
template <class M, class F>
class Evaluator {
 public:
  Evaluator(M model, F step) : model_(std::move(model)), step_(std::move(step)) {}

  /// Class names for the table and the CSV (their number must match the model's classes).
  Evaluator& class_names(std::vector<std::string> names) {
    names_ = std::move(names);
    return *this;
  }
  /// Folder for confusion_matrix.csv (created if needed; default: no file).
  Evaluator& output_dir(std::filesystem::path dir) {
    dir_ = std::move(dir);
    return *this;
  }
  /// Where the table is printed (default std::cout; nullptr: not printed).
  Evaluator& print_to(std::ostream* out) {
    out_ = out;
    return *this;
  }

  /// Evaluates every batch of `loader.iter(0)`. Throws what the step and loader throw,
  /// ValueError / ShapeError for outputs that are not a classification, IoError when the CSV
  /// cannot be written.
  template <class L>
  requires BatchLoaderLike<L> EvaluationReport eval(const L& loader) {
    EvaluationReport report;
    report.class_names = names_;
    report.confusion = ConfusionMatrix(names_.size());
    double loss_sum = 0.0;
    bool have_loss = true;
    auto epoch = loader.iter(0);
    while (auto batch = epoch.next()) {
      MetricInput in = input_of(std::invoke(step_, std::as_const(model_), *batch));
      report.confusion.add(in);
      report.num_items += in.batch_size;
      if (in.loss) {
        loss_sum += *in.loss * static_cast<double>(in.batch_size);
      } else {
        have_loss = false;
      }
    }
    if (have_loss && report.num_items > 0) {
      report.loss = loss_sum / static_cast<double>(report.num_items);
    }
    if (!dir_.empty()) {
      std::filesystem::create_directories(dir_);
      report.confusion.write_csv(dir_ / "confusion_matrix.csv", names_);
    }
    if (out_ != nullptr) *out_ << report.table() << std::flush;
    return report;
  }

 private:
  template <class Out>
  static MetricInput input_of(Out&& out) {
    if constexpr (std::same_as<std::remove_cvref_t<Out>, MetricInput>) {
      return std::forward<Out>(out);
    } else {
      return out.metric_input();
    }
  }

  M model_;
  F step_;
  std::vector<std::string> names_;
  std::filesystem::path dir_;
  std::ostream* out_ = &std::cout;
};

}  // namespace ember::train
