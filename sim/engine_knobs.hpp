#pragma once
// The cluster's and engines' scenario keys (model, hardware, cluster.*,
// engine.*), declared beside the code that reads them: the KV capacity, the
// iteration-time model and the engine configuration of a scenario.
#include <cstdint>
#include <memory>

#include "base/config.hpp"
#include "sim/engine.hpp"
#include "sim/engine_memory.hpp"
#include "sim/iteration_model.hpp"

namespace april::sim {

class ScenarioInputs;

void declare_engine_knobs(base::ConfigSchema& schema);
// A key's check: one of `names`, or a path that exists (read, and checked
// field by field, when the scenario is built).
base::KnobValidator builtin_or_file(std::vector<std::string> names);
// The engine layout the scenario asks for (tensor parallel, memory fraction, dtypes).
EngineLayout engine_layout(const base::Config& config);
// The engines' KV capacity in tokens, derived from GPU memory when not set.
// `inputs`: the model and the engines' accelerator (sim/scenario_inputs.hpp).
std::int64_t kv_capacity_tok(const base::Config& config, const ScenarioInputs& inputs);
std::shared_ptr<const IterationModel> make_iteration_model(const base::Config& config, const ScenarioInputs& inputs);
// Resolves the scenario's own inputs (tools outside a run).
std::shared_ptr<const IterationModel> make_iteration_model(const base::Config& config);
EngineConfig engine_config(const base::Config& config, const ScenarioInputs& inputs);

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::IntKey kClusterEngines{"cluster.engines"};
inline constexpr base::IntKey kClusterExpertParallel{"cluster.expert_parallel"};
inline constexpr base::IntKey kClusterGpus{"cluster.gpus"};
inline constexpr base::IntKey kClusterTensorParallel{"cluster.tensor_parallel"};
inline constexpr base::DoubleKey kEngineAbortConfirmS{"engine.abort_confirm_s"};
inline constexpr base::DoubleKey kEngineAbortLatencyS{"engine.abort_latency_s"};
inline constexpr base::DoubleKey kEngineAbortPerRequestUs{"engine.abort_per_request_us"};
inline constexpr base::DoubleKey kEngineCollectiveLatencyUs{"engine.collective_latency_us"};
inline constexpr base::DoubleKey kEngineComputeEfficiency{"engine.compute_efficiency"};
inline constexpr base::DoubleKey kEngineConstantIterationUs{"engine.constant_iteration_us"};
inline constexpr base::BoolKey kEngineDpAttention{"engine.dp_attention"};
inline constexpr base::BoolKey kEngineFastForward{"engine.fast_forward"};
inline constexpr base::DoubleKey kEngineGpuMemoryFraction{"engine.gpu_memory_fraction"};
inline constexpr base::DoubleKey kEngineHbmEfficiency{"engine.hbm_efficiency"};
inline constexpr base::DoubleKey kEngineH20HbmEfficiency{"engine.h20_hbm_efficiency"};
inline constexpr base::StringKey kEngineIterationModel{"engine.iteration_model"};
inline constexpr base::DoubleKey kEngineIterationOverheadUs{"engine.iteration_overhead_us"};
inline constexpr base::IntKey kEngineKvCapacityTok{"engine.kv_capacity_tok"};
inline constexpr base::StringKey kEngineKvDtype{"engine.kv_dtype"};
inline constexpr base::DoubleKey kEngineLinearBaseUs{"engine.linear_base_us"};
inline constexpr base::DoubleKey kEngineLinearPerKvTokNs{"engine.linear_per_kv_tok_ns"};
inline constexpr base::DoubleKey kEngineLinearPerPaddedPrefillTokUs{"engine.linear_per_padded_prefill_tok_us"};
inline constexpr base::DoubleKey kEngineLinearPerPrefillRequestUs{"engine.linear_per_prefill_request_us"};
inline constexpr base::DoubleKey kEngineLinearPerPrefillTokUs{"engine.linear_per_prefill_tok_us"};
inline constexpr base::DoubleKey kEngineLinearPerRequestUs{"engine.linear_per_request_us"};
inline constexpr base::DoubleKey kEngineLinearPrefillBaseUs{"engine.linear_prefill_base_us"};
inline constexpr base::DoubleKey kEngineLinkEfficiency{"engine.link_efficiency"};
inline constexpr base::IntKey kEngineMaxRunning{"engine.max_running"};
inline constexpr base::DoubleKey kEngineMoeComputeEfficiency{"engine.moe_compute_efficiency"};
inline constexpr base::DoubleKey kEngineMoeHbmShare{"engine.moe_hbm_share"};
inline constexpr base::StringKey kEnginePrefill{"engine.prefill"};
inline constexpr base::DoubleKey kEngineSlowdownBesideTrain{"engine.slowdown_beside_train"};
inline constexpr base::StringKey kEngineWeightDtype{"engine.weight_dtype"};
inline constexpr base::StringKey kHardware{"hardware"};
inline constexpr base::StringKey kModel{"model"};
}  // namespace keys

}  // namespace april::sim
