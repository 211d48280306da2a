#include "sim/engine_memory.hpp"

#include <fmt/format.h>

#include <cmath>

namespace april::sim {

double kv_bytes_per_token_per_gpu(const ModelArch& model, const EngineLayout& layout) {
  const double all = static_cast<double>(model.kv_bytes_per_token(layout.kv_dtype));
  const double tp = static_cast<double>(layout.tensor_parallel);
  // Data-parallel attention: a request's cache lives on one GPU of the engine.
  if (layout.dp_attention) return all / tp;
  // MLA under tensor parallelism: the latent is whole on every GPU.
  if (model.attention == AttentionKind::MultiLatent) return all;
  // GQA: each GPU caches its KV heads (a head is replicated when tp exceeds them).
  const auto heads = (model.kv_heads + layout.tensor_parallel - 1) / layout.tensor_parallel;
  return all * static_cast<double>(heads) / static_cast<double>(model.kv_heads);
}

EngineMemory engine_memory(const ModelArch& model, const Accelerator& hw, const EngineLayout& layout) {
  EngineMemory m;
  const double tp = static_cast<double>(layout.tensor_parallel);
  m.weights_per_gpu_bytes = model.weight_bytes(layout.weight_dtype) / tp;
  m.usable_per_gpu_bytes = hw.hbm_bytes * layout.memory_fraction;
  m.kv_per_gpu_bytes = m.usable_per_gpu_bytes - m.weights_per_gpu_bytes;
  m.kv_bytes_per_token_per_gpu = kv_bytes_per_token_per_gpu(model, layout);
  if (m.kv_per_gpu_bytes > 0) m.kv_capacity_tok = static_cast<std::int64_t>(std::floor(m.kv_per_gpu_bytes / m.kv_bytes_per_token_per_gpu));
  return m;
}

std::string does_not_fit(const ModelArch& model, const Accelerator& hw, const EngineLayout& layout) {
  const double gb = 1e9;
  return fmt::format("{} in {} needs {:.1f} GB of weights; TP {} on {} gives {:.1f} GB ({} x {:.1f} GB x memory fraction {})", model.name,
                     to_string(layout.weight_dtype), model.weight_bytes(layout.weight_dtype) / gb, layout.tensor_parallel, hw.name,
                     hw.hbm_bytes * layout.memory_fraction * static_cast<double>(layout.tensor_parallel) / gb, layout.tensor_parallel,
                     hw.hbm_bytes / gb, layout.memory_fraction);
}

}  // namespace april::sim
