#pragma once
// Walks a JSON Lines text: skips blank lines and CR line ends, parses each
// line, and hands every object to `fn` with its 1-based line number. Invalid
// JSON and non-objects are TraceErrors naming the file and line.
#include <fstream>
#include <functional>
#include <istream>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace april::traces {

void for_each_jsonl_object(std::istream& in, const std::string& path,
                           const std::function<void(const nlohmann::json& object, std::size_t line)>& fn);
// The same over text already in memory.
void for_each_jsonl_object(const std::string& text, const std::string& path,
                           const std::function<void(const nlohmann::json& object, std::size_t line)>& fn);
// Opens a trace for streaming; a TraceError names it when it cannot be opened
// or is a folder. Reads then go through base::for_each_line's bounds.
std::ifstream open_trace_file(const std::string& path);

}  // namespace april::traces
