#pragma once
// Math answers as text: where a model's response states its final answer,
// and one normal form for such answers so that "\dfrac{3}{4}", "0.75" and
// "3/4" compare equal. Plain C++, no torch.
//
// Extraction follows the conventions the public math RL recipes train with:
// the last \boxed{...} (DeepScaleR, MATH-style prompts), else the last
// "Answer: X" line (DAPO-Math-17k's prompts ask for it; verl's
// verl/utils/reward_score/math_dapo.py reads it with (?i)Answer\s*:\s*([^\n]+)),
// else the last number in the text (GSM8K-style prose: "... so she makes 18.").
//
// Normalisation is deliberately literal: what it does not understand it
// compares as a normalised string, and never guesses (no symbolic algebra:
// "\frac{\sqrt{3}}{2}" equals "\dfrac{\sqrt3}{2}" but not "\sqrt{3}/2").
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace april::live::math {

// ---- where the answer is -------------------------------------------------

enum class AnswerSource {
  None,         // nothing found (see ExtractedAnswer::note)
  Boxed,        // the content of the last \boxed{...} / \fbox{...} / "\boxed X"
  AnswerLine,   // the rest of the last "Answer: ..." line (DAPO's convention)
  FinalNumber,  // the last number in the text
};
const char* answer_source_name(AnswerSource source);

struct ExtractedAnswer {
  AnswerSource source = AnswerSource::None;
  std::string text;  // as written in the response: the box's content, the line's rest, the number
  std::string note;  // with None: why (e.g. the last \boxed{ is never closed)
};

// The final answer stated in `response`. A last \boxed{ that is never closed
// (a response cut off at the length limit) is no answer: the model meant to
// box one, and an earlier number is not it. Empty boxes (\boxed{} echoed from
// the instruction) are skipped. Linear in the response's length.
ExtractedAnswer extract_answer(std::string_view response);

// GSM8K's gold answers are worked solutions ending in "#### 72": the text
// after the last "####", trimmed; nullopt when there is none or it is empty.
std::optional<std::string> gsm8k_final_answer(std::string_view solution);

// ---- one normal form -----------------------------------------------------

// An exact rational: den > 0 and gcd(|num|, den) == 1. Numbers are compared
// in 64-bit integers with every product checked for overflow; a number that
// does not fit (a 25-digit integer, a decimal with 20 digits) has no Rational
// and is compared by its canonical digits instead (never by a rounded double).
struct Rational {
  std::int64_t num = 0;
  std::int64_t den = 1;
  friend bool operator==(const Rational&, const Rational&) = default;
};

struct NormalizedAnswer {
  // For numbers: "-7", "3/4" (reduced), or canonical digits for a number past
  // 64 bits ("123456789012345678901234"). Otherwise the LaTeX with spacing,
  // delimiters and wrappers removed (see normalize_answer).
  std::string text;
  std::optional<Rational> value;  // when it is a number that fits 64 bits
};

// What it does, in order:
//  - trims; "−" -> "-", "π" -> "\pi"; drops "°";
//  - drops "$", "\$", "\(", "\)", "\[", "\]", "\left", "\right", the spacing
//    commands "\!", "\,", "\;", "\:", "\ ", "\quad", "\qquad", "~", and the
//    degree marks "^\circ", "^{\circ}", "\degree"; "{,}" -> ","; "\%" -> "%";
//    "\dfrac"/"\tfrac" -> "\frac";
//  - unwraps an answer that is all \boxed{..}, \fbox{..}, \text{..}, \textbf{..},
//    \textrm{..}, \mathrm{..}, \mathbf{..} or \mbox{..};
//  - removes all whitespace; keeps what follows the last "=" ("x=5" -> "5");
//    drops trailing periods and one leading "+";
//  - drops a trailing unit in \text{..}/\mbox{..}/\textrm{..}/\mathrm{..} made of
//    letters (optionally ^2 or ^3) when what precedes it is a number
//    ("5\text{ cm}" -> "5"); plain unit words ("5 cm") are kept (a guess
//    would make "2x" equal "2");
//  - writes \frac and \sqrt arguments in braces ("\frac34" -> "\frac{3}{4}",
//    "\sqrt2" -> "\sqrt{2}");
//  - reads numbers: integers (leading zeros, a sign, thousands separators in
//    groups of three: "1,000"), decimals (exactly: 0.5 is 1/2), a/b, and
//    \frac{a}{b} with a and b such numbers.
// Percent signs, mixed numbers ("1\frac{1}{2}"), scientific notation, sets,
// intervals, tuples and expressions are compared as the normalised text.
// An answer longer than 1024 bytes is not normalised: its trimmed text is
// compared as is (a real final answer is far shorter).
NormalizedAnswer normalize_answer(std::string_view answer);

// Equal as exact numbers when both are numbers that fit, else as normalised
// text. Empty answers are never equal.
bool answers_equal(const NormalizedAnswer& a, const NormalizedAnswer& b);
bool answers_equal(std::string_view a, std::string_view b);

}  // namespace april::live::math
