#include "base/json_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/bounded_read.hpp"
#include "base/config.hpp"
#include "base/json_value.hpp"

namespace april::base {

std::size_t line_of_byte(const std::string& text, std::size_t byte) {
  const auto end = std::min(text.size(), byte > 0 ? byte - 1 : 0);
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
}

std::string JsonFile::where(const std::string& key) const {
  const std::string quoted = "\"" + key + "\"";
  std::size_t found = std::string::npos, count = 0;
  for (auto at = text.find(quoted); at != std::string::npos; at = text.find(quoted, at + 1)) {
    // A key is followed, after blanks, by a colon; a string value is not.
    auto after = at + quoted.size();
    while (after < text.size() && (text[after] == ' ' || text[after] == '\t' || text[after] == '\r' || text[after] == '\n')) ++after;
    if (after < text.size() && text[after] == ':') {
      found = at;
      ++count;
    }
  }
  if (count == 1) return fmt::format("{}:{}: field '{}'", path, line_of_byte(text, found + 1), key);
  return fmt::format("{}: field '{}'", path, key);
}

JsonFile parse_json_text(std::string text, const std::string& path, const std::string& what) {
  JsonFile f{path, std::move(text), {}};
  if (const auto err = parse_json(f.text, f.doc)) {
    throw ConfigError(fmt::format("{}:{}: invalid JSON in {} ({})", path, line_of_byte(f.text, err->byte), what, err->reason));
  }
  if (!f.doc.is_object()) throw ConfigError(fmt::format("{}:1: a {} is a JSON object, not {}", path, what, f.doc.type_name()));
  check_json_structure(f.text, path);
  return f;
}

void json_only_fields(const JsonFile& f, const nlohmann::json& object, std::initializer_list<const char*> known, const std::string& what) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; })) {
      throw ConfigError(fmt::format("{}: {}unknown field '{}' (fields: {})", f.where(it.key()), what.empty() ? "" : what + ": ", it.key(),
                                    fmt::join(known, ", ")));
    }
  }
}

JsonFile read_json_file(const std::string& path, const std::string& what) {
  return parse_json_text(read_file_bounded(path, kSmallJsonMaxBytes, what), path, what);
}

namespace {

const nlohmann::json* field(const JsonFile& f, const std::string& key) {
  const auto it = f.doc.find(key);
  if (it == f.doc.end() || it->is_null()) return nullptr;
  return &*it;
}

const nlohmann::json& required(const JsonFile& f, const std::string& key) {
  const auto* v = field(f, key);
  if (v == nullptr) throw ConfigError(fmt::format("{}: field '{}' is missing", f.path, key));
  return *v;
}

std::int64_t as_int(const JsonFile& f, const std::string& key, const nlohmann::json& v, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer()) {
    throw ConfigError(fmt::format("{}: expected an integer, got {} {}", f.where(key), v.type_name(), v.dump()));
  }
  // nlohmann stores non-negative integers unsigned: compare before narrowing.
  const bool fits = v.is_number_unsigned() ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) : true;
  const std::int64_t x = fits ? v.get<std::int64_t>() : hi;
  if (!fits || x < lo || x > hi) throw ConfigError(fmt::format("{}: {} is outside [{}, {}]", f.where(key), v.dump(), lo, hi));
  return x;
}

double as_double(const JsonFile& f, const std::string& key, const nlohmann::json& v, double lo, double hi) {
  if (!v.is_number()) throw ConfigError(fmt::format("{}: expected a number, got {} {}", f.where(key), v.type_name(), v.dump()));
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) throw ConfigError(fmt::format("{}: {} is outside [{}, {}]", f.where(key), v.dump(), lo, hi));
  return x;
}

}  // namespace

std::int64_t json_int(const JsonFile& f, const std::string& key, std::int64_t lo, std::int64_t hi) {
  return as_int(f, key, required(f, key), lo, hi);
}

std::int64_t json_int_or(const JsonFile& f, const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  const auto* v = field(f, key);
  return v == nullptr ? fallback : as_int(f, key, *v, lo, hi);
}

double json_double(const JsonFile& f, const std::string& key, double lo, double hi) { return as_double(f, key, required(f, key), lo, hi); }

double json_double_or(const JsonFile& f, const std::string& key, double fallback, double lo, double hi) {
  const auto* v = field(f, key);
  return v == nullptr ? fallback : as_double(f, key, *v, lo, hi);
}

bool json_bool_or(const JsonFile& f, const std::string& key, bool fallback) {
  const auto* v = field(f, key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) throw ConfigError(fmt::format("{}: expected true or false, got {}", f.where(key), v->dump()));
  return v->get<bool>();
}

std::string json_string(const JsonFile& f, const std::string& key) {
  const auto& v = required(f, key);
  if (!v.is_string()) throw ConfigError(fmt::format("{}: expected a string, got {}", f.where(key), v.dump()));
  return v.get<std::string>();
}

std::string json_string_or(const JsonFile& f, const std::string& key, const std::string& fallback) {
  return field(f, key) == nullptr ? fallback : json_string(f, key);
}

}  // namespace april::base
