// The math answer check: extraction from real-looking responses, the normal
// form, and the reward with its verdicts.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "tasks/math/math_answer.hpp"
#include "tasks/math/math_verifier.hpp"

namespace april::live::math {
namespace {

// A chain of thought as models write it: several numbers on the way, the
// answer at the end.
std::string reasoning(const std::string& ending) {
  return "Let me work through this carefully.\n\n"
         "First, the train covers 120 km in 2 hours, so its speed is 60 km/h. "
         "Over 3.5 hours it would cover 210 km, and 45 minutes is 0.75 hours.\n\n"
         "Next I check the edge case x = -2: then 4 - 6 + 1 = -1, which is not allowed, "
         "so we discard it. Trying x = 7 gives 49 - 21 + 1 = 29.\n\n"
         "Wait, let me double-check the ratio: 18/24 reduces to 3/4.\n\n" +
         ending;
}

TEST(MathAnswer, ExtractsTheLastBoxedAnswerWithNestedBraces) {
  auto a = extract_answer(reasoning("Therefore the answer is $\\boxed{\\frac{3}{4}}$."));
  EXPECT_EQ(a.source, AnswerSource::Boxed);
  EXPECT_EQ(a.text, "\\frac{3}{4}");
  a = extract_answer(reasoning("So $\\sin 60^\\circ = \\boxed{\\frac{\\sqrt{3}}{2}}$"));
  EXPECT_EQ(a.text, "\\frac{\\sqrt{3}}{2}");
  // Two boxed answers: the last one wins (a model that corrects itself).
  a = extract_answer(reasoning("I first got \\boxed{12}. Hmm, that ignores the discount. The answer is \\boxed{9}."));
  EXPECT_EQ(a.text, "9");
  // \fbox and "\boxed 5" (no braces) count as boxes too; empty boxes echoed from the instruction do not.
  EXPECT_EQ(extract_answer("so \\fbox{42} it is").text, "42");
  EXPECT_EQ(extract_answer("The answer is $\\boxed 5$.").text, "5");
  a = extract_answer("The result is \\boxed{17}. (I was asked to put the final answer within \\boxed{}.)");
  EXPECT_EQ(a.text, "17");
  // Escaped braces do not close a box: a set answer.
  EXPECT_EQ(extract_answer("\\boxed{\\{1, 2\\}}").text, "\\{1, 2\\}");
  // A command that only starts like \boxed is not one.
  EXPECT_EQ(extract_answer("\\boxedsomething 3 and then 8").source, AnswerSource::FinalNumber);
}

TEST(MathAnswer, AnUnclosedBoxIsNoAnswerAndNoCrash) {
  const auto a = extract_answer(reasoning("The answer is \\boxed{\\frac{3}{4"));
  EXPECT_EQ(a.source, AnswerSource::None);
  EXPECT_NE(a.note.find("never closed"), std::string::npos) << a.note;
  // An earlier box that is closed does not stand in for the cut-off last one.
  EXPECT_EQ(extract_answer("\\boxed{5} ... so finally \\boxed{6").source, AnswerSource::None);
  // Only opening braces, or only closing ones.
  EXPECT_EQ(extract_answer("\\boxed{{{{{{").source, AnswerSource::None);
  EXPECT_EQ(extract_answer("}}}}\\boxed}}} 4").source, AnswerSource::FinalNumber);
}

TEST(MathAnswer, FallsBackToTheAnswerLineThenTheFinalNumber) {
  // DAPO's convention: "Answer: X" on the last line.
  auto a = extract_answer(reasoning("Adding up the cases gives 17.\n\nAnswer: 17"));
  EXPECT_EQ(a.source, AnswerSource::AnswerLine);
  EXPECT_EQ(a.text, "17");
  a = extract_answer("so the answer: is below.\n**Answer:** $\\frac{1}{2}$\n");
  EXPECT_EQ(a.text, "$\\frac{1}{2}$");
  EXPECT_EQ(extract_answer("Final ANSWER:\n  -3\n").text, "-3");
  // No box and no answer line: the final number.
  a = extract_answer(reasoning("The answer is 42."));
  EXPECT_EQ(a.source, AnswerSource::FinalNumber);
  EXPECT_EQ(a.text, "42");
  EXPECT_EQ(extract_answer("She pays $1,250 in total.").text, "1,250");
  EXPECT_EQ(extract_answer("so the change is 3.50 dollars").text, "3.50");
  EXPECT_EQ(extract_answer("The temperature is -9 degrees").text, "-9");
  EXPECT_EQ(extract_answer("10-3 leaves 7, and 9-5").text, "5");  // a minus after a digit is not a sign
  EXPECT_EQ(extract_answer("the ratio is 3/4").text, "3/4");
  // Nothing at all.
  EXPECT_EQ(extract_answer("").source, AnswerSource::None);
  EXPECT_EQ(extract_answer("  \n ").note, "an empty response");
  EXPECT_EQ(extract_answer("I do not know.").source, AnswerSource::None);
}

TEST(MathAnswer, Gsm8kGoldIsTheTextAfterTheLastMarker) {
  EXPECT_EQ(gsm8k_final_answer("He buys 4 * 300 = <<4*300=1200>>1200 g.\nThen 1200 + 34 = 1234.\n#### 1,234"), "1,234");
  EXPECT_EQ(gsm8k_final_answer("a #### 1\n#### 72 \n"), "72");
  EXPECT_FALSE(gsm8k_final_answer("no marker, 72").has_value());
  EXPECT_FALSE(gsm8k_final_answer("####   ").has_value());
}

TEST(MathAnswer, NormalisesNumbersExactly) {
  const auto n = [](const char* s) { return normalize_answer(s); };
  EXPECT_EQ(n("\\frac{3}{4}").text, "3/4");
  EXPECT_EQ(n("0.75").text, "3/4");
  EXPECT_EQ(n("\\dfrac{6}{8}").text, "3/4");
  EXPECT_EQ(n("\\tfrac34").text, "3/4");
  EXPECT_EQ(n("\\frac 3 4").text, "3/4");
  EXPECT_EQ(n("-\\frac{1}{2}").text, "-1/2");
  EXPECT_EQ(n("\\frac{-1}{2}").text, "-1/2");
  EXPECT_EQ(n("\\frac{1}{-2}").text, "-1/2");
  EXPECT_EQ(n("1,000").text, "1000");
  EXPECT_EQ(n("1{,}000").text, "1000");
  EXPECT_EQ(n("1,\\!000").text, "1000");
  EXPECT_EQ(n("1\\,000\\,000").text, "1000000");
  EXPECT_EQ(n("+7").text, "7");
  EXPECT_EQ(n("007").text, "7");
  EXPECT_EQ(n("-0").text, "0");
  EXPECT_EQ(n("−5").text, "-5");  // U+2212
  EXPECT_EQ(n("$18.00$").text, "18");
  EXPECT_EQ(n("\\$18").text, "18");
  EXPECT_EQ(n("30^\\circ").text, "30");
  EXPECT_EQ(n("30^{\\circ}").text, "30");
  EXPECT_EQ(n("30°").text, "30");
  EXPECT_EQ(n("5\\text{ cm}").text, "5");
  EXPECT_EQ(n("12 \\mbox{m}^2").text, "12");
  EXPECT_EQ(n("x = 5").text, "5");
  EXPECT_EQ(n("\\left( 5 \\right)").text, "(5)");
  EXPECT_EQ(n("42.").text, "42");
  EXPECT_EQ(n("\\text{(B)}").text, "(B)");
  EXPECT_EQ(n("2.5/0.5").text, "5");
  ASSERT_TRUE(n("0.125").value.has_value());
  EXPECT_EQ(*n("0.125").value, (Rational{1, 8}));
  // Not numbers: normalised text.
  EXPECT_EQ(n("\\sqrt2").text, "\\sqrt{2}");
  EXPECT_FALSE(n("\\sqrt2").value.has_value());
  EXPECT_EQ(n("2 \\pi").text, "2\\pi");
  EXPECT_EQ(n("2π").text, "2\\pi");
  EXPECT_EQ(n("\\frac{\\sqrt3}{2}").text, "\\frac{\\sqrt{3}}{2}");
  EXPECT_EQ(n("1,2").text, "1,2");  // a list, not a thousands separator
  EXPECT_EQ(n("1,0000").text, "1,0000");
  EXPECT_EQ(n("\\frac{1}{0}").text, "\\frac{1}{0}");  // never a division by zero
  EXPECT_EQ(n("50\\%").text, "50%");
  EXPECT_EQ(n("5 cm").text, "5cm");  // plain unit words stay: "2x" must not become "2"
  EXPECT_EQ(n("\\leftarrow").text, "\\leftarrow");
}

TEST(MathAnswer, HugeNumbersNeverOverflow) {
  // Past int64: no value, compared by canonical digits.
  const auto big = normalize_answer("123456789012345678901234567890");
  EXPECT_FALSE(big.value.has_value());
  EXPECT_EQ(big.text, "123456789012345678901234567890");
  EXPECT_TRUE(answers_equal("123,456,789,012,345,678,901,234,567,890", "0123456789012345678901234567890"));
  EXPECT_FALSE(answers_equal("123456789012345678901234567890", "123456789012345678901234567891"));
  EXPECT_TRUE(answers_equal("1.50000000000000000000000000", "1.5"));
  EXPECT_EQ(normalize_answer("9223372036854775807").text, "9223372036854775807");  // INT64_MAX fits
  EXPECT_TRUE(normalize_answer("9223372036854775807").value.has_value());
  EXPECT_FALSE(normalize_answer("9223372036854775808").value.has_value());
  EXPECT_FALSE(normalize_answer("-9223372036854775808").value.has_value());  // INT64_MIN is refused: its negation overflows
  // Products that overflow in a fraction: no value, no UB (the UBSan build checks).
  EXPECT_FALSE(normalize_answer("\\frac{9223372036854775807}{0.5}").value.has_value());
  EXPECT_FALSE(normalize_answer("0.0000000000000000001").value.has_value());      // 10^19 denominator
  EXPECT_FALSE(answers_equal("99999999999999999999/3", "33333333333333333333"));  // no arithmetic past 64 bits
}

TEST(MathAnswer, EqualityIsExactOnNumbersAndLiteralOnText) {
  EXPECT_TRUE(answers_equal("0.75", "3/4"));
  EXPECT_TRUE(answers_equal("\\frac{3}{4}", "0.750"));
  EXPECT_TRUE(answers_equal("0.5", "\\frac12"));
  EXPECT_TRUE(answers_equal("1,000", "1000"));
  EXPECT_TRUE(answers_equal("\\dfrac{\\sqrt{3}}{2}", "\\frac{\\sqrt3}{2}"));
  EXPECT_TRUE(answers_equal("9\\pi", "9 \\pi"));
  EXPECT_FALSE(answers_equal("0.333", "1/3"));                         // exact, never rounded
  EXPECT_FALSE(answers_equal("\\sqrt{3}/2", "\\frac{\\sqrt{3}}{2}"));  // no algebra
  EXPECT_FALSE(answers_equal("", ""));
  EXPECT_FALSE(answers_equal("$$", "$ $"));
}

TEST(MathVerifier, RewardsRealLookingResponses) {
  struct Case {
    std::string response, gold;
    Verdict want;
  };
  const std::vector<Case> cases = {
      {reasoning("The probability is $\\boxed{\\frac{3}{4}}$."), "3/4", Verdict::Correct},
      {reasoning("So the final answer is \\boxed{0.75}."), "3/4", Verdict::Correct},
      {reasoning("\\boxed{0.7}"), "3/4", Verdict::Incorrect},
      {reasoning("Total: \\boxed{1,000}"), "1000", Verdict::Correct},
      {reasoning("\\boxed{\\frac{\\sqrt{3}}{2}}"), "\\frac{\\sqrt{3}}{2}", Verdict::Correct},
      {reasoning("\\boxed{\\dfrac{\\sqrt 3}{2}}"), "\\frac{\\sqrt{3}}{2}", Verdict::Correct},
      {reasoning("First \\boxed{29}, but on reflection \\boxed{-1}"), "-1", Verdict::Correct},
      {reasoning("First \\boxed{29}, but on reflection \\boxed{-1}"), "29", Verdict::Incorrect},
      {reasoning("The answer is 42."), "42", Verdict::Correct},
      {reasoning("Answer: 17"), "17", Verdict::Correct},
      {reasoning("Answer: $17$"), "17", Verdict::Correct},
      {reasoning("Answer: 18"), "17", Verdict::Incorrect},
      {reasoning("\\boxed{+5}"), "5", Verdict::Correct},
      {reasoning("\\boxed{-5}"), "5", Verdict::Incorrect},
      {reasoning("Each angle measures $\\boxed{108^\\circ}$."), "108", Verdict::Correct},
      {reasoning("\\boxed{\\dfrac{5}{2}}"), "\\frac{5}{2}", Verdict::Correct},
      {reasoning("\\boxed{2.5}"), "\\frac{5}{2}", Verdict::Correct},
      {reasoning("\\boxed{5\\sqrt{2}}"), "5\\sqrt{2}", Verdict::Correct},
      {reasoning("\\boxed{36\\pi}"), "36 \\pi", Verdict::Correct},
      {reasoning("\\boxed{123456789012345678901234567890}"), "123456789012345678901234567890", Verdict::Correct},
      {reasoning("\\boxed{123456789012345678901234567890}"), "123456789012345678901234567891", Verdict::Incorrect},
      {reasoning("The answer is \\boxed{\\frac{3}{4"), "3/4", Verdict::NoAnswer},
      {"", "3/4", Verdict::NoAnswer},
  };
  for (const auto& c : cases) {
    const auto j = judge_math_response(c.response, c.gold);
    EXPECT_EQ(j.verdict, c.want) << "gold " << c.gold << "\n"
                                 << j.why << "\nresponse: ..." << c.response.substr(c.response.size() > 80 ? c.response.size() - 80 : 0);
    EXPECT_EQ(j.reward, c.want == Verdict::Correct ? 1.0 : 0.0);
  }
}

TEST(MathVerifier, Gsm8kGoldWithThousands) {
  const std::string gold_solution = "Each box holds 12 * 100 = <<12*100=1200>>1200 pens.\nWith 34 loose: 1200 + 34 = 1234.\n#### 1,234";
  const auto gold = gsm8k_final_answer(gold_solution);
  ASSERT_TRUE(gold.has_value());
  EXPECT_EQ(math_reward(reasoning("So she has \\boxed{1234} pens."), *gold), 1.0);
  EXPECT_EQ(math_reward(reasoning("So she has 1,234 pens in all."), *gold), 1.0);
  EXPECT_EQ(math_reward(reasoning("So she has 1,243 pens in all."), *gold), 0.0);
}

TEST(MathVerifier, RewardValuesAreConfigurableAndSayWhy) {
  const auto dapo = dapo_reward_values();
  EXPECT_EQ(math_reward("Answer: 17", "17", dapo), 1.0);
  EXPECT_EQ(math_reward("Answer: 16", "17", dapo), -1.0);
  EXPECT_EQ(math_reward("no idea", "17", dapo), -1.0);
  const RewardValues custom{2.0, -0.5, -1.0};
  EXPECT_EQ(math_reward("\\boxed{17}", "17", custom), 2.0);
  EXPECT_EQ(math_reward("\\boxed{16}", "17", custom), -0.5);
  EXPECT_EQ(math_reward("\\boxed{17", "17", custom), -1.0);

  auto j = judge_math_response("so \\boxed{0.75}", "\\frac{3}{4}");
  EXPECT_EQ(j.why, "correct: boxed '0.75' -> '3/4' equals gold '3/4' (as numbers)");
  EXPECT_EQ(j.extracted.source, AnswerSource::Boxed);
  j = judge_math_response("Answer: \\sqrt{2}", "\\sqrt{3}");
  EXPECT_EQ(j.why, "incorrect: answer line '\\sqrt{2}' -> '\\sqrt{2}' differs from gold '\\sqrt{3}' (as text)");
  j = judge_math_response("so \\boxed{12", "12");
  EXPECT_EQ(j.verdict, Verdict::NoAnswer);
  EXPECT_EQ(j.why, "no answer: the last \\boxed{ is never closed (a response cut off?)");
  j = judge_math_response("\\boxed{" + std::string(500, '7') + "}", "7");
  EXPECT_LT(j.why.size(), 300U) << j.why;
  j = judge_math_response("\\boxed{5}", "   ");
  EXPECT_EQ(j.verdict, Verdict::Incorrect);
  EXPECT_NE(j.why.find("empty once normalised"), std::string::npos) << j.why;
}

// Responses as a model might cut or garble them: every prefix of real-looking
// responses, and random bytes over a LaTeX-heavy alphabet, give a verdict,
// never a crash, an exception or a hang (the ASan/UBSan build runs this too).
TEST(MathVerifier, SurvivesCutAndGarbledResponses) {
  const std::vector<std::string> responses = {
      reasoning("$\\boxed{\\frac{\\sqrt{3}}{2}}$"), reasoning("Answer: \\dfrac{-12}{5}\n"),
      "\\boxed{\\left\\{ x \\right.} \\fbox{1{,}000.5^\\circ} \\sqrt[3]{\\frac12} = -007/0.25 \\text{ cm}^2"};
  for (const auto& r : responses) {
    for (std::size_t n = 0; n <= r.size(); ++n) {
      const auto j = judge_math_response(r.substr(0, n), "\\frac{\\sqrt{3}}{2}");
      EXPECT_FALSE(j.why.empty());
    }
  }
  const std::string alphabet = "\\{}[]()^_$.,/-+=0123456789 \nboxedfracsqrtleftrightAnswer:%~";
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::uniform_int_distribution<std::size_t> length(0, 120);
  for (int k = 0; k < 3000; ++k) {
    std::string r;
    const std::size_t len = length(rng);
    for (std::size_t i = 0; i < len; ++i) r += alphabet[pick(rng)];
    const auto j = judge_math_response(r, r);
    EXPECT_FALSE(j.why.empty());
  }
  // Deep nesting and long inputs stay fast (the normaliser bounds its work).
  const std::string deep = "\\boxed{" + std::string(5000, '{') + std::string(5000, '}') + "}";
  EXPECT_EQ(judge_math_response(deep, "1").verdict, Verdict::Incorrect);
  std::string nested = "\\frac";
  for (int i = 0; i < 300; ++i) nested += "{\\frac";
  EXPECT_FALSE(normalize_answer(nested).text.empty());
  EXPECT_EQ(math_reward(std::string(1 << 20, 'x') + " 5", "5"), 1.0);
}

}  // namespace
}  // namespace april::live::math
