// The byte-level BPE tokenizer (adapters/live/hf): the ids Hugging Face's
// tokenizers library gives, on the fixtures it wrote (tests/live/hf/tokenizers,
// tokenizers 0.23.2) and on hand-worked tiny tokenizers; the pieces of each
// split pattern; decoding; and every refusal naming the file and JSON path.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/bounded_read.hpp"
#include "base/config.hpp"
#include "base/json_value.hpp"
#include "hf/byte_level.hpp"
#include "hf/nfc.hpp"
#include "hf/split_pattern.hpp"
#include "hf/tokenizer.hpp"
#include "hf/unicode_classes.hpp"
#include "hf/utf8.hpp"

namespace april::hf {
namespace {

using Ids = std::vector<TokenId>;

const std::string kFixtures = std::string(APRIL_HF_FIXTURES_DIR) + "/tokenizers/";

std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Each case of NAME.encodings.json (Hugging Face's ids, tokens and decode of
// each probe text) against april's tokenizer of NAME.json.
void expect_hugging_face_encodings(const std::string& name) {
  const Tokenizer tok = Tokenizer::load(kFixtures + name + ".json");
  const std::string path = kFixtures + name + ".encodings.json";
  const nlohmann::json doc = base::parse_json_document(base::read_file_bounded(path, 1 << 20, "encodings"), path);
  const auto& cases = doc.at("cases");
  ASSERT_EQ(cases.size(), 21u);
  for (const auto& c : cases) {
    const std::string text = c.at("text").get<std::string>();
    const Ids expected = c.at("ids").get<Ids>();
    EXPECT_EQ(tok.encode(text), expected) << name << ": " << text;
    std::vector<std::string> tokens;
    for (const TokenId id : expected) tokens.push_back(tok.token(id));
    EXPECT_EQ(tokens, c.at("tokens").get<std::vector<std::string>>()) << name << ": " << text;
    EXPECT_EQ(tok.decode(expected), c.at("decoded").get<std::string>()) << name << ": " << text;
  }
}

TEST(TokenizerHuggingFace, Qwen2FixtureGivesHuggingFaceIds) { expect_hugging_face_encodings("qwen2"); }
TEST(TokenizerHuggingFace, Llama3FixtureGivesHuggingFaceIds) { expect_hugging_face_encodings("llama3"); }

// More texts through the same fixtures: NFC (compositions, Hangul, canonical
// reordering, a mark of Unicode 10.0 that Hugging Face's Unicode 9.0
// normalizer leaves in place, singletons), contractions in any case and with
// U+017F, digit runs, Unicode whitespace, CR/LF runs, added tokens side by
// side, letters of Unicode 15.0 and 16.0, CJK, emoji and compatibility
// characters (which NFC keeps). Ids, decode and decode skipping special
// tokens are Hugging Face's: tokenizers 0.23.2 (its npm build) run on these
// texts.
constexpr const char* kMoreHuggingFaceCases = R"json({
  "qwen2": [
    {"text":"e\u0301\u0323 o\u0308\u0304 A\u030a \u1100\u1161\u11a8 \uac00\u11a8","ids":[160,121,120,139,226,223,135,107,223,130,230,223,169,111,226,223,169,111,226],"decoded":"\u1eb9\u0301 \u022b \u00c5 \uac01 \uac01","skipped":"\u1eb9\u0301 \u022b \u00c5 \uac01 \uac01"},
    {"text":"a\u0316\u0301 a\u0301\u0316 q\u0307\u0323","ids":[130,97,139,247,223,130,97,139,247,223,83,139,99,139,232],"decoded":"\u00e1\u0316 \u00e1\u0316 q\u0323\u0307","skipped":"\u00e1\u0316 \u00e1\u0316 q\u0323\u0307"},
    {"text":"x\u1df6\u0316","ids":[90,160,118,117,139,247],"decoded":"x\u1df6\u0316","skipped":"x\u1df6\u0316"},
    {"text":"it's IT'S it'\u017f we'RE they'Ve I'M you'LL he'D 'quoted'","ids":[75,86,296,271,54,9,53,315,9,132,126,403,9,52,39,268,91,9,56,71,271,9,47,273,81,87,9,46,46,223,260,9,38,223,9,83,87,81,86,304,9],"decoded":"it's IT'S it'\u017f we'RE they'Ve I'M you'LL he'D 'quoted'","skipped":"it's IT'S it'\u017f we'RE they'Ve I'M you'LL he'D 'quoted'"},
    {"text":"12345678901 3.14 \u0661\u0662\u0663 \u00b2\u00b3 \u216b","ids":[19,20,21,22,23,24,25,26,27,18,19,223,21,16,19,22,223,152,97,152,98,152,99,223,129,113,129,114,223,161,230,107],"decoded":"12345678901 3.14 \u0661\u0662\u0663 \u00b2\u00b3 \u216b","skipped":"12345678901 3.14 \u0661\u0662\u0663 \u00b2\u00b3 \u216b"},
    {"text":"a\u00a0b\u3000c\u2028d \u0085e \t\n\r\n  \n x","ids":[67,129,257,68,162,225,225,69,161,225,104,70,223,129,230,71,223,200,201,204,201,274,201,269],"decoded":"a\u00a0b\u3000c\u2028d \u0085e \t\n\r\n  \n x","skipped":"a\u00a0b\u3000c\u2028d \u0085e \t\n\r\n  \n x"},
    {"text":"tail   ","ids":[86,67,75,78,318],"decoded":"tail   ","skipped":"tail   "},
    {"text":"\r\n\r\n\n","ids":[204,201,204,201,201],"decoded":"\r\n\r\n\n","skipped":"\r\n\r\n\n"},
    {"text":"<|im_start|><|im_end|>text<|endoftext|><|endoftext|>","ids":[1,2,337,90,86,0,0],"decoded":"<|im_start|><|im_end|>text<|endoftext|><|endoftext|>","skipped":"text"},
    {"text":"<|begin_of_text|><|eot_id|> <|eot_id|>x","ids":[30,94,68,71,73,335,65,395,65,337,90,86,94,32,30,94,71,81,86,65,75,70,94,32,223,30,94,71,81,86,65,75,70,94,32,90],"decoded":"<|begin_of_text|><|eot_id|> <|eot_id|>x","skipped":"<|begin_of_text|><|eot_id|> <|eot_id|>x"},
    {"text":"Kawi \ud807\udf04\ud807\udf05 Garay \ud803\udd4a CJK-I \ud87a\udff0","ids":[45,67,89,75,223,175,242,123,229,175,242,123,230,223,41,67,84,343,223,175,241,116,235,223,37,44,45,15,43,223,175,109,110,111],"decoded":"Kawi \ud807\udf04\ud807\udf05 Garay \ud803\udd4a CJK-I \ud87a\udff0","skipped":"Kawi \ud807\udf04\ud807\udf05 Garay \ud803\udd4a CJK-I \ud87a\udff0"},
    {"text":"mixed: \u6570\u5b66\uff0c\u7b54\u6848\u662f\\boxed{42}\u3002","ids":[79,75,308,28,223,165,246,111,164,258,102,174,123,237,166,258,245,165,97,233,165,249,110,62,327,93,22,20,95,162,225,227],"decoded":"mixed: \u6570\u5b66\uff0c\u7b54\u6848\u662f\\boxed{42}\u3002","skipped":"mixed: \u6570\u5b66\uff0c\u7b54\u6848\u662f\\boxed{42}\u3002"},
    {"text":"\ud83d\udca1\u200d\ud83d\udd25 zero\u200bwidth","ids":[175,256,243,97,161,225,238,175,256,245,101,223,92,265,81,161,225,236,89,75,70,86,74],"decoded":"\ud83d\udca1\u200d\ud83d\udd25 zero\u200bwidth","skipped":"\ud83d\udca1\u200d\ud83d\udd25 zero\u200bwidth"},
    {"text":"  leading\n\n\n\ttabs   and spaces\t","ids":[223,399,415,335,73,201,201,201,200,86,67,68,85,274,272,338,82,67,69,71,85,200],"decoded":"  leading\n\n\n\ttabs   and spaces\t","skipped":"  leading\n\n\n\ttabs   and spaces\t"},
    {"text":"\ufb01 \ufb00 \uff21\uff22\uff23 \u00bd","ids":[174,108,226,223,174,108,225,223,174,123,97,174,123,98,174,123,99,223,129,124],"decoded":"\ufb01 \ufb00 \uff21\uff22\uff23 \u00bd","skipped":"\ufb01 \ufb00 \uff21\uff22\uff23 \u00bd"},
    {"text":"\u2126 \u212b \u212a","ids":[141,105,223,130,230,223,45],"decoded":"\u03a9 \u00c5 K","skipped":"\u03a9 \u00c5 K"}
  ],
  "llama3": [
    {"text":"e\u0301\u0323 o\u0308\u0304 A\u030a \u1100\u1161\u11a8 \uac00\u11a8","ids":[73,141,228,141,101,225,83,141,235,141,231,225,37,141,237,225,162,231,227,162,232,99,162,233,106,225,171,113,227,162,233,106],"decoded":"e\u0301\u0323 o\u0308\u0304 A\u030a \u1100\u1161\u11a8 \uac00\u11a8","skipped":"e\u0301\u0323 o\u0308\u0304 A\u030a \u1100\u1161\u11a8 \uac00\u11a8"},
    {"text":"a\u0316\u0301 a\u0301\u0316 q\u0307\u0323","ids":[69,141,249,141,228,336,141,228,141,249,225,85,141,234,141,101],"decoded":"a\u0316\u0301 a\u0301\u0316 q\u0307\u0323","skipped":"a\u0316\u0301 a\u0301\u0316 q\u0307\u0323"},
    {"text":"x\u1df6\u0316","ids":[92,162,120,119,141,249],"decoded":"x\u1df6\u0316","skipped":"x\u1df6\u0316"},
    {"text":"it's IT'S it'\u017f we'RE they'Ve I'M you'LL he'D 'quoted'","ids":[77,88,298,273,56,11,55,317,11,134,128,405,11,54,41,270,93,11,58,73,273,11,49,275,83,89,11,48,48,225,262,11,40,225,11,85,89,83,88,306,11],"decoded":"it's IT'S it'\u017f we'RE they'Ve I'M you'LL he'D 'quoted'","skipped":"it's IT'S it'\u017f we'RE they'Ve I'M you'LL he'D 'quoted'"},
    {"text":"12345678901 3.14 \u0661\u0662\u0663 \u00b2\u00b3 \u216b","ids":[21,22,23,24,25,26,27,28,29,20,21,225,23,18,21,24,225,154,99,154,100,154,101,225,131,115,131,116,225,163,232,109],"decoded":"12345678901 3.14 \u0661\u0662\u0663 \u00b2\u00b3 \u216b","skipped":"12345678901 3.14 \u0661\u0662\u0663 \u00b2\u00b3 \u216b"},
    {"text":"a\u00a0b\u3000c\u2028d \u0085e \t\n\r\n  \n x","ids":[69,131,259,70,164,227,227,71,163,227,106,72,225,131,232,73,225,202,203,206,203,276,203,271],"decoded":"a\u00a0b\u3000c\u2028d \u0085e \t\n\r\n  \n x","skipped":"a\u00a0b\u3000c\u2028d \u0085e \t\n\r\n  \n x"},
    {"text":"tail   ","ids":[88,69,77,80,320],"decoded":"tail   ","skipped":"tail   "},
    {"text":"\r\n\r\n\n","ids":[206,203,206,203,203],"decoded":"\r\n\r\n\n","skipped":"\r\n\r\n\n"},
    {"text":"<|im_start|><|im_end|>text<|endoftext|><|endoftext|>","ids":[32,96,77,81,67,87,88,69,86,88,96,34,32,96,77,81,67,73,82,72,96,34,339,92,88,32,96,73,82,72,397,339,92,88,96,34,32,96,73,82,72,397,339,92,88,96,34],"decoded":"<|im_start|><|im_end|>text<|endoftext|><|endoftext|>","skipped":"<|im_start|><|im_end|>text<|endoftext|><|endoftext|>"},
    {"text":"<|begin_of_text|><|eot_id|> <|eot_id|>x","ids":[0,4,225,4,92],"decoded":"<|begin_of_text|><|eot_id|> <|eot_id|>x","skipped":" x"},
    {"text":"Kawi \ud807\udf04\ud807\udf05 Garay \ud803\udd4a CJK-I \ud87a\udff0","ids":[47,69,91,77,225,177,244,125,231,177,244,125,232,225,43,69,86,345,225,177,243,118,237,225,39,46,47,17,45,225,177,111,112,113],"decoded":"Kawi \ud807\udf04\ud807\udf05 Garay \ud803\udd4a CJK-I \ud87a\udff0","skipped":"Kawi \ud807\udf04\ud807\udf05 Garay \ud803\udd4a CJK-I \ud87a\udff0"},
    {"text":"mixed: \u6570\u5b66\uff0c\u7b54\u6848\u662f\\boxed{42}\u3002","ids":[81,77,310,30,225,167,248,113,166,260,104,176,125,239,168,260,247,167,99,235,167,251,112,64,329,95,24,22,97,164,227,229],"decoded":"mixed: \u6570\u5b66\uff0c\u7b54\u6848\u662f\\boxed{42}\u3002","skipped":"mixed: \u6570\u5b66\uff0c\u7b54\u6848\u662f\\boxed{42}\u3002"},
    {"text":"\ud83d\udca1\u200d\ud83d\udd25 zero\u200bwidth","ids":[177,258,245,99,163,227,240,177,258,247,103,225,94,267,83,163,227,238,91,77,72,88,76],"decoded":"\ud83d\udca1\u200d\ud83d\udd25 zero\u200bwidth","skipped":"\ud83d\udca1\u200d\ud83d\udd25 zero\u200bwidth"},
    {"text":"  leading\n\n\n\ttabs   and spaces\t","ids":[225,401,417,337,75,203,203,203,202,88,69,70,87,276,274,340,84,69,71,73,87,202],"decoded":"  leading\n\n\n\ttabs   and spaces\t","skipped":"  leading\n\n\n\ttabs   and spaces\t"},
    {"text":"\ufb01 \ufb00 \uff21\uff22\uff23 \u00bd","ids":[176,110,228,225,176,110,227,225,176,125,99,176,125,100,176,125,101,225,131,126],"decoded":"\ufb01 \ufb00 \uff21\uff22\uff23 \u00bd","skipped":"\ufb01 \ufb00 \uff21\uff22\uff23 \u00bd"},
    {"text":"\u2126 \u212b \u212a","ids":[163,231,104,225,163,231,109,225,163,231,108],"decoded":"\u2126 \u212b \u212a","skipped":"\u2126 \u212b \u212a"}
  ]
})json";

TEST(TokenizerHuggingFace, MoreTextsGiveHuggingFaceIds) {
  const nlohmann::json doc = base::parse_json_document(kMoreHuggingFaceCases, "cases");
  for (const std::string name : {"qwen2", "llama3"}) {
    const Tokenizer tok = Tokenizer::load(kFixtures + name + ".json");
    for (const auto& c : doc.at(name)) {
      const std::string text = c.at("text").get<std::string>();
      const Ids expected = c.at("ids").get<Ids>();
      EXPECT_EQ(tok.encode(text), expected) << name << ": " << text;
      EXPECT_EQ(tok.decode(expected), c.at("decoded").get<std::string>()) << name << ": " << text;
      EXPECT_EQ(tok.decode(expected, true), c.at("skipped").get<std::string>()) << name << ": " << text;
    }
  }
}

TEST(TokenizerHuggingFace, CombiningAccentIsComposedAsHuggingFaceDoes) {
  // qwen2 normalizes with NFC: "e" + U+0301 is "é" before the split.
  const Tokenizer qwen = Tokenizer::load(kFixtures + "qwen2.json");
  EXPECT_EQ(qwen.encode("e\u0301"), qwen.encode("\u00e9"));
  // llama3 has no normalizer: the two spellings stay different.
  const Tokenizer llama = Tokenizer::load(kFixtures + "llama3.json");
  EXPECT_NE(llama.encode("e\u0301"), llama.encode("\u00e9"));
}

TEST(TokenizerHuggingFace, SpecialTokensAndLookups) {
  const Tokenizer tok = Tokenizer::load(kFixtures + "qwen2.json");
  EXPECT_EQ(tok.token_to_id("<|im_end|>"), 2);
  EXPECT_TRUE(tok.is_special(2));
  EXPECT_FALSE(tok.is_special(100));
  EXPECT_EQ(tok.token_to_id("no such token"), std::nullopt);
  EXPECT_EQ(tok.id_count(), 420);
  EXPECT_EQ(tok.decode(tok.encode("<|im_start|>user\nhi<|im_end|>"), true), "user\nhi");
  EXPECT_EQ(error_of([&] { (void)tok.decode(Ids{5, 420}); }), "decode: id 420 is not a token of " + kFixtures + "qwen2.json");
  EXPECT_EQ(error_of([&] { (void)tok.decode(Ids{-1}); }), "decode: id -1 is not a token of " + kFixtures + "qwen2.json");
  EXPECT_EQ(error_of([&] { (void)tok.encode("ok \xC3(\x80"); }), "encode: the text is not valid UTF-8 (byte 3, 0xC3)");
}

// A tokenizer.json written here: the 256 byte-level characters are ids
// 0..255 (byte b is id b), `extra` tokens (plain text, written byte-level)
// follow from 256, then the merges and added tokens given.
std::string bl(const std::string& text) {
  std::string out;
  for (const char c : text) out += byte_level::char_of_byte(static_cast<std::uint8_t>(c));
  return out;
}

nlohmann::json added_token(TokenId id, const std::string& content, bool special = true) {
  return {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", false}, {"special", special}};
}

nlohmann::json tiny_json(const std::vector<std::string>& extra, const std::vector<std::pair<std::string, std::string>>& merges,
                         const nlohmann::json& added = nlohmann::json::array(), SplitPattern pattern = SplitPattern::kQwen2) {
  nlohmann::json vocab = nlohmann::json::object();
  for (unsigned b = 0; b < 256; ++b) vocab[byte_level::char_of_byte(static_cast<std::uint8_t>(b))] = b;
  for (std::size_t i = 0; i < extra.size(); ++i) vocab[bl(extra[i])] = 256 + i;
  nlohmann::json merge_list = nlohmann::json::array();
  for (const auto& [a, b] : merges) merge_list.push_back({bl(a), bl(b)});
  return {{"version", "1.0"},
          {"added_tokens", added},
          {"normalizer", nullptr},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"},
               {"pattern", {{"Regex", std::string(split_pattern_regex(pattern))}}},
               {"behavior", "Isolated"},
               {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}}},
          {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"byte_fallback", false},
            {"ignore_merges", false},
            {"vocab", vocab},
            {"merges", merge_list}}}};
}

