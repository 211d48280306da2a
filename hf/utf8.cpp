#include "hf/utf8.hpp"

#include <cstdint>

namespace april::hf::utf8 {
namespace {

// The well-formed sequence that begins with `lead`: its length and the
// range its second byte must fall in (later bytes are 0x80..0xBF). Length 0:
// `lead` begins none.
struct LeadByte {
  int length;
  std::uint8_t second_lo;
  std::uint8_t second_hi;
};

LeadByte lead_byte(std::uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};  // no overlong
  if (b == 0xED) return {3, 0x80, 0x9F};  // no surrogate
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};  // no overlong
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};  // nothing past U+10FFFF
  return {0, 0, 0};
}

// How many bytes from `at` form the longest prefix of a well-formed
// sequence (its "maximal subpart"), and whether that prefix is the whole
// sequence; `cp` is set when it is.
std::size_t scan(std::string_view s, std::size_t at, bool& whole, char32_t& cp) {
  const auto lead = static_cast<std::uint8_t>(s[at]);
  const LeadByte info = lead_byte(lead);
  whole = false;
  if (info.length == 0) return 1;
  if (info.length == 1) {
    whole = true;
    cp = lead;
    return 1;
  }
  char32_t value = lead & (0xFFu >> (info.length + 1));
  std::size_t taken = 1;
  for (int k = 1; k < info.length; ++k) {
    if (at + taken >= s.size()) return taken;
    const auto b = static_cast<std::uint8_t>(s[at + taken]);
    const std::uint8_t lo = k == 1 ? info.second_lo : 0x80, hi = k == 1 ? info.second_hi : 0xBF;
    if (b < lo || b > hi) return taken;
    value = (value << 6) | (b & 0x3Fu);
    ++taken;
  }
  whole = true;
  cp = value;
  return taken;
}

}  // namespace

std::optional<std::size_t> decode(std::string_view text, Decoded& out) {
  out.cps.clear();
  out.byte_offsets.clear();
  out.cps.reserve(text.size());
  out.byte_offsets.reserve(text.size() + 1);
  std::size_t at = 0;
  while (at < text.size()) {
    bool whole = false;
    char32_t cp = 0;
    const std::size_t n = scan(text, at, whole, cp);
    if (!whole) return at;
    out.cps.push_back(cp);
    out.byte_offsets.push_back(at);
    at += n;
  }
  out.byte_offsets.push_back(text.size());
  return std::nullopt;
}

std::optional<std::size_t> first_invalid(std::string_view text) {
  std::size_t at = 0;
  while (at < text.size()) {
    if (static_cast<std::uint8_t>(text[at]) < 0x80) {
      ++at;
      continue;
    }
    bool whole = false;
    char32_t cp = 0;
    const std::size_t n = scan(text, at, whole, cp);
    if (!whole) return at;
    at += n;
  }
  return std::nullopt;
}

char32_t next(std::string_view text, std::size_t& at) {
  bool whole = false;
  char32_t cp = 0;
  at += scan(text, at, whole, cp);
  return whole ? cp : 0xFFFD;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string decode_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  std::size_t at = 0;
  while (at < bytes.size()) {
    bool whole = false;
    char32_t cp = 0;
    const std::size_t n = scan(bytes, at, whole, cp);
    if (whole) {
      out.append(bytes.substr(at, n));
    } else {
      append(out, 0xFFFD);
    }
    at += n;
  }
  return out;
}

}  // namespace april::hf::utf8
