#include "hf/byte_level.hpp"

#include <array>

#include "hf/utf8.hpp"

namespace april::hf::byte_level {
namespace {

constexpr bool stands_for_itself(unsigned b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

constexpr std::array<char32_t, 256> make_chars() {
  std::array<char32_t, 256> chars{};
  char32_t next = 0x100;
  for (unsigned b = 0; b < 256; ++b) chars[b] = stands_for_itself(b) ? char32_t{b} : next++;
  return chars;
}
constexpr std::array<char32_t, 256> kChars = make_chars();
constexpr char32_t kLastChar = 0x100 + 68 - 1;

struct Tables {
  std::array<std::string, 256> utf8;
  std::array<std::int16_t, kLastChar + 1> byte_of;  // -1: none
  Tables() {
    byte_of.fill(-1);
    for (unsigned b = 0; b < 256; ++b) {
      utf8::append(utf8[b], kChars[b]);
      byte_of[kChars[b]] = static_cast<std::int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;  // constant once built
  return t;
}

}  // namespace

const std::string& char_of_byte(std::uint8_t byte) { return tables().utf8[byte]; }

std::optional<std::uint8_t> byte_of_char(char32_t cp) {
  if (cp > kLastChar) return std::nullopt;
  const std::int16_t b = tables().byte_of[cp];
  if (b < 0) return std::nullopt;
  return static_cast<std::uint8_t>(b);
}

}  // namespace april::hf::byte_level
