#pragma once
// Walks a JSON Lines text: skips blank lines and CR line ends, parses each
// line, and hands every object to `fn` with its 1-based line number. Invalid
// JSON and non-objects are TraceErrors naming the file and line.
#include <functional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace april::traces {

void for_each_jsonl_object(const std::string& text, const std::string& path,
                           const std::function<void(const nlohmann::json& object, std::size_t line)>& fn);
// Reads a whole file; a TraceError names it when it cannot be opened.
std::string read_text_file(const std::string& path);

}  // namespace april::traces
