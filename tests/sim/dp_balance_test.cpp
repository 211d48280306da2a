// verl's balance of a train batch over data-parallel groups (sim/dp_balance),
// on cases worked by hand: Karmarkar-Karp's partitions, a group taking its
// GPUs' partitions in order, mini-batches cut in order, calls balanced apart.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "sim/dp_balance.hpp"
#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"
#include "sim/train_phases.hpp"

namespace april::sim {
namespace {

using Rows = std::vector<std::size_t>;

// Sorted: 1..8 in chunks of two, every spread 1; the largest chunks merge
// first, (8, 7) with (6, 5) into {8+5, 7+6}, then (4, 3) with (2, 1) into
// {4+1, 3+2}, then those two into 18 and 18.
TEST(BalancedPartitions, KarmarkarKarpOnEightRows) {
  const auto parts = balanced_partitions({8, 7, 6, 5, 4, 3, 2, 1}, 2);
  EXPECT_EQ(parts, (std::vector<Rows>{{1, 2, 4, 7}, {0, 3, 5, 6}}));
}

// A count that k does not divide is padded with empty rows, which do not show.
TEST(BalancedPartitions, PaddingRowsAreDropped) {
  const auto parts = balanced_partitions({5, 4, 3}, 2);
  ASSERT_EQ(parts.size(), 2U);
  EXPECT_EQ(parts[0].size() + parts[1].size(), 3U);
  EXPECT_EQ(parts, (std::vector<Rows>{{1, 2}, {0}}));  // 4 + 3 against 5 + the empty row
}

// {9, 1, 1, 1} over two GPUs: partitions {9, 1} and {1, 1}. Two mini-batches:
// 9 against 1 (mean 5), then 1 against 1: (9 + 1) / (5 + 1).
TEST(VerlDpImbalance, TwoGroupsTwoMiniBatches) {
  const auto imb = verl_dp_imbalance({9, 1, 1, 1}, DpLayout{2, 1, 1, 2}, 1.0, 0.0);
  EXPECT_DOUBLE_EQ(imb.update, 10.0 / 6.0);
  EXPECT_DOUBLE_EQ(imb.forward, 10.0 / 6.0);
}

// {9, 1, 9, 1}: balanced partitions {1, 9} and {9, 1} (10 each), but each
// mini-batch is half of one: 1 against 9, then 9 against 1.
TEST(VerlDpImbalance, BalancedPartitionsCanMakeUnbalancedMiniBatches) {
  const auto imb = verl_dp_imbalance({9, 1, 9, 1}, DpLayout{2, 1, 1, 2}, 1.0, 0.0);
  EXPECT_DOUBLE_EQ(imb.update, 18.0 / 10.0);
  EXPECT_DOUBLE_EQ(imb.forward, 1.0);
}

// The same rows twice in two calls of one mini-batch each (verl's fully-async
// trainer): each mini-batch is a whole balanced partition.
TEST(VerlDpImbalance, OneMiniBatchPerCallIsBalanced) {
  const auto imb = verl_dp_imbalance({9, 1, 9, 1, 9, 1, 9, 1}, DpLayout{2, 1, 2, 2}, 1.0, 0.0);
  EXPECT_DOUBLE_EQ(imb.update, 1.0);
  EXPECT_DOUBLE_EQ(imb.forward, 1.0);
}

// Four GPUs, groups of two: the partitions are the rows themselves, largest
// first; group 0 takes 4 and 3, group 1 takes 2 and 1. Mini-batches 4 vs 2,
// then 3 vs 1.
TEST(VerlDpImbalance, AGroupTakesItsGpusPartitionsInOrder) {
  const auto imb = verl_dp_imbalance({4, 3, 2, 1}, DpLayout{4, 2, 1, 2}, 1.0, 0.0);
  EXPECT_DOUBLE_EQ(imb.update, 7.0 / 5.0);
  EXPECT_DOUBLE_EQ(imb.forward, 7.0 / 5.0);
}

// Work counts attention's pairs too: rows of 2 and 1 tokens weigh 2 + 3 and 1 + 1.
TEST(VerlDpImbalance, AttentionPairsWeighLongRows) {
  const auto imb = verl_dp_imbalance({2, 1}, DpLayout{2, 1, 1, 1}, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(imb.update, 5.0 / 3.5);
}

// In the phase model: equal rows fall evenly (the same times as `even`), and
// unequal ones slow the update and the old-logprob forward by their factors.
TEST(VerlDpImbalance, ScalesTheUpdateAndTheForwardInTrainPhases) {
  const auto model = resolve_model("qwen2.5-math-7b");
  const Accelerator& hw = builtin_accelerators()[1];
  TrainerSetup s;
  s.framework = TrainFramework::Fsdp;
  s.gpus = 8;
  s.ppo_mini_batches = 2;
  TrainBatchShape even{8, 8000, 1000, 8 * 1000.0 * 1001.0 / 2.0};
  const auto base = train_phase_times(model, hw, s, even);
  s.balance = DpBalance::Verl;
  even.sample_tok.assign(8, 1000);
  const auto same = train_phase_times(model, hw, s, even);
  EXPECT_DOUBLE_EQ(same.update_s, base.update_s);
  EXPECT_DOUBLE_EQ(same.old_logprob_s, base.old_logprob_s);
  TrainBatchShape skewed = even;
  skewed.sample_tok = {1900, 100, 1000, 1000, 1000, 1000, 1000, 1000};  // the same tokens, unevenly
  const auto slow = train_phase_times(model, hw, s, skewed);
  const auto imb =
      verl_dp_imbalance(skewed.sample_tok, DpLayout{8, 1, 1, 2}, model.linear_flops_per_token(), model.attention_flops_per_token(1, false));
  EXPECT_GT(imb.update, 1.0);
  EXPECT_NEAR(slow.update_s / base.update_s, imb.update, 0.02 * imb.update);  // attention pairs differ a little
  EXPECT_NEAR(slow.old_logprob_s / base.old_logprob_s, imb.forward, 0.02 * imb.forward);
}

}  // namespace
}  // namespace april::sim
