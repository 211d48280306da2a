#pragma once
// vLLM's OpenAI-compatible API as april serve speaks it and april live
// reads it: POST /v1/completions (the subset an RL rollout needs to resume
// an interrupted sample: a prompt of token ids in, the generated ids and
// their log-probs out, streamed as server-sent events so that a client that
// closes the request keeps the tokens it has received: vLLM's only abort
// outside its dev mode, the route being `with_cancellation`), text prompts
// and POST /v1/chat/completions for the clients people use (the openai
// SDKs), and vLLM's error bodies. Field names follow vLLM's
// CompletionRequest, ChatCompletionRequest and their stream chunks
// (vllm/entrypoints/openai/protocol.py, later openai/completion/protocol.py
// and openai/chat_completion/protocol.py): `token_ids` per choice with
// return_token_ids (PR #22587, 2025-08), `logprobs.token_logprobs`, and
// "token_id:N" strings in `logprobs.tokens` with return_tokens_as_token_ids
// (older servers). Plain C++: no HTTP, no torch and no tokenizer (the
// server tokenizes), tested and fuzzed alone.
//
// A /v1/completions request april serve accepts, field by field:
//   served:  prompt (token ids, or a text the server's tokenizer encodes;
//            one prompt), max_tokens, temperature, top_p, seed (any 64-bit
//            value), stop (strings), stop_token_ids, ignore_eos, n (1 to
//            kMaxChoices, each choice its own engine request; with a seed,
//            choice i samples from seed + i), best_of (= n), stream,
//            stream_options.include_usage, logprobs (null or 0: the sampled
//            token's), request_id (the rid /abort_request matches), model
//            (`april serve` answers 404 for one it does not serve)
//   ignored (they change no token id or log-prob): user,
//            return_token_ids and return_tokens_as_token_ids (ids are always
//            returned both ways), skip_special_tokens (the text leaves
//            special tokens out), spaces_between_special_tokens,
//            include_stop_str_in_output (false only), add_special_tokens,
//            echo (false only)
//   refused unless at their default: top_k (-1 or 0), min_p (0),
//            min_tokens (0), frequency_penalty (0), presence_penalty (0),
//            repetition_penalty (1), logprobs above 0
//   refused: a batch of prompts, any other field.
// /v1/chat/completions takes `messages` (system first, then user and
// assistant turns, the last a user's; content a string or text parts)
// instead of `prompt`, max_completion_tokens or max_tokens (default: the
// context left), logprobs as a boolean with top_logprobs 0, and
// chat_template_kwargs.enable_thinking; tools, response formats and the
// rest of the chat-only fields are refused by name.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/http/sglang_protocol.hpp"

namespace april::http {

// Choices one request may ask for (n): each is an engine request.
inline constexpr std::int64_t kMaxChoices = 128;
// Stop strings one request may give, and their length: bounded work per token.
inline constexpr std::size_t kMaxStopStrings = 64;
inline constexpr std::size_t kMaxStopBytes = 1024;

struct ChatTurn {
  std::string role;  // system, user or assistant
  std::string content;
};

struct CompletionCall {
  GenerateCall generate;                   // the engine's request (rid from request_id); input_ids empty for a text or chat prompt
  std::optional<std::string> prompt_text;  // a text prompt, for the server's tokenizer
  bool chat = false;                       // /v1/chat/completions: `messages` is the prompt
  std::vector<ChatTurn> messages;
  std::optional<bool> enable_thinking;  // chat_template_kwargs.enable_thinking
  bool max_tokens_given = true;         // chat: false when neither max_tokens nor max_completion_tokens came
  std::vector<std::string> stop;        // stop strings
  bool include_stop_str = false;        // include_stop_str_in_output: the text ends with the stop string
  std::int64_t n = 1;
  bool stream = false;
  bool include_usage = false;
  bool logprobs = false;  // logprobs 0 (chat: true): the sampled token's log-prob
  std::string model;      // as the body names it; empty: not named
};

// Parses a /v1/completions body; `source` names it in errors. A
// base::ConfigError (a base::JsonPathError where a field is at fault) names
// the JSON path of what is refused.
CompletionCall parse_completion_call(const std::string& body, const std::string& source);
// The same for a /v1/chat/completions body.
CompletionCall parse_chat_call(const std::string& body, const std::string& source);

// vLLM's error body, {"error": {"message", "type", "param", "code"}}: the
// type named for the HTTP status as vLLM names it (BadRequestError,
// NotFoundError, ...), code the status, param the request field at fault
// (its JSON path, "messages.0.content"; empty: null).
std::string openai_error_json(int status, const std::string& message, const std::string& param = "");
// The field a JSON Pointer path names, as OpenAI's `param` writes it:
// "/messages/0/content" -> "messages.0.content".
std::string param_of_path(const std::string& json_pointer);

// The reply's finish_reason: "stop", "length", or vLLM's "abort".
const char* finish_reason_name(FinishKind kind);

// One stream event, "data: {...}\n\n": choice 0 with the token ids and
// log-probs generated since the last event (`delta_ids`), and the finish
// reason on the last (nullopt before). `id`, `model` and `created` as
// OpenAI's chunks carry them.
struct CompletionChunk {
  std::string id, model;
  std::int64_t created_s = 0;
  std::int64_t index = 0;  // the choice
  bool chat = false;       // chat.completion(.chunk): text in delta.content / message.content
  bool first = false;      // chat streams: the choice's first event carries the role
  std::vector<std::int32_t> delta_ids;
  std::vector<float> delta_logprobs;
  std::string text;  // the text of delta_ids (what the server's tokenizer released)
  bool logprobs = false;
  std::optional<FinishKind> finish;
  std::int32_t matched_stop = -1;          // Stop: vLLM's stop_reason (the stop token id)
  std::optional<std::string> stop_string;  // Stop: the stop string that ended it (its stop_reason)
};
std::string completion_chunk_event(const CompletionChunk& chunk);
// The usage event (choices empty) of stream_options.include_usage.
std::string completion_usage_event(const std::string& id, const std::string& model, std::int64_t created_s, std::int64_t prompt_tok,
                                   std::int64_t completion_tok, bool chat = false);
inline constexpr const char* kStreamDone = "data: [DONE]\n\n";
// The whole reply of a call that did not stream (object "text_completion",
// or "chat.completion"): one entry of `choices` per choice, in order.
std::string completion_reply_json(const std::vector<CompletionChunk>& choices, std::int64_t prompt_tok);
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
  // Events read so far (each "data:" payload, [DONE] included).
  [[nodiscard]] std::size_t events() const { return events_; }
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
