#include "tasks/math/math_answer.hpp"

#include <array>
#include <cstddef>
#include <limits>
#include <numeric>
#include <utility>

namespace april::live::math {
namespace {

constexpr std::size_t kNpos = std::string_view::npos;
// An answer longer than this is compared as trimmed text without
// normalisation: a real final answer is short (verl's DAPO reward notes the
// longest MATH-500 answer has 159 characters), and the bound keeps the
// normaliser's brace matching cheap on whatever a model puts in a box.
constexpr std::size_t kMaxNormalizedBytes = 1024;
// \frac and \sqrt arguments are rewritten recursively at most this deep;
// deeper nesting is left as written (compared as text).
constexpr int kMaxNesting = 32;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string_view trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

bool starts_with(std::string_view s, std::size_t at, std::string_view prefix) {
  return at <= s.size() && s.substr(at).substr(0, prefix.size()) == prefix;
}

// Every `from` replaced by `to`, in one left-to-right pass.
std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  for (;;) {
    const std::size_t at = s.find(from, i);
    if (at == kNpos) break;
    out.append(s.substr(i, at - i));
    out.append(to);
    i = at + from.size();
  }
  out.append(s.substr(i));
  return out;
}

// `\name` removed where it is that command: not where it starts a longer
// one (\left, but not \leftarrow).
std::string remove_command(std::string_view s, std::string_view command) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  for (;;) {
    const std::size_t at = s.find(command, i);
    if (at == kNpos) break;
    const std::size_t end = at + command.size();
    out.append(s.substr(i, at - i));
    if (end < s.size() && is_letter(s[end])) out.append(command);
    i = end;
  }
  out.append(s.substr(i));
  return out;
}

std::string without_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (!is_space(c)) out += c;
  }
  return out;
}

// The index of the '}' closing the group that opens at s[open] == '{';
// escaped characters (\{, \}, \\) do not count. nullopt when never closed.
std::optional<std::size_t> group_end(std::string_view s, std::size_t open) {
  std::size_t depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\\') {
      ++i;  // the escaped character
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return i;
    }
  }
  return std::nullopt;
}

// ---- numbers ----

// A decimal as written, canonical: no leading zeros in `whole`, no trailing
// zeros in `fraction`, zero is not negative.
struct Decimal {
  bool negative = false;
  std::string whole;
  std::string fraction;
};

// "-1,234.50", "007", ".5": digits with an optional sign, thousands separated
// by commas in groups of exactly three, an optional decimal part.
std::optional<Decimal> read_decimal(std::string_view s) {
  Decimal d;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) d.negative = s[i++] == '-';
  const std::size_t start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  d.whole.assign(s.substr(start, i - start));
  if (i < s.size() && s[i] == ',') {
    if (d.whole.empty() || d.whole.size() > 3) return std::nullopt;
    while (i < s.size() && s[i] == ',') {
      if (i + 3 >= s.size()) return std::nullopt;  // a group needs three digits after the comma
      if (!is_digit(s[i + 1]) || !is_digit(s[i + 2]) || !is_digit(s[i + 3])) return std::nullopt;
      d.whole.append(s.substr(i + 1, 3));
      i += 4;
    }
  }
  if (i < s.size() && s[i] == '.') {
    const std::size_t f = ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == f) return std::nullopt;
    d.fraction.assign(s.substr(f, i - f));
  }
  if (i != s.size() || (d.whole.empty() && d.fraction.empty())) return std::nullopt;
  const std::size_t nz = d.whole.find_first_not_of('0');
  d.whole.erase(0, nz == std::string::npos ? d.whole.size() : nz);
  while (!d.fraction.empty() && d.fraction.back() == '0') d.fraction.pop_back();
  if (d.whole.empty() && d.fraction.empty()) d.negative = false;
  return d;
}

std::string decimal_text(const Decimal& d, bool with_sign) {
  std::string out = (with_sign && d.negative) ? "-" : "";
  out += d.whole.empty() ? "0" : d.whole;
  if (!d.fraction.empty()) out += "." + d.fraction;
  return out;
}

