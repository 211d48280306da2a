#include "hf/nfc.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "hf/unicode_classes.hpp"
#include "hf/utf8.hpp"

namespace april::hf {
namespace {

// Hangul syllables decompose and compose by arithmetic (Unicode 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

void decompose(char32_t cp, std::vector<char32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto table = unicode::decompositions();
  const auto it = std::lower_bound(table.begin(), table.end(), cp, [](const unicode::Decomposition& d, char32_t c) { return d.cp < c; });
  if (it == table.end() || it->cp != cp) {
    out.push_back(cp);
    return;
  }
  const auto pool = unicode::decomposition_pool().subspan(it->offset, it->length);
  out.insert(out.end(), pool.begin(), pool.end());
}

std::optional<char32_t> compose(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount) {
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  }
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 && second > kTBase && second < kTBase + kTCount) {
    return first + (second - kTBase);
  }
  const auto table = unicode::compositions();
  const auto it = std::lower_bound(
      table.begin(), table.end(), std::pair{first, second},
      [](const unicode::Composition& c, const auto& key) { return c.first != key.first ? c.first < key.first : c.second < key.second; });
  if (it == table.end() || it->first != first || it->second != second) return std::nullopt;
  return it->composite;
}

// Canonical ordering: each run of nonzero combining classes, stably sorted.
void reorder(std::vector<char32_t>& cps) {
  std::size_t i = 0;
  while (i < cps.size()) {
    if (unicode::combining_class(cps[i]) == 0) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < cps.size() && unicode::combining_class(cps[end]) != 0) ++end;
    std::stable_sort(cps.begin() + static_cast<std::ptrdiff_t>(i), cps.begin() + static_cast<std::ptrdiff_t>(end),
                     [](char32_t a, char32_t b) { return unicode::combining_class(a) < unicode::combining_class(b); });
    i = end;
  }
}

// Canonical composition (UAX #15, 1.3): each character joins the last
// starter when nothing between them blocks it.
std::vector<char32_t> recompose(const std::vector<char32_t>& cps) {
  std::vector<char32_t> out;
  out.reserve(cps.size());
  std::optional<std::size_t> starter;  // index in `out`
  int last_ccc = -1;                   // class of the last character after the starter; -1: none
  for (const char32_t cp : cps) {
    const int ccc = unicode::combining_class(cp);
    if (starter && (last_ccc == -1 || last_ccc < ccc)) {
      if (const auto composite = compose(out[*starter], cp)) {
        out[*starter] = *composite;
        continue;
      }
    }
    if (ccc == 0) {
      starter = out.size();
      last_ccc = -1;
    } else {
      last_ccc = ccc;
    }
    out.push_back(cp);
  }
  return out;
}

// UAX #15's quick check, simplified: no code point that NFC could change.
bool is_nfc(std::string_view text) {
  std::size_t at = 0;
  while (at < text.size()) {
    if (static_cast<std::uint8_t>(text[at]) < 0x80) {
      ++at;
    } else if (unicode::nfc_unsafe(utf8::next(text, at))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string nfc(std::string_view text) {
  if (is_nfc(text)) return std::string(text);
  utf8::Decoded decoded;
  if (utf8::decode(text, decoded)) throw std::invalid_argument("nfc: the text is not valid UTF-8");
  std::vector<char32_t> cps;
  cps.reserve(decoded.cps.size() + decoded.cps.size() / 2);
  for (const char32_t cp : decoded.cps) decompose(cp, cps);
  reorder(cps);
  std::string out;
  out.reserve(text.size());
  for (const char32_t cp : recompose(cps)) utf8::append(out, cp);
  return out;
}

}  // namespace april::hf
