#pragma once
// The named tensors of a model's Hugging Face checkpoint, in the order its
// layers come: what a per-tensor weight sync sends one at a time, and what a
// bucketed one packs. The elements sum to ModelArch::total_params().
#include <cstdint>
#include <vector>

#include "sim/model_arch.hpp"

namespace april::sim {

// Elements of each tensor: the embedding, each layer's attention, norms and
// MLP or experts (every routed expert's three matrices are three tensors, as
// Hugging Face checkpoints store them), the final norm, then the output head
// unless tied. Multi-token-prediction modules are left out, as from the total.
std::vector<std::int64_t> checkpoint_tensor_elements(const ModelArch& m);

}  // namespace april::sim
