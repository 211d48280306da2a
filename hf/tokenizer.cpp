// Encoding and decoding, as Hugging Face's tokenizers does for the
// tokenizer.json files tokenizer_load.cpp accepts:
//   encode: added tokens in the raw text -> NFC -> added tokens in the
//   normalized text -> split (split_pattern.hpp) -> bytes as byte-level
//   characters -> BPE merges by rank -> ids.
//   decode: ids -> tokens -> bytes -> UTF-8, lossily.
#include <fmt/format.h>

#include <queue>
#include <stdexcept>

#include "hf/byte_level.hpp"
#include "hf/nfc.hpp"
#include "hf/tokenizer_impl.hpp"
#include "hf/utf8.hpp"

namespace april::hf {
namespace {

// The text between added tokens goes to `on_text`, each added token's id to
// `on_token`, in order (Hugging Face's split_with_indices; empty text is dropped).
template <typename OnText, typename OnToken>
void split_added(const AddedTokenMatcher& matcher, std::string_view text, OnText on_text, OnToken on_token) {
  std::size_t done = 0;
  if (!matcher.empty()) {
    for (const AddedTokenMatcher::Match& m : matcher.find_all(text)) {
      if (done < m.begin) on_text(text.substr(done, m.begin - done));
      on_token(m.id);
      done = m.end;
    }
  }
  if (done < text.size()) on_text(text.substr(done));
}

// One word's BPE (tokenizers' models/bpe/word.rs, merge_all): every adjacent
// pair with a merge is queued by (rank, position); the lowest is merged
// unless an earlier merge changed either side, and the pairs the merged
// symbol forms with its neighbours are queued in turn.
class WordMerger {
 public:
  explicit WordMerger(const Tokenizer::Impl& impl) : impl_(impl) {}

  void encode(std::string_view bytes, std::vector<TokenId>& out) {
    if (bytes.empty()) return;
    if (impl_.ignore_merges && whole_word(bytes, out)) return;
    symbols_.clear();
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      const auto byte = static_cast<std::uint8_t>(bytes[i]);
      const TokenId id = impl_.byte_token[byte];
      if (id < 0) {
        throw std::invalid_argument(fmt::format("encode: byte 0x{:02X} has no token in the vocabulary of {}", byte, impl_.source));
      }
      symbols_.push_back(Symbol{id, static_cast<int>(i) - 1, i + 1 < bytes.size() ? static_cast<int>(i) + 1 : -1, true});
    }
    Queue queue;
    for (std::size_t i = 0; i + 1 < symbols_.size(); ++i) push_pair(queue, static_cast<int>(i));
    while (!queue.empty()) {
      const Candidate top = queue.top();
      queue.pop();
      Symbol& left = symbols_[static_cast<std::size_t>(top.pos)];
      if (!left.alive || left.next < 0) continue;
      Symbol& right = symbols_[static_cast<std::size_t>(left.next)];
      const auto now = impl_.merges.find(merge_key(left.id, right.id));
      if (now == impl_.merges.end() || now->second.merged != top.merged) continue;  // a stale entry
      left.id = top.merged;
      right.alive = false;
      left.next = right.next;
      if (right.next >= 0) symbols_[static_cast<std::size_t>(right.next)].prev = top.pos;
      if (left.prev >= 0) push_pair(queue, left.prev);
      if (left.next >= 0) push_pair(queue, top.pos);
    }
    for (int i = 0; i >= 0; i = symbols_[static_cast<std::size_t>(i)].next) out.push_back(symbols_[static_cast<std::size_t>(i)].id);
  }

 private:
  struct Symbol {
    TokenId id;
    int prev;
    int next;
    bool alive;
  };
  struct Candidate {
    std::uint32_t rank;
    int pos;
    TokenId merged;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  using Queue = std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>>;

  void push_pair(Queue& queue, int pos) const {
    const Symbol& left = symbols_[static_cast<std::size_t>(pos)];
    const Symbol& right = symbols_[static_cast<std::size_t>(left.next)];
    const auto it = impl_.merges.find(merge_key(left.id, right.id));
    if (it != impl_.merges.end()) queue.push(Candidate{it->second.rank, pos, it->second.merged});
  }

