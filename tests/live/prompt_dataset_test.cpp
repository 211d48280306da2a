// The JSON Lines prompt reader: the shipped samples in their public layouts,
// field paths and options, and refusals that name the file, line and field.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "tasks/math/math_answer.hpp"
#include "tasks/math/math_verifier.hpp"
#include "tasks/math/prompt_dataset.hpp"

namespace april::live::math {
namespace {

const std::string kDatasets = APRIL_DATASETS_DIR;

PromptDatasetOptions layout(const char* name, const std::string& file) {
  auto o = dataset_layout(name);
  EXPECT_TRUE(o.has_value()) << name;
  PromptDatasetOptions out = o.value_or(PromptDatasetOptions{});
  out.path = kDatasets + "/" + file;
  return out;
}

PromptDataset parse(const std::string& text, PromptDatasetOptions o = {}) {
  o.path = "t.jsonl";
  std::istringstream in(text);
  return parse_prompt_dataset(in, o);
}

std::string error_of(const std::string& text, PromptDatasetOptions o = {}) {
  try {
    parse(text, std::move(o));
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(PromptDataset, SamplesLoadWithTheirLayouts) {
  const auto gsm = read_prompt_dataset(layout("gsm8k", "gsm8k-sample.jsonl"));
  ASSERT_EQ(gsm.prompts.size(), 26U);
  EXPECT_EQ(gsm.prompts[0].answer, "19");
  EXPECT_EQ(gsm.prompts[0].line, 1U);
  EXPECT_EQ(gsm.prompts[0].prompt.rfind("A baker makes 12 muffins", 0), 0U);
  EXPECT_EQ(gsm.chat_prompts, 0U);

  const auto dapo_options = layout("dapo-math", "dapo-math-sample.jsonl");
  const auto dapo = read_prompt_dataset(dapo_options);
  ASSERT_EQ(dapo.prompts.size(), 27U);
  EXPECT_EQ(dapo.prompts[0].answer, "91");
  EXPECT_EQ(dapo.prompts.back().answer, "-7");
  EXPECT_NE(dapo.prompts[0].prompt.find("Answer: $Answer"), std::string::npos);
  EXPECT_NE(dapo.prompts[0].prompt.find("sum of all positive divisors of 36"), std::string::npos);
  EXPECT_EQ(dapo.chat_prompts, 27U);
  EXPECT_EQ(dapo.dropped_messages, 0U);
  EXPECT_EQ(dapo.describe(dapo_options), dapo_options.path +
                                             ": 27 prompts (prompts: field 'prompt', the last 'user' message of 27 chat lists; "
                                             "answers: field 'reward_model.ground_truth')");

  auto ds_options = layout("deepscaler", "deepscaler-sample.jsonl");
  ds_options.prompt_suffix = std::string(kBoxedInstruction);
  const auto ds = read_prompt_dataset(ds_options);
  ASSERT_EQ(ds.prompts.size(), 26U);
  EXPECT_EQ(ds.prompts[0].prompt, "Simplify $\\frac{18}{24}$. Let's think step by step and output the final answer within \\boxed{}.");
  EXPECT_EQ(ds.prompts[0].answer, "\\frac{3}{4}");
}

// Our own samples hold together: every worked solution, read as a model's
// response, earns the reward against its own gold answer.
TEST(PromptDataset, SampleSolutionsEarnTheRewardOfTheirAnswers) {
  auto answers = layout("deepscaler", "deepscaler-sample.jsonl");
  auto solutions = answers;
  solutions.answer_field = "solution";
  const auto a = read_prompt_dataset(answers);
  const auto s = read_prompt_dataset(solutions);
  ASSERT_EQ(a.prompts.size(), s.prompts.size());
  for (std::size_t i = 0; i < a.prompts.size(); ++i) {
    const auto j = judge_math_response(s.prompts[i].answer, a.prompts[i].answer);
    EXPECT_EQ(j.verdict, Verdict::Correct) << "line " << a.prompts[i].line << ": " << j.why;
    EXPECT_EQ(j.extracted.source, AnswerSource::Boxed);
  }
  auto finals = layout("gsm8k", "gsm8k-sample.jsonl");
  auto worked = finals;
  worked.answer_format = AnswerFormat::Plain;
  const auto f = read_prompt_dataset(finals);
  const auto w = read_prompt_dataset(worked);
  ASSERT_EQ(f.prompts.size(), w.prompts.size());
  for (std::size_t i = 0; i < f.prompts.size(); ++i) {
    const auto j = judge_math_response(w.prompts[i].answer, f.prompts[i].answer);
    EXPECT_EQ(j.verdict, Verdict::Correct) << "line " << f.prompts[i].line << ": " << j.why;
  }
}

TEST(PromptDataset, FieldPathsChatListsAndOptions) {
  PromptDatasetOptions o;
  o.prompt_field = "messages";
  o.answer_field = "meta.gold.0";
  const auto d = parse(
      "\xEF\xBB\xBF{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": \"1+1?\"},"
      " {\"role\": \"assistant\", \"content\": \"2\"}, {\"role\": \"user\", \"content\": \"2+2?\"}], \"meta\": {\"gold\": [4, 5]}}\r\n"
      "\n   \n"
      "{\"messages\": [{\"role\": \"user\", \"content\": \"half?\"}], \"meta\": {\"gold\": [0.5]}}\n"
      "{\"messages\": \"plain text\", \"meta\": {\"gold\": [72.0]}}",
      o);
  ASSERT_EQ(d.prompts.size(), 3U);
  EXPECT_EQ(d.prompts[0].prompt, "2+2?");  // the last user message
  EXPECT_EQ(d.prompts[0].answer, "4");
  EXPECT_EQ(d.prompts[1].answer, "0.5");
  EXPECT_EQ(d.prompts[1].line, 4U);
  EXPECT_EQ(d.prompts[2].prompt, "plain text");
  EXPECT_EQ(d.prompts[2].answer, "72");  // an integral double reads as an integer
  EXPECT_EQ(d.chat_prompts, 2U);
  EXPECT_EQ(d.dropped_messages, 3U);
  EXPECT_NE(d.describe(o).find("(3 other messages left out)"), std::string::npos) << d.describe(o);

  // The first N prompts only; the rest of the file is not read (its bad line is never seen).
  PromptDatasetOptions two;
  two.max_prompts = 2;
  two.prompt_suffix = "\nAnswer with a number.";
  const auto first = parse("{\"prompt\": \"a\", \"answer\": 1}\n{\"prompt\": \"b\", \"answer\": \"2\"}\nnot json\n", two);
  ASSERT_EQ(first.prompts.size(), 2U);
  EXPECT_EQ(first.prompts[1].prompt, "b\nAnswer with a number.");
  EXPECT_EQ(first.prompts[0].answer, "1");

  EXPECT_EQ(parse("{\"prompt\": \"p\", \"answer\": 12345678901234567890}").prompts[0].answer, "12345678901234567890");
  EXPECT_EQ(parse_answer_format("gsm8k"), AnswerFormat::Gsm8k);
  EXPECT_EQ(parse_answer_format("plain"), AnswerFormat::Plain);
  EXPECT_FALSE(dataset_layout("alpaca").has_value());
  for (const auto& name : dataset_layout_names()) EXPECT_TRUE(dataset_layout(name).has_value()) << name;
}

TEST(PromptDataset, ErrorsNameFileLineAndField) {
  const std::string ok = R"({"prompt": "What is 2+2?", "answer": "4"})";
  PromptDatasetOptions gsm;
  gsm.prompt_field = "question";
  gsm.answer_format = AnswerFormat::Gsm8k;
  PromptDatasetOptions dapo;
  dapo.answer_field = "reward_model.ground_truth";
  struct Case {
    std::string line, want;
    PromptDatasetOptions options;
  };
  const std::vector<Case> cases = {
      {R"({"prompt": "q"})", "t.jsonl:2: field 'answer': missing", {}},
      {R"({"answer": "4"})", "t.jsonl:2: field 'prompt': missing", {}},
      {R"({"prompt": "q", "answer": null})", "t.jsonl:2: field 'answer': missing (null)", {}},
      {R"({"prompt": "q", "answer": true})", "t.jsonl:2: field 'answer': expected a string or a number, got a boolean (true)", {}},
      {R"({"prompt": "q", "answer": [4]})", "t.jsonl:2: field 'answer': expected a string or a number, got an array of 1", {}},
      {R"({"prompt": "q", "answer": " "})", "t.jsonl:2: field 'answer': empty", {}},
      {R"({"prompt": "  ", "answer": "4"})", "t.jsonl:2: field 'prompt': empty", {}},
      {R"({"prompt": 5, "answer": "4"})", "t.jsonl:2: field 'prompt': expected a string or a list of chat messages, got a number (5)", {}},
      {R"({"prompt": [], "answer": "4"})", "t.jsonl:2: field 'prompt': an empty list of chat messages", {}},
      {R"({"prompt": ["hi"], "answer": "4"})", "t.jsonl:2: field 'prompt.0': expected a chat message", {}},
      {R"({"prompt": [{"content": "hi"}], "answer": "4"})", "t.jsonl:2: field 'prompt.0.role': missing", {}},
      {R"({"prompt": [{"role": "system", "content": "hi"}], "answer": "4"})",
       "t.jsonl:2: field 'prompt': a list of 1 chat messages with no 'user' message",
       {}},
      {R"({"prompt": [{"role": "user", "content": [{"type": "text"}]}], "answer": "4"})",
       "t.jsonl:2: field 'prompt.0.content': expected a string, got an array of 1",
       {}},
      {R"({"question": "q", "answer": "She has 4."})", "t.jsonl:2: field 'answer': no '####' final answer", gsm},
      {R"({"question": "q", "answer": "She has 4.\n####  "})", "t.jsonl:2: field 'answer': no '####' final answer", gsm},
      {R"({"prompt": "q", "reward_model": {"style": "rule"}})",
       "t.jsonl:2: field 'reward_model.ground_truth': missing ('reward_model' has no 'ground_truth')", dapo},
      {R"({"prompt": "q", "reward_model": "17"})",
       "t.jsonl:2: field 'reward_model.ground_truth': 'reward_model' is a string, not an object with 'ground_truth'", dapo},
      {R"({"prompt": "q", "answer": "4")", "t.jsonl:2: invalid JSON at column", {}},
      {R"({"prompt": "q", "answer": 1e400})", "t.jsonl:2: invalid JSON at column 27 (a number too large", {}},
      {"{\"prompt\": \"\xff\", \"answer\": \"4\"}", "t.jsonl:2: invalid JSON", {}},
      {R"(["q", "4"])", "t.jsonl:2: expected a JSON object, got an array of 2", {}},
      {R"("q")", "t.jsonl:2: expected a JSON object, got a string", {}},
  };
  for (const auto& c : cases) {
    const std::string first = c.options.prompt_field == "question" ? R"({"question": "q", "answer": "#### 4"})"
                              : c.options.answer_field != "answer" ? R"({"prompt": "q", "reward_model": {"ground_truth": "4"}})"
                                                                   : ok;
    const std::string e = error_of(first + "\n" + c.line + "\n" + ok + "\n", c.options);
    EXPECT_NE(e.find(c.want), std::string::npos) << "line: " << c.line << "\nerror: " << e;
  }
  // Bad JSON further down names its own line.
  EXPECT_NE(error_of(ok + "\n\n" + ok + "\n{oops\n").find("t.jsonl:4: invalid JSON"), std::string::npos);
  // A JSON array (DeepScaleR's deepscaler.json as shipped) is refused with the way out.
  EXPECT_NE(error_of("[\n" + ok + ",\n" + ok + "\n]\n").find("t.jsonl:1: a JSON array, not JSON Lines"), std::string::npos);
  EXPECT_NE(error_of("\n  [" + ok + "]\n").find("t.jsonl:2: a JSON array, not JSON Lines"), std::string::npos);
  // Over-long lines, empty files, bad options.
  PromptDatasetOptions small;
  small.max_line_bytes = std::size_t{1} << 20;
  const std::string long_line =
      R"({"prompt": ")" + std::string((std::size_t{1} << 20) + (std::size_t{1} << 17), 'x') + R"(", "answer": "4"})";
  EXPECT_NE(error_of(ok + "\n" + long_line + "\n", small).find("t.jsonl:2: a line longer than 1 MiB"), std::string::npos);
  EXPECT_NE(error_of("").find("t.jsonl: no prompts"), std::string::npos);
  EXPECT_NE(error_of("\n \r\n\t\n").find("t.jsonl: no prompts"), std::string::npos);
  EXPECT_NE(error_of("\xEF\xBB\xBF").find("t.jsonl: no prompts"), std::string::npos);
  PromptDatasetOptions bad_field;
  bad_field.answer_field = "reward_model..ground_truth";
  EXPECT_NE(error_of(ok, bad_field).find("answer_field 'reward_model..ground_truth' is not a field name"), std::string::npos);
  PromptDatasetOptions tiny_lines;
  tiny_lines.max_line_bytes = 100;
  EXPECT_NE(error_of(ok, tiny_lines).find("below 1 MiB"), std::string::npos);
  EXPECT_THROW(parse_answer_format("boxed"), base::ConfigError);
  // Files that are not there, or are folders.
  PromptDatasetOptions missing;
  missing.path = kDatasets + "/no-such-file.jsonl";
  EXPECT_THROW(
      {
        try {
          read_prompt_dataset(missing);
        } catch (const base::ConfigError& e) {
          EXPECT_NE(std::string(e.what()).find("no-such-file.jsonl: cannot open"), std::string::npos) << e.what();
          throw;
        }
      },
      base::ConfigError);
  PromptDatasetOptions folder;
  folder.path = kDatasets;
  EXPECT_THROW(read_prompt_dataset(folder), base::ConfigError);
}

}  // namespace
}  // namespace april::live::math
