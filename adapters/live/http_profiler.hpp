#pragma once
// `april profile --engine URL`: an inference server measured over SGLang's
// HTTP API (SGLang or april serve) into the profile format `april calibrate`
// fits (rl::Profile), rollout side only. A server reports no iteration, so
// each is measured as a wave of identical requests sent at once:
//  - B requests of an L-token prompt and max_new_tokens 1: one prefill
//    iteration (B requests, B x L tokens, each its first token), plus the
//    trip over HTTP;
//  - the same with max_new_tokens N: that prefill and N - 1 decode
//    iterations at batch B, whose mean is (T_N - T_1) / (N - 1), at the mean
//    KV of the window, B x (L + N / 2);
// an abort of B requests running (abort_all until all have answered), and a
// weight load (/update_weights_from_disk of the checkpoint it serves).
// Prompts are token ids 1..max_token_id, greedy, ignore_eos: every request
// of a wave runs exactly its tokens. It assumes batched prefill (SGLang's,
// april serve's without --exact-prefill). Over vLLM's API (ServerApi::kVllm;
// server_dialect.hpp holds what differs) each request is a /v1/completions, the abort closes the streams
// (vLLM's only abort outside dev mode), there is no weight load (vLLM has
// no /update_weights_from_disk), and the slots must be given (vLLM does not
// say its max_num_seqs). Plain C++: no torch.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "adapters/live/server_dialect.hpp"
#include "rl/backend_profile.hpp"

namespace april::live {

struct HttpProfileOptions {
  std::string url;
  ServerApi api = ServerApi::kSglang;    // kVllm: vLLM's /v1/completions instead of SGLang's API
  std::int64_t slots = 0;                // 0: the server's max_running_requests (SGLang's API; vLLM's needs it given)
  std::vector<std::int64_t> batches;     // empty: 1, 2, 4, ... up to the server's max_running_requests
  std::vector<std::int64_t> prompt_tok;  // empty: 16 and a quarter of the context
  std::int64_t decode_tok = 32;          // N
  std::int64_t repeats = 3;
  std::int32_t max_token_id = 100;  // prompt ids are drawn from 1..this (every tokenizer has them)
  bool weight_load = true;          // time /update_weights_from_disk of the served checkpoint
  double timeout_s = 600;
  std::uint64_t seed = 0;
};

// Throws std::runtime_error naming the URL when the server fails or refuses.
// `progress(done, total)` after each wave.
rl::Profile profile_http_engine(const HttpProfileOptions& options, const std::function<void(std::int64_t, std::int64_t)>& progress = {});

}  // namespace april::live
