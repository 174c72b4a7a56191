// CTC loss against PyTorch (tests/fixtures/nn/loss.json), on Autodiff<Cpu> and Dispatch
// (cpu+autodiff): forward values, gradients wrt log_probs (PyTorch's convention, see
// ember/nn/loss/ctc.hpp) and wrt logits through log_softmax, padded and concatenated
// targets, blank = C - 1, an empty target, infinite losses and zero_infinity.
// Tolerance: rel 1e-4, abs 1e-5 (kLossTol in loss_support.hpp).
#include <gtest/gtest.h>

#include "ember/tensor/activation.hpp"
#include "loss_support.hpp"

namespace ember::test {
namespace {

template <class B>
struct CtcCases {
  static void run(LossCase<B>& L) {
    const std::string op = L.str("op");
    const loss::CtcOptions o{.blank = L.c.template param<std::int64_t>("blank"),
                             .reduction = L.reduction(),
                             .zero_infinity = L.flag("zero_infinity")};
    auto in_len = L.template constant<1, Int>("input_lengths");
    auto tgt_len = L.template constant<1, Int>("target_lengths");
    auto lp = op == "ctc_logits" ? activation::log_softmax(L.template input<3>("logits"), 2)
                                 : L.template input<3>("log_probs");
    with_rank<1, 2>(L.rank("targets"), [&](auto rank) {
      constexpr std::size_t DT = decltype(rank)::value;
      auto t = L.template constant<DT, Int>("targets");
      L.check_reduction([&] { return loss::ctc_loss(lp, t, in_len, tgt_len, o); },
                        [&] { return loss::ctc_loss_no_reduction(lp, t, in_len, tgt_len, o); });
    });
  }
};

const bool kRegistered = register_loss_cases<CtcCases>("LossCtc", {"ctc_"});

TEST(LossCtc, FixtureHasTheCases) {
  EXPECT_TRUE(kRegistered);
  EXPECT_EQ(fixture_cases("nn/loss", "ctc_").size(), 16u);
}

}  // namespace
}  // namespace ember::test
