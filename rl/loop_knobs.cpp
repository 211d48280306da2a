#include "rl/loop_knobs.hpp"

namespace april::rl {

void declare_loop_knobs(base::ConfigSchema& s) {
  using base::KnobType;
  s.add({"rollout_batch_size", KnobType::Int, std::int64_t{32}, "groups", "B: complete groups per training batch", base::in_range(1, 1 << 20)});
  s.add({"max_response_len", KnobType::Int, std::int64_t{16384}, "tok", "cap on a sample's response; longer ones are truncated",
         base::in_range(1, 1 << 24)});
  s.add({"filter.dynamic_sampling", KnobType::Bool, false, "",
         "reject groups whose samples are all correct or all wrong (DAPO); their tokens are wasted", {}});
  s.add({"filter.keep_when_insufficient", KnobType::Bool, false, "",
         "slime's fallback: keep a rejected group when dropping it would leave fewer than B candidates, "
         "rather than launch another wave", {}});
}

LoopOptions loop_options(const base::Config& c) {
  LoopOptions lo;
  lo.batch_size = c.get_int("rollout_batch_size");
  lo.max_response_len = static_cast<std::int32_t>(c.get_int("max_response_len"));
  lo.dynamic_sampling_filter = c.get_bool("filter.dynamic_sampling");
  lo.keep_rejected_when_insufficient = c.get_bool("filter.keep_when_insufficient");
  lo.gpus = c.get_int("cluster.gpus");  // declared with the cluster (sim/engine_knobs)
  return lo;
}

std::unique_ptr<RlLoop> make_loop(const base::Config& c, Backend& backend, policies::Policy& policy, base::WorkloadSource& workload,
                                  std::int64_t gpus) {
  LoopOptions lo = loop_options(c);
  lo.gpus = gpus;
  return std::make_unique<RlLoop>(backend, policy, workload, lo);
}

}  // namespace april::rl