Tokenizer tiny(const nlohmann::json& doc) { return Tokenizer::parse(doc.dump(), "tiny.json"); }

Ids bytes_of(const std::string& text) {
  Ids out;
  for (const char c : text) out.push_back(static_cast<std::uint8_t>(c));
  return out;
}

TEST(TokenizerBpe, MergesApplyInRankOrder) {
  // "abc": with (b,c) ranked first, "bc" forms and "a" stays; ranked the other way, "ab" forms.
  EXPECT_EQ(tiny(tiny_json({"bc", "ab"}, {{"b", "c"}, {"a", "b"}})).encode("abc"), (Ids{'a', 256}));
  EXPECT_EQ(tiny(tiny_json({"bc", "ab"}, {{"a", "b"}, {"b", "c"}})).encode("abc"), (Ids{257, 'c'}));
  // A merged symbol merges on: a+b, then ab+c.
  EXPECT_EQ(tiny(tiny_json({"ab", "abc"}, {{"a", "b"}, {"ab", "c"}})).encode("abcab"), (Ids{257, 256}));
}

TEST(TokenizerBpe, OlderMergeStringsReadAsPairs) {
  nlohmann::json doc = tiny_json({"bc", "ab"}, {});
  doc["model"]["merges"] = {"b c", "a b"};  // as older tokenizer.json files write them
  EXPECT_EQ(tiny(doc).encode("abc"), (Ids{'a', 256}));
}

