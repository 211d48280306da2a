#pragma once
// GPT-2's byte-level alphabet (bytes_to_unicode): every byte is written as a
// printable character, so that a BPE vocabulary of strings covers any byte
// sequence. The printable bytes '!'..'~', U+00A1..U+00AC and U+00AE..U+00FF
// stand for themselves; the other 68 take U+0100.. in byte order (space is
// U+0120 'Ġ', newline U+010A 'Ċ').
#include <cstdint>
#include <optional>
#include <string>

namespace april::hf::byte_level {

// The character that stands for `byte`, as UTF-8.
const std::string& char_of_byte(std::uint8_t byte);
// The byte a character stands for, or nullopt for a character outside the alphabet.
std::optional<std::uint8_t> byte_of_char(char32_t cp);

}  // namespace april::hf::byte_level
