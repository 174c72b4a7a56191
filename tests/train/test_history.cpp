// Metric history, log files, summary, best epoch and early stopping.
#include <gtest/gtest.h>

#include <cmath>

#include "train_test_util.hpp"

namespace ember::train {
namespace {

using testing::slurp;
using testing::TempDir;

MetricHistory sample_history() {
  MetricHistory h;
  h.declare(Split::Train, {"Loss", "", Direction::Lowest});
  h.declare(Split::Train, {"Accuracy", "%", Direction::Highest});
  h.declare(Split::Valid, {"Loss", "", Direction::Lowest});
  const double train_loss[] = {0.9, 0.5, 0.5};
  const double train_acc[] = {60.0, 75.5, 80.25};
  const double valid_loss[] = {0.8, 0.6, 0.7};
  for (std::size_t e = 1; e <= 3; ++e) {
    h.record(Split::Train, "Loss", e, train_loss[e - 1]);
    h.record(Split::Train, "Accuracy", e, train_acc[e - 1]);
    h.record(Split::Valid, "Loss", e, valid_loss[e - 1]);
  }
  return h;
}

TEST(TrainHistory, JsonLines) {
  const MetricHistory h = sample_history();
  EXPECT_EQ(h.jsonl(Split::Train),
            "{\"epoch\":1,\"metric\":\"Loss\",\"value\":0.9}\n"
            "{\"epoch\":1,\"metric\":\"Accuracy\",\"value\":60.0}\n"
            "{\"epoch\":2,\"metric\":\"Loss\",\"value\":0.5}\n"
            "{\"epoch\":2,\"metric\":\"Accuracy\",\"value\":75.5}\n"
            "{\"epoch\":3,\"metric\":\"Loss\",\"value\":0.5}\n"
            "{\"epoch\":3,\"metric\":\"Accuracy\",\"value\":80.25}\n");
  MetricHistory nan;
  nan.record(Split::Valid, "Loss", 1, std::nan(""));
  EXPECT_EQ(nan.jsonl(Split::Valid), "{\"epoch\":1,\"metric\":\"Loss\",\"value\":null}\n");
  EXPECT_EQ(nan.jsonl(Split::Train), "");
  EXPECT_THROW(nan.record(Split::Train, "Loss", 0, 1.0), ValueError);
}

TEST(TrainHistory, LogFilesRoundTrip) {
  TempDir dir("logs");
  const MetricHistory h = sample_history();
  h.write_logs(dir.path());
  EXPECT_EQ(slurp(dir.path() / "train.jsonl"), h.jsonl(Split::Train));
  EXPECT_EQ(slurp(dir.path() / "valid.jsonl"), h.jsonl(Split::Valid));
  const MetricHistory back = MetricHistory::read_logs(dir.path());
  EXPECT_EQ(back.jsonl(Split::Train), h.jsonl(Split::Train));
  EXPECT_EQ(back.jsonl(Split::Valid), h.jsonl(Split::Valid));
  // Built-in names get their unit and direction back.
  EXPECT_EQ(back.info(Split::Train, "Accuracy")->unit, "%");
  EXPECT_EQ(back.info(Split::Train, "Accuracy")->direction, Direction::Highest);
  // Only the finished files are there: no temporaries.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 2u);

  std::ofstream(dir.path() / "valid.jsonl", std::ios::app) << "{\"epoch\":4,\"metr";
  try {
    MetricHistory::read_logs(dir.path());
    FAIL() << "no throw";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("valid.jsonl:4"), std::string::npos) << e.what();
  }
}

TEST(TrainHistory, JsonRoundTripAndTruncate) {
  MetricHistory h = sample_history();
  h.record(Split::Valid, "Loss", 4, std::nan(""));
  MetricHistory back = MetricHistory::from_json(nlohmann::json::parse(h.to_json().dump()));
  EXPECT_EQ(back.to_json(), h.to_json());
  EXPECT_EQ(back.last_epoch(), 4u);
  EXPECT_TRUE(std::isnan(*back.value(Split::Valid, "Loss", 4)));
  back.truncate(2);
  EXPECT_EQ(back.last_epoch(), 2u);
  EXPECT_FALSE(back.value(Split::Train, "Loss", 3));
  EXPECT_THROW(MetricHistory::from_json({{"train", 3}}), ValueError);
}

TEST(TrainHistory, BestEpoch) {
  const MetricHistory h = sample_history();
  EXPECT_EQ(best_epoch(h, Split::Valid, "Loss", Direction::Lowest), 2u);
  EXPECT_EQ(best_epoch(h, Split::Train, "Loss", Direction::Lowest), 2u);  // tie: earliest
  EXPECT_EQ(best_epoch(h, Split::Train, "Accuracy", Direction::Highest), 3u);
  EXPECT_FALSE(best_epoch(h, Split::Valid, "Accuracy", Direction::Highest));
}

MetricHistory series(const std::vector<double>& v) {
  MetricHistory h;
  for (std::size_t i = 0; i < v.size(); ++i) h.record(Split::Valid, "Loss", i + 1, v[i]);
  return h;
}

/// The first epoch after which should_stop_early fires, 0 if none.
std::size_t stop_epoch(const std::vector<double>& v, EarlyStoppingConfig c, Direction d) {
  for (std::size_t n = 1; n <= v.size(); ++n) {
    if (should_stop_early(series({v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n)}), c, d)) {
      return n;
    }
  }
  return 0;
}

