#include "traces/jsonl_trace.hpp"

#include "base/atomic_file.hpp"
#include "traces/jsonl_lines.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace april::traces {
namespace {

constexpr std::int64_t kMaxTokens = 1 << 24;  // 16M tokens: far above any context window

[[noreturn]] void fail(const std::string& path, std::size_t line, const std::string& field, const std::string& what) {
  if (field.empty()) throw TraceError(fmt::format("{}:{}: {}", path, line, what));
  throw TraceError(fmt::format("{}:{}: field '{}': {}", path, line, field, what));
}

std::int32_t token_count(const nlohmann::json& v, const std::string& path, std::size_t line, const std::string& field, std::int64_t min) {
  if (!v.is_number_integer()) {
    if (v.is_number_float()) fail(path, line, field, fmt::format("expected an integer token count, got {}", v.dump()));
    fail(path, line, field, fmt::format("expected an integer, got {}", v.dump()));
  }
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxTokens)) {
    fail(path, line, field, fmt::format("{} is larger than {} tokens", v.dump(), kMaxTokens));
  }
  const auto x = v.get<std::int64_t>();
  if (x < min) fail(path, line, field, fmt::format("must be >= {}, got {}", min, x));
  if (x > kMaxTokens) fail(path, line, field, fmt::format("{} is larger than {} tokens", x, kMaxTokens));
  return static_cast<std::int32_t>(x);
}

}  // namespace

namespace {

std::vector<base::GroupSpec> parse_jsonl_stream(std::istream& in, const std::string& path) {
  std::vector<base::GroupSpec> groups;
  for_each_jsonl_object(in, path, [&](const nlohmann::json& j, std::size_t line) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const auto& k = it.key();
      if (k != "prompt_id" && k != "prompt_tokens" && k != "response_tokens" && k != "correct") {
        fail(path, line, k, "unknown field (expected prompt_id, prompt_tokens, response_tokens, correct)");
      }
    }
    base::GroupSpec g;
    if (!j.contains("prompt_id")) fail(path, line, "prompt_id", "missing");
    const auto& id = j["prompt_id"];
    if (id.is_string())
      g.prompt_id = id.get<std::string>();
    else if (id.is_number_integer())
      g.prompt_id = id.dump();
    else
      fail(path, line, "prompt_id", fmt::format("expected a string, got {}", id.dump()));
    if (!j.contains("prompt_tokens")) fail(path, line, "prompt_tokens", "missing");
    g.prompt_tok = token_count(j["prompt_tokens"], path, line, "prompt_tokens", 0);
    if (!j.contains("response_tokens")) fail(path, line, "response_tokens", "missing");
    const auto& r = j["response_tokens"];
    if (!r.is_array()) fail(path, line, "response_tokens", fmt::format("expected an array of integers, got {}", r.dump()));
    if (r.empty()) fail(path, line, "response_tokens", "a group needs at least one sample");
    for (std::size_t i = 0; i < r.size(); ++i) {
      g.response_tok.push_back(token_count(r[i], path, line, fmt::format("response_tokens[{}]", i), 1));
    }
    if (j.contains("correct")) {
      const auto& c = j["correct"];
      if (!c.is_array() || c.size() != r.size()) {
        fail(path, line, "correct", fmt::format("expected an array of {} booleans", r.size()));
      }
      for (std::size_t i = 0; i < c.size(); ++i) {
        if (!c[i].is_boolean()) fail(path, line, fmt::format("correct[{}]", i), "expected true or false");
        g.correct.push_back(c[i].get<bool>() ? 1 : 0);
      }
    }
    groups.push_back(std::move(g));
  });
  if (groups.empty()) throw TraceError(fmt::format("{}: the trace holds no groups", path));
  return groups;
}

}  // namespace

std::vector<base::GroupSpec> parse_jsonl_trace(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  return parse_jsonl_stream(in, path);
}

std::vector<base::GroupSpec> read_jsonl_trace(const std::string& path) {
  auto in = open_trace_file(path);  // streamed: memory follows the groups, not the file
  return parse_jsonl_stream(in, path);
}

std::string jsonl_trace_text(const std::vector<base::GroupSpec>& groups) {
  std::string text;
  for (const auto& g : groups) {
    nlohmann::json j;
    j["prompt_id"] = g.prompt_id;
    j["prompt_tokens"] = g.prompt_tok;
    j["response_tokens"] = g.response_tok;
    if (!g.correct.empty()) {
      std::vector<bool> c;
      for (auto x : g.correct) c.push_back(x != 0);
      j["correct"] = c;
    }
    text += j.dump();
    text += '\n';
  }
  return text;
}

void write_jsonl_trace(const std::string& path, const std::vector<base::GroupSpec>& groups) {
  const std::string text = jsonl_trace_text(groups);
  try {
    base::write_file_atomically(path, text);
  } catch (const std::runtime_error& e) {
    throw TraceError(e.what());
  }
}

}  // namespace april::traces