TEST(TokenizerBpe, EqualPairsMergeLeftmostFirst) {
  const Tokenizer tok = tiny(tiny_json({"aa", "aaaa"}, {{"a", "a"}, {"aa", "aa"}}));
  EXPECT_EQ(tok.encode("aaa"), (Ids{256, 'a'}));
  EXPECT_EQ(tok.encode("aaaaa"), (Ids{257, 'a'}));
  EXPECT_EQ(tok.encode("aaaaaaa"), (Ids{257, 256, 'a'}));
}

TEST(TokenizerBpe, MergesStayInsideEachPiece) {
  // (b, space) is the first merge, but "ab ab" splits as "ab", " ab": no piece holds "b ".
  const Tokenizer tok = tiny(tiny_json({"b ", "ab"}, {{"b", " "}, {"a", "b"}}));
  EXPECT_EQ(tok.encode("ab ab"), (Ids{257, ' ', 257}));
}

TEST(TokenizerBpe, IgnoreMergesTakesAWordThatIsAVocabularyEntry) {
  // Hugging Face (tokenizers 0.23.2) on this file: "abc" is [257] with
  // ignore_merges (Llama 3 sets it), [256, 'c'] without (no merge makes "abc").
  nlohmann::json doc = tiny_json({"ab", "abc"}, {{"a", "b"}});
  EXPECT_EQ(tiny(doc).encode("abc"), (Ids{256, 'c'}));
  doc["model"]["ignore_merges"] = true;
  EXPECT_EQ(tiny(doc).encode("abc"), (Ids{257}));
  EXPECT_EQ(tiny(doc).encode("abcab"), (Ids{256, 'c', 256}));  // one word, "abcab", not in the vocabulary
}

