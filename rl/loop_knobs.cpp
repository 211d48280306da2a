#include "rl/loop_knobs.hpp"

#include "base/run_keys.hpp"
#include "sim/engine_knobs.hpp"

namespace april::rl {

void declare_loop_knobs(base::ConfigSchema& s) {
  using base::KnobType;
  s.add({base::keys::kRolloutBatchSize.name, KnobType::Int, std::int64_t{32}, "groups", "B: complete groups per training batch",
         base::in_range(1, 1 << 20)});
  s.add({base::keys::kMaxResponseLen.name, KnobType::Int, std::int64_t{16384}, "tok",
         "cap on a sample's response; longer ones are truncated", base::in_range(1, 1 << 24)});
  s.add({base::keys::kDynamicSampling.name,
         KnobType::Bool,
         false,
         "",
         "reject groups whose samples are all correct or all wrong (DAPO); their tokens are wasted",
         {}});
  s.add({base::keys::kKeepWhenInsufficient.name,
         KnobType::Bool,
         false,
         "",
         "slime's fallback: keep a rejected group when dropping it would leave fewer than B candidates, "
         "rather than launch another wave",
         {}});
}

LoopOptions loop_options(const base::Config& c) {
  LoopOptions lo;
  lo.batch_size = c.get(base::keys::kRolloutBatchSize);
  lo.max_response_len = static_cast<std::int32_t>(c.get(base::keys::kMaxResponseLen));
  lo.dynamic_sampling_filter = c.get(base::keys::kDynamicSampling);
  lo.keep_rejected_when_insufficient = c.get(base::keys::kKeepWhenInsufficient);
  lo.gpus = c.get(sim::keys::kClusterGpus);  // declared with the cluster (sim/engine_knobs)
  return lo;
}

std::unique_ptr<RlLoop> make_loop(const base::Config& c, Backend& backend, policies::Policy& policy, base::WorkloadSource& workload,
                                  std::int64_t gpus) {
  LoopOptions lo = loop_options(c);
  lo.gpus = gpus;
  return std::make_unique<RlLoop>(backend, policy, workload, lo);
}

}  // namespace april::rl
