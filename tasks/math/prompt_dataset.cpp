#include "tasks/math/prompt_dataset.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/config.hpp"
#include "base/integer_text.hpp"
#include "base/json_value.hpp"
#include "base/line_reader.hpp"
#include "tasks/math/math_answer.hpp"

namespace april::live::math {
namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
constexpr std::size_t kMaxShownBytes = 60;  // of a value quoted in an error

// Thrown from the line callback once max_prompts are read: stops the read
// without reading the rest of the file. Never leaves this file.
struct EnoughPrompts {};

std::string cut(std::string text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  text.resize(bytes);
  // Not inside a UTF-8 character: drop continuation bytes and their lead byte.
  while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
  if (!text.empty() && (static_cast<unsigned char>(text.back()) & 0x80) != 0) text.pop_back();
  return text + "...";
}

// "a number (17)", "an object", "null": what a wrong value was, briefly.
std::string shown(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return fmt::format("a boolean ({})", v.get<bool>());
  if (v.is_number()) return fmt::format("a number ({})", cut(v.dump(), kMaxShownBytes));
  if (v.is_string()) return "a string";
  if (v.is_array()) return fmt::format("an array of {}", v.size());
  return "an object";
}

// Where a row is: its file and line; refusals name the field too.
struct Where {
  const std::string& path;
  std::size_t line;

  [[noreturn]] void fail(const std::string& what) const { throw base::ConfigError(fmt::format("{}:{}: {}", path, line, what)); }
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw base::ConfigError(fmt::format("{}:{}: field '{}': {}", path, line, field, what));
  }
};

std::vector<std::string> split_field(const std::string& field) {
  std::vector<std::string> steps;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = field.find('.', start);
    steps.push_back(field.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return steps;
}

void check_field_name(const std::string& path, const char* option, const std::string& field) {
  for (const auto& step : split_field(field)) {
    if (step.empty()) {
      throw base::ConfigError(fmt::format("{}: {} '{}' is not a field name (an empty step between dots)", path, option, field));
    }
  }
}

bool all_digits(const std::string& s) { return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos; }

// The value at `field` ("reward_model.ground_truth", "messages.0.content")
// of `row`; a refusal names the field and how far the walk got.
const nlohmann::json& resolve(const nlohmann::json& row, const std::string& field, const Where& where) {
  const nlohmann::json* v = &row;
  std::string walked;
  for (const auto& step : split_field(field)) {
    if (v->is_object()) {
      const auto it = v->find(step);
      if (it == v->end()) {
        where.fail(field, walked.empty() ? std::string("missing") : fmt::format("missing ('{}' has no '{}')", walked, step));
      }
      v = &*it;
    } else if (v->is_array() && all_digits(step)) {
      const auto index = static_cast<std::size_t>(std::stoul(step));
      if (index >= v->size()) where.fail(field, fmt::format("missing ('{}' has {} elements)", walked, v->size()));
      v = &(*v)[index];
    } else {
      where.fail(field, fmt::format("'{}' is {}, not an object with '{}'", walked, shown(*v), step));
    }
    walked += (walked.empty() ? "" : ".") + step;
  }
  if (v->is_null()) where.fail(field, "missing (null)");
  return *v;
}

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

// A prompt field: a string, or a list of chat messages [{"role", "content"}]
// whose last "user" message is the prompt (verl's RL parquet layout, as in
// DAPO-Math-17k).
std::string prompt_text(const nlohmann::json& v, const std::string& field, const Where& where, PromptDataset& out) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) where.fail(field, fmt::format("expected a string or a list of chat messages, got {}", shown(v)));
  if (v.empty()) where.fail(field, "an empty list of chat messages");
  std::optional<std::size_t> user;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto& m = v[i];
    const std::string at = fmt::format("{}.{}", field, i);
    if (!m.is_object()) where.fail(at, fmt::format("expected a chat message {{\"role\": ..., \"content\": ...}}, got {}", shown(m)));
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string()) {
      where.fail(at + ".role", role == m.end() ? "missing" : fmt::format("expected a string, got {}", shown(*role)));
    }
    if (role->get<std::string>() == "user") user = i;
  }
  if (!user) where.fail(field, fmt::format("a list of {} chat messages with no 'user' message", v.size()));
  const auto& m = v[*user];
  const std::string at = fmt::format("{}.{}.content", field, *user);
  // contains + operator[] rather than find: GCC 12 at -O2 reads the
  // iterator's dereference after the end() check as a possible null one.
  if (!m.contains("content")) where.fail(at, "missing");
  const nlohmann::json& content = m["content"];
  if (!content.is_string()) where.fail(at, fmt::format("expected a string, got {}", shown(content)));
  ++out.chat_prompts;
  out.dropped_messages += v.size() - 1;
  return content.get<std::string>();
}