TEST(TokenizerAddedTokens, SplitOutOfTheRawTextLongestFirst) {
  const Tokenizer tok =
      tiny(tiny_json({}, {}, nlohmann::json::array({added_token(256, "<x>"), added_token(257, "<x>y"), added_token(258, "qq", false)})));
  EXPECT_EQ(tok.encode("a<x>b<x>yc"), (Ids{'a', 256, 'b', 257, 'c'}));
  EXPECT_EQ(tok.encode("<x><x>"), (Ids{256, 256}));
  EXPECT_EQ(tok.encode("aqqa"), (Ids{'a', 258, 'a'}));  // inside a word, and not only special ones
  EXPECT_EQ(tok.decode(tok.encode("a<x>qq"), true), "aqq");
}

TEST(TokenizerAddedTokens, LstripAndRstripTakeTheWhitespaceBeside) {
  // Ids from Hugging Face (tokenizers 0.23.2) on this file.
  nlohmann::json added = nlohmann::json::array({added_token(256, "<l>"), added_token(257, "<r>"), added_token(258, "<n>")});
  added[0]["lstrip"] = true;
  added[1]["rstrip"] = true;
  const Tokenizer tok = tiny(tiny_json({}, {}, added));
  EXPECT_EQ(tok.encode("a  <l>b"), (Ids{'a', 256, 'b'}));
  EXPECT_EQ(tok.encode("a<r>  b"), (Ids{'a', 257, 'b'}));
  EXPECT_EQ(tok.encode("a <n> b"), (Ids{'a', ' ', 258, ' ', 'b'}));
  EXPECT_EQ(tok.encode("<r> <l>"), (Ids{257, 256}));
  EXPECT_EQ(tok.encode("x\u3000<l>"), (Ids{'x', 256}));  // U+3000 is whitespace
  EXPECT_EQ(tok.encode("<r>\n<r>"), (Ids{257, 257}));
}

