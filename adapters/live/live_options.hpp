#pragma once
// What the live backend is built with: plain values, read from the live.*
// keys by live_config.
#include <cstdint>
#include <string>

namespace april::live {

// How the engine serves, shared by the live backend and the profiler (which
// must time the engine as the live run has it).
struct ServingOptions {
  bool fused_attention = false;      // torch 2.x scaled_dot_product_attention in decode (an error on 1.x)
  bool cuda_graph = true;            // on CUDA, decode replays a captured graph
  bool bf16 = false;                 // bfloat16 weights and KV cache (the trainer stays float32)
  std::int64_t prefill_pad_tok = 1;  // batched prefill's longest context rounded up to a multiple of this
};

struct LiveOptions {
  std::string model_size = "small";
  // A Hugging Face checkpoint folder to start from instead of a random
  // model_size one (live_backend.hpp); "" for none.
  std::string hf_checkpoint;
  std::string device = "cpu";  // cpu or cuda
  std::int64_t slots = 64;
  double temperature = 1.0, top_p = 1.0;
  bool exact_prefill = true;
  ServingOptions serving;
  double lr = 5e-4, weight_decay = 0.01, grad_clip = 1.0;
  std::string policy_loss = "dapo";  // grpo, dapo or gspo (detail/grpo.hpp)
  double clip_low = 0.2, clip_high = 0.28, kl_coef = 0.0, tis_cap = 0.0;
  bool recompute_old_logprobs = true;      // slime's default; false: the sampler's log-probs are pi_old
  bool tis_stale_only = false;             // TIS weight on stale tokens only (else every token, as slime's --use-tis)
  std::int64_t mask_staleness_above = -1;  // tokens staler than this get zero weight; -1: none (the policy's)
  std::int64_t sft_steps = 0, sft_batch = 32;
  std::int64_t threads = 2;
  std::int32_t max_response_len = 48;
  std::uint64_t seed = 1;
  // Overlapped runs: 0, a train step ends when its thread has computed it;
  // K > 0, it ends after exactly K engine iterations (waiting for its thread
  // if need be), so which tokens a sync finds in flight no longer depends on
  // timing: the run is reproducible and a simulator twin with 1 iteration =
  // 1 time unit and train = K units gives the same versions.
  std::int64_t train_lockstep_iterations = 0;
  // On the CPU, a train step whose batch the estimate (live_memory.hpp) says
  // will not fit in this many bytes is refused with its numbers instead of
  // being killed by the kernel; 0: not checked (tests, and CUDA, whose memory
  // is the device's).
  std::uint64_t memory_limit_bytes = 0;
  // Each change of the engine's running and queued requests, at the
  // iteration boundary where it happens (take_engine_changes): the engine
  // track of a live run's timeline.
  bool record_engine_changes = false;
  // Each engine iteration as a window (take_engine_windows), on the same clock.
  bool record_engine_windows = false;
  bool record_iterations = false;  // keep the engine's per-iteration log and the train steps' (take_iteration_log, take_train_log)
};

}  // namespace april::live