// A reduced rational, or nullopt for a zero denominator or a value whose
// terms leave the int64 range (INT64_MIN excluded, so negation is defined).
std::optional<Rational> make_rational(std::int64_t num, std::int64_t den) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  if (den == 0 || num == kMin || den == kMin) return std::nullopt;
  if (den < 0) {
    num = -num;
    den = -den;
  }
  const std::int64_t g = std::gcd(num, den);
  if (g > 1) {
    num /= g;
    den /= g;
  }
  if (num == 0) den = 1;
  return Rational{num, den};
}

std::optional<Rational> to_rational(const Decimal& d) {
  if (d.fraction.size() > 18) return std::nullopt;  // 10^19 is past int64
  std::int64_t num = 0;
  for (char c : d.whole + d.fraction) {
    if (__builtin_mul_overflow(num, std::int64_t{10}, &num) || __builtin_add_overflow(num, std::int64_t{c - '0'}, &num)) {
      return std::nullopt;
    }
  }
  std::int64_t den = 1;
  for (std::size_t k = 0; k < d.fraction.size(); ++k) den *= 10;
  return make_rational(d.negative ? -num : num, den);
}

std::optional<Rational> divide(const Rational& a, const Rational& b) {
  std::int64_t num = 0;
  std::int64_t den = 0;
  if (b.num == 0 || __builtin_mul_overflow(a.num, b.den, &num) || __builtin_mul_overflow(a.den, b.num, &den)) {
    return std::nullopt;
  }
  return make_rational(num, den);
}

std::string rational_text(const Rational& r) {
  return r.den == 1 ? std::to_string(r.num) : std::to_string(r.num) + "/" + std::to_string(r.den);
}

// A number in the normal form's syntax (whitespace gone, \frac arguments
// braced): a decimal, a/b or \frac{a}{b}, with an optional leading sign.
// nullopt when `s` is not one (or divides by zero).
std::optional<NormalizedAnswer> read_number(std::string_view s) {
  bool negative = false;
  std::string_view rest = s;
  if (!rest.empty() && (rest[0] == '-' || rest[0] == '+')) {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  std::string_view top;
  std::string_view bottom;
  if (starts_with(rest, 0, "\\frac{")) {
    const std::size_t open1 = 5;
    const auto close1 = group_end(rest, open1);
    if (!close1 || *close1 + 1 >= rest.size() || rest[*close1 + 1] != '{') return std::nullopt;
    const auto close2 = group_end(rest, *close1 + 1);
    if (!close2 || *close2 + 1 != rest.size()) return std::nullopt;
    top = rest.substr(open1 + 1, *close1 - open1 - 1);
    bottom = rest.substr(*close1 + 2, *close2 - *close1 - 2);
  } else if (const std::size_t slash = rest.find('/'); slash != kNpos) {
    top = rest.substr(0, slash);
    bottom = rest.substr(slash + 1);
  } else {
    // A sign written twice ("--5", "+-5") is not a number we read.
    if (!rest.empty() && (rest[0] == '-' || rest[0] == '+')) return std::nullopt;
    auto d = read_decimal(rest);
    if (!d) return std::nullopt;
    d->negative = negative && !(d->whole.empty() && d->fraction.empty());
    NormalizedAnswer out;
    out.value = to_rational(*d);
    out.text = out.value ? rational_text(*out.value) : decimal_text(*d, true);
    return out;
  }
  auto a = read_decimal(top);
  auto b = read_decimal(bottom);
  if (!a || !b || (b->whole.empty() && b->fraction.empty())) return std::nullopt;
  const bool minus = negative != (a->negative != b->negative);
  a->negative = false;
  b->negative = false;
  NormalizedAnswer out;
  const auto ra = to_rational(*a);
  const auto rb = to_rational(*b);
  if (ra && rb) {
    if (auto q = divide(*ra, *rb)) out.value = make_rational(minus ? -q->num : q->num, q->den);
  }
  if (out.value) {
    out.text = rational_text(*out.value);
  } else {
    const bool zero = a->whole.empty() && a->fraction.empty();
    // Appended piece by piece: "-" + a temporary string trips GCC 12's -Wrestrict.
    if (minus && !zero) out.text += '-';
    out.text += decimal_text(*a, false);
    out.text += '/';
    out.text += decimal_text(*b, false);
  }
  return out;
}

// ---- LaTeX clean-up ----

// One argument of a command at s[i]: a {group} (its content), a \command or
// one character. nullopt at the end of `s` or a group never closed.
struct Argument {
  std::string_view text;
  bool braced = false;
  std::size_t next = 0;
};
std::optional<Argument> read_argument(std::string_view s, std::size_t i) {
  if (i >= s.size() || s[i] == '}') return std::nullopt;
  if (s[i] == '{') {
    const auto close = group_end(s, i);
    if (!close) return std::nullopt;
    return Argument{s.substr(i + 1, *close - i - 1), true, *close + 1};
  }
  if (s[i] == '\\') {
    std::size_t j = i + 1;
    while (j < s.size() && is_letter(s[j])) ++j;
    if (j == i + 1 && j < s.size()) ++j;  // an escaped character: \{ \%
    return Argument{s.substr(i, j - i), false, j};
  }
  return Argument{s.substr(i, 1), false, i + 1};
}

// \frac, \binom (two arguments) and \sqrt (one, after an optional [n]) with
// every argument in braces: "\frac34" -> "\frac{3}{4}", "\sqrt2" -> "\sqrt{2}".
std::string brace_arguments(std::string_view s, int depth) {
  if (depth > kMaxNesting) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '\\') {
      out += s[i++];
      continue;
    }
    std::size_t j = i + 1;
    while (j < s.size() && is_letter(s[j])) ++j;
    if (j == i + 1) {  // an escaped character
      out.append(s.substr(i, std::min<std::size_t>(2, s.size() - i)));
      i += 2;
      continue;
    }
    const std::string_view name = s.substr(i, j - i);
    out.append(name);
    i = j;
    int arguments = 0;
    if (name == "\\frac" || name == "\\binom") {
      arguments = 2;
    } else if (name == "\\sqrt") {
      arguments = 1;
      if (i < s.size() && s[i] == '[') {
        const std::size_t close = s.find(']', i);
        if (close == kNpos) continue;
        out.append(s.substr(i, close + 1 - i));
        i = close + 1;
      }
    }
    for (int k = 0; k < arguments; ++k) {
      const auto arg = read_argument(s, i);
      if (!arg) break;
      out += '{';
      out += arg->braced ? brace_arguments(arg->text, depth + 1) : std::string(arg->text);
      out += '}';
      i = arg->next;
    }
  }
  return out;
}