TEST(TokenizerAddedTokens, NormalizedOnesMatchAfterNfc) {
  // Ids and decodes from Hugging Face (tokenizers 0.23.2) on these files: a
  // normalized added token matches either spelling; a raw one only its own.
  nlohmann::json doc = tiny_json({}, {}, nlohmann::json::array({added_token(256, "\u00e9t\u00e9", false)}));
  doc["normalizer"] = {{"type", "NFC"}};
  const std::string text = "e\u0301te\u0301 and \u00e9t\u00e9";
  EXPECT_EQ(tiny(doc).encode(text), (Ids{195, 169, 't', 195, 169, ' ', 'a', 'n', 'd', ' ', 256}));
  doc["added_tokens"][0]["normalized"] = true;
  EXPECT_EQ(tiny(doc).encode(text), (Ids{256, ' ', 'a', 'n', 'd', ' ', 256}));
  // Its characters are byte-level ones: it decodes to bytes E9 74 E9, not UTF-8.
  EXPECT_EQ(tiny(doc).decode(Ids{256}), "\uFFFDt\uFFFD");
}

std::vector<std::string> pieces(SplitPattern pattern, const std::string& text) {
  utf8::Decoded d;
  EXPECT_FALSE(utf8::decode(text, d).has_value());
  std::vector<std::string> out;
  for (const auto& [b, e] : split_pieces(pattern, d.cps))
    out.push_back(text.substr(d.byte_offsets[b], d.byte_offsets[e] - d.byte_offsets[b]));
  return out;
}

