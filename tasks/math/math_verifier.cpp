#include "tasks/math/math_verifier.hpp"

#include <fmt/format.h>

namespace april::live::math {
namespace {

constexpr std::size_t kMaxQuotedBytes = 80;

// `text` for a log line: at most kMaxQuotedBytes, newlines shown as spaces.
// Cut on a UTF-8 character boundary so the line stays valid UTF-8.
std::string quoted(std::string_view text) {
  std::string out(text.substr(0, kMaxQuotedBytes));
  if (text.size() > kMaxQuotedBytes) {
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
    if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0x80) != 0) out.pop_back();
    out += "...";
  }
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return "'" + out + "'";
}

}  // namespace

RewardValues dapo_reward_values() { return RewardValues{1.0, -1.0, -1.0}; }

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Correct:
      return "correct";
    case Verdict::Incorrect:
      return "incorrect";
    case Verdict::NoAnswer:
      break;
  }
  return "no answer";
}

MathJudgement judge_math_response(std::string_view response, std::string_view gold, const RewardValues& values) {
  MathJudgement j;
  j.gold = normalize_answer(gold);
  j.extracted = extract_answer(response);
  if (j.extracted.source == AnswerSource::None) {
    j.verdict = Verdict::NoAnswer;
    j.reward = values.no_answer;
    j.why = fmt::format("no answer: {}", j.extracted.note);
    return j;
  }
  j.predicted = normalize_answer(j.extracted.text);
  const bool equal = answers_equal(j.predicted, j.gold);
  j.verdict = equal ? Verdict::Correct : Verdict::Incorrect;
  j.reward = equal ? values.correct : values.incorrect;
  const bool numbers = j.predicted.value.has_value() && j.gold.value.has_value();
  if (j.gold.text.empty()) {
    j.why = fmt::format("incorrect: the gold answer {} is empty once normalised", quoted(gold));
    return j;
  }
  j.why = fmt::format("{}: {} {} -> {} {} gold {} ({})", verdict_name(j.verdict), answer_source_name(j.extracted.source),
                      quoted(j.extracted.text), quoted(j.predicted.text), equal ? "equals" : "differs from", quoted(j.gold.text),
                      numbers ? "as numbers" : "as text");
  return j;
}

double math_reward(std::string_view response, std::string_view gold, const RewardValues& values) {
  return judge_math_response(response, gold, values).reward;
}

}  // namespace april::live::math
