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

void declare_engine_knobs(base::ConfigSchema& schema);
// The engine layout the scenario asks for (tensor parallel, memory fraction, dtypes).
EngineLayout engine_layout(const base::Config& config);
// The engines' KV capacity in tokens, derived from GPU memory when not set.
std::int64_t kv_capacity_tok(const base::Config& config);
std::shared_ptr<const IterationModel> make_iteration_model(const base::Config& config);
EngineConfig engine_config(const base::Config& config);

}  // namespace april::sim