// An answer that is all one wrapper, \boxed{5} or \text{Yes}, unwrapped
// (repeatedly: \boxed{\text{5}}).
std::string unwrap(std::string s) {
  static constexpr std::array<std::string_view, 8> kWrappers = {"\\boxed",  "\\fbox",   "\\text",   "\\textbf",
                                                                "\\textrm", "\\mathrm", "\\mathbf", "\\mbox"};
  for (bool changed = true; changed;) {
    changed = false;
    const std::string_view t = trim(s);
    for (const auto w : kWrappers) {
      if (!starts_with(t, 0, w) || w.size() >= t.size() || t[w.size()] != '{') continue;
      const auto close = group_end(t, w.size());
      if (!close || *close + 1 != t.size()) continue;
      s = std::string(t.substr(w.size() + 1, *close - w.size() - 1));
      changed = true;
      break;
    }
  }
  return std::string(trim(s));
}

void drop_trailing_periods(std::string& s) {
  while (!s.empty() && s.back() == '.') s.pop_back();
}

// "5\text{cm}", "12\mbox{m}^2" -> the number before the unit, when the unit
// is letters only (whitespace is already gone) and what precedes is a number.
void drop_text_unit(std::string& s) {
  static constexpr std::array<std::string_view, 4> kUnitWrappers = {"\\text{", "\\mbox{", "\\textrm{", "\\mathrm{"};
  static constexpr std::array<std::string_view, 5> kPowers = {"", "^2", "^3", "^{2}", "^{3}"};
  for (const auto w : kUnitWrappers) {
    const std::size_t at = s.rfind(w);
    if (at == std::string::npos || at == 0) continue;
    const auto close = group_end(s, at + w.size() - 1);
    if (!close) continue;
    const std::string_view unit = std::string_view(s).substr(at + w.size(), *close - at - w.size());
    bool letters = !unit.empty();
    for (char c : unit) letters = letters && (is_letter(c) || c == '.');
    if (!letters) continue;
    const std::string_view tail = std::string_view(s).substr(*close + 1);
    bool power = false;
    for (const auto p : kPowers) power = power || tail == p;
    if (!power) continue;
    std::string before = s.substr(0, at);
    drop_trailing_periods(before);
    if (read_number(brace_arguments(before, 0))) {
      s = before;
      return;
    }
  }
}

