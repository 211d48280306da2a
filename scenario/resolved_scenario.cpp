#include "scenario/resolved_scenario.hpp"

#include <fmt/format.h>

#include "sim/engine_knobs.hpp"
#include "sim/train_sync_knobs.hpp"

namespace april::scenario {

namespace {

// An engine splits the attention heads over its TP ranks: vLLM refuses a
// size that does not divide the query heads ("Total number of attention heads
// must be divisible by tensor parallel size", ModelConfig's parallel check)
// and splits the KV heads evenly or replicates them (QKVParallelLinear: a
// size that neither divides them nor is a multiple of them); SGLang's
// ModelConfig checks the same. Such a plan cannot run.
void check_engine_heads(const sim::ScenarioInputs& in, std::int64_t tp) {
  if (tp <= 1) return;
  const auto& model = in.model();
  const auto q = model.q_heads, kv = model.kv_heads;
  if (q > 0 && q % tp != 0) {
    throw base::ConfigError(
        fmt::format("cluster.tensor_parallel {} does not divide {}'s {} attention heads; vLLM and SGLang refuse "
                    "such an engine",
                    tp, model.name, q));
  }
  if (kv > 0 && kv % tp != 0 && tp % kv != 0) {
    throw base::ConfigError(
        fmt::format("cluster.tensor_parallel {} neither divides {}'s {} KV heads nor is a multiple of them; vLLM "
                    "and SGLang refuse such an engine",
                    tp, model.name, kv));
  }
}

}  // namespace

ResolvedScenario resolve_scenario(const base::Config& c) { return resolve_scenario(c, sim::ScenarioInputs(c)); }

ResolvedScenario resolve_scenario(const base::Config& c, const sim::ScenarioInputs& inputs) {
  ResolvedScenario r;
  r.inputs = inputs;
  r.shape = sim::cluster_shape(c, r.inputs);
  check_engine_heads(r.inputs, r.shape.tensor_parallel);
  // train.hardware is checked whatever the train time model reads.
  (void)sim::trainer_accelerator(c, r.inputs);
  r.sync = sim::weight_sync(c, r.inputs);
  r.engine = sim::engine_config(c, r.inputs);
  r.kv_capacity_tok = r.engine.kv_capacity_tok;
  return r;
}

}  // namespace april::scenario
