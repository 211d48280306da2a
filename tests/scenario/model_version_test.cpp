// Guards scenario::kModelVersion: stored runs are reused only under the same
// model version, so any change to simulated results must bump it. This test
// digests the integer results (event fingerprint, token counts, times in ns)
// of pinned runs and compares them with the digest pinned for the current
// version; it fails when results change and the version does not.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "base/hash.hpp"
#include "scenario/model_version.hpp"
#include "test_support.hpp"

namespace april {
namespace {

std::string results_digest() {
  struct Pinned {
    std::string scenario;
    std::vector<std::string> sets;
    std::vector<std::string> policies = {"sync", "april", "sorted"};
  };
  const std::vector<Pinned> runs = {
      {"handcheck", {"steps=6"}},
      {"handcheck", {"steps=6", "filter.dynamic_sampling=true", "rollout_batch_size=3"}},
      {"handcheck", {"steps=6", "cluster.gpus=2", "cluster.engines=2", "engine.max_running=3"}},
      {"default", {"steps=4"}},
      {"default", {"steps=3", "engine.kv_capacity_tok=60000", "max_response_len=8000", "filter.dynamic_sampling=true"}},
      // Since model version 10: a run whose KV pool comes from the accelerator's memory and preempts.
      {"default", {"steps=3", "rollout_batch_size=128"}},
      // And a two-node sync as frameworks implement it (its per-transfer cost grows with the nodes).
      {"default", {"steps=2", "cluster.gpus=16", "sync.time_model=per_tensor"}, {"sync"}},
      // Since model version 5: overlapped runs, a sync that begins as an iteration ends.
      {"handcheck",
       {"steps=6", "cluster.mode=disaggregated", "cluster.gpus=2", "train.time_model=linear", "train.linear_base_s=0.003",
        "sync.time_model=fixed", "sync.latency_s=0.002"},
       {"sync", "one_step_off", "async"}},
  };
  base::Fnv1a h;
  for (const auto& r : runs) {
    for (const auto& policy : r.policies) {
      testing::Fixture f(r.scenario, r.sets);
      const auto result = scenario::simulate(f.config, f.registry, policy);
      h.add_u64(result.summary.fingerprint);
      for (const auto& m : result.steps) {
        for (double t : {m.rollout_time_s, m.train_time_s, m.sync_time_s}) h.add_u64(static_cast<std::uint64_t>(std::llround(t * 1e9)));
        for (std::int64_t v :
             {m.tokens_generated, m.tokens_trained, m.tokens_offpolicy, m.tokens_wasted, m.staleness_max, m.buffer_groups, m.buffer_tokens,
              m.groups_submitted, m.groups_aborted, m.groups_rejected, m.samples_truncated, m.preemptions, m.tokens_carried}) {
          h.add_u64(static_cast<std::uint64_t>(v));
        }
      }
    }
  }
  return fmt::format("{:016x}", h.value());
}

// Model version -> digest of the pinned runs' results under it.
const std::map<std::int64_t, std::string> kPinnedDigests = {
    {1, "c4da17bea86271e0"},
    {2, "2c8d0dfa56546b22"},   // 1 plus tokens_carried in the digest
    {3, "c119ea7ab49144e4"},   // aborts take time
    {4, "c119ea7ab49144e4"},   // masked tokens apart from wasted ones: no pinned run masks
    {5, "585b5d6a88085ee5"},   // a sync stops an engine at the boundary of that instant; overlapped runs pinned too
    {6, "0c3b6a408fc81afe"},   // models from config.json: exact counts, attention FLOPs, TP all-reduces
    {7, "40f9044bdad27244"},   // train steps in phases (old-logprob, update, Megatron/FSDP, optimizer, offload)
    {8, "40f9044bdad27244"},   // FSDP as verl runs it (fp32 reduce-scatter, HSDP, Ulysses): the pinned runs use Megatron
    {9, "147d223c081f6084"},   // the fingerprint tells engines apart (times and tokens as in 8)
    {10, "95f3e946b245edbe"},  // memory as the driver reports it, per-transfer cost growing with the nodes;
                               // a KV-bound default run and a two-node per_tensor sync pinned too
    {11, "6bda7b0f49969bec"},  // defaults fitted on component benchmarks; trainer recompute, TP all-reduces, FSDP under TP/EP
    {12, "5d5b5d46370b56a8"},  // the trainer's memory-bound elementwise work (train.activation_passes)
    {13, "1efa8e291413caee"},  // the trainer refitted with torchtitan's H100 rows on their stated HBM2e hosts
    {14, "3e74ca00c7d0b866"},  // each framework's trainer profile (FSDP2, Megatron-Core) fitted on its own benchmarks
    {15, "3d8e081d17380228"},  // the engine refitted with the H20 rows; the H20 its own HBM efficiency
    {16, "5e60469b03d8370b"},  // the routed experts read at engine.moe_hbm_share of the bandwidth; the engine refitted
};

TEST(ModelVersion, ChangesWheneverSimulatedResultsChange) {
  const std::string digest = results_digest();
  const auto it = kPinnedDigests.find(scenario::kModelVersion);
  ASSERT_NE(it, kPinnedDigests.end()) << "no digest pinned for model version " << scenario::kModelVersion
                                      << "; pin this one in tests/scenario/model_version_test.cpp: " << digest;
  EXPECT_EQ(digest, it->second) << "simulated results changed but scenario::kModelVersion did not: bump it in "
                                   "scenario/model_version.hpp (stored runs would otherwise be reused with stale results) "
                                   "and pin the new digest "
                                << digest;
}

}  // namespace
}  // namespace april
