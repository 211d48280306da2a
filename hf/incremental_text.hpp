#pragma once
// The text of a generation as its tokens arrive, for a server that streams
// text and honours stop strings (april serve's /v1 routes): each token's new
// text once it is whole UTF-8, as vLLM's incremental detokenizer emits it
// (a few tokens decoded again around the new one, since a byte-level BPE
// token may end inside a character), and the first stop string found in the
// text. Text that may be the start of a stop string is held back until the
// next tokens show it is not, so a client never receives part of one.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hf/tokenizer.hpp"

namespace april::hf {

class IncrementalText {
 public:
  // `stops`: the stop strings (none empty). Special tokens are left out of
  // the text (vLLM's skip_special_tokens default), as are ids past the
  // tokenizer's vocabulary (a padded model vocabulary).
  IncrementalText(const Tokenizer& tokenizer, std::vector<std::string> stops);

  // Adds one generated token; returns the text that may now be sent. Once a
  // stop string is found (stopped()), further tokens add nothing.
  std::string add(TokenId id);
  // At the end of the generation: the text held back (an incomplete
  // character, or the start of a stop string that did not come).
  std::string finish();

  [[nodiscard]] bool stopped() const { return stop_.has_value(); }
  // The stop string found, and the tokens added when it was (its end lies
  // in the last of them): the output is cut there.
  [[nodiscard]] const std::optional<std::string>& stop() const { return stop_; }
  [[nodiscard]] std::size_t tokens_at_stop() const { return tokens_at_stop_; }

 private:
  std::string decode_from(std::size_t from, std::size_t to) const;
  std::string release(std::string text, bool at_end);

  const Tokenizer* tokenizer_;
  std::vector<std::string> stops_;
  std::size_t longest_stop_ = 0;
  std::vector<TokenId> ids_;  // the text's tokens (special and unknown ids left out)
  std::size_t prefix_ = 0;    // ids_[prefix_, read_) decode to text already taken
  std::size_t read_ = 0;
  std::size_t added_ = 0;  // every id added, counted
  std::string held_;       // taken from the tokens, not yet released
  std::optional<std::string> stop_;
  std::size_t tokens_at_stop_ = 0;
};

}  // namespace april::hf
