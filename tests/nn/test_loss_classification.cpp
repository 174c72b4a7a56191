// Cross-entropy, NLL and binary cross-entropy (functional forms and modules) against
// PyTorch (tests/fixtures/nn/loss.json), on Autodiff<Cpu> and Dispatch (cpu+autodiff).
// Tolerance: rel 1e-4, abs 1e-5 (kLossTol in loss_support.hpp).
#include <gtest/gtest.h>

#include "loss_support.hpp"

namespace ember::test {
namespace {

template <class B>
struct ClassificationCases {
  static void run(LossCase<B>& L) {
    const std::string op = L.str("op");
    const auto r = L.c.has("reduction") ? L.reduction() : loss::Reduction::Mean;
    if (op == "cross_entropy") {
      with_rank<2, 4>(L.rank("x"), [&](auto rank) {
        constexpr std::size_t D = decltype(rank)::value;
        auto x = L.template input<D>("x");
        auto t = L.template constant<D - 1, Int>("target");
        loss::CrossEntropyOptions<B> o{.weight = L.template optional<1>("weight"), .reduction = r};
        if (L.c.has("ignore_index"))
          o.ignore_index = L.c.template param<std::int64_t>("ignore_index");
        if (L.c.has("label_smoothing")) o.label_smoothing = L.num("label_smoothing");
        L.check_reduction([&] { return loss::cross_entropy(x, t, o); },
                          [&] { return loss::cross_entropy_no_reduction(x, t, o); });
      });
    } else if (op == "cross_entropy_prob") {
      with_rank<2, 3>(L.rank("x"), [&](auto rank) {
        constexpr std::size_t D = decltype(rank)::value;
        auto x = L.template input<D>("x");
        auto t = L.template input<D>("target");
        loss::CrossEntropyOptions<B> o{.weight = L.template optional<1>("weight"), .reduction = r};
        if (L.c.has("label_smoothing")) o.label_smoothing = L.num("label_smoothing");
        L.check_reduction([&] { return loss::cross_entropy(x, t, o); },
                          [&] { return loss::cross_entropy_no_reduction(x, t, o); });
      });
    } else if (op == "nll_loss") {
      with_rank<2, 3>(L.rank("x"), [&](auto rank) {
        constexpr std::size_t D = decltype(rank)::value;
        auto x = L.template input<D>("x");
        auto t = L.template constant<D - 1, Int>("target");
        loss::NllOptions<B> o{.weight = L.template optional<1>("weight"), .reduction = r};
        if (L.c.has("ignore_index"))
          o.ignore_index = L.c.template param<std::int64_t>("ignore_index");
        L.check_reduction([&] { return loss::nll_loss(x, t, o); },
                          [&] { return loss::nll_loss_no_reduction(x, t, o); });
      });
    } else if (op == "binary_cross_entropy") {
      with_rank<2, 3>(L.rank("x"), [&](auto rank) {
        constexpr std::size_t D = decltype(rank)::value;
        auto x = L.template input<D>("x");
        auto t = L.template input<D>("target");
        loss::BinaryCrossEntropyOptions<B, D> o{.weight = L.template optional<D>("weight"),
                                                .reduction = r};
        L.check_reduction([&] { return loss::binary_cross_entropy(x, t, o); },
                          [&] { return loss::binary_cross_entropy_no_reduction(x, t, o); });
      });
    } else if (op == "bce_with_logits") {
      with_rank<2, 3>(L.rank("x"), [&](auto rank) {
        constexpr std::size_t D = decltype(rank)::value;
        auto x = L.template input<D>("x");
        auto t = L.template input<D>("target");
        loss::BceWithLogitsOptions<B, D> o{.weight = L.template optional<D>("weight"),
                                           .pos_weight = L.template optional<1>("pos_weight"),
                                           .reduction = r};
        L.check_reduction(
            [&] { return loss::binary_cross_entropy_with_logits(x, t, o); },
            [&] { return loss::binary_cross_entropy_with_logits_no_reduction(x, t, o); });
      });
    } else if (op == "module_cross_entropy") {
      auto x = L.template input<2>("x");
      auto t = L.template constant<1, Int>("target");
      std::optional<std::vector<double>> weights;
      if (L.c.has("weight")) weights = L.c.tensor("weight").template to_vec<double>();
      const nn::CrossEntropyLossConfig cfg{
          .pad_tokens = L.c.at("pad_tokens").template get<std::vector<std::int64_t>>(),
          .weights = weights,
          .smoothing = L.num("smoothing"),
          .logits = L.flag("logits")};
      L.check(cfg.template init<B>(L.dev).forward(x, t));
    } else if (op == "module_bce") {
      with_rank<1, 2>(L.rank("x"), [&](auto rank) {
        constexpr std::size_t D = decltype(rank)::value;
        auto x = L.template input<D>("x");
        auto t = L.template constant<D, Int>("target");
        const nn::BinaryCrossEntropyLossConfig cfg{
            .weights = L.c.tensor("weight").template to_vec<double>(),
            .smoothing = L.num("smoothing"),
            .logits = L.flag("logits")};
        L.check(cfg.template init<B>(L.dev).forward(x, t));
      });
    } else {
      FAIL() << "unknown op " << op;
    }
  }
};

const bool kRegistered = register_loss_cases<ClassificationCases>(
    "LossClassification", {"ce_", "nll_", "bce_", "module_"});

TEST(LossClassification, FixtureHasTheCases) {
  EXPECT_TRUE(kRegistered);
  EXPECT_EQ(fixture_cases("nn/loss", "ce_").size(), 25u);
  EXPECT_EQ(fixture_cases("nn/loss", "nll_").size(), 6u);
  EXPECT_EQ(fixture_cases("nn/loss", "bce_").size(), 14u);
  EXPECT_EQ(fixture_cases("nn/loss", "module_").size(), 5u);
}

}  // namespace
}  // namespace ember::test
