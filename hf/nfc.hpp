#pragma once
// Unicode Normalization Form C, as Hugging Face's NFC normalizer computes it
// (the crate unicode-normalization-alignments, whose tables are Unicode 9.0:
// a combining mark added in Unicode 10.0 or later is not reordered or
// composed there, and is not here). Qwen2/Qwen2.5/Qwen3 tokenizers normalize
// with it. Checked against tokenizers 0.23.2's NFC on every code point alone,
// every composition pair and random mark sequences; should Hugging Face move
// to newer tables, text with marks added after Unicode 9.0 would differ
// (make_unicode_classes.py holds the version).
#include <string>
#include <string_view>

namespace april::hf {

// NFC of `text` (valid UTF-8). Text without a code point that NFC could
// change (the quick check) comes back as it is, without decoding.
std::string nfc(std::string_view text);

}  // namespace april::hf
