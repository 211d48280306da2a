#pragma once
// What `april live` will hold in memory, estimated from its options before
// the model is built, so that a run the machine cannot hold is refused with
// the numbers instead of growing until the kernel kills it. Plain C++ (no
// torch): the counts follow the live backend's own code, listed in
// live_memory.cpp, and were checked against peak RSS (docs/live.md).
#include <cstdint>
#include <string>

#include "adapters/live/live_options.hpp"
#include "adapters/live/model_config.hpp"

namespace april::live {

struct LiveMemoryInputs {
  ModelConfig model;               // its max_seq sizes the KV cache and the rotary tables
  std::int64_t slots = 64;         // engine slots: the KV cache's rows
  bool engine_bf16 = false;        // the engine's weights and cache in bfloat16
  bool reference_model = false;    // a KL penalty keeps a frozen copy of the weights
  std::int64_t train_samples = 0;  // samples in one train step (B x n)
  std::int64_t train_tokens = 0;   // each one's prompt + response, as the estimate assumes it
  std::int64_t sft_batch = 0;      // warm-start examples per step (0: no warm start)
  std::int64_t sft_tokens = 0;     // each one's length
};

struct LiveMemoryEstimate {
  double weights_bytes = 0;     // trainer (weights, gradients, two AdamW moments), engine copy, reference
  double kv_cache_bytes = 0;    // allocated whole when the engine starts
  double decode_bytes = 0;      // one decode iteration's attention over the whole cache
  double activation_bytes = 0;  // the larger of a train step's and a warm-start step's forward + backward
  double runtime_bytes = 0;     // libtorch itself
  [[nodiscard]] double total() const { return weights_bytes + kv_cache_bytes + decode_bytes + activation_bytes + runtime_bytes; }
  [[nodiscard]] std::string breakdown() const;  // "weights 1.2 GiB + KV cache ... "
};

LiveMemoryEstimate estimate_live_memory(const LiveMemoryInputs& in);

// The parts the options fix (model, slots, engine dtype, reference); the
// caller sets the train batch and the warm start.
LiveMemoryInputs memory_inputs(const LiveOptions& options, const ModelConfig& model);

// A whole run's inputs: a train step of `train_samples` samples, each its
// prompt plus, for a `trained` policy (warm-started or resumed), the task's
// longest answer, else up to max_response_len (an untrained one need not
// stop); and the warm start, when options.sft_steps > 0.
LiveMemoryInputs run_memory_inputs(const LiveOptions& options, const ModelConfig& model, std::int64_t train_samples,
                                   std::int64_t max_prompt_tok, std::int64_t max_answer_tok, bool trained);

// Bytes a forward + backward of `samples` sequences of `tokens` holds at its peak.
double train_activation_bytes(const ModelConfig& model, std::int64_t samples, std::int64_t tokens);

// Throws std::runtime_error naming the estimate and its parts when it
// exceeds `limit_bytes` (0: unknown, nothing checked); `what` says which
// run ("april live").
void check_live_memory(const LiveMemoryEstimate& estimate, std::uint64_t limit_bytes, const std::string& what);

}  // namespace april::live
