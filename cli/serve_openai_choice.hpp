#pragma once
// One choice of an april serve /v1 request while the engine generates it:
// the tokens taken from the engine's stream, the text they release through
// the tokenizer, and a stop string that ends the choice (its request then
// aborted in the engine and its tokens cut where the string ended), as vLLM
// finishes a request on a stop string.
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/http/openai_protocol.hpp"
#include "adapters/live/engine_server.hpp"
#include "hf/incremental_text.hpp"

namespace april::cli {

class ChoiceRun {
 public:
  // `tokenizer` null: no text (choices carry ids only), and no stop strings.
  ChoiceRun(std::string rid, std::shared_ptr<live::TokenStream> tokens, std::shared_future<http::GenerateOutcome> outcome,
            const hf::Tokenizer* tokenizer, const std::vector<std::string>& stops, bool include_stop);

  // What the engine generated since the last call, into `delta`
  // (delta_ids, delta_logprobs, text, and once the choice is over, its
  // finish reason). Returns whether the choice is over now.
  bool take(live::EngineServer& engine, http::CompletionChunk& delta);
  [[nodiscard]] bool over() const { return over_; }
  [[nodiscard]] const std::string& rid() const { return rid_; }
  [[nodiscard]] std::int64_t generated_tok() const { return static_cast<std::int64_t>(kept_); }
  // Wakes when the engine appends tokens or answers, or after `wait`.
  void wait(std::chrono::milliseconds wait) const;

 private:
  void keep(std::int32_t id, float logprob, bool with_logprob, http::CompletionChunk& delta);

  std::string rid_;
  std::shared_ptr<live::TokenStream> tokens_;
  std::shared_future<http::GenerateOutcome> outcome_;
  std::optional<hf::IncrementalText> text_;
  std::size_t seen_ = 0;       // tokens taken from the engine
  std::size_t kept_ = 0;       // of which kept (a stop string cuts the rest)
  bool include_stop_ = false;  // the text ends with the stop string found
  bool stopped_ = false;
  bool over_ = false;
};

}  // namespace april::cli
