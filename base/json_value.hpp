#pragma once
// One way to read a JSON document into our types. Every value knows where it
// sits: its document and its JSON Pointer path (RFC 6901:
// `/iterations/37/kv_tok`), so a missing field, a wrong type or a value out of
// range is refused as "profile.json: /iterations/37/kv_tok: missing (a number
// >= 0 expected)", never with the parser's own text.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/config_error.hpp"

namespace april::base {

// Why a text is not a JSON document, in our words, and where (the byte
// offset into the text; for a number too large for a double, where that
// number starts).
struct JsonSyntaxError {
  std::size_t byte = 0;
  std::string reason;
};

// The one place the project calls the JSON parser (tests/layout/
// json_errors_check.sh holds the rest of the tree to it): every failure the
// parser has, a syntax error or a number past a double's range (1e400),
// comes back as a JsonSyntaxError; the library's own text never escapes.
std::optional<JsonSyntaxError> parse_json(const std::string& text, nlohmann::json& out);

// Parses `text` (a file's contents; `path` names it): a syntax error is
// refused with its line, never with the parser's text.
nlohmann::json parse_json_document(const std::string& text, const std::string& path);

class JsonValue {
 public:
  // `source` names the document in errors (a file's path).
  JsonValue(const nlohmann::json& value, std::string source, std::string path = "");

  [[nodiscard]] const std::string& path() const { return path_; }
  // "source: /path" (or "source" at the top).
  [[nodiscard]] std::string where() const;
  // Throws JsonPathError (a ConfigError) "source: /path: what".
  [[noreturn]] void fail(const std::string& what) const;

  [[nodiscard]] bool is_object() const { return value_->is_object(); }
  [[nodiscard]] bool is_array() const { return value_->is_array(); }
  [[nodiscard]] const nlohmann::json& raw() const { return *value_; }

  // Object members. at() refuses a missing key, naming its path; find() is
  // for optional ones (absent or null: nullopt).
  [[nodiscard]] bool has(const std::string& key) const;
  [[nodiscard]] JsonValue at(const std::string& key) const;
  [[nodiscard]] std::optional<JsonValue> find(const std::string& key) const;
  // Refuses a key not in `known`, naming it.
  void only_keys(std::initializer_list<const char*> known) const;

  // Array elements, each with its index in the path.
  [[nodiscard]] std::vector<JsonValue> elements() const;

  // Typed values, refused by path when of another type or out of [lo, hi].
  [[nodiscard]] double number(double lo, double hi) const;
  [[nodiscard]] std::int64_t integer(std::int64_t lo, std::int64_t hi) const;
  [[nodiscard]] bool boolean() const;
  [[nodiscard]] std::string string() const;
  [[nodiscard]] std::vector<double> numbers(double lo, double hi) const;                     // an array of numbers
  [[nodiscard]] std::vector<std::int64_t> integers(std::int64_t lo, std::int64_t hi) const;  // an array of integers

 private:
  [[nodiscard]] JsonValue child(const nlohmann::json& value, const std::string& step) const;

  const nlohmann::json* value_;
  std::string source_;
  std::string path_;
};

}  // namespace april::base
