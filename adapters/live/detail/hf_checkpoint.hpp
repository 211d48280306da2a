#pragma once
// Hugging Face checkpoints in and out of the live transformer: a folder with
// config.json and model.safetensors, or shards listed in
// model.safetensors.index.json, as transformers' save_pretrained writes them.
// Private to the live backend (torch).
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "adapters/live/checkpoint/hf_config.hpp"
#include "adapters/live/detail/transformer.hpp"
#include "hf/safetensors.hpp"

namespace april::live {

struct HfCheckpoint {
  HfModelConfig config;
  Transformer model{nullptr};
  // The weights' dtype on disk (the most common one among them): a save
  // writes them back in it, so that load, save, load is bit-exact.
  StDtype file_dtype = StDtype::F32;
  std::int64_t file_bytes = 0;  // the weight files' size together
};

// Loads `dir` into a transformer of `max_seq` positions on `device`, its
// parameters in `dtype` (bf16, fp16 and fp32 on disk are converted). Every
// tensor the architecture needs must be there with its shape, and every
// tensor there must be used: a name the transformer has no place for is
// refused, not dropped. Throws base::ConfigError naming the file and tensor.
HfCheckpoint load_hf_checkpoint(const std::string& dir, std::int64_t max_seq, const torch::Device& device,
                                torch::ScalarType dtype = torch::kFloat32);

struct HfSaveOptions {
  StDtype dtype = StDtype::BF16;
  // Shards above this size, as save_pretrained does (transformers 4.x's
  // default max_shard_size is "5GB", 5e9 bytes).
  std::int64_t max_shard_bytes = 5'000'000'000;
};

// Writes `model` into the folder `out_dir` (which must exist and be empty:
// the caller assembles it and puts it in place whole) in Hugging Face's
// layout: safetensors (sharded with an index above max_shard_bytes), and
// config.json, generation_config.json and the tokenizer files copied from
// `source_dir`.
void save_hf_checkpoint(Transformer& model, const std::string& source_dir, const std::string& out_dir, const HfSaveOptions& options);

// Hugging Face's name for one of the transformer's parameters
// ("block3.wq.weight" -> "model.layers.3.self_attn.q_proj.weight").
std::string hf_tensor_name(const std::string& ours);

}  // namespace april::live
