#include "traces/jsonl_lines.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json_value.hpp"
#include "base/line_reader.hpp"
#include "traces/jsonl_trace.hpp"

namespace april::traces {

void for_each_jsonl_object(std::istream& in, const std::string& path, const std::function<void(const nlohmann::json&, std::size_t)>& fn) {
  base::for_each_line<TraceError>(in, path, base::kMaxTraceLineBytes, base::kMaxTraceBytes, [&](std::string& raw, std::size_t line) {
    if (raw.find_first_not_of(" \t") == std::string::npos) return;
    nlohmann::json j;
    if (const auto err = base::parse_json(raw, j)) {
      throw TraceError(fmt::format("{}:{}: invalid JSON at column {} ({})", path, line, err->byte, err->reason));
    }
    if (!j.is_object()) throw TraceError(fmt::format("{}:{}: expected a JSON object", path, line));
    fn(j, line);
  });
}

void for_each_jsonl_object(const std::string& text, const std::string& path,
                           const std::function<void(const nlohmann::json&, std::size_t)>& fn) {
  std::istringstream in(text);
  for_each_jsonl_object(in, path, fn);
}

std::ifstream open_trace_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw TraceError(fmt::format("{}: is a folder, not a trace file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(fmt::format("{}: cannot open", path));
  return in;
}

}  // namespace april::traces
