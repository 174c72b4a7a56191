// What train and validation steps return (Burn's ClassificationOutput, RegressionOutput and
// TrainOutput).
//
//   auto step = [&](Mlp<>& model, const Batch& b) {
//     auto logits = model.forward(b.images);                       // [N, C]
//     auto loss = loss_fn.forward(logits, b.targets);              // [1]
//     return train::ClassificationOutput<Dispatch>{loss, logits, b.targets};
//   };
//
// The Learner runs `loss.backward()` on a train step's output (or takes the gradients of a
// TrainOutput) and hands `metric_input()` to the metrics. A custom output type works when it
// has a `loss` tensor (train steps) and a `MetricInput metric_input() const` member.
#pragma once

#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>

#include "ember/optim/gradients.hpp"
#include "ember/tensor/tensor.hpp"
#include "ember/train/metric.hpp"

namespace ember::train {

/// Output of a classification step: the batch's mean loss [1], the scores (logits) [N, C]
/// and the target classes [N].
template <class B>
struct ClassificationOutput {
  Tensor<B, 1> loss;
  Tensor<B, 2> output;
  Tensor<B, 1, Int> targets;

  /// Host copies for the metrics: batch_size N, loss, output [N, C], targets [N]. Throws
  /// ShapeError when the batch sizes of output and targets differ.
  MetricInput metric_input() const {
    if (output.dim(0) != targets.dim(0)) {
      ember::detail::fail<ShapeError>("ClassificationOutput", "output ", output.shape(),
                                      " and targets ", targets.shape(),
                                      " have different batch sizes");
    }
    MetricInput in;
    in.batch_size = static_cast<std::size_t>(targets.dim(0));
    in.loss = static_cast<double>(loss.into_scalar());
    in.output = output.into_data();
    in.targets = targets.into_data();
    return in;
  }
};

/// Output of a regression step: the batch's mean loss [1], predictions and targets
/// [N, ...] (Burn's RegressionOutput). Only loss-based metrics apply.
template <class B, std::size_t D = 2>
struct RegressionOutput {
  Tensor<B, 1> loss;
  Tensor<B, D> output;
  Tensor<B, D> targets;

  /// batch_size = output.dim(0) and the loss; the tensors are not copied.
  MetricInput metric_input() const {
    MetricInput in;
    in.batch_size = static_cast<std::size_t>(output.dim(0));
    in.loss = static_cast<double>(loss.into_scalar());
    return in;
  }
};

/// A train step's output with gradients it computed itself (Burn's TrainOutput): the Learner
/// uses `grads` instead of calling backward on `item.loss`.
template <class Item>
struct TrainOutput {
  optim::GradientsParams grads;
  Item item;
};

namespace detail {

template <class T>
struct IsTrainOutput : std::false_type {};
template <class Item>
struct IsTrainOutput<TrainOutput<Item>> : std::true_type {};

/// A step output the metrics can read.
template <class T>
concept HasMetricInput = requires(const T& t) {
  { t.metric_input() } -> std::same_as<MetricInput>;
};

/// A train step output the Learner can differentiate: a `loss` tensor with backward().
template <class T>
concept HasLoss = HasMetricInput<T> && requires(const T& t) {
  t.loss.backward();
};

/// The gradients and metric input of one train step's output (backward on out.loss times
/// `loss_scale`, or out.grads for a TrainOutput). Throws ValueError for a TrainOutput with
/// loss_scale != 1: its gradients were taken by the step, so the Learner cannot scale them.
template <class M, class Out>
std::pair<optim::GradientsParams, MetricInput> differentiate(const M& model, Out&& out,
                                                             double loss_scale = 1.0) {
  using O = std::remove_cvref_t<Out>;
  if constexpr (IsTrainOutput<O>::value) {
    static_assert(HasMetricInput<decltype(out.item)>,
                  "TrainOutput<Item>: Item needs a `MetricInput metric_input() const` member");
    if (loss_scale != 1.0) {
      ember::detail::fail<ValueError>(
          "Learner",
          "f16 mixed precision scales the loss before backward, but the train step "
          "returned a TrainOutput (gradients already taken): return the loss "
          "(ClassificationOutput, RegressionOutput) or use bf16");
    }
    MetricInput in = out.item.metric_input();
    return {std::move(out.grads), std::move(in)};
  } else {
    static_assert(HasLoss<O>,
                  "a train step must return a ClassificationOutput / RegressionOutput, a "
                  "TrainOutput, or a type with a `loss` tensor and `metric_input()`");
    auto grads = (loss_scale == 1.0 ? out.loss : out.loss.mul_scalar(loss_scale)).backward();
    MetricInput in = out.metric_input();
    return {optim::GradientsParams::from_grads(grads, model), std::move(in)};
  }
}

}  // namespace detail

}  // namespace ember::train