// An answer field: a string, or a number written back as its shortest exact
// text (an integral double as an integer: 72.0 -> "72").
std::string answer_text(const nlohmann::json& v, const std::string& field, const Where& where, AnswerFormat format) {
  std::string text;
  if (v.is_string()) {
    text = v.get<std::string>();
  } else if (v.is_number_integer()) {
    text = v.dump();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    text = base::is_exact_integer(d) ? std::to_string(static_cast<std::int64_t>(d)) : fmt::format("{}", d);
  } else {
    where.fail(field, fmt::format("expected a string or a number, got {}", shown(v)));
  }
  if (format == AnswerFormat::Gsm8k) {
    auto final = gsm8k_final_answer(text);
    if (!final) where.fail(field, "no '####' final answer (answer_format gsm8k)");
    return std::move(*final);
  }
  if (blank(text)) where.fail(field, "empty");
  return text;
}

}  // namespace

const char* answer_format_name(AnswerFormat format) { return format == AnswerFormat::Gsm8k ? "gsm8k" : "plain"; }

AnswerFormat parse_answer_format(std::string_view text) {
  if (text == "plain") return AnswerFormat::Plain;
  if (text == "gsm8k") return AnswerFormat::Gsm8k;
  throw base::ConfigError(fmt::format("answer format '{}': expected plain or gsm8k", text));
}

std::optional<PromptDatasetOptions> dataset_layout(std::string_view name) {
  PromptDatasetOptions o;
  if (name == "gsm8k") {
    o.prompt_field = "question";
    o.answer_field = "answer";
    o.answer_format = AnswerFormat::Gsm8k;
  } else if (name == "dapo-math") {
    o.prompt_field = "prompt";
    o.answer_field = "reward_model.ground_truth";
  } else if (name == "deepscaler") {
    o.prompt_field = "problem";
    o.answer_field = "answer";
  } else {
    return std::nullopt;
  }
  return o;
}

std::vector<std::string> dataset_layout_names() { return {"dapo-math", "deepscaler", "gsm8k"}; }

std::string PromptDataset::describe(const PromptDatasetOptions& options) const {
  std::string prompts_from = fmt::format("field '{}'", options.prompt_field);
  if (chat_prompts > 0) {
    prompts_from += fmt::format(", the last 'user' message of {} chat lists", chat_prompts);
    if (dropped_messages > 0) prompts_from += fmt::format(" ({} other messages left out)", dropped_messages);
  }
  std::string line = fmt::format("{}: {} prompts (prompts: {}; answers: field '{}'{})", path, prompts.size(), prompts_from,
                                 options.answer_field, options.answer_format == AnswerFormat::Gsm8k ? ", after '####'" : "");
  if (!options.prompt_suffix.empty()) line += fmt::format("; suffix appended: '{}'", cut(options.prompt_suffix, kMaxShownBytes));
  return line;
}

PromptDataset parse_prompt_dataset(std::istream& in, const PromptDatasetOptions& options) {
  const std::string& path = options.path;
  check_field_name(path, "prompt_field", options.prompt_field);
  check_field_name(path, "answer_field", options.answer_field);
  if (options.max_line_bytes < (std::size_t{1} << 20)) {
    throw base::ConfigError(fmt::format("{}: max_line_bytes {} is below 1 MiB", path, options.max_line_bytes));
  }
  PromptDataset out;
  out.path = path;
  bool first = true;
  try {
    base::for_each_line<base::ConfigError>(in, path, options.max_line_bytes, kMaxDatasetBytes, [&](std::string& raw, std::size_t line) {
      std::string_view text = raw;
      if (line == 1 && text.substr(0, kUtf8Bom.size()) == kUtf8Bom) text.remove_prefix(kUtf8Bom.size());
      if (blank(text)) return;
      const Where where{path, line};
      if (first && text.substr(text.find_first_not_of(" \t")).front() == '[') {
        where.fail("a JSON array, not JSON Lines (one object a line); convert it first, e.g. jq -c '.[]' FILE > FILE.jsonl");
      }
      first = false;
      nlohmann::json row;
      if (const auto err = base::parse_json(std::string(text), row)) {
        where.fail(fmt::format("invalid JSON at column {} ({})", err->byte, cut(err->reason, 160)));
      }
      if (!row.is_object()) where.fail(fmt::format("expected a JSON object, got {}", shown(row)));
      MathPrompt p;
      p.line = line;
      p.prompt = prompt_text(resolve(row, options.prompt_field, where), options.prompt_field, where, out);
      if (blank(p.prompt)) where.fail(options.prompt_field, "empty");
      p.prompt += options.prompt_suffix;
      p.answer = answer_text(resolve(row, options.answer_field, where), options.answer_field, where, options.answer_format);
      out.prompts.push_back(std::move(p));
      if (options.max_prompts > 0 && out.prompts.size() >= options.max_prompts) throw EnoughPrompts{};
    });
  } catch (const EnoughPrompts&) {
  }
  if (out.prompts.empty()) throw base::ConfigError(fmt::format("{}: no prompts (the file is empty or holds only blank lines)", path));
  return out;
}

PromptDataset read_prompt_dataset(const PromptDatasetOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(options.path, ec)) {
    throw base::ConfigError(fmt::format("{}: is a folder, not a JSON Lines dataset", options.path));
  }
  std::ifstream in(options.path, std::ios::binary);
  if (!in) throw base::ConfigError(fmt::format("{}: cannot open the dataset", options.path));
  return parse_prompt_dataset(in, options);
}

}  // namespace april::live::math
