#pragma once
// The pre-tokenizer split of Qwen2/Qwen2.5/Qwen3 and Llama 3: the regex they
// ship in tokenizer.json, matched by hand over code points. Both are
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,D}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// with D = 1 for Qwen (\p{N}: digits one at a time) and D = 3 for Llama 3
// (\p{N}{1,3}). Hugging Face runs them with Oniguruma: at each position the
// first alternative that matches wins (leftmost-first, greedy, with
// backtracking), and the matches, with any text between them, are the pieces
// (the Split pre-tokenizer's "Isolated" behaviour).
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace april::hf {

enum class SplitPattern { kQwen2, kLlama3 };

// The pattern whose regex text is exactly `regex`, or nullopt.
std::optional<SplitPattern> split_pattern_of(std::string_view regex);
// The regex text of `pattern` (as tokenizer.json holds it).
std::string_view split_pattern_regex(SplitPattern pattern);

// The pieces of `cps` as [begin, end) code point index ranges, in order and
// covering all of it.
std::vector<std::pair<std::size_t, std::size_t>> split_pieces(SplitPattern pattern, const std::vector<char32_t>& cps);

}  // namespace april::hf