TEST(TrainHistory, EarlyStopping) {
  EarlyStoppingConfig c{.metric = "Loss", .split = Split::Valid, .patience = 2};
  // Best at epoch 2; epochs 3 and 4 do not improve: stop after 4.
  EXPECT_EQ(stop_epoch({1.0, 0.9, 0.95, 0.91, 0.5}, c, Direction::Lowest), 4u);
  // Keeps improving: never.
  EXPECT_EQ(stop_epoch({1.0, 0.9, 0.8, 0.7}, c, Direction::Lowest), 0u);
  // min_delta 0.05: 0.96 is no improvement on 1.0, 0.90 is; then 0.89 and 0.88 are not.
  c.min_delta = 0.05;
  EXPECT_EQ(stop_epoch({1.0, 0.96, 0.90, 0.89, 0.88}, c, Direction::Lowest), 5u);
  // Highest: accuracy-like values.
  c.min_delta = 0.0;
  c.patience = 1;
  EXPECT_EQ(stop_epoch({50.0, 60.0, 59.0}, c, Direction::Highest), 3u);
  // NaN never improves.
  EXPECT_EQ(stop_epoch({std::nan(""), 1.0, std::nan("")}, c, Direction::Lowest), 1u);
  c.patience = 0;
  EXPECT_THROW(should_stop_early(series({1.0}), c, Direction::Lowest), ValueError);
  c.patience = 1;
  c.min_delta = -1.0;
  EXPECT_THROW(should_stop_early(series({1.0}), c, Direction::Lowest), ValueError);
}

TEST(TrainHistory, Summary) {
  MetricHistory h = sample_history();
  h.record(Split::Valid, "Loss", 4, std::nan(""));
  const Summary s = Summary::from_history(h);
  EXPECT_EQ(s.epochs, 4u);
  ASSERT_EQ(s.rows.size(), 3u);
  const SummaryRow& tl = s.rows[0];
  EXPECT_EQ(tl.metric, "Loss");
  EXPECT_EQ(tl.split, Split::Train);
  EXPECT_DOUBLE_EQ(tl.min, 0.5);
  EXPECT_EQ(tl.min_epoch, 2u);  // tie with epoch 3: the earliest
  EXPECT_DOUBLE_EQ(tl.max, 0.9);
  EXPECT_EQ(tl.max_epoch, 1u);
  const SummaryRow& vl = s.rows[2];
  EXPECT_EQ(vl.split, Split::Valid);
  EXPECT_EQ(vl.min_epoch, 2u);
  EXPECT_EQ(vl.last_epoch, 3u);  // the NaN of epoch 4 is ignored
  EXPECT_EQ(s.table(),
            "| Split | Metric   |    Min. | Epoch |    Max. | Epoch |\n"
            "|-------|----------|---------|-------|---------|-------|\n"
            "| Train | Loss     |  0.5000 |     2 |  0.9000 |     1 |\n"
            "| Train | Accuracy | 60.00 % |     1 | 80.25 % |     3 |\n"
            "| Valid | Loss     |  0.6000 |     2 |  0.8000 |     1 |\n");
  TempDir dir("summary");
  s.save(dir.path());
  EXPECT_EQ(slurp(dir.path() / "summary.txt"), s.table());
  const Summary back = Summary::load(dir.path());
  EXPECT_EQ(back.to_json(), s.to_json());
  // Without summary.json the logs are summarised.
  TempDir logs("summary-logs");
  h.write_logs(logs.path());
  EXPECT_EQ(Summary::load(logs.path()).table(), s.table());
  TempDir empty("summary-empty");
  EXPECT_THROW(Summary::load(empty.path()), IoError);
}

TEST(TrainHistory, FormatValue) {
  EXPECT_EQ(format_value(0.31214), "0.3121");
  EXPECT_EQ(format_value(85.2, "%"), "85.20 %");
  EXPECT_EQ(format_value(1234.4, "items/s"), "1234 items/s");
  EXPECT_EQ(format_value(1e-3), "1.000e-03");
  EXPECT_EQ(format_value(0.0), "0");
  EXPECT_EQ(format_value(std::nan("")), "-");
  EXPECT_EQ(format_value(12.34, "MiB"), "12.3 MiB");
  EXPECT_EQ(format_duration(3723), "1h02m03s");
  EXPECT_EQ(format_duration(65.4), "1m05s");
  EXPECT_EQ(format_duration(std::nan("")), "?");
}

}  // namespace
}  // namespace ember::train
