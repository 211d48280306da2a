#pragma once
// A request as an engine receives it (sim/engine.hpp).
#include <array>
#include <cstdint>

namespace april::sim {

using RequestKey = std::uint64_t;

struct EngineRequest {
  RequestKey key = 0;
  std::int32_t prompt_tok = 0;
  std::int32_t generated_tok = 0;  // tokens already held when submitted (resumed samples)
  std::int32_t stop_at_tok = 0;    // finishes when generated_tok reaches this (EOS or length cap)
  // Context tokens whose KV arrives from a global cache instead of a prefill
  // (a chunk continuing on another engine, Seer's pool): its first admission
  // prefills only the rest. Lost when preempted. Batched prefill only: a
  // per-token-prefill engine feeds the whole context.
  std::int32_t cached_tok = 0;
  // Where a policy predicts it ends (generated_tok + predicted remaining),
  // for routing on predicted work; 0: no prediction. Never stop_at_tok.
  // 32 bits like the other token counts: the request is 48 bytes, and the
  // engine's copy of it (EngineRequestState) two cache lines.
  std::int32_t predicted_end_tok = 0;
  // stop_at_tok is the submitter's cap on new tokens, reached before the
  // sample's own end (a chunk, the length cap): the finish says so
  // (EngineListener::on_request_finished), so no one looks the key up.
  bool stop_is_max_new = false;
  // What the submitter reads when told the request finished, as
  // base::cache_lines, fetched into the cache ahead of that (a hint, never
  // read through; 0: none).
  std::array<std::uintptr_t, 2> touched_on_finish{};
};

}  // namespace april::sim
