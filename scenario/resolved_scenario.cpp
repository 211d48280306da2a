#include "scenario/resolved_scenario.hpp"

#include "sim/engine_knobs.hpp"
#include "sim/train_sync_knobs.hpp"

namespace april::scenario {

ResolvedScenario resolve_scenario(const base::Config& c) {
  ResolvedScenario r;
  r.shape = sim::cluster_shape(c);
  // train.hardware is checked whatever the train time model reads.
  (void)sim::trainer_accelerator(c);
  r.sync = sim::weight_sync(c);
  r.kv_capacity_tok = sim::kv_capacity_tok(c);
  return r;
}

}  // namespace april::scenario
