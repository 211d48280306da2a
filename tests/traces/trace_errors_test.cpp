#include <gtest/gtest.h>

#include "traces/jsonl_trace.hpp"

namespace april::traces {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_jsonl_trace(text, "t.jsonl");
  } catch (const TraceError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonlTrace, ReadsGroupsInOrder) {
  const auto g = parse_jsonl_trace(
      "{\"prompt_id\": \"a\", \"prompt_tokens\": 5, \"response_tokens\": [1, 2]}\n\n"
      "{\"prompt_id\": 7, \"prompt_tokens\": 0, \"response_tokens\": [3], \"correct\": [true]}\r\n",
      "t.jsonl");
  ASSERT_EQ(g.size(), 2U);
  EXPECT_EQ(g[0].prompt_id, "a");
  EXPECT_EQ(g[0].response_tok, (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(g[1].prompt_id, "7");
  EXPECT_EQ(g[1].correct, (std::vector<std::uint8_t>{1}));
}

TEST(JsonlTrace, ErrorsNameFileLineAndField) {
  const std::string ok = R"({"prompt_id": "a", "prompt_tokens": 5, "response_tokens": [1, 2]})";
  struct Case {
    std::string line, want;
  };
  const std::vector<Case> cases = {
      {R"({"prompt_id": "a", "prompt_tokens": 5, "response_tokens": [1, 2)", "t.jsonl:2: invalid JSON"},
      {R"({"prompt_tokens": 5, "response_tokens": [1]})", "t.jsonl:2: field 'prompt_id': missing"},
      {R"({"prompt_id": "a", "response_tokens": [1]})", "t.jsonl:2: field 'prompt_tokens': missing"},
      {R"({"prompt_id": "a", "prompt_tokens": 5})", "t.jsonl:2: field 'response_tokens': missing"},
      {R"({"prompt_id": "a", "prompt_tokens": -1, "response_tokens": [1]})", "field 'prompt_tokens': must be >= 0"},
      {R"({"prompt_id": "a", "prompt_tokens": "5", "response_tokens": [1]})", "field 'prompt_tokens': expected an integer"},
      {R"({"prompt_id": "a", "prompt_tokens": 5, "response_tokens": [1, 0]})", "field 'response_tokens[1]': must be >= 1"},
      {R"({"prompt_id": "a", "prompt_tokens": 5, "response_tokens": [1.5]})", "field 'response_tokens[0]': expected an integer"},
      {R"({"prompt_id": "a", "prompt_tokens": 5, "response_tokens": [99999999999999999999]})", "field 'response_tokens[0]'"},
      {R"({"prompt_id": "a", "prompt_tokens": 5, "response_tokens": [100000000]})", "larger than"},
      {R"({"prompt_id": "a", "prompt_tokens": 5, "response_tokens": []})", "at least one sample"},
      {R"({"prompt_id": "a", "prompt_tokens": 5, "response_tokens": 3})", "expected an array"},
      {R"({"prompt_id": "a", "prompt_tokens": 5, "response_tokens": [1], "colour": 1})", "field 'colour': unknown field"},
      {R"({"prompt_id": "a", "prompt_tokens": 5, "response_tokens": [1], "correct": [1]})", "field 'correct[0]'"},
      {R"([1, 2])", "t.jsonl:2: expected a JSON object"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(ok + "\n" + c.line + "\n");
    EXPECT_NE(e.find(c.want), std::string::npos) << "line: " << c.line << "\nerror: " << e;
    EXPECT_NE(e.find("t.jsonl:2"), std::string::npos) << e;
  }
  EXPECT_NE(error_of("").find("holds no groups"), std::string::npos);
  EXPECT_THROW(read_jsonl_trace("/nonexistent/trace.jsonl"), TraceError);
}

// Mutations of a valid line (truncation at every byte, byte flips) must give
// a TraceError or a valid parse, never a crash or another exception type.
TEST(JsonlTrace, MutatedInputNeverCrashes) {
  const std::string ok = R"({"prompt_id": "a", "prompt_tokens": 5, "response_tokens": [12, 3400], "correct": [true, false]})";
  for (std::size_t cut = 0; cut <= ok.size(); ++cut) {
    try {
      parse_jsonl_trace(ok.substr(0, cut), "t.jsonl");
    } catch (const TraceError&) {
    }
  }
  const std::string junk = "\"{}[]:,-0123456789.eEtrufalsn \\x";
  for (std::size_t pos = 0; pos < ok.size(); ++pos) {
    for (char c : junk) {
      std::string m = ok;
      m[pos] = c;
      try {
        parse_jsonl_trace(m, "t.jsonl");
      } catch (const TraceError&) {
      }
    }
  }
}

}  // namespace
}  // namespace april::traces
