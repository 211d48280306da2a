#include "hf/split_pattern.hpp"

#include "hf/unicode_classes.hpp"

namespace april::hf {
namespace {

using unicode::CharClass;

constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

class Matcher {
 public:
  Matcher(const std::vector<char32_t>& cps, std::size_t max_digits) : cps_(cps), max_digits_(max_digits) {}

  // The end of the match at `at`, trying the alternatives in order; `at`
  // itself when none matches.
  [[nodiscard]] std::size_t match(std::size_t at) const {
    if (std::size_t end = contraction(at); end != at) return end;
    if (std::size_t end = letters(at); end != at) return end;
    if (std::size_t end = numbers(at); end != at) return end;
    if (std::size_t end = punctuation(at); end != at) return end;
    if (std::size_t end = newlines(at); end != at) return end;
    if (std::size_t end = spaces_not_before_text(at); end != at) return end;
    return whitespace_run(at);
  }

 private:
  [[nodiscard]] CharClass cls(std::size_t i) const { return unicode::char_class(cps_[i]); }
  [[nodiscard]] bool is_crlf(std::size_t i) const { return cps_[i] == '\r' || cps_[i] == '\n'; }
  [[nodiscard]] bool is_space(std::size_t i) const { return cls(i) == CharClass::kWhitespace; }
  // [^\s\p{L}\p{N}]
  [[nodiscard]] bool is_other(std::size_t i) const { return cls(i) == CharClass::kOther; }
  // The end of the run of \s starting at `at`.
  [[nodiscard]] std::size_t space_run_end(std::size_t at) const {
    std::size_t i = at;
    while (i < cps_.size() && is_space(i)) ++i;
    return i;
  }

  // (?i:'s|'t|'re|'ve|'m|'ll|'d): ASCII letters in either case, and U+017F
  // (long s), which case-folds to 's' (Oniguruma folds by Unicode, as does
  // every other letter here only to itself and its ASCII other case).
  [[nodiscard]] std::size_t contraction(std::size_t at) const {
    if (cps_[at] != '\'' || at + 1 >= cps_.size()) return at;
    auto lower = [this](std::size_t i) -> char32_t {
      if (i >= cps_.size()) return 0;
      const char32_t c = cps_[i];
      if (c == 0x17F) return 's';
      return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
    };
    const char32_t a = lower(at + 1);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return at + 2;
    const char32_t b = lower(at + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return at + 3;
    return at;
  }

  // [^\r\n\p{L}\p{N}]?\p{L}+
  [[nodiscard]] std::size_t letters(std::size_t at) const {
    std::size_t i = at;
    if (!is_crlf(i) && cls(i) != CharClass::kLetter && cls(i) != CharClass::kNumber) ++i;
    if (i >= cps_.size() || cls(i) != CharClass::kLetter) return at;
    while (i < cps_.size() && cls(i) == CharClass::kLetter) ++i;
    return i;
  }

  // \p{N} (Qwen) or \p{N}{1,3} (Llama 3)
  [[nodiscard]] std::size_t numbers(std::size_t at) const {
    std::size_t i = at;
    while (i < cps_.size() && i - at < max_digits_ && cls(i) == CharClass::kNumber) ++i;
    return i;
  }

  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  [[nodiscard]] std::size_t punctuation(std::size_t at) const {
    std::size_t i = at;
    if (cps_[i] == ' ' && i + 1 < cps_.size() && is_other(i + 1)) ++i;
    if (!is_other(i)) return at;
    while (i < cps_.size() && is_other(i)) ++i;
    while (i < cps_.size() && is_crlf(i)) ++i;
    return i;
  }

  // \s*[\r\n]+ : the whitespace run, backtracked to end after its last \r or \n.
  [[nodiscard]] std::size_t newlines(std::size_t at) const {
    const std::size_t run_end = space_run_end(at);
    for (std::size_t i = run_end; i > at; --i) {
      if (is_crlf(i - 1)) return i;
    }
    return at;
  }

  // \s+(?!\S) : the whitespace run, less its last character when text follows.
  [[nodiscard]] std::size_t spaces_not_before_text(std::size_t at) const {
    const std::size_t run_end = space_run_end(at);
    if (run_end == at) return at;
    if (run_end == cps_.size()) return run_end;
    return run_end - 1;  // == at when the run is one character: no match
  }

  // \s+
  [[nodiscard]] std::size_t whitespace_run(std::size_t at) const { return space_run_end(at); }

  const std::vector<char32_t>& cps_;
  std::size_t max_digits_;
};

}  // namespace

std::optional<SplitPattern> split_pattern_of(std::string_view regex) {
  if (regex == kQwen2Regex) return SplitPattern::kQwen2;
  if (regex == kLlama3Regex) return SplitPattern::kLlama3;
  return std::nullopt;
}

std::string_view split_pattern_regex(SplitPattern pattern) { return pattern == SplitPattern::kQwen2 ? kQwen2Regex : kLlama3Regex; }

std::vector<std::pair<std::size_t, std::size_t>> split_pieces(SplitPattern pattern, const std::vector<char32_t>& cps) {
  const Matcher matcher(cps, pattern == SplitPattern::kQwen2 ? 1 : 3);
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  std::size_t at = 0;
  std::size_t unmatched = 0;  // start of text no alternative matched (kept as a piece, as Isolated does)
  while (at < cps.size()) {
    const std::size_t end = matcher.match(at);
    if (end == at) {
      ++at;
      continue;
    }
    if (unmatched < at) pieces.emplace_back(unmatched, at);
    pieces.emplace_back(at, end);
    at = end;
    unmatched = end;
  }
  if (unmatched < cps.size()) pieces.emplace_back(unmatched, cps.size());
  return pieces;
}

}  // namespace april::hf