using Pieces = std::vector<std::string>;

// Expected pieces are Hugging Face's (tokenizers 0.23.2's pre-tokenizer of
// the fixtures), the same for both patterns unless digits are involved.
TEST(TokenizerSplit, ContractionsInAnyCase) {
  for (const SplitPattern p : {SplitPattern::kQwen2, SplitPattern::kLlama3}) {
    EXPECT_EQ(pieces(p, "I'm sure they're right, we'll see; it's DON'T 'x"),
              (Pieces{"I", "'m", " sure", " they", "'re", " right", ",", " we", "'ll", " see", ";", " it", "'s", " DON", "'T", " '", "x"}));
    EXPECT_EQ(pieces(p, "don't've"), (Pieces{"don", "'t", "'ve"}));
    EXPECT_EQ(pieces(p, "it'\u017F"), (Pieces{"it", "'\u017F"}));  // U+017F case-folds to s
  }
}

TEST(TokenizerSplit, DigitsOneAtATimeForQwenUpToThreeForLlama3) {
  EXPECT_EQ(pieces(SplitPattern::kQwen2, "1234567 x12"), (Pieces{"1", "2", "3", "4", "5", "6", "7", " x", "1", "2"}));
  EXPECT_EQ(pieces(SplitPattern::kLlama3, "1234567 x12"), (Pieces{"123", "456", "7", " x", "12"}));
  EXPECT_EQ(pieces(SplitPattern::kLlama3, "\u0661\u0662\u0663\u0664"), (Pieces{"\u0661\u0662\u0663", "\u0664"}));  // \p{N}, not only ASCII
}

TEST(TokenizerSplit, WhitespaceLeavesItsLastCharacterToTheWordAfter) {
  for (const SplitPattern p : {SplitPattern::kQwen2, SplitPattern::kLlama3}) {
    EXPECT_EQ(pieces(p, "a   b"), (Pieces{"a", "  ", " b"}));  // \s+(?!\S)
    EXPECT_EQ(pieces(p, "a   "), (Pieces{"a", "   "}));        // at the end: all of it
    EXPECT_EQ(pieces(p, "x\t\ty"), (Pieces{"x", "\t", "\ty"}));
    EXPECT_EQ(pieces(p, "a \n\n b"), (Pieces{"a", " \n\n", " b"}));  // \s*[\r\n]+ first
    EXPECT_EQ(pieces(p, "!!\n\nx"), (Pieces{"!!\n\n", "x"}));        //  ?[^\s\p{L}\p{N}]+[\r\n]*
    EXPECT_EQ(pieces(p, "a.\r\nb"), (Pieces{"a", ".\r\n", "b"}));
    EXPECT_EQ(pieces(p, "\u3000\u3000x"), (Pieces{"\u3000", "\u3000x"}));
  }
}

