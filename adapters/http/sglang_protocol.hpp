#pragma once
// The subset of SGLang's native HTTP API that RL rollouts use (slime, AReaL),
// as request and reply values: POST /generate and POST /abort_request. Field
// names and meanings follow SGLang's GenerateReqInput and SamplingParams
// (python/sglang/srt/managers/io_struct.py, .../sampling/sampling_params.py)
// and its reply (tokenizer_manager.py _handle_batch_output; finish reasons
// from schedule_batch.py to_json). Plain C++: no HTTP and no torch, so the
// parsing is tested and fuzzed alone.
//
// What a request may hold, field by field:
//   served:   input_ids (one prompt), rid, return_logprob, stream (false),
//             sampling_params.{max_new_tokens, temperature, top_p,
//             stop_token_ids, ignore_eos, sampling_seed}
//   ignored (they change no token id or log-prob): logprob_start_len,
//             top_logprobs_num (0), return_text_in_logprobs,
//             sampling_params.{skip_special_tokens,
//             spaces_between_special_tokens, no_stop_trim, custom_params}
//   refused unless at their default (the engine cannot honour them):
//             sampling_params.{top_k (-1), min_p (0), min_new_tokens (0), n (1),
//             frequency_penalty (0), presence_penalty (0),
//             repetition_penalty (1), stop (none)}
//   refused:  text (the server holds no tokenizer), a batch of prompts,
//             input_embeds, stream true, any field not listed here.
// Every refusal is a base::ConfigError naming the JSON path.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace april::http {

struct GenerateCall {
  std::vector<std::int32_t> input_ids;
  std::string rid;                    // "" when the request names none (the server makes one)
  std::int64_t max_new_tokens = 128;  // SGLang's default
  double temperature = 1.0;           // below 1e-6: greedy, as SGLang
  double top_p = 1.0;
  std::vector<std::int32_t> stop_token_ids;
  bool ignore_eos = false;
  std::optional<std::uint64_t> sampling_seed;  // any 64-bit value
  bool return_logprob = false;
};

// Parses a /generate body; `source` names it in errors ("POST /generate").
GenerateCall parse_generate_call(const std::string& body, const std::string& source);

struct AbortCall {
  std::string rid;  // a prefix: every request whose rid starts with it (SGLang's scheduler matches so)
  bool abort_all = false;
  bool exact = false;  // only the request whose rid is `rid` (april serve's own aborts: a stream whose client left)
};
AbortCall parse_abort_call(const std::string& body, const std::string& source);

// POST /update_weights_from_disk (io_struct.py UpdateWeightFromDiskReqInput):
// model_path required; weight_version and abort_all_requests read;
// load_format must be absent or null; flush_cache and fields newer versions
// add are accepted (the engine keeps no prefix cache to flush).
struct UpdateWeightsCall {
  std::string model_path;
  std::string weight_version;  // "" when not given
  bool abort_all_requests = false;
};
UpdateWeightsCall parse_update_weights_call(const std::string& body, const std::string& source);
// Its reply: {"success", "message", "num_paused_requests"}.
std::string update_weights_reply_json(bool success, const std::string& message);

// POST /pause_generation (io_struct.py PauseGenerationReqInput): mode
// "abort" (the default; also an empty body, as older SGLang sends none) or
// "in_place"; "retract" is refused by name.
struct PauseCall {
  bool abort_in_flight = true;
};
PauseCall parse_pause_call(const std::string& body, const std::string& source);

enum class FinishKind { Stop, Length, Abort };

struct GenerateOutcome {
  std::string rid;
  std::vector<std::int32_t> output_ids;
  std::vector<float> output_logprobs;  // one per output id (when return_logprob)
  FinishKind finish = FinishKind::Length;
  std::int32_t matched_stop = -1;  // Stop: the token that ended it
  std::string abort_message;       // Abort: why
  std::int64_t prompt_tokens = 0;
  std::string weight_version = "default";
  bool return_logprob = false;
  double e2e_latency_s = 0;
};

// The reply body: {"output_ids": [...], "meta_info": {"id", "finish_reason",
// "prompt_tokens", "completion_tokens", "cached_tokens", "weight_version",
// "e2e_latency", and with return_logprob "output_token_logprobs":
// [[logprob, id, null], ...]}}.
std::string generate_reply_json(const GenerateOutcome& outcome);

// SGLang's error body: {"error": {"message": ...}}.
std::string error_json(const std::string& message);

// A /generate reply as a client reads it from SGLang or april serve. Field
// sets differ across SGLang versions, so unknown fields are ignored and
// missing optional ones tolerated: the ids come from output_ids (token_ids
// in older trees) or else from meta_info.output_token_logprobs' [logprob,
// id, text] triples, as slime reads them; where both are there they must
// agree. finish_reason is required ({"type": "stop"|"length"|"abort", ...}).
struct GenerateReply {
  std::vector<std::int32_t> output_ids;
  std::vector<float> output_logprobs;  // empty when the reply has none
  FinishKind finish = FinishKind::Length;
  std::string abort_message;
  std::string weight_version;  // "" when the reply names none
};
GenerateReply parse_generate_reply(const std::string& body, const std::string& source);

// The message of an error body ({"error": {"message": ...}}, or vLLM's flat
// {"message": ...}); the body itself, cut to 200 bytes, otherwise.
std::string error_message_of(const std::string& body);

}  // namespace april::http
