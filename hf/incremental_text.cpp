#include "hf/incremental_text.hpp"

#include <algorithm>

namespace april::hf {
namespace {

// U+FFFD in UTF-8: decode's mark of an incomplete character.
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

}  // namespace

IncrementalText::IncrementalText(const Tokenizer& tokenizer, std::vector<std::string> stops)
    : tokenizer_(&tokenizer), stops_(std::move(stops)) {
  for (const auto& s : stops_) longest_stop_ = std::max(longest_stop_, s.size());
}

std::string IncrementalText::decode_from(std::size_t from, std::size_t to) const {
  return tokenizer_->decode(std::span<const TokenId>(ids_).subspan(from, to - from), true);
}

std::string IncrementalText::add(TokenId id) {
  ++added_;
  if (stop_) return {};
  if (id < 0 || id >= tokenizer_->id_count() || tokenizer_->is_special(id)) return {};
  ids_.push_back(id);
  // vLLM's detokenize_incrementally: the text of ids_[prefix_, end) past
  // that of ids_[prefix_, read_), taken once it does not end inside a
  // character.
  const auto before = decode_from(prefix_, read_);
  const auto now = decode_from(prefix_, ids_.size());
  if (now.size() <= before.size() || std::string_view(now).ends_with(kReplacement)) return {};
  const auto fresh = now.substr(before.size());
  prefix_ = read_;
  read_ = ids_.size();
  return release(held_ + fresh, false);
}

std::string IncrementalText::finish() {
  if (stop_) return {};
  std::string rest = held_;
  if (read_ < ids_.size()) {
    const auto before = decode_from(prefix_, read_);
    const auto now = decode_from(prefix_, ids_.size());
    if (now.size() > before.size()) rest += now.substr(before.size());
    prefix_ = read_ = ids_.size();
  }
  return release(std::move(rest), true);
}

std::string IncrementalText::release(std::string text, bool at_end) {
  held_.clear();
  // The stop string that starts earliest in the text (with one stop
  // string, as vLLM finds it).
  std::size_t cut = std::string::npos;
  for (const auto& s : stops_) {
    const auto at = text.find(s);
    if (at != std::string::npos && at < cut) {
      cut = at;
      stop_ = s;
    }
  }
  if (cut != std::string::npos) {
    tokens_at_stop_ = added_;
    return text.substr(0, cut);
  }
  if (at_end || longest_stop_ == 0) return text;
  // Hold back the longest tail that begins some stop string.
  std::size_t keep = 0;
  for (const auto& s : stops_) {
    for (std::size_t len = std::min(s.size() - 1, text.size()); len > keep; --len) {
      if (std::string_view(text).substr(text.size() - len) == std::string_view(s).substr(0, len)) {
        keep = len;
        break;
      }
    }
  }
  held_ = text.substr(text.size() - keep);
  text.resize(text.size() - keep);
  return text;
}

}  // namespace april::hf
