#pragma once
// What an inference engine of `tensor_parallel` GPUs holds: its shard of the
// weights, a reserve (activations, CUDA graphs, the allocator's slack) and the
// KV cache in the rest; SGLang's mem_fraction_static and vLLM's
// gpu_memory_utilization draw the same line.
#include <cstdint>
#include <string>

#include "sim/hardware.hpp"
#include "sim/model_arch.hpp"

namespace april::sim {

struct EngineLayout {
  std::int64_t tensor_parallel = 1;
  double memory_fraction = 0.85;  // of each GPU's HBM for weights + KV cache
  DType weight_dtype = DType::BF16;
  DType kv_dtype = DType::BF16;
  // SGLang --enable-dp-attention: attention runs data-parallel across the
  // engine's GPUs, each caching only its own requests (an MLA latent is then
  // not replicated); the MoE layers stay expert/tensor parallel.
  bool dp_attention = false;
};

// KV bytes per token each GPU of the engine holds.
double kv_bytes_per_token_per_gpu(const ModelArch& model, const EngineLayout& layout);

struct EngineMemory {
  double weights_per_gpu_bytes = 0;
  double usable_per_gpu_bytes = 0;  // HBM x memory_fraction
  double kv_per_gpu_bytes = 0;      // usable minus weights (negative: does not fit)
  double kv_bytes_per_token_per_gpu = 0;
  std::int64_t kv_capacity_tok = 0;  // tokens the engine's cache holds
  [[nodiscard]] bool fits() const { return kv_per_gpu_bytes > 0 && kv_capacity_tok > 0; }
};

EngineMemory engine_memory(const ModelArch& model, const Accelerator& hw, const EngineLayout& layout);
// The reason a layout does not fit, with the numbers: "deepseek-v3 in bf16
// needs 1342.1 GB of weights; TP 8 on h100 gives 581.5 GB (8 x 85.5 GB x 0.85)".
std::string does_not_fit(const ModelArch& model, const Accelerator& hw, const EngineLayout& layout);

}  // namespace april::sim
