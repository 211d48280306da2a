// Reading tokenizer.json into the tables of tokenizer_impl.hpp. Everything
// outside what tokenizer.hpp lists is refused by its JSON path.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/bounded_read.hpp"
#include "base/json_value.hpp"
#include "hf/byte_level.hpp"
#include "hf/nfc.hpp"
#include "hf/tokenizer_impl.hpp"

namespace april::hf {
namespace {

using base::JsonValue;

constexpr const char* kWhatIsRead =
    "april reads the byte-level BPE tokenizer.json of Qwen2, Qwen2.5, Qwen3 and Llama 3 (see hf/tokenizer.hpp)";
// Ids past the number of tokens by more than this are refused: the id table
// is sized by the largest id, and must stay bounded by the file.
constexpr std::int64_t kIdSlack = 1 << 16;

[[noreturn]] void refuse(const JsonValue& where, const std::string& what) { where.fail(fmt::format("{}; {}", what, kWhatIsRead)); }

std::string type_of(const JsonValue& component) { return component.at("type").string(); }

bool flag_or(const JsonValue& object, const char* key, bool fallback) {
  const auto v = object.find(key);
  return v ? v->boolean() : fallback;
}

// continuing_subword_prefix and end_of_word_suffix: absent, null or "".
void require_empty_affix(const JsonValue& model, const char* key) {
  if (const auto v = model.find(key); v && !v->string().empty()) refuse(*v, fmt::format("a BPE {} is not supported", key));
}

void read_normalizer(const JsonValue& root, Tokenizer::Impl& impl) {
  const auto normalizer = root.find("normalizer");
  if (!normalizer) return;
  const std::string type = type_of(*normalizer);
  if (type != "NFC") refuse(normalizer->at("type"), fmt::format("normalizer '{}' is not supported (none or NFC is)", type));
  impl.nfc = true;
}

void read_byte_level(const JsonValue& byte_level) {
  if (flag_or(byte_level, "add_prefix_space", false)) {
    refuse(byte_level.at("add_prefix_space"), "a ByteLevel pre-tokenizer that adds a prefix space is not supported");
  }
  if (flag_or(byte_level, "use_regex", true)) {
    refuse(byte_level.find("use_regex") ? byte_level.at("use_regex") : byte_level,
           "a ByteLevel pre-tokenizer with its own regex (use_regex true, GPT-2's split) is not supported");
  }
}

SplitPattern read_split(const JsonValue& split) {
  const JsonValue pattern = split.at("pattern");
  if (!pattern.has("Regex")) refuse(pattern, "a Split pattern other than {\"Regex\": ...} is not supported");
  const JsonValue regex = pattern.at("Regex");
  const auto known = split_pattern_of(regex.string());
  if (!known) {
    refuse(regex, fmt::format("this split regex is not one april implements; it implements exactly Qwen2's {} and Llama 3's {}",
                              split_pattern_regex(SplitPattern::kQwen2), split_pattern_regex(SplitPattern::kLlama3)));
  }
  if (const std::string behavior = split.at("behavior").string(); behavior != "Isolated") {
    refuse(split.at("behavior"), fmt::format("Split behavior '{}' is not supported (Isolated is)", behavior));
  }
  if (flag_or(split, "invert", false)) refuse(split.at("invert"), "an inverted Split is not supported");
  return *known;
}

void read_pre_tokenizer(const JsonValue& root, Tokenizer::Impl& impl) {
  const auto pre = root.find("pre_tokenizer");
  if (!pre) refuse(root.at("pre_tokenizer"), "no pre-tokenizer: a byte-level one is needed");
  const std::string type = type_of(*pre);
  if (type == "ByteLevel") {
    read_byte_level(*pre);
    return;
  }
  const std::string expected = "Sequence of [Split, ByteLevel]";
  if (type != "Sequence")
    refuse(pre->at("type"), fmt::format("pre-tokenizer '{}' is not supported ({} or a lone ByteLevel is)", type, expected));
  const auto steps = pre->at("pretokenizers").elements();
  if (steps.size() != 2 || type_of(steps[0]) != "Split" || type_of(steps[1]) != "ByteLevel") {
    refuse(pre->at("pretokenizers"), fmt::format("this pre-tokenizer Sequence is not supported (a {} is)", expected));
  }
  impl.split = read_split(steps[0]);
  read_byte_level(steps[1]);
}

void read_decoder(const JsonValue& root) {
  const auto decoder = root.find("decoder");
  if (!decoder) refuse(root.at("decoder"), "no decoder: a ByteLevel one is needed");
  if (const std::string type = type_of(*decoder); type != "ByteLevel") {
    refuse(decoder->at("type"), fmt::format("decoder '{}' is not supported (ByteLevel is)", type));
  }
}

void check_model_options(const JsonValue& model, Tokenizer::Impl& impl) {
  if (const std::string type = type_of(model); type != "BPE")
    refuse(model.at("type"), fmt::format("model type '{}' is not supported (BPE is)", type));
  // Dropout 0 merges as none does (tokenizers skips a merge when a draw is < p).
  if (const auto dropout = model.find("dropout"); dropout && dropout->number(0, 1) != 0) {
    refuse(*dropout, "BPE dropout (random segmentation) is not supported");
  }
  if (flag_or(model, "byte_fallback", false)) refuse(model.at("byte_fallback"), "BPE byte_fallback is not supported");
  require_empty_affix(model, "continuing_subword_prefix");
  require_empty_affix(model, "end_of_word_suffix");
  impl.ignore_merges = flag_or(model, "ignore_merges", false);
  // unk_token and fuse_unk: every byte has a token in these vocabularies, so
  // no unknown symbol arises (encode refuses a byte without one).
}

struct RawToken {
  const std::string* text;
  TokenId id;
};

void check_id_bound(const JsonValue& where, std::int64_t id, std::int64_t tokens) {
  if (id >= tokens + kIdSlack) {
    where.fail(fmt::format("id {} is far past the {} tokens the file has (ids are expected to be dense)", id, tokens));
  }
}

// /model/vocab: token -> id.
std::vector<RawToken> read_vocab(const JsonValue& vocab, std::int64_t tokens) {
  const nlohmann::json& raw = vocab.raw();
  if (!raw.is_object()) vocab.fail("an object of token -> id was expected");
  std::vector<RawToken> out;
  out.reserve(raw.size());
  for (auto it = raw.begin(); it != raw.end(); ++it) {
    const nlohmann::json& v = it.value();
    std::int64_t id = -1;
    if (v.is_number_unsigned() && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<TokenId>::max())) {
      id = v.get<std::int64_t>();
    } else {
      id = vocab.at(it.key()).integer(0, std::numeric_limits<TokenId>::max());  // the error, by path
    }
    if (id >= tokens + kIdSlack) check_id_bound(vocab.at(it.key()), id, tokens);
    out.push_back(RawToken{&it.key(), static_cast<TokenId>(id)});
  }
  return out;
}

// Hugging Face gives added tokens ids as it adds them, one at a time in file
// order (tokenizers' AddedVocabulary::add_tokens): a content already known
// keeps its id, a new one takes the next id after the vocabulary. A file
// whose listed id differs would be tokenized with the other id there: refused.
TokenId hugging_face_added_id(const std::string& content, const Tokenizer::Impl& impl, std::size_t vocab_entries,
                              std::optional<TokenId> max_added) {
  if (const auto it = impl.added_ids.find(content); it != impl.added_ids.end()) return it->second;
  if (const auto it = impl.vocab.find(content); it != impl.vocab.end()) return it->second;
  const auto size = static_cast<TokenId>(vocab_entries);
  if (!max_added) return size;
  return (*max_added >= size || size == 0) ? *max_added + 1 : size;
}

struct AddedEntry {
  JsonValue where;
  AddedToken token;
};

std::vector<AddedEntry> read_added(const JsonValue& root, std::int64_t tokens) {
  std::vector<AddedEntry> out;
  const auto list = root.find("added_tokens");
  if (!list) return out;
  for (const JsonValue& e : list->elements()) {
    AddedToken t;
    t.id = static_cast<TokenId>(e.at("id").integer(0, std::numeric_limits<TokenId>::max()));
    check_id_bound(e.at("id"), t.id, tokens);
    t.content = e.at("content").string();
    t.special = flag_or(e, "special", false);
    t.lstrip = flag_or(e, "lstrip", false);
    t.rstrip = flag_or(e, "rstrip", false);
    t.normalized = flag_or(e, "normalized", true);  // Hugging Face's default
    if (flag_or(e, "single_word", false)) refuse(e.at("single_word"), "single_word added tokens are not supported");
    out.push_back(AddedEntry{e, std::move(t)});
  }
  return out;
}

// One side of a merge: ["a", "b"], or the older "a b" (split at the first
// space, as Hugging Face does); nullopt when it is neither.
std::optional<std::string_view> merge_side(const nlohmann::json& raw, int side) {
  if (raw.is_array() && raw.size() == 2 && raw[0].is_string() && raw[1].is_string()) {
    return std::string_view(raw[static_cast<std::size_t>(side)].get_ref<const std::string&>());
  }
  if (raw.is_string()) {
    const std::string_view s = raw.get_ref<const std::string&>();
    const auto space = s.find(' ');
    if (space != std::string_view::npos) return side == 0 ? s.substr(0, space) : s.substr(space + 1);
  }
  return std::nullopt;
}

void read_merges(const JsonValue& merges, Tokenizer::Impl& impl) {
  const nlohmann::json& raw = merges.raw();
  if (!raw.is_array()) merges.fail("an array of merges was expected");
  if (raw.size() > std::numeric_limits<std::uint32_t>::max()) merges.fail("too many merges");
  impl.merges.reserve(raw.size());
  const auto element = [&merges](std::size_t i) { return merges.elements()[i]; };  // for an error only
  std::string joined;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    TokenId ids[2] = {0, 0};
    for (int side = 0; side < 2; ++side) {
      const auto token = merge_side(raw[i], side);
      if (!token) element(i).fail("a merge is a pair of tokens: [\"a\", \"b\"], or \"a b\"");
      const auto it = impl.vocab.find(*token);
      if (it == impl.vocab.end()) element(i).fail(fmt::format("token '{}' is not in /model/vocab", *token));
      ids[side] = it->second;
    }
    joined.assign(impl.text_of(ids[0]));
    joined.append(impl.text_of(ids[1]));
    const auto merged = impl.vocab.find(joined);
    if (merged == impl.vocab.end()) element(i).fail(fmt::format("the merged token '{}' is not in /model/vocab", joined));
    // A repeated pair takes its last rank, as Hugging Face's map does.
    impl.merges.insert_or_assign(merge_key(ids[0], ids[1]), MergeResult{static_cast<std::uint32_t>(i), merged->second});
  }
}