// ---- extraction ----

enum class BoxKind { Found, Unclosed, None };
struct BoxSearch {
  BoxKind kind = BoxKind::None;
  std::string content;
  std::string command;
};

// The last \boxed / \fbox in `r` with non-empty content. Walks the
// backslashes from the end, so each is looked at once.
BoxSearch last_box(std::string_view r) {
  static constexpr std::array<std::string_view, 2> kBoxes = {"\\boxed", "\\fbox"};
  std::size_t end = r.size();
  while (end > 0) {
    const std::size_t at = r.rfind('\\', end - 1);
    if (at == kNpos) break;
    end = at;
    for (const auto box : kBoxes) {
      if (!starts_with(r, at, box)) continue;
      const std::size_t after = at + box.size();
      if (after < r.size() && r[after] == '{') {
        const auto close = group_end(r, after);
        if (!close) return {BoxKind::Unclosed, "", std::string(box)};
        const auto content = trim(r.substr(after + 1, *close - after - 1));
        if (!content.empty()) return {BoxKind::Found, std::string(content), std::string(box)};
      } else if (after < r.size() && (r[after] == ' ' || r[after] == '\t')) {
        // "\boxed 5" (the form lm-eval's MATH scorer reads too): up to whitespace or '$'.
        std::size_t j = after;
        while (j < r.size() && (r[j] == ' ' || r[j] == '\t')) ++j;
        std::size_t k = j;
        while (k < r.size() && !is_space(r[k]) && r[k] != '$') ++k;
        if (k > j) return {BoxKind::Found, std::string(r.substr(j, k - j)), std::string(box)};
      }
    }
  }
  return {};
}

// The rest of the last "Answer:" line (case-insensitive; whitespace, even
// newlines, may separate "Answer", ':' and the answer, as in verl's
// (?i)Answer\s*:\s*([^\n]+)); markdown emphasis around it is dropped
// ("**Answer:** 17").
std::optional<std::string> last_answer_line(std::string_view r) {
  static constexpr std::string_view kWord = "answer";
  if (r.size() < kWord.size()) return std::nullopt;
  for (std::size_t at = r.size() - kWord.size() + 1; at-- > 0;) {
    bool match = true;
    for (std::size_t k = 0; k < kWord.size() && match; ++k) match = lower(r[at + k]) == kWord[k];
    if (!match) continue;
    std::size_t j = at + kWord.size();
    while (j < r.size() && is_space(r[j])) ++j;
    if (j >= r.size() || r[j] != ':') continue;
    ++j;
    while (j < r.size() && is_space(r[j])) ++j;
    const std::size_t eol = std::min(r.find('\n', j), r.size());
    std::string_view text = trim(r.substr(j, eol - j));
    while (!text.empty() && text.front() == '*') text.remove_prefix(1);
    while (!text.empty() && text.back() == '*') text.remove_suffix(1);
    text = trim(text);
    if (!text.empty()) return std::string(text);
  }
  return std::nullopt;
}

// The last number in `r`: digits with thousands groups, a decimal part or a
// "/denominator", and a '-' written right before it when that is a sign (not
// after a digit, a letter or a closing bracket: "5-3" ends in 3).
std::optional<std::string> last_number(std::string_view r) {
  std::optional<std::string> best;
  std::size_t i = 0;
  while (i < r.size()) {
    if (!is_digit(r[i])) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < r.size() && is_digit(r[i])) ++i;
    if (i - start <= 3) {
      while (i + 3 < r.size() && r[i] == ',' && is_digit(r[i + 1]) && is_digit(r[i + 2]) && is_digit(r[i + 3]) &&
             (i + 4 == r.size() || !is_digit(r[i + 4]))) {
        i += 4;
      }
    }
    if (i + 1 < r.size() && (r[i] == '.' || r[i] == '/') && is_digit(r[i + 1])) {
      ++i;
      while (i < r.size() && is_digit(r[i])) ++i;
    }
    bool negative = false;
    if (start > 0 && r[start - 1] == '-') {
      const char before = start > 1 ? r[start - 2] : ' ';
      negative = !(is_digit(before) || is_letter(before) || before == ')' || before == ']' || before == '}');
    }
    best.emplace(negative ? "-" : "");
    best->append(r.substr(start, i - start));
  }
  return best;
}

}  // namespace

