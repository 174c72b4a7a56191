// MSE, L1, Huber, SmoothL1, KL divergence and the margin losses (cosine embedding, margin
// ranking, triplet) against PyTorch (tests/fixtures/nn/loss.json), on Autodiff<Cpu> and
// Dispatch (cpu+autodiff). Tolerance: rel 1e-4, abs 1e-5 (kLossTol in loss_support.hpp).
#include <gtest/gtest.h>

#include "loss_support.hpp"

namespace ember::test {
namespace {

template <class B>
struct RegressionCases {
  static void run(LossCase<B>& L) {
    const std::string op = L.str("op");
    const auto r = L.reduction();
    if (op == "mse_loss" || op == "l1_loss" || op == "huber_loss" || op == "smooth_l1_loss" ||
        op == "kl_div") {
      with_rank<2, 3>(L.rank("x"), [&](auto rank) {
        constexpr std::size_t D = decltype(rank)::value;
        auto x = L.template input<D>("x");
        auto y = L.template input<D>("target");
        if (op == "mse_loss") {
          L.check_reduction([&] { return loss::mse_loss(x, y, r); },
                            [&] { return loss::mse_loss_no_reduction(x, y); });
        } else if (op == "l1_loss") {
          L.check_reduction([&] { return loss::l1_loss(x, y, r); },
                            [&] { return loss::l1_loss_no_reduction(x, y); });
        } else if (op == "huber_loss") {
          const double delta = L.num("delta");
          L.check_reduction([&] { return loss::huber_loss(x, y, r, delta); },
                            [&] { return loss::huber_loss_no_reduction(x, y, delta); });
        } else if (op == "smooth_l1_loss") {
          const double beta = L.num("beta");
          L.check_reduction([&] { return loss::smooth_l1_loss(x, y, r, beta); },
                            [&] { return loss::smooth_l1_loss_no_reduction(x, y, beta); });
        } else {
          const bool log_target = L.flag("log_target");
          L.check_reduction([&] { return loss::kl_div(x, y, r, log_target); },
                            [&] { return loss::kl_div_no_reduction(x, y, log_target); });
        }
      });
    } else if (op == "cosine_embedding_loss") {
      auto x1 = L.template input<2>("x1");
      auto x2 = L.template input<2>("x2");
      auto y = L.template constant<1, Int>("target");
      const loss::CosineEmbeddingOptions o{.margin = L.num("margin"), .reduction = r};
      L.check_reduction([&] { return loss::cosine_embedding_loss(x1, x2, y, o); },
                        [&] { return loss::cosine_embedding_loss_no_reduction(x1, x2, y, o); });
    } else if (op == "margin_ranking_loss") {
      auto x1 = L.template input<1>("x1");
      auto x2 = L.template input<1>("x2");
      auto y = L.template input<1>("target");
      const loss::MarginRankingOptions o{.margin = L.num("margin"), .reduction = r};
      L.check_reduction([&] { return loss::margin_ranking_loss(x1, x2, y, o); },
                        [&] { return loss::margin_ranking_loss_no_reduction(x1, x2, y, o); });
    } else if (op == "triplet_margin_loss") {
      auto a = L.template input<2>("anchor");
      auto p = L.template input<2>("positive");
      auto n = L.template input<2>("negative");
      const loss::TripletMarginOptions o{.margin = L.num("margin"),
                                         .p = L.num("p"),
                                         .eps = L.num("eps"),
                                         .swap = L.flag("swap"),
                                         .reduction = r};
      L.check_reduction([&] { return loss::triplet_margin_loss(a, p, n, o); },
                        [&] { return loss::triplet_margin_loss_no_reduction(a, p, n, o); });
    } else {
      FAIL() << "unknown op " << op;
    }
  }
};

const bool kRegistered = register_loss_cases<RegressionCases>(
    "LossRegression",
    {"mse_", "l1_", "huber_", "smooth_l1_", "kl_div", "cosine_", "margin_", "triplet_"});

TEST(LossRegression, FixtureHasTheCases) {
  EXPECT_TRUE(kRegistered);
  EXPECT_EQ(fixture_cases("nn/loss", "mse_").size(), 3u);
  EXPECT_EQ(fixture_cases("nn/loss", "l1_").size(), 3u);
  EXPECT_EQ(fixture_cases("nn/loss", "huber_").size(), 6u);
  EXPECT_EQ(fixture_cases("nn/loss", "smooth_l1_").size(), 9u);
  EXPECT_EQ(fixture_cases("nn/loss", "kl_div").size(), 9u);
  EXPECT_EQ(fixture_cases("nn/loss", "cosine_").size(), 6u);
  EXPECT_EQ(fixture_cases("nn/loss", "margin_").size(), 3u);
  EXPECT_EQ(fixture_cases("nn/loss", "triplet_").size(), 12u);
}

}  // namespace
}  // namespace ember::test