  // ignore_merges: a word that is itself a vocabulary entry is that token.
  bool whole_word(std::string_view bytes, std::vector<TokenId>& out) {
    mapped_.clear();
    for (const char b : bytes) mapped_ += byte_level::char_of_byte(static_cast<std::uint8_t>(b));
    const auto it = impl_.vocab.find(mapped_);
    if (it == impl_.vocab.end()) return false;
    out.push_back(it->second);
    return true;
  }

  const Tokenizer::Impl& impl_;
  std::vector<Symbol> symbols_;
  std::string mapped_;
};

// Text between added tokens, normalized: pre-tokenized into words, each merged.
void encode_words(const Tokenizer::Impl& impl, std::string_view text, WordMerger& merger, std::vector<TokenId>& out) {
  if (!impl.split) {
    merger.encode(text, out);
    return;
  }
  utf8::Decoded decoded;
  utf8::decode(text, decoded);  // valid: checked on entry, and NFC keeps it so
  for (const auto& [begin, end] : split_pieces(*impl.split, decoded.cps)) {
    const std::size_t from = decoded.byte_offsets[begin], to = decoded.byte_offsets[end];
    merger.encode(text.substr(from, to - from), out);
  }
}

void check_utf8(std::string_view text) {
  if (const auto bad = utf8::first_invalid(text)) {
    throw std::invalid_argument(
        fmt::format("encode: the text is not valid UTF-8 (byte {}, 0x{:02X})", *bad, static_cast<std::uint8_t>(text[*bad])));
  }
}

}  // namespace

std::vector<TokenId> Tokenizer::encode(std::string_view text) const {
  const Impl& impl = *impl_;
  check_utf8(text);
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3 + 1);
  WordMerger merger(impl);
  const auto add_token = [&ids](TokenId id) { ids.push_back(id); };
  split_added(
      impl.raw_added, text,
      [&](std::string_view raw) {
        const std::string normalized = impl.nfc ? nfc(raw) : std::string(raw);
        split_added(
            impl.normalized_added, normalized, [&](std::string_view words) { encode_words(impl, words, merger, ids); }, add_token);
      },
      add_token);
  return ids;
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool skip_special_tokens) const {
  const Impl& impl = *impl_;
  std::string bytes;
  std::string token_bytes;
  utf8::Decoded chars;
  for (const TokenId id : ids) {
    if (!impl.has(id)) throw std::invalid_argument(fmt::format("decode: id {} is not a token of {}", id, impl.source));
    if (skip_special_tokens && impl.special_by_id[static_cast<std::size_t>(id)] != 0) continue;
    // The ByteLevel decoder: a token whose every character is in the
    // byte-level alphabet gives those bytes; any other (an added token
    // spelled with a space, say) gives its own UTF-8.
    const std::string_view token = impl.text_of(id);
    utf8::decode(token, chars);
    token_bytes.clear();
    bool all_mapped = true;
    for (const char32_t cp : chars.cps) {
      const auto byte = byte_level::byte_of_char(cp);
      if (!byte) {
        all_mapped = false;
        break;
      }
      token_bytes += static_cast<char>(*byte);
    }
    if (all_mapped) {
      bytes += token_bytes;
    } else {
      bytes += token;
    }
  }
  return utf8::decode_lossy(bytes);
}

std::optional<TokenId> Tokenizer::token_to_id(std::string_view token) const {
  if (const auto it = impl_->added_ids.find(token); it != impl_->added_ids.end()) return it->second;
  if (const auto it = impl_->vocab.find(token); it != impl_->vocab.end()) return it->second;
  return std::nullopt;
}

std::string Tokenizer::token(TokenId id) const {
  if (!impl_->has(id)) throw std::invalid_argument(fmt::format("id {} is not a token of {}", id, impl_->source));
  return std::string(impl_->text_of(id));
}

bool Tokenizer::is_special(TokenId id) const { return impl_->has(id) && impl_->special_by_id[static_cast<std::size_t>(id)] != 0; }

std::int64_t Tokenizer::id_count() const { return static_cast<std::int64_t>(impl_->by_id.size()); }

}  // namespace april::hf
