#pragma once
// Converting other trace formats to our group-per-line JSONL.
//  azure: the Azure LLM inference trace (TIMESTAMP, ContextTokens,
//         GeneratedTokens); samples in file order, packed into groups of
//         `group_size` (the last group may be smaller); a group's prompt
//         length is its first sample's ContextTokens.
//  csv / jsonl: one row (object) per sample, with a column mapping for
//         prompt_id, prompt_tokens and response_tokens; rows are grouped by
//         prompt id, groups in order of first appearance.
#include <map>
#include <string>
#include <vector>

#include "base/workload_source.hpp"

namespace april::traces {

struct ImportOptions {
  std::string format;           // azure, csv, jsonl
  std::int64_t group_size = 8;  // azure
  // Our field -> the input's column: prompt_id, prompt_tokens, response_tokens.
  std::map<std::string, std::string> mapping;
};

std::vector<std::string> import_formats();
// Parses "prompt_id=COL,prompt_tokens=COL,response_tokens=COL".
std::map<std::string, std::string> parse_mapping(const std::string& text);
std::vector<base::GroupSpec> import_trace(const std::string& path, const ImportOptions& options);
// Reads any supported format; `format` "ours" (or empty) is our JSONL.
std::vector<base::GroupSpec> load_trace(const std::string& path, const ImportOptions& options);

}  // namespace april::traces
