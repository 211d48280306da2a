// Finding added tokens in text, as Hugging Face's AddedVocabulary does
// (tokenizers' added_vocabulary.rs, find_matches): an Aho-Corasick search,
// leftmost-longest, non-overlapping; then lstrip/rstrip widen a match over
// the whitespace (Rust's \s, White_Space) beside it.
#include <algorithm>

#include "hf/tokenizer_impl.hpp"
#include "hf/unicode_classes.hpp"
#include "hf/utf8.hpp"

namespace april::hf {
namespace {

bool is_white_space(char32_t cp) { return unicode::char_class(cp) == unicode::CharClass::kWhitespace; }

// The code point that ends at `end` (valid UTF-8), and where it starts.
char32_t code_point_before(std::string_view text, std::size_t end, std::size_t& start) {
  start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  utf8::Decoded one;
  utf8::decode(text.substr(start, end - start), one);
  return one.cps.empty() ? 0 : one.cps[0];
}

// Where the whitespace at the end of text[0, end) begins (regex \s*$).
std::size_t trailing_space_start(std::string_view text, std::size_t end) {
  while (end > 0) {
    std::size_t start = 0;
    if (!is_white_space(code_point_before(text, end, start))) break;
    end = start;
  }
  return end;
}

// Where the whitespace at the start of text[begin, ...) ends (regex ^\s*).
std::size_t leading_space_end(std::string_view text, std::size_t begin) {
  utf8::Decoded rest;
  while (begin < text.size()) {
    std::size_t len = 1;
    while (begin + len < text.size() && (static_cast<unsigned char>(text[begin + len]) & 0xC0) == 0x80) ++len;
    utf8::decode(text.substr(begin, len), rest);
    if (rest.cps.empty() || !is_white_space(rest.cps[0])) break;
    begin += len;
  }
  return begin;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)), trie_(1) {
  for (std::size_t t = 0; t < tokens_.size(); ++t) {
    std::uint32_t node = 0;
    for (const char c : tokens_[t].content) {
      const auto byte = static_cast<std::uint8_t>(c);
      auto& children = trie_[node].children;
      const auto it = std::lower_bound(children.begin(), children.end(), byte, [](const auto& e, std::uint8_t b) { return e.first < b; });
      if (it != children.end() && it->first == byte) {
        node = it->second;
        continue;
      }
      const auto next = static_cast<std::uint32_t>(trie_.size());
      children.insert(it, {byte, next});  // `children` is not used after trie_ grows
      trie_.emplace_back();
      node = next;
    }
    trie_[node].token = static_cast<std::int32_t>(t);
  }
}

const AddedToken* AddedTokenMatcher::longest_at(std::string_view text, std::size_t at) const {
  const AddedToken* found = nullptr;
  std::uint32_t node = 0;
  for (std::size_t i = at; i < text.size(); ++i) {
    const auto byte = static_cast<std::uint8_t>(text[i]);
    const auto& children = trie_[node].children;
    const auto it = std::lower_bound(children.begin(), children.end(), byte, [](const auto& e, std::uint8_t b) { return e.first < b; });
    if (it == children.end() || it->first != byte) break;
    node = it->second;
    if (trie_[node].token >= 0) found = &tokens_[static_cast<std::size_t>(trie_[node].token)];
  }
  return found;
}

std::vector<AddedTokenMatcher::Match> AddedTokenMatcher::find_all(std::string_view text) const {
  std::vector<Match> out;
  std::size_t covered = 0;  // end of the last match, stripped whitespace included
  std::size_t at = 0;       // where the search goes on: the end of the last match's own text
  while (at < text.size()) {
    const AddedToken* found = longest_at(text, at);
    if (found == nullptr) {
      ++at;
      continue;
    }
    std::size_t begin = at, end = at + found->content.size();
    at = end;
    // A previous match may have taken that whitespace already.
    if (found->lstrip) begin = std::max(trailing_space_start(text, begin), covered);
    if (found->rstrip) end = leading_space_end(text, end);
    out.push_back(Match{begin, end, found->id});
    covered = end;
  }
  return out;
}

}  // namespace april::hf
