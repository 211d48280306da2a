#pragma once
// The tables a Tokenizer holds (private to tokenizer*.cpp): built once by
// tokenizer_load.cpp, read by tokenizer.cpp.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hf/split_pattern.hpp"
#include "hf/tokenizer.hpp"

namespace april::hf {

struct AddedToken {
  std::string content;
  TokenId id = 0;
  bool special = false;
  bool lstrip = false;      // takes the whitespace before it
  bool rstrip = false;      // takes the whitespace after it
  bool normalized = false;  // matched in normalized text (else in the raw text, first)
};

// Added tokens found in text as Hugging Face's AddedVocabulary does:
// leftmost-longest, scanning left to right, over a byte trie of their contents.
class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);
  [[nodiscard]] bool empty() const { return tokens_.empty(); }

  struct Match {
    std::size_t begin;  // bytes, lstrip and rstrip whitespace included
    std::size_t end;
    TokenId id;
  };
  // Every match in `text`, in order.
  [[nodiscard]] std::vector<Match> find_all(std::string_view text) const;

 private:
  // The longest token whose content starts `text` at `at`, or nullptr.
  [[nodiscard]] const AddedToken* longest_at(std::string_view text, std::size_t at) const;

  struct Node {
    std::vector<std::pair<std::uint8_t, std::uint32_t>> children;  // byte -> node, sorted
    std::int32_t token = -1;                                       // index into tokens_ of a content ending here
  };
  std::vector<AddedToken> tokens_;
  std::vector<Node> trie_;  // trie_[0] is the root
};

struct MergeResult {
  std::uint32_t rank;  // position in /model/merges: lower merges first
  TokenId merged;
};

struct Tokenizer::Impl {
  std::string source;  // the file, for messages

  // Every token's text (vocabulary and added), concatenated; views below point into it.
  std::string pool;
  struct Entry {
    std::uint32_t offset = 0;
    std::uint32_t length = kNone;
    static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  };
  std::vector<Entry> by_id;                                 // what decode reads; an added token's content wins
  std::vector<std::uint8_t> special_by_id;                  // 1: skipped by decode(skip_special_tokens)
  std::unordered_map<std::string_view, TokenId> vocab;      // /model/vocab
  std::unordered_map<std::string_view, TokenId> added_ids;  // /added_tokens by content

  std::array<TokenId, 256> byte_token{};                  // the vocabulary id of each byte's character; -1: none
  std::unordered_map<std::uint64_t, MergeResult> merges;  // key: (left id << 32) | right id
  bool ignore_merges = false;                             // a word that is a vocabulary entry is that token, unmerged

  bool nfc = false;
  std::optional<SplitPattern> split;   // nullopt: the byte-level pre-tokenizer alone (one word)
  AddedTokenMatcher raw_added;         // normalized == false: matched before normalizing
  AddedTokenMatcher normalized_added;  // normalized == true: matched after

  [[nodiscard]] std::string_view text_of(TokenId id) const {
    const Entry& e = by_id[static_cast<std::size_t>(id)];
    return std::string_view(pool).substr(e.offset, e.length);
  }
  [[nodiscard]] bool has(TokenId id) const {
    return id >= 0 && static_cast<std::size_t>(id) < by_id.size() && by_id[static_cast<std::size_t>(id)].length != Entry::kNone;
  }
};

inline std::uint64_t merge_key(TokenId left, TokenId right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

}  // namespace april::hf
