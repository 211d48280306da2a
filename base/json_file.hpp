#pragma once
// One way to read a small JSON input (a model config, a hardware file, a
// topology): bounded in memory, and every error names the file, the line and
// the field, as a user needs to fix it.
#include <cstdint>
#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

namespace april::base {

// A parsed JSON document and the text it came from, so that a field's error
// can point at its line.
struct JsonFile {
  std::string path;
  std::string text;
  nlohmann::json doc;

  // "path:line: field 'key'" when `key` appears once in the text as a JSON key,
  // "path: field 'key'" otherwise (a key repeated in nested objects has no one line).
  [[nodiscard]] std::string where(const std::string& key) const;
};

// Reads and parses `path` (at most kSmallJsonMaxBytes). Throws ConfigError
// "path:line: invalid JSON (...)" on a syntax error, or when the top level is
// not an object.
JsonFile read_json_file(const std::string& path, const std::string& what);
// The same from text already in memory; `path` is used in messages only.
JsonFile parse_json_text(std::string text, const std::string& path, const std::string& what);

// 1-based line of byte offset `byte` in `text`.
std::size_t line_of_byte(const std::string& text, std::size_t byte);

// Typed reads of a top-level field of an object, refusing a wrong type or a
// value out of range by naming the field. The `_or` forms return `fallback`
// when the field is absent or null.
// Refuses a field of `object` (an object in `f`) not in `known`: a misspelt
// one would be ignored. `what` names the object in the message ("row 'a'").
void json_only_fields(const JsonFile& f, const nlohmann::json& object, std::initializer_list<const char*> known,
                      const std::string& what = "");
std::int64_t json_int(const JsonFile& f, const std::string& key, std::int64_t lo, std::int64_t hi);
std::int64_t json_int_or(const JsonFile& f, const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi);
double json_double(const JsonFile& f, const std::string& key, double lo, double hi);
double json_double_or(const JsonFile& f, const std::string& key, double fallback, double lo, double hi);
bool json_bool_or(const JsonFile& f, const std::string& key, bool fallback);
std::string json_string(const JsonFile& f, const std::string& key);
std::string json_string_or(const JsonFile& f, const std::string& key, const std::string& fallback);

}  // namespace april::base
