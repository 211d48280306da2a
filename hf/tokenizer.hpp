#pragma once
// A byte-level BPE tokenizer read from a Hugging Face tokenizer.json, as
// Qwen2, Qwen2.5, Qwen3 and Llama 3 ship it, producing the ids Hugging
// Face's tokenizers library produces (checked against tokenizers 0.23.2 on
// the fixtures in tests/live/hf/tokenizers).
//
// What is read, and everything else refused by name (file and JSON path),
// never tokenized differently:
//   model         BPE: vocab, merges (["a", "b"] pairs or "a b" strings),
//                 ignore_merges; no dropout, byte_fallback, or subword prefix
//                 or suffix.
//   added_tokens  id, content, special, lstrip, rstrip, normalized
//                 (single_word refused).
//   normalizer    none, or NFC (Unicode 9.0 tables, as Hugging Face's;
//                 see nfc.hpp).
//   pre_tokenizer Sequence[Split(Regex, Isolated), ByteLevel(use_regex
//                 false)] with the Qwen2 or the Llama 3 split regex
//                 (split_pattern.hpp), or a lone ByteLevel(use_regex false).
//   decoder       ByteLevel.
//   post_processor, truncation, padding: not applied. encode() is Hugging
//                 Face's encode(text, add_special_tokens=False), which is how
//                 a chat template's output is tokenized (the template writes
//                 <|begin_of_text|> itself).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace april::hf {

using TokenId = std::int32_t;

// A tokenizer.json is some megabytes (Qwen2.5's 7 MB, Llama 3's 9 MB).
inline constexpr std::size_t kTokenizerJsonMaxBytes = 64u << 20;

class Tokenizer {
 public:
  // Reads `path` (at most kTokenizerJsonMaxBytes). Throws base::ConfigError
  // naming the file and the JSON path of anything missing, malformed or not
  // supported.
  static Tokenizer load(const std::string& path);
  // The same from the text of a tokenizer.json; `source` names it in errors.
  static Tokenizer parse(const std::string& json_text, const std::string& source);

  // The ids of `text` (UTF-8; anything else is refused with
  // std::invalid_argument naming the byte offset). Added tokens' contents
  // in the text become their ids.
  [[nodiscard]] std::vector<TokenId> encode(std::string_view text) const;

  // The text of `ids`, as Hugging Face's decode(ids, skip_special_tokens):
  // byte-level tokens back to bytes, an incomplete or invalid UTF-8 sequence
  // replaced by U+FFFD. An id with no token is refused with
  // std::invalid_argument naming it.
  [[nodiscard]] std::string decode(std::span<const TokenId> ids, bool skip_special_tokens = false) const;

  // The id of a token (an added token's content, or a vocabulary entry as
  // tokenizer.json spells it), or nullopt.
  [[nodiscard]] std::optional<TokenId> token_to_id(std::string_view token) const;
  // The token of an id as tokenizer.json spells it; std::invalid_argument
  // when no token has it.
  [[nodiscard]] std::string token(TokenId id) const;
  // Whether `id` is an added token marked special (what decode skips).
  [[nodiscard]] bool is_special(TokenId id) const;
  // One past the largest id (vocabulary and added tokens).
  [[nodiscard]] std::int64_t id_count() const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;  // immutable: copies share it, and any thread may encode
};

}  // namespace april::hf
