#pragma once
// Our trace format: JSON Lines, one prompt group per line:
//   {"prompt_id": "p1", "prompt_tokens": 512, "response_tokens": [1200, 3400, ...]}
// optionally with "correct": [true, false, ...] (one per sample).
// Blank lines are skipped. Every error names the file, the line and the field.
#include <stdexcept>
#include <string>
#include <vector>

#include "base/workload_source.hpp"

namespace april::traces {

class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::vector<base::GroupSpec> read_jsonl_trace(const std::string& path);
// Parses text already read; `path` is used in messages only.
std::vector<base::GroupSpec> parse_jsonl_trace(const std::string& text, const std::string& path);
// The JSONL text of `groups`, one group per line.
std::string jsonl_trace_text(const std::vector<base::GroupSpec>& groups);
// Writes jsonl_trace_text atomically (temporary file, then rename).
void write_jsonl_trace(const std::string& path, const std::vector<base::GroupSpec>& groups);

}  // namespace april::traces
