// The one JSON reader (base/json_value): every refusal names the document and
// the JSON Pointer path of the value, never the parser's own text.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "base/config.hpp"
#include "base/json_value.hpp"

namespace april::base {
namespace {

std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonValue, RefusalsNameTheDocumentAndThePath) {
  const auto doc = nlohmann::json::parse(R"({"runs": [{"n": 3}, {"n": "x", "a/b": 1, "t~": true}], "s": 2.5})");
  const JsonValue root(doc, "f.json");
  const auto runs = root.at("runs").elements();
  EXPECT_EQ(runs[0].at("n").integer(0, 10), 3);
  EXPECT_EQ(error_of([&] { (void)runs[1].at("n").integer(0, 10); }),
            "f.json: /runs/1/n: a string where an integer in [0, 10] was expected");
  EXPECT_EQ(error_of([&] { (void)runs[0].at("m"); }), "f.json: /runs/0/m: missing");
  EXPECT_EQ(error_of([&] { (void)runs[0].at("n").integer(4, 10); }), "f.json: /runs/0/n: 3 is not an integer in [4, 10]");
  EXPECT_EQ(error_of([&] { (void)root.at("s").integer(0, 10); }), "f.json: /s: 2.5 where an integer in [0, 10] was expected");
  EXPECT_EQ(error_of([&] { (void)root.at("s").elements(); }), "f.json: /s: a number where an array was expected");
  // RFC 6901 escapes '/' as ~1 and '~' as ~0 in a path step.
  EXPECT_EQ(error_of([&] { (void)runs[1].at("a/b").boolean(); }), "f.json: /runs/1/a~1b: a number where true or false was expected");
  EXPECT_EQ(error_of([&] { runs[1].only_keys({"n", "a/b"}); }), "f.json: /runs/1/t~0: an unknown field");
  EXPECT_NO_THROW(runs[0].only_keys({"n"}));
  EXPECT_FALSE(root.find("absent").has_value());
}

TEST(JsonValue, SyntaxErrorsNameTheLine) {
  EXPECT_EQ(error_of([] { (void)parse_json_document("{\n  \"a\": 1,\n  \"b\": \n}", "f.json"); }),
            "f.json:4: invalid JSON (syntax error while parsing value - unexpected '}'; expected '[', '{', or a literal)");
  // A number past a double's range: the line of the number, our words.
  EXPECT_EQ(error_of([] { (void)parse_json_document("[1,\n 2,\n 1e400]", "f.json"); }),
            "f.json:3: invalid JSON (a number too large for a double)");
}

// Every failure of the parser comes back as a value: a syntax error, a number
// too large, a huge exponent on an integer-looking token (the trace fuzzer's find).
TEST(JsonValue, ParseJsonNeverThrows) {
  for (const std::string text : {"{", "[1e400]", "{\"prompt_id\":90000E000000000000000083527017641677946}", "-1e309", "\"\\ud800\""}) {
    nlohmann::json doc;
    EXPECT_NO_THROW({
      const auto err = parse_json(text, doc);
      EXPECT_TRUE(err.has_value()) << text;
      if (err) {
        EXPECT_EQ(err->reason.find("json.exception"), std::string::npos) << err->reason;
      }
    }) << text;
  }
  nlohmann::json doc;
  EXPECT_FALSE(parse_json("{\"a\": [1, 2.5]}", doc).has_value());
  EXPECT_EQ(doc["a"][1].get<double>(), 2.5);
}

}  // namespace
}  // namespace april::base