const char* answer_source_name(AnswerSource source) {
  switch (source) {
    case AnswerSource::Boxed:
      return "boxed";
    case AnswerSource::AnswerLine:
      return "answer line";
    case AnswerSource::FinalNumber:
      return "final number";
    case AnswerSource::None:
      break;
  }
  return "none";
}

ExtractedAnswer extract_answer(std::string_view response) {
  const BoxSearch box = last_box(response);
  if (box.kind == BoxKind::Found) return {AnswerSource::Boxed, box.content, ""};
  if (box.kind == BoxKind::Unclosed) {
    return {AnswerSource::None, "", "the last " + box.command + "{ is never closed (a response cut off?)"};
  }
  if (auto line = last_answer_line(response)) return {AnswerSource::AnswerLine, std::move(*line), ""};
  if (auto number = last_number(response)) return {AnswerSource::FinalNumber, std::move(*number), ""};
  return {AnswerSource::None, "", trim(response).empty() ? "an empty response" : "no \\boxed{}, no \"Answer:\" line, no number"};
}

std::optional<std::string> gsm8k_final_answer(std::string_view solution) {
  const std::size_t at = solution.rfind("####");
  if (at == kNpos) return std::nullopt;
  const auto text = trim(solution.substr(at + 4));
  if (text.empty()) return std::nullopt;
  return std::string(text);
}

NormalizedAnswer normalize_answer(std::string_view answer) {
  const std::string_view trimmed = trim(answer);
  if (trimmed.size() > kMaxNormalizedBytes) return {std::string(trimmed), std::nullopt};
  std::string s(trimmed);
  s = replace_all(s, "\xE2\x88\x92", "-");  // U+2212 minus sign
  s = replace_all(s, "\xCF\x80", "\\pi");   // U+03C0 pi
  s = replace_all(s, "\xC2\xB0", "");       // U+00B0 degree sign
  for (const std::string_view d : {"\\$", "$", "\\(", "\\)", "\\[", "\\]"}) s = replace_all(s, d, "");
  s = replace_all(s, "\\dfrac", "\\frac");
  s = replace_all(s, "\\tfrac", "\\frac");
  for (const std::string_view c : {"\\left", "\\right", "\\displaystyle", "\\quad", "\\qquad", "\\degree"}) {
    s = remove_command(s, c);
  }
  for (const std::string_view sp : {"\\!", "\\,", "\\;", "\\:", "\\ ", "~"}) s = replace_all(s, sp, "");
  s = replace_all(s, "{,}", ",");
  s = replace_all(s, "\\%", "%");
  s = unwrap(std::move(s));
  s = without_whitespace(s);
  s = replace_all(s, "^{\\circ}", "");
  s = replace_all(s, "^\\circ", "");
  if (const std::size_t eq = s.rfind('='); eq != std::string::npos && eq + 1 < s.size()) s.erase(0, eq + 1);
  drop_trailing_periods(s);
  s = unwrap(std::move(s));
  drop_text_unit(s);
  drop_trailing_periods(s);
  if (!s.empty() && s[0] == '+') s.erase(0, 1);
  s = brace_arguments(s, 0);
  if (auto number = read_number(s)) return std::move(*number);
  return {std::move(s), std::nullopt};
}

bool answers_equal(const NormalizedAnswer& a, const NormalizedAnswer& b) {
  if (a.text.empty() || b.text.empty()) return false;
  if (a.value && b.value) return *a.value == *b.value;
  return a.text == b.text;
}

bool answers_equal(std::string_view a, std::string_view b) { return answers_equal(normalize_answer(a), normalize_answer(b)); }

}  // namespace april::live::math
