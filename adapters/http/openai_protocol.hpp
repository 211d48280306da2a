#pragma once
// vLLM's OpenAI-compatible POST /v1/completions, the subset an RL rollout
// needs to resume an interrupted sample (docs/serve.md, "vLLM"): a prompt of
// token ids in, the generated ids and their log-probs out, streamed as
// server-sent events so that a client that closes the request (vLLM's only
// abort outside its dev mode: the route is `with_cancellation`, and
// AsyncLLM.generate aborts the request when its handler is cancelled) keeps
// the tokens it has received. Field names follow vLLM's CompletionRequest
// and its stream chunks (vllm/entrypoints/openai/protocol.py, later
// openai/completion/protocol.py; serving_completion.py
// completion_stream_generator): `token_ids` per choice with
// return_token_ids (PR #22587, 2025-08), `logprobs.token_logprobs`, and
// "token_id:N" strings in `logprobs.tokens` with return_tokens_as_token_ids
// (older servers). Plain C++: no HTTP and no torch, tested and fuzzed alone.
//
// A request april serve accepts, field by field:
//   served:  prompt (token ids, one prompt), max_tokens, temperature, top_p,
//            seed (any 64-bit value), stop_token_ids, ignore_eos, stream,
//            stream_options.include_usage, logprobs (null or 0: the sampled
//            token's), request_id (the rid /abort_request matches), model
//            (kept: `april serve` answers 404 for one it does not serve)
//   ignored (they change no token id or log-prob): user,
//            return_token_ids and return_tokens_as_token_ids (ids are always
//            returned both ways), skip_special_tokens,
//            spaces_between_special_tokens, include_stop_str_in_output,
//            add_special_tokens, echo (false only)
//   refused unless at their default: n (1), best_of (1), top_k (-1 or 0),
//            min_p (0), min_tokens (0), frequency_penalty (0),
//            presence_penalty (0), repetition_penalty (1), stop (none),
//            logprobs above 0
//   refused: a text prompt, a batch of prompts, any other field.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/http/sglang_protocol.hpp"

namespace april::http {

struct CompletionCall {
  GenerateCall generate;  // the engine's request (rid from request_id)
  bool stream = false;
  bool include_usage = false;
  bool logprobs = false;  // logprobs 0: the sampled token's log-prob
  std::string model;      // as the body names it; empty: not named
};

// Parses a /v1/completions body; `source` names it in errors. A
// base::ConfigError names the JSON path of what is refused.
CompletionCall parse_completion_call(const std::string& body, const std::string& source);

// The reply's finish_reason: "stop", "length", or vLLM's "abort".
const char* finish_reason_name(FinishKind kind);

// One stream event, "data: {...}\n\n": choice 0 with the token ids and
// log-probs generated since the last event (`delta_ids`), and the finish
// reason on the last (nullopt before). `id`, `model` and `created` as
// OpenAI's chunks carry them.
struct CompletionChunk {
  std::string id, model;
  std::int64_t created_s = 0;
  std::vector<std::int32_t> delta_ids;
  std::vector<float> delta_logprobs;
  bool logprobs = false;
  std::optional<FinishKind> finish;
  std::int32_t matched_stop = -1;  // Stop: vLLM's stop_reason (the stop token id)
};
std::string completion_chunk_event(const CompletionChunk& chunk);
// The usage event (choices empty) of stream_options.include_usage.
std::string completion_usage_event(const std::string& id, const std::string& model, std::int64_t created_s, std::int64_t prompt_tok,
                                   std::int64_t completion_tok);
inline constexpr const char* kStreamDone = "data: [DONE]\n\n";
// The whole reply of a call that did not stream (object "text_completion").
std::string completion_reply_json(const CompletionChunk& whole, std::int64_t prompt_tok);

// A whole (not streamed) /v1/completions reply as a client reads it:
// choice 0's ids from token_ids (return_token_ids) or the log-prob tokens'
// "token_id:N", its log-probs, and its finish reason. Unknown fields are
// ignored; a base::ConfigError names the JSON path of what is wrong.
GenerateReply parse_completion_reply(const std::string& body, const std::string& source);

// A client's reader of a /v1/completions stream, fed its bytes as they
// arrive in pieces of any size. Bounded: an event longer than
// kMaxEventBytes is an error. Errors are base::ConfigError naming `source`
// and what was wrong (an event that is not JSON, a field of the wrong type,
// an error event, tokens past the end).
class CompletionStreamReader {
 public:
  static constexpr std::size_t kMaxEventBytes = std::size_t{1} << 22;
  explicit CompletionStreamReader(std::string source) : source_(std::move(source)) {}
  void feed(const char* data, std::size_t size);
  // The stream said [DONE].
  [[nodiscard]] bool done() const { return done_; }
  // The tokens and log-probs received so far, and the finish reason once
  // the stream gave it (Abort: vLLM's "abort", or none yet).
  [[nodiscard]] const GenerateReply& partial() const { return partial_; }
  [[nodiscard]] bool has_finish_reason() const { return reply_.has_value(); }
  // The reply once the finish reason came; a base::ConfigError before.
  [[nodiscard]] GenerateReply reply() const;

 private:
  void event(const std::string& data);

  std::string source_;
  std::string buffer_;
  std::size_t events_ = 0;
  GenerateReply partial_;
  std::optional<FinishKind> reply_;
  bool done_ = false;
};

}  // namespace april::http
