#pragma once
// UTF-8 as the tokenizer needs it: strict decoding of the text it is given,
// encoding, and the lossy decoding a byte-level decoder ends with.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace april::hf::utf8 {

// The code points of `text`, and the byte offset where each starts (plus
// text.size() at the end). Returns nullopt, or the offset of the first byte
// that does not begin a well-formed sequence (RFC 3629: no overlongs, no
// surrogates, nothing past U+10FFFF); `out` is then incomplete.
struct Decoded {
  std::vector<char32_t> cps;
  std::vector<std::size_t> byte_offsets;  // cps.size() + 1 entries
};
std::optional<std::size_t> decode(std::string_view text, Decoded& out);

// The offset of the first byte of `text` that does not begin a well-formed
// sequence, or nullopt when it is all UTF-8; nothing is allocated.
std::optional<std::size_t> first_invalid(std::string_view text);

// The code point at `at` in valid UTF-8, `at` moved past it.
char32_t next(std::string_view text, std::size_t& at);

void append(std::string& out, char32_t cp);

// `bytes` as text, each maximal ill-formed subpart replaced by U+FFFD (the
// Unicode "substitution of maximal subparts" practice, as Rust's
// String::from_utf8_lossy, which Hugging Face's ByteLevel decoder calls).
std::string decode_lossy(std::string_view bytes);

}  // namespace april::hf::utf8
