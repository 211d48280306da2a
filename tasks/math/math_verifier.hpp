#pragma once
// The math reward: a model's response against a gold answer, through
// math_answer's extraction and normal form. Rule-based, deterministic, no
// model and no symbolic algebra: see math_answer.hpp for what compares equal.
#include <string>
#include <string_view>

#include "tasks/math/math_answer.hpp"

namespace april::live::math {

// The reward for each verdict. The defaults (1, 0, 0) are the usual 0/1
// accuracy reward. verl's DAPO reward (verl/utils/reward_score/math_dapo.py)
// gives +1 when correct and -1 otherwise, a response without an answer
// included: dapo_reward_values().
struct RewardValues {
  double correct = 1.0;
  double incorrect = 0.0;
  double no_answer = 0.0;  // no \boxed{}, no "Answer:" line and no number; or a \boxed{ never closed
};
RewardValues dapo_reward_values();

enum class Verdict { Correct, Incorrect, NoAnswer };
const char* verdict_name(Verdict verdict);

// What was judged and why, for logs.
struct MathJudgement {
  Verdict verdict = Verdict::NoAnswer;
  double reward = 0.0;
  ExtractedAnswer extracted;   // where the response states its answer, as written
  NormalizedAnswer predicted;  // that answer normalised (empty with NoAnswer)
  NormalizedAnswer gold;       // the gold answer normalised
  // One line: "correct: boxed '0.75' -> 3/4 equals gold 3/4 (as numbers)",
  // "no answer: the last \boxed{ is never closed (a response cut off?)".
  // Quoted text is cut to 80 bytes.
  std::string why;
};

// The gold answer is used as given (no extraction): for GSM8K's worked
// solutions pass gsm8k_final_answer(solution), as the dataset reader does
// with answer_format gsm8k.
MathJudgement judge_math_response(std::string_view response, std::string_view gold, const RewardValues& values = {});

// judge_math_response(...).reward.
double math_reward(std::string_view response, std::string_view gold, const RewardValues& values = {});

}  // namespace april::live::math