void build_tables(const JsonValue& vocab_json, const std::vector<RawToken>& vocab, std::vector<AddedEntry>& added, Tokenizer::Impl& impl) {
  TokenId max_id = -1;
  std::size_t bytes = 0;
  for (const RawToken& t : vocab) {
    max_id = std::max(max_id, t.id);
    bytes += t.text->size();
  }
  for (const AddedEntry& a : added) {
    max_id = std::max(max_id, a.token.id);
    bytes += a.token.content.size();
  }
  if (bytes > std::numeric_limits<std::uint32_t>::max()) vocab_json.fail("the tokens are too long");
  impl.by_id.assign(static_cast<std::size_t>(max_id) + 1, Tokenizer::Impl::Entry{});
  impl.special_by_id.assign(impl.by_id.size(), 0);
  // Every token's text goes in the pool first, so that views into it stay valid.
  impl.pool.reserve(bytes);
  std::vector<std::uint32_t> vocab_offsets, added_offsets;
  for (const RawToken& t : vocab) {
    vocab_offsets.push_back(static_cast<std::uint32_t>(impl.pool.size()));
    impl.pool += *t.text;
  }
  for (const AddedEntry& a : added) {
    added_offsets.push_back(static_cast<std::uint32_t>(impl.pool.size()));
    impl.pool += a.token.content;
  }
  impl.vocab.reserve(vocab.size());
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    Tokenizer::Impl::Entry& e = impl.by_id[static_cast<std::size_t>(vocab[i].id)];
    if (e.length != Tokenizer::Impl::Entry::kNone) {
      vocab_json.at(*vocab[i].text).fail(fmt::format("id {} is also the id of '{}'", vocab[i].id, impl.text_of(vocab[i].id)));
    }
    e = {vocab_offsets[i], static_cast<std::uint32_t>(vocab[i].text->size())};
    impl.vocab.emplace(impl.text_of(vocab[i].id), vocab[i].id);
  }
  std::optional<TokenId> max_added;
  for (std::size_t i = 0; i < added.size(); ++i) {
    const AddedToken& t = added[i].token;
    if (t.content.empty()) continue;  // Hugging Face ignores it
    if (impl.added_ids.count(t.content) != 0) refuse(added[i].where.at("content"), "a repeated added token is not supported");
    const TokenId hf_id = hugging_face_added_id(t.content, impl, vocab.size(), max_added);
    if (hf_id != t.id) {
      added[i].where.at("id").fail(
          fmt::format("Hugging Face would give '{}' id {} (the vocabulary's, or the next after it), not {}", t.content, hf_id, t.id));
    }
    impl.by_id[static_cast<std::size_t>(t.id)] = {added_offsets[i], static_cast<std::uint32_t>(t.content.size())};
    impl.added_ids.emplace(impl.text_of(t.id), t.id);
    max_added = std::max(max_added.value_or(t.id), t.id);
  }
}

