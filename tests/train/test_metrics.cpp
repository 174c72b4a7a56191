// Metrics and the confusion matrix against hand-computed values.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "ember/cpu/cpu.hpp"
#include "ember/cpu/tensor.hpp"
#include "train_test_util.hpp"

namespace ember::train {
namespace {

// Four items, three classes. Predictions (argmax) [1, 0, 2, 2], targets [1, 2, 0, 1]:
//   item 0: correct; target rank 0
//   item 1: target 2 scores 0.2 behind 0.5 and 0.3: rank 2
//   item 2: target 0 scores 0.2; class 1 ties at a higher index (not above), class 2 above:
//           rank 1
//   item 3: target 1 scores 0.3; class 0 ties at a lower index (above), class 2 above: rank 2
MetricInput four_items(std::size_t begin = 0, std::size_t end = 4, std::int64_t width = 3) {
  const std::vector<std::vector<float>> scores = {
      {0.1f, 0.7f, 0.2f}, {0.5f, 0.3f, 0.2f}, {0.2f, 0.2f, 0.6f}, {0.3f, 0.3f, 0.4f}};
  const std::vector<std::int64_t> targets = {1, 2, 0, 1};
  std::vector<float> out;
  std::vector<std::int64_t> t;
  for (std::size_t i = begin; i < end; ++i) {
    for (std::int64_t c = 0; c < width; ++c) {
      out.push_back(c < 3 ? scores[i][static_cast<std::size_t>(c)] : -5.0f);
    }
    t.push_back(targets[i]);
  }
  const auto n = static_cast<std::int64_t>(end - begin);
  MetricInput in;
  in.batch_size = end - begin;
  in.output = TensorData(std::move(out), Shape{n, width});
  in.targets = TensorData(std::move(t), Shape{n});
  return in;
}

const MetricContext kCtx{1, 1, 0.1};

TEST(TrainMetrics, AccuracyAndTopK) {
  AccuracyMetric acc;
  EXPECT_EQ(acc.name(), "Accuracy");
  EXPECT_TRUE(std::isnan(acc.value()));
  EXPECT_DOUBLE_EQ(acc.update(four_items(), kCtx), 25.0);
  TopKAccuracyMetric top2(2), top3(3);
  EXPECT_EQ(top2.name(), "Top-2 Accuracy");
  EXPECT_DOUBLE_EQ(top2.update(four_items(), kCtx), 50.0);
  EXPECT_DOUBLE_EQ(top3.update(four_items(), kCtx), 100.0);
  // Two batches aggregate over all items: 1 correct of 4.
  AccuracyMetric two;
  EXPECT_DOUBLE_EQ(two.update(four_items(0, 1), kCtx), 100.0);
  EXPECT_DOUBLE_EQ(two.update(four_items(1, 4), kCtx), 0.0);
  EXPECT_DOUBLE_EQ(two.value(), 25.0);
  two.reset();
  EXPECT_TRUE(std::isnan(two.value()));
  EXPECT_THROW(TopKAccuracyMetric(0), ValueError);
}

TEST(TrainMetrics, AccuracyPadToken) {
  AccuracyMetric acc(std::int64_t{2});  // item 1 (target 2) is left out: 1 of 3
  EXPECT_NEAR(acc.update(four_items(), kCtx), 100.0 / 3.0, 1e-12);
}

TEST(TrainMetrics, PrecisionRecallF1Macro) {
  // Per class (TP, FP, FN): 0: (0, 1, 1), 1: (1, 0, 1), 2: (0, 2, 1).
  // P = (0, 1, 0), R = (0, 0.5, 0), F1 = (0, 2/3, 0).
  PrecisionMetric p;
  RecallMetric r;
  F1Metric f;
  EXPECT_EQ(p.name(), "Precision");
  EXPECT_NEAR(p.update(four_items(), kCtx), 100.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.update(four_items(), kCtx), 50.0 / 3.0, 1e-12);
  EXPECT_NEAR(f.update(four_items(), kCtx), 200.0 / 9.0, 1e-12);
  // A fourth class that is neither a target nor a prediction does not change macro values.
  PrecisionMetric p4;
  EXPECT_NEAR(p4.update(four_items(0, 4, 4), kCtx), 100.0 / 3.0, 1e-12);
}

TEST(TrainMetrics, PrecisionRecallF1Micro) {
  // Summed over classes: TP 1, FP 3, FN 3 -> P = R = F1 = 25 %.
  for (ClassScore s : {ClassScore::Precision, ClassScore::Recall, ClassScore::F1}) {
    ClassificationMetric m(s, ClassAverage::Micro);
    EXPECT_DOUBLE_EQ(m.update(four_items(), kCtx), 25.0) << m.name();
  }
  EXPECT_EQ(F1Metric(ClassAverage::Micro).name(), "F1 (micro)");
}

TEST(TrainMetrics, PrecisionEpochUsesAllCounts) {
  // Batch [0, 2): classes 0 (FP), 1 (TP), 2 (FN) -> P 1/3. Batch [2, 4): P 0.
  // The epoch value comes from the summed counts (1/3), not the mean of the batches (1/6).
  PrecisionMetric p;
  EXPECT_NEAR(p.update(four_items(0, 2), kCtx), 100.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(p.update(four_items(2, 4), kCtx), 0.0);
  EXPECT_NEAR(p.value(), 100.0 / 3.0, 1e-12);
  // Other widths are rejected once the epoch started.
  EXPECT_THROW(p.update(four_items(0, 2, 4), kCtx), ShapeError);
}

TEST(TrainMetrics, LossIsItemWeighted) {
  LossMetric loss;
  MetricInput a, b;
  a.batch_size = 2;
  a.loss = 1.0;
  b.batch_size = 6;
  b.loss = 2.0;
  EXPECT_DOUBLE_EQ(loss.update(a, kCtx), 1.0);
  EXPECT_DOUBLE_EQ(loss.update(b, kCtx), 2.0);
  EXPECT_DOUBLE_EQ(loss.value(), (2.0 * 1.0 + 6.0 * 2.0) / 8.0);
}

TEST(TrainMetrics, LearningRateMean) {
  LearningRateMetric lr;
  EXPECT_TRUE(lr.train_only());
  MetricInput in;
  in.batch_size = 2;
  lr.update(in, {1, 1, 0.1});
  lr.update(in, {1, 2, 0.2});
  EXPECT_NEAR(lr.value(), 0.15, 1e-15);
  // Validation batches (NaN rate) do not count.
  EXPECT_TRUE(std::isnan(lr.update(in, {1, 3, std::nan("")})));
  EXPECT_NEAR(lr.value(), 0.15, 1e-15);
}

TEST(TrainMetrics, ThroughputAndMemory) {
  ThroughputMetric tp;
  tp.reset();
  MetricInput in;
  in.batch_size = 10;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double v = tp.update(in, kCtx);
  EXPECT_GT(v, 0.0);
  EXPECT_LE(v, 10.0 / 0.02);
  EXPECT_DOUBLE_EQ(tp.value(), v);

  CpuMemoryMetric rss;
  EXPECT_GT(rss.update(in, kCtx), 1.0);  // MiB
  EXPECT_GT(resident_memory_bytes(), std::size_t{1} << 20);

  TensorMemoryMetric live;
  auto big = Tensor<Cpu, 1>::zeros({1 << 20});  // 4 MiB of f32
  EXPECT_GE(live.update(in, kCtx), 4.0);
  EXPECT_GE(live.value(), 4.0);
}

TEST(TrainMetrics, StateRoundTrip) {
  std::vector<std::unique_ptr<Metric>> ms;
  ms.push_back(std::make_unique<LossMetric>());
  ms.push_back(std::make_unique<AccuracyMetric>());
  ms.push_back(std::make_unique<TopKAccuracyMetric>(2));
  ms.push_back(std::make_unique<F1Metric>());
  ms.push_back(std::make_unique<LearningRateMetric>());
  ms.push_back(std::make_unique<CpuMemoryMetric>());
  MetricInput in = four_items(0, 2);
  in.loss = 0.75;
  for (auto& m : ms) {
    m->reset();
    m->update(in, kCtx);
    auto copy = m->clone();
    copy->reset();
    copy->load_state(nlohmann::json::parse(m->state().dump()));
    EXPECT_EQ(copy->state(), m->state()) << m->name();
    if (std::isnan(m->value())) {
      EXPECT_TRUE(std::isnan(copy->value())) << m->name();
    } else {
      EXPECT_DOUBLE_EQ(copy->value(), m->value()) << m->name();
    }
  }
  AccuracyMetric acc;
  EXPECT_THROW(acc.load_state({{"correct", 3}}), ValueError);
  EXPECT_THROW(acc.load_state({{"correct", 3}, {"total", 2}}), ValueError);
}

TEST(TrainMetrics, BadInputs) {
  LossMetric loss;
  MetricInput no_loss;
  no_loss.batch_size = 2;
  EXPECT_THROW(loss.update(no_loss, kCtx), ValueError);
  AccuracyMetric acc;
  EXPECT_THROW(acc.update(no_loss, kCtx), ValueError);  // no output
  MetricInput bad = four_items();
  bad.batch_size = 3;  // output has 4 rows
  EXPECT_THROW(acc.update(bad, kCtx), ShapeError);
  MetricInput out_of_range = four_items();
  out_of_range.targets = TensorData(std::vector<std::int64_t>{0, 1, 3, 0}, Shape{4});
  try {
    acc.update(out_of_range, kCtx);
    FAIL() << "no throw";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("target 3 of item 2"), std::string::npos) << e.what();
  }
}

TEST(TrainMetrics, ConfusionMatrix) {
  ConfusionMatrix m;
  m.add(four_items());
  ASSERT_EQ(m.num_classes(), 3u);
  EXPECT_EQ(m.total(), 4u);
  EXPECT_EQ(m.count(1, 1), 1u);
  EXPECT_EQ(m.count(2, 0), 1u);
  EXPECT_EQ(m.count(0, 2), 1u);
  EXPECT_EQ(m.count(1, 2), 1u);
  EXPECT_EQ(m.count(0, 0), 0u);
  EXPECT_DOUBLE_EQ(m.accuracy(), 0.25);
  EXPECT_DOUBLE_EQ(m.precision(1), 1.0);
  EXPECT_DOUBLE_EQ(m.recall(1), 0.5);
  EXPECT_NEAR(m.f1(1), 2.0 / 3.0, 1e-15);
  EXPECT_DOUBLE_EQ(m.precision(2), 0.0);
  EXPECT_EQ(m.support(1), 2u);
  EXPECT_NEAR(m.macro_precision(), 1.0 / 3.0, 1e-15);
  EXPECT_NEAR(m.macro_recall(), 0.5 / 3.0, 1e-15);
  EXPECT_EQ(m.csv({"a", "b,c", "d"}),
            "true\\predicted,a,\"b,c\",d\n"
            "a,0,0,1\n"
            "\"b,c\",0,1,1\n"
            "d,1,0,0\n");
  EXPECT_EQ(m.csv(), "true\\predicted,0,1,2\n0,0,0,1\n1,0,1,1\n2,1,0,0\n");
  EXPECT_THROW(m.csv({"a"}), ValueError);
  const std::string table = m.table({"shirt", "trouser", "bag"});
  EXPECT_NE(table.find("Accuracy: 25.00 % (4 items)"), std::string::npos) << table;
  EXPECT_NE(table.find("1 trouser"), std::string::npos) << table;
  EXPECT_NE(table.find("100.00 %"), std::string::npos) << table;  // precision of class 1
  EXPECT_THROW(m.add(four_items(0, 4, 4)), ShapeError);
  EXPECT_THROW(m.add(3, 0), ValueError);
}

TEST(TrainMetrics, SplitNames) {
  EXPECT_EQ(split_name(Split::Train), "train");
  EXPECT_EQ(parse_split("valid"), Split::Valid);
  EXPECT_THROW(parse_split("test"), ValueError);
}

}  // namespace
}  // namespace ember::train