TEST(TokenizerDecode, IncompleteUtf8BecomesReplacementCharacters) {
  // Byte tokens decode to bytes; Hugging Face replaces each maximal
  // ill-formed subpart with one U+FFFD (tokenizers 0.23.2 gives these).
  const Tokenizer tok = tiny(tiny_json({}, {}));
  EXPECT_EQ(tok.decode(bytes_of("\xE6")), "\uFFFD");
  EXPECT_EQ(tok.decode(bytes_of("\xE6\x95")), "\uFFFD");
  EXPECT_EQ(tok.decode(bytes_of("\xE6\x95\xB0")), "\u6570");
  EXPECT_EQ(tok.decode(bytes_of("a\xE6\x95"
                                "b")),
            "a\uFFFD"
            "b");
  EXPECT_EQ(tok.decode(bytes_of("\xF0\x9F\x99")), "\uFFFD");
  EXPECT_EQ(tok.decode(bytes_of("\xED\xA0\x80")), "\uFFFD\uFFFD\uFFFD");            // a surrogate: every byte
  EXPECT_EQ(tok.decode(bytes_of("\xC0\xAF")), "\uFFFD\uFFFD");                      // overlong
  EXPECT_EQ(tok.decode(bytes_of("\xF4\x90\x80\x80")), "\uFFFD\uFFFD\uFFFD\uFFFD");  // past U+10FFFF
  EXPECT_EQ(tok.decode(bytes_of("\xFF")), "\uFFFD");
}

TEST(TokenizerDecode, AnAddedTokenOutsideTheByteAlphabetIsItsOwnText) {
  const Tokenizer tok = tiny(tiny_json({}, {}, nlohmann::json::array({added_token(256, "two words")})));
  EXPECT_EQ(tok.encode("xtwo words"), (Ids{'x', 256}));
  EXPECT_EQ(tok.decode(Ids{'x', 256}), "xtwo words");
  EXPECT_EQ(tok.decode(Ids{'x', 256}, true), "x");
}

TEST(TokenizerNfc, ComposesReordersAndKeepsUnicode9Marks) {
  EXPECT_EQ(nfc("e\u0301"), "\u00e9");
  EXPECT_EQ(nfc("\u1100\u1161\u11a8"), "\uac01");    // Hangul L V T
  EXPECT_EQ(nfc("\uac00\u11a8"), "\uac01");          // LV T
  EXPECT_EQ(nfc("a\u0301\u0316"), "\u00e1\u0316");   // reordered (220 before 230), then composed
  EXPECT_EQ(nfc("\u2126 \u212b"), "\u03a9 \u00c5");  // singletons
  EXPECT_EQ(nfc("\u1e0b\u0323"), "\u1e0d\u0307");    // d dot-above + dot-below: decomposed, reordered, recomposed
  // U+1DF6 (Unicode 10.0) is unknown to Hugging Face's Unicode 9.0 tables: not reordered there, nor here.
  EXPECT_EQ(nfc("x\u1df6\u0316"), "x\u1df6\u0316");
  EXPECT_EQ(nfc("plain ASCII, \u6570\u5b66 and \u00e9"), "plain ASCII, \u6570\u5b66 and \u00e9");
}

TEST(TokenizerUnicode, ClassesAreThoseOfHuggingFacesOniguruma) {
  using unicode::char_class;
  using unicode::CharClass;
  for (char32_t cp = 0; cp < 0x80; ++cp) {  // the ASCII shortcut agrees with the table
    const unicode::ClassRange* r = unicode::detail::find_range(unicode::class_ranges(), cp);
    EXPECT_EQ(char_class(cp), r != nullptr ? r->cls : CharClass::kOther) << static_cast<unsigned>(cp);
  }
  EXPECT_EQ(char_class(0x1C89), CharClass::kLetter);   // Unicode 16.0, unknown to Python 3.11
  EXPECT_EQ(char_class(0x2EBF0), CharClass::kLetter);  // 15.1
  EXPECT_EQ(char_class(0x10D40), CharClass::kNumber);  // 16.0
  EXPECT_EQ(char_class(0x0085), CharClass::kWhitespace);
  EXPECT_EQ(char_class(0x3000), CharClass::kWhitespace);
  EXPECT_EQ(char_class(0x200B), CharClass::kOther);  // zero width space is not White_Space
  EXPECT_EQ(char_class(0x1C), CharClass::kOther);    // nor U+001C, which Python's isspace() takes
  EXPECT_EQ(char_class(0x0301), CharClass::kOther);  // a combining mark is not \p{L}
}

std::string load_error(const nlohmann::json& doc) {
  return error_of([&] { (void)tiny(doc); });
}