void build_added_matchers(const std::vector<AddedEntry>& added, Tokenizer::Impl& impl) {
  std::vector<AddedToken> raw, normalized;
  for (const AddedEntry& a : added) {
    const AddedToken& t = a.token;
    if (t.content.empty()) continue;
    if (t.special) {
      impl.special_by_id[static_cast<std::size_t>(t.id)] = 1;
      // Hugging Face skips by content: a vocabulary entry spelled the same is skipped too.
      if (const auto it = impl.vocab.find(t.content); it != impl.vocab.end()) impl.special_by_id[static_cast<std::size_t>(it->second)] = 1;
    }
    if (t.normalized && impl.nfc && nfc(t.content) != t.content) {
      refuse(a.where.at("content"), "an added token matched in normalized text whose content NFC changes is not supported");
    }
    (t.normalized ? normalized : raw).push_back(t);
  }
  impl.raw_added = AddedTokenMatcher(std::move(raw));
  impl.normalized_added = AddedTokenMatcher(std::move(normalized));
}

std::shared_ptr<const Tokenizer::Impl> build(const nlohmann::json& doc, const std::string& source) {
  const JsonValue root(doc, source);
  if (!root.is_object()) root.fail("a tokenizer.json object was expected");
  auto impl = std::make_shared<Tokenizer::Impl>();
  impl->source = source;
  read_normalizer(root, *impl);
  read_pre_tokenizer(root, *impl);
  read_decoder(root);
  const JsonValue model = root.at("model");
  check_model_options(model, *impl);
  const JsonValue vocab_json = model.at("vocab");
  const std::int64_t entries = static_cast<std::int64_t>(vocab_json.raw().size()) +
                               (root.has("added_tokens") ? static_cast<std::int64_t>(root.at("added_tokens").raw().size()) : 0);
  const std::vector<RawToken> vocab = read_vocab(vocab_json, entries);
  std::vector<AddedEntry> added = read_added(root, entries);
  build_tables(vocab_json, vocab, added, *impl);
  read_merges(model.at("merges"), *impl);
  for (unsigned b = 0; b < 256; ++b) {
    const auto it = impl->vocab.find(byte_level::char_of_byte(static_cast<std::uint8_t>(b)));
    impl->byte_token[b] = it == impl->vocab.end() ? -1 : it->second;
  }
  build_added_matchers(added, *impl);
  return impl;
}

}  // namespace

Tokenizer Tokenizer::load(const std::string& path) {
  nlohmann::json doc;
  {  // the file's text goes before the tables are built: peak memory is the parsed document and the tables
    const std::string text = base::read_file_bounded(path, kTokenizerJsonMaxBytes, "tokenizer.json");
    doc = base::parse_json_document(text, path);
  }
  return Tokenizer(build(doc, path));
}

Tokenizer Tokenizer::parse(const std::string& json_text, const std::string& source) {
  return Tokenizer(build(base::parse_json_document(json_text, source), source));
}

}  // namespace april::hf
