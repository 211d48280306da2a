#include "base/json_value.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/config.hpp"
#include "base/integer_text.hpp"
#include "base/json_file.hpp"

namespace april::base {
namespace {

// RFC 6901: '~' is written "~0" and '/' "~1" in a path step.
std::string escape_step(const std::string& key) {
  std::string out;
  for (char ch : key) {
    if (ch == '~') {
      out += "~0";
    } else if (ch == '/') {
      out += "~1";
    } else {
      out += ch;
    }
  }
  return out;
}

const char* type_name(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

}  // namespace

JsonValue::JsonValue(const nlohmann::json& value, std::string source, std::string path)
    : value_(&value), source_(std::move(source)), path_(std::move(path)) {}

std::string JsonValue::where() const { return path_.empty() ? source_ : fmt::format("{}: {}", source_, path_); }

void JsonValue::fail(const std::string& what) const { throw JsonPathError(fmt::format("{}: {}", where(), what), path_); }

JsonValue JsonValue::child(const nlohmann::json& value, const std::string& step) const {
  return JsonValue(value, source_, path_ + "/" + step);
}

bool JsonValue::has(const std::string& key) const { return value_->is_object() && value_->contains(key); }

JsonValue JsonValue::at(const std::string& key) const {
  if (!value_->is_object()) fail(fmt::format("{} where an object with '{}' was expected", type_name(*value_), key));
  const auto it = value_->find(key);
  if (it == value_->end()) {
    static const nlohmann::json kAbsent;
    child(kAbsent, escape_step(key)).fail("missing");
  }
  return child(*it, escape_step(key));
}

std::optional<JsonValue> JsonValue::find(const std::string& key) const {
  if (!value_->is_object()) fail(fmt::format("{} where an object was expected", type_name(*value_)));
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return child(*it, escape_step(key));
}

void JsonValue::only_keys(std::initializer_list<const char*> known) const {
  if (!value_->is_object()) fail(fmt::format("{} where an object was expected", type_name(*value_)));
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    const std::string& key = it.key();
    if (std::none_of(known.begin(), known.end(), [&key](const char* k) { return key == k; })) {
      child(*it, escape_step(key)).fail("an unknown field");
    }
  }
}

std::vector<JsonValue> JsonValue::elements() const {
  if (!value_->is_array()) fail(fmt::format("{} where an array was expected", type_name(*value_)));
  std::vector<JsonValue> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i) out.push_back(child((*value_)[i], std::to_string(i)));
  return out;
}

double JsonValue::number(double lo, double hi) const {
  if (!value_->is_number()) fail(fmt::format("{} where a number in [{}, {}] was expected", type_name(*value_), lo, hi));
  const double v = value_->get<double>();
  if (!(std::isfinite(v) && v >= lo && v <= hi)) fail(fmt::format("{} is not a number in [{}, {}]", value_->dump(), lo, hi));
  return v;
}

std::int64_t JsonValue::integer(std::int64_t lo, std::int64_t hi) const {
  // The rule every integer reading follows (base/integer_text).
  const bool whole = value_->is_number_integer() || (value_->is_number_float() && is_exact_integer(value_->get<double>()));
  if (!whole)
    fail(fmt::format("{} where an integer in [{}, {}] was expected", value_->is_number() ? value_->dump() : type_name(*value_), lo, hi));
  if (value_->is_number_unsigned() && value_->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    fail(fmt::format("{} is out of the 64-bit integer range", value_->dump()));
  }
  const auto v = value_->is_number_integer() ? value_->get<std::int64_t>() : static_cast<std::int64_t>(value_->get<double>());
  if (v < lo || v > hi) fail(fmt::format("{} is not an integer in [{}, {}]", v, lo, hi));
  return v;
}

bool JsonValue::boolean() const {
  if (!value_->is_boolean()) fail(fmt::format("{} where true or false was expected", type_name(*value_)));
  return value_->get<bool>();
}

std::string JsonValue::string() const {
  if (!value_->is_string()) fail(fmt::format("{} where a string was expected", type_name(*value_)));
  return value_->get<std::string>();
}

std::vector<std::int64_t> JsonValue::integers(std::int64_t lo, std::int64_t hi) const {
  std::vector<std::int64_t> out;
  for (const auto& e : elements()) out.push_back(e.integer(lo, hi));
  return out;
}

std::optional<JsonSyntaxError> parse_json(const std::string& text, nlohmann::json& out) {
  try {
    out = nlohmann::json::parse(text);
    return std::nullopt;
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1,
    // column 5: syntax error while parsing value - invalid literal; last
    // read: 'x'": the library's tag and its position (ours is a line) go,
    // the reason after "column N: " stays.
    std::string reason = "not JSON";
    const std::string what = e.what();
    if (const auto col = what.find("column "); col != std::string::npos) {
      if (const auto colon = what.find(": ", col); colon != std::string::npos) reason = what.substr(colon + 2);
    }
    return JsonSyntaxError{std::min(e.byte, text.size()), reason};
  } catch (const nlohmann::json::out_of_range& e) {
    // "number overflow parsing '1e400'": no position, but the token is
    // quoted; its first appearance in the text is where it starts.
    const std::string what = e.what();
    std::size_t byte = 0;
    const auto q1 = what.find('\''), q2 = what.rfind('\'');
    if (q1 != std::string::npos && q2 > q1) {
      const auto at = text.find(what.substr(q1 + 1, q2 - q1 - 1));
      if (at != std::string::npos) byte = at + 1;
    }
    return JsonSyntaxError{byte, "a number too large for a double"};
  }
}

nlohmann::json parse_json_document(const std::string& text, const std::string& path) {
  nlohmann::json doc;
  if (const auto err = parse_json(text, doc)) {
    throw ConfigError(fmt::format("{}:{}: invalid JSON ({})", path, line_of_byte(text, err->byte), err->reason));
  }
  return doc;
}

std::vector<double> JsonValue::numbers(double lo, double hi) const {
  std::vector<double> out;
  for (const auto& e : elements()) out.push_back(e.number(lo, hi));
  return out;
}

}  // namespace april::base