TEST(TokenizerErrors, EachRefusalNamesTheFileAndTheJsonPath) {
  nlohmann::json doc = tiny_json({"ab"}, {{"a", "b"}});
  doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\s+";
  EXPECT_TRUE(
      load_error(doc).starts_with("tiny.json: /pre_tokenizer/pretokenizers/0/pattern/Regex: this split regex is not one april implements; "
                                  "it implements exactly Qwen2's"))
      << load_error(doc);

  doc = tiny_json({"ab"}, {{"a", "b"}});
  doc["normalizer"] = {{"type", "NFKC"}};
  EXPECT_TRUE(load_error(doc).starts_with("tiny.json: /normalizer/type: normalizer 'NFKC' is not supported (none or NFC is); april reads"))
      << load_error(doc);

  doc = tiny_json({"ab"}, {{"a", "b"}});
  doc["model"].erase("vocab");
  EXPECT_EQ(load_error(doc), "tiny.json: /model/vocab: missing");

  doc = tiny_json({"ab"}, {{"a", "b"}});
  doc["model"]["merges"].push_back({"a", "zz"});
  EXPECT_EQ(load_error(doc), "tiny.json: /model/merges/1: token 'zz' is not in /model/vocab");

  doc = tiny_json({}, {{"a", "b"}});
  EXPECT_EQ(load_error(doc), "tiny.json: /model/merges/0: the merged token 'ab' is not in /model/vocab");

  doc = tiny_json({"ab"}, {});
  doc["model"]["merges"] = {"a b", "ab"};  // the older form; the second has no space
  EXPECT_EQ(load_error(doc), "tiny.json: /model/merges/1: a merge is a pair of tokens: [\"a\", \"b\"], or \"a b\"");
}

TEST(TokenizerErrors, UnsupportedComponentsAreRefusedByName) {
  const auto refused = [](const std::function<void(nlohmann::json&)>& edit, const std::string& path) {
    nlohmann::json doc = tiny_json({"ab"}, {{"a", "b"}});
    edit(doc);
    const std::string error = load_error(doc);
    EXPECT_TRUE(error.starts_with("tiny.json: " + path + ": ")) << error;
    EXPECT_NE(error.find("not supported"), std::string::npos) << error;
  };
  refused([](nlohmann::json& d) { d["model"]["type"] = "WordPiece"; }, "/model/type");
  refused([](nlohmann::json& d) { d["model"]["byte_fallback"] = true; }, "/model/byte_fallback");
  refused([](nlohmann::json& d) { d["model"]["dropout"] = 0.1; }, "/model/dropout");
  refused([](nlohmann::json& d) { d["model"]["continuing_subword_prefix"] = "##"; }, "/model/continuing_subword_prefix");
  refused(
      [](nlohmann::json& d) {
        d["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"String", " "}};
      },
      "/pre_tokenizer/pretokenizers/0/pattern");
  refused([](nlohmann::json& d) { d["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed"; },
          "/pre_tokenizer/pretokenizers/0/behavior");
  refused([](nlohmann::json& d) { d["pre_tokenizer"]["pretokenizers"][1]["use_regex"] = true; },
          "/pre_tokenizer/pretokenizers/1/use_regex");
  refused([](nlohmann::json& d) { d["pre_tokenizer"] = {{"type", "Metaspace"}}; }, "/pre_tokenizer/type");
  refused([](nlohmann::json& d) { d["decoder"] = {{"type", "WordPiece"}}; }, "/decoder/type");
  refused(
      [](nlohmann::json& d) {
        d["added_tokens"] = nlohmann::json::array({added_token(257, "<s>")});
        d["added_tokens"][0]["single_word"] = true;
      },
      "/added_tokens/0/single_word");
}

TEST(TokenizerErrors, AddedTokenIdsMustBeTheOnesHuggingFaceGives) {
  // Hugging Face numbers a new added token after the vocabulary, whatever the file says.
  nlohmann::json doc = tiny_json({}, {}, nlohmann::json::array({added_token(300, "<s>")}));
  EXPECT_EQ(load_error(doc),
            "tiny.json: /added_tokens/0/id: Hugging Face would give '<s>' id 256 (the vocabulary's, or the next after it), not 300");
  doc = tiny_json({}, {}, nlohmann::json::array({added_token(256, "<s>"), added_token(257, "</s>")}));
  EXPECT_EQ(load_error(doc), "");
}

TEST(TokenizerErrors, FilesAndText) {
  EXPECT_EQ(error_of([] { (void)Tokenizer::parse("{\n\"model\": }", "tiny.json"); }).substr(0, 27), "tiny.json:2: invalid JSON (");
  EXPECT_NE(error_of([] { (void)Tokenizer::load("/nonexistent/tokenizer.json"); }).find("/nonexistent/tokenizer.json"), std::string::npos);
  nlohmann::json doc = tiny_json({}, {});
  doc["model"]["vocab"].erase(bl("\x01"));
  EXPECT_EQ(error_of([&] { (void)tiny(doc).encode("a\x01"); }), "encode: byte 0x01 has no token in the vocabulary of tiny.json");
}

}  // namespace
}  // namespace april::hf
