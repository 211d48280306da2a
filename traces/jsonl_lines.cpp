#include "traces/jsonl_lines.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "traces/jsonl_trace.hpp"

namespace april::traces {

void for_each_jsonl_object(const std::string& text, const std::string& path,
                           const std::function<void(const nlohmann::json&, std::size_t)>& fn) {
  std::istringstream in(text);
  std::string raw;
  std::size_t line = 0;
  while (std::getline(in, raw)) {
    ++line;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (raw.find_first_not_of(" \t") == std::string::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(raw);
    } catch (const nlohmann::json::parse_error& e) {
      throw TraceError(fmt::format("{}:{}: invalid JSON at column {}", path, line, e.byte));
    }
    if (!j.is_object()) throw TraceError(fmt::format("{}:{}: expected a JSON object", path, line));
    fn(j, line);
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(fmt::format("{}: cannot open", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace april::traces
