// The text of a generation token by token (hf/incremental_text):
// the pieces add up to Hugging Face's decode of the whole, none of them
// splits a character, and a stop string ends the text before it, at the
// token that completed it, with no part of it ever released.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hf/incremental_text.hpp"
#include "hf/tokenizer.hpp"

namespace april::hf {
namespace {

const std::string kFixtures = std::string(APRIL_HF_FIXTURES_DIR) + "/tokenizers/";

struct Streamed {
  std::vector<std::string> pieces;
  std::string text;
};

Streamed stream(const Tokenizer& tok, const std::vector<TokenId>& ids, std::vector<std::string> stops, IncrementalText* out = nullptr) {
  IncrementalText t(tok, std::move(stops));
  Streamed s;
  for (const auto id : ids) {
    s.pieces.push_back(t.add(id));
    s.text += s.pieces.back();
  }
  s.pieces.push_back(t.finish());
  s.text += s.pieces.back();
  if (out != nullptr) *out = t;
  return s;
}

TEST(IncrementalText, PiecesAddUpToTheWholeDecodeAndSplitNoCharacter) {
  for (const char* name : {"qwen2", "llama3"}) {
    const auto tok = Tokenizer::load(kFixtures + name + ".json");
    for (const std::string text : {"The answer is 4.", "caf\u00e9 cr\u00e8me", "\u6570\u5b66 2+2=4", "ok \U0001F642 done", "a\n\nb  c"}) {
      const auto ids = tok.encode(text);
      const auto s = stream(tok, ids, {});
      EXPECT_EQ(s.text, tok.decode(ids, true)) << name << ": " << text;
      for (const auto& piece : s.pieces) EXPECT_EQ(piece.find("\xEF\xBF\xBD"), std::string::npos) << name << ": " << text;
    }
  }
}

TEST(IncrementalText, SpecialAndUnknownIdsGiveNoText) {
  const auto tok = Tokenizer::load(kFixtures + "qwen2.json");
  auto ids = tok.encode("hi");
  ids.push_back(*tok.token_to_id("<|im_end|>"));
  ids.push_back(static_cast<TokenId>(tok.id_count() + 5));  // a padded model vocabulary's id
  EXPECT_EQ(stream(tok, ids, {}).text, "hi");
}

TEST(IncrementalText, AStopStringEndsTheTextBeforeIt) {
  const auto tok = Tokenizer::load(kFixtures + "qwen2.json");
  const auto ids = tok.encode("The answer is 4.\n\nQuestion: what next");
  IncrementalText t(tok, {});
  const auto s = stream(tok, ids, {"zzz", "\n\nQuestion:"}, &t);
  EXPECT_EQ(s.text, "The answer is 4.");
  ASSERT_TRUE(t.stopped());
  EXPECT_EQ(*t.stop(), "\n\nQuestion:");
  // The output is cut at the token that completed the stop string.
  const auto n = t.tokens_at_stop();
  ASSERT_GT(n, 0u);
  const auto upto = [&](std::size_t k) { return tok.decode(std::span<const TokenId>(ids).first(k), true); };
  EXPECT_NE(upto(n).find("\n\nQuestion:"), std::string::npos);
  EXPECT_EQ(upto(n - 1).find("\n\nQuestion:"), std::string::npos);
  // Nothing of the stop string was released on the way: the pieces are the cut text.
  for (const auto& piece : s.pieces) EXPECT_EQ(piece.find("Question"), std::string::npos);
}

TEST(IncrementalText, HeldBackTextThatIsNotAStopIsReleased) {
  const auto tok = Tokenizer::load(kFixtures + "llama3.json");
  // "\n\nQ" begins the stop string but the text goes on otherwise.
  const auto ids = tok.encode("x\n\nQuick end");
  IncrementalText t(tok, {});
  const auto s = stream(tok, ids, {"\n\nQuestion:"}, &t);
  EXPECT_FALSE(t.stopped());
  EXPECT_EQ(s.text, "x\n\nQuick end");
  // At the end, a tail that could still begin the stop string is released too.
  const auto tail = tok.encode("done\n\nQue");
  EXPECT_EQ(stream(tok, tail, {"\n\nQuestion:"}).text, "done\n\nQue");
}

}  // namespace
}  // namespace april::hf
