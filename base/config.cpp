#include "base/config.hpp"

#include "base/bounded_read.hpp"
#include "base/integer_text.hpp"
#include "base/json_file.hpp"
#include "base/json_value.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace april::base {
namespace {

double as_number(const ConfigValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nan("");
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0U : 1U)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// Line (1-based) of the first occurrence of "leaf": in the text, or 0.
std::size_t line_of_key(const std::string& text, const std::string& dotted) {
  const auto dot = dotted.rfind('.');
  std::string leaf = dot == std::string::npos ? dotted : dotted.substr(dot + 1);
  for (const std::string& needle : {"\"" + dotted + "\"", "\"" + leaf + "\""}) {
    const auto pos = text.find(needle);
    if (pos != std::string::npos) {
      return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
    }
  }
  return 0;
}

std::string where_in(const std::string& path, std::size_t line) { return line == 0 ? path : fmt::format("{}:{}", path, line); }

void flatten(const nlohmann::json& obj, const std::string& prefix, std::vector<std::pair<std::string, const nlohmann::json*>>& out) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) {
      flatten(*it, key, out);
    } else {
      out.emplace_back(std::move(key), &*it);
    }
  }
}

// A first pass over the text, as SAX events: bounds the nesting (a deep file
// must not exhaust the stack of the recursive steps that follow) and finds a
// key repeated within one object (the JSON parser would keep the last one
// silently).
class StructureCheck final : public nlohmann::json_sax<nlohmann::json> {
 public:
  static constexpr std::size_t kMaxDepth = 32;
  std::string problem;  // set when the walk stopped on purpose

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    keys_.emplace_back();
    return deeper();
  }
  bool key(string_t& k) override {
    if (!keys_.back().insert(k).second) {
      problem = k;
      duplicate_ = true;
      return false;
    }
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    keys_.emplace_back();
    return deeper();
  }
  bool end_array() override {
    keys_.pop_back();
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
  [[nodiscard]] bool duplicate() const { return duplicate_; }

 private:
  bool deeper() {
    if (++depth_ <= kMaxDepth) return true;
    problem = "depth";
    return false;
  }
  std::size_t depth_ = 0;
  bool duplicate_ = false;
  std::vector<std::set<std::string>> keys_;
};

void check_structure_of(const std::string& text, const std::string& path) {
  StructureCheck check;
  // Syntax errors are left to the parse that follows, which reports their line.
  nlohmann::json::sax_parse(text, &check, nlohmann::json::input_format_t::json, false);
  if (check.duplicate()) {
    throw ConfigError(fmt::format("{}: key '{}' is given twice", where_in(path, line_of_key(text, check.problem)), check.problem));
  }
  if (check.problem == "depth") {
    throw ConfigError(fmt::format("{}: objects or arrays nested deeper than {} levels", path, StructureCheck::kMaxDepth));
  }
}

}  // namespace

void check_json_structure(const std::string& text, const std::string& path) { check_structure_of(text, path); }

std::string type_name(KnobType t) {
  switch (t) {
    case KnobType::Int:
      return "integer";
    case KnobType::Double:
      return "number";
    case KnobType::Bool:
      return "boolean";
    case KnobType::String:
      return "string";
  }
  return "?";
}

std::string to_string(const ConfigValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>)
          return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>)
          return x;
        else
          return fmt::format("{}", x);
      },
      v);
}

void ConfigSchema::add(Knob knob) {
  const std::string name = knob.name;
  if (!knobs_.emplace(name, std::move(knob)).second) throw std::logic_error("knob declared twice: " + name);
}

const Knob* ConfigSchema::find(const std::string& name) const {
  auto it = knobs_.find(name);
  return it == knobs_.end() ? nullptr : &it->second;
}

void ConfigSchema::add_profiles(const std::string& selector, std::map<std::string, Profile> profiles) {
  const Knob* sel = find(selector);
  if (sel == nullptr || sel->type != KnobType::String) throw std::logic_error("profile selector is no string knob: " + selector);
  for (const auto& [profile, values] : profiles) {
    for (const auto& [name, v] : values) {
      const Knob* k = find(name);
      if (k == nullptr || name == selector || k->default_value.index() != v.index()) {
        throw std::logic_error(fmt::format("profile {}: bad knob {}", profile, name));
      }
      if (k->validate) {
        if (const auto bad = k->validate(v)) throw std::logic_error(fmt::format("profile {}: {}: {}", profile, name, *bad));
      }
    }
  }
  profile_selector_ = selector;
  profiles_ = std::move(profiles);
}

const ConfigValue* ConfigSchema::profile_value(const std::string& profile, const std::string& knob) const {
  const auto p = profiles_.find(profile);
  if (p == profiles_.end()) return nullptr;
  const auto v = p->second.find(knob);
  return v == p->second.end() ? nullptr : &v->second;
}

std::vector<std::string> ConfigSchema::similar(const std::string& name) const {
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& [k, _] : knobs_) {
    const auto dot = k.rfind('.');
    const std::string leaf = dot == std::string::npos ? k : k.substr(dot + 1);
    const std::size_t d = std::min(edit_distance(name, k), edit_distance(name, leaf));
    if (d <= std::max<std::size_t>(2, name.size() / 4)) scored.emplace_back(d, k);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < 3; ++i) out.push_back(scored[i].second);
  return out;
}

const Knob& Config::knob_or_throw(const std::string& name, const std::string& where) const {
  const Knob* k = schema_->find(name);
  if (k == nullptr) {
    std::string hint;
    auto near = schema_->similar(name);
    if (!near.empty()) hint = fmt::format(" (did you mean {}?)", fmt::join(near, ", "));
    throw ConfigError(fmt::format("{}: unknown key '{}'{}; `april keys` lists every key", where, name, hint));
  }
  return *k;
}

void Config::unset(const std::string& name) {
  (void)knob_or_throw(name, "unset");
  values_.erase(name);
}

void Config::set(const std::string& name, const ConfigValue& value, const std::string& where) {
  const Knob& k = knob_or_throw(name, where);
  ConfigValue v = value;
  const bool is_int = std::holds_alternative<std::int64_t>(v);
  const bool is_double = std::holds_alternative<double>(v);
  if (k.type == KnobType::Double && is_int) v = static_cast<double>(std::get<std::int64_t>(v));
  if (k.type == KnobType::Int && is_double) {
    const double d = std::get<double>(v);
    if (!is_exact_integer(d)) {
      throw ConfigError(fmt::format("{}: key '{}': expected an integer, got {}", where, name, d));
    }
    v = static_cast<std::int64_t>(d);
  }
  const bool ok = (k.type == KnobType::Int && std::holds_alternative<std::int64_t>(v)) ||
                  (k.type == KnobType::Double && std::holds_alternative<double>(v)) ||
                  (k.type == KnobType::Bool && std::holds_alternative<bool>(v)) ||
                  (k.type == KnobType::String && std::holds_alternative<std::string>(v));
  if (!ok) throw ConfigError(fmt::format("{}: key '{}': expected a {}, got '{}'", where, name, type_name(k.type), to_string(value)));
  if (k.type == KnobType::Double && !std::isfinite(std::get<double>(v))) {
    throw ConfigError(fmt::format("{}: key '{}': value must be finite", where, name));
  }
  if (k.validate) {
    if (auto err = k.validate(v)) throw ConfigError(fmt::format("{}: key '{}': {}", where, name, *err));
  }
  values_[name] = std::move(v);
}

void Config::set_from_text(const std::string& name, const std::string& text, const std::string& where) {
  const Knob& k = knob_or_throw(name, where);
  auto bad = [&] { return ConfigError(fmt::format("{}: key '{}': expected a {}, got '{}'", where, name, type_name(k.type), text)); };
  switch (k.type) {
    case KnobType::Int:
    case KnobType::Double: {
      if (text.empty()) throw bad();
      if (k.type == KnobType::Int) {
        const auto reading = read_integer(text);
        if (const auto* why = std::get_if<std::string>(&reading)) {
          throw ConfigError(fmt::format("{}: key '{}': '{}' is {}", where, name, text, *why));
        }
        return set(name, std::get<std::int64_t>(reading), where);
      }
      errno = 0;
      char* end = nullptr;
      const double d = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size() || errno == ERANGE) throw bad();
      set(name, d, where);
      return;
    }
    case KnobType::Bool:
      if (text == "true" || text == "1") return set(name, true, where);
      if (text == "false" || text == "0") return set(name, false, where);
      throw bad();
    case KnobType::String:
      set(name, text, where);
      return;
  }
}

void Config::set_from_json(const std::string& name, const nlohmann::json& j, const std::string& where) {
  const Knob& k = knob_or_throw(name, where);
  auto bad = [&] { return ConfigError(fmt::format("{}: key '{}': expected a {}, got {}", where, name, type_name(k.type), j.dump())); };
  switch (k.type) {
    case KnobType::Int:
      // nlohmann keeps integers from 2^63 up as unsigned: reading them as
      // int64 would wrap (18446744073709551615 would run as -1). Refused, as
      // --set refuses them.
      if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
        throw ConfigError(fmt::format("{}: key '{}': {} is out of the 64-bit integer range", where, name, j.dump()));
      }
      if (j.is_number_integer()) return set(name, j.get<std::int64_t>(), where);
      if (j.is_number_float()) return set(name, j.get<double>(), where);
      throw bad();
    case KnobType::Double:
      if (j.is_number()) return set(name, j.get<double>(), where);
      throw bad();
    case KnobType::Bool:
      if (j.is_boolean()) return set(name, j.get<bool>(), where);
      throw bad();
    case KnobType::String:
      if (j.is_string()) return set(name, j.get<std::string>(), where);
      throw bad();
  }
}

void Config::apply_assignment(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(fmt::format("--set '{}': expected key=value", assignment));
  }
  set_from_text(assignment.substr(0, eq), assignment.substr(eq + 1), "--set");
}

const ConfigValue& Config::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  const Knob* k = schema_->find(name);
  if (k == nullptr) throw std::logic_error("undeclared knob read: " + name);
  const auto& selector = schema_->profile_selector();
  if (!selector.empty() && name != selector) {
    if (const auto* v = schema_->profile_value(std::get<std::string>(value(selector)), name)) return *v;
  }
  return k->default_value;
}

const Knob& Config::knob_of_type(const std::string& name, std::initializer_list<KnobType> allowed, const char* getter) const {
  const Knob* k = schema_->find(name);
  if (k == nullptr) throw std::logic_error("undeclared knob read: " + name);
  if (std::find(allowed.begin(), allowed.end(), k->type) == allowed.end()) {
    throw std::logic_error(fmt::format("{} on the {} knob '{}'", getter, type_name(k->type), name));
  }
  if (read_log_ != nullptr) read_log_->insert(name);
  return *k;
}

std::int64_t Config::get_int(const std::string& name) const {
  knob_of_type(name, {KnobType::Int}, "get_int");
  return std::get<std::int64_t>(value(name));
}
double Config::get_double(const std::string& name) const {
  knob_of_type(name, {KnobType::Double, KnobType::Int}, "get_double");
  return as_number(value(name));
}
bool Config::get_bool(const std::string& name) const {
  knob_of_type(name, {KnobType::Bool}, "get_bool");
  return std::get<bool>(value(name));
}
const std::string& Config::get_string(const std::string& name) const {
  knob_of_type(name, {KnobType::String}, "get_string");
  return std::get<std::string>(value(name));
}

nlohmann::json Config::resolved() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& entry : schema_->knobs()) {
    const std::string& name = entry.first;  // a plain reference: lambdas capture it in every compiler
    std::visit([&](const auto& x) { out[name] = x; }, value(name));
  }
  return out;
}

nlohmann::json Config::assigned() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& entry : values_) {
    const std::string& name = entry.first;  // not a structured binding: clang 14's lambdas cannot capture one
    std::visit([&](const auto& x) { out[name] = x; }, entry.second);
  }
  return out;
}

void load_config_text(Config& config, const std::string& text, const std::string& path) {
  check_structure_of(text, path);
  nlohmann::json doc;
  if (const auto err = parse_json(text, doc)) {
    throw ConfigError(fmt::format("{}: invalid JSON ({})", where_in(path, line_of_byte(text, err->byte)), err->reason));
  }
  if (!doc.is_object()) throw ConfigError(fmt::format("{}:1: a scenario file must be a JSON object", path));
  std::vector<std::pair<std::string, const nlohmann::json*>> leaves;
  flatten(doc, "", leaves);
  std::set<std::string> seen;
  for (const auto& [key, value] : leaves) {
    // Dotted and nested spellings of one key ("a.b" and {"a": {"b"}}).
    if (!seen.insert(key).second) {
      throw ConfigError(fmt::format("{}: key '{}' is given twice (dotted and nested)", where_in(path, line_of_key(text, key)), key));
    }
  }
  for (const auto& [key, value] : leaves) {
    if (key == "description" || key == "base") continue;  // free text; base is applied by the scenario loader
    config.set_from_json(key, *value, where_in(path, line_of_key(text, key)));
  }
}

void load_config_file(Config& config, const std::string& path) {
  load_config_text(config, read_file_bounded(path, kSmallJsonMaxBytes, "scenario"), path);
}

KnobValidator at_least(double lo) {
  return {[lo](const ConfigValue& v) -> std::optional<std::string> {
            if (as_number(v) >= lo) return std::nullopt;
            return fmt::format("must be >= {}, got {}", lo, to_string(v));
          },
          fmt::format(">= {}", lo)};
}

KnobValidator greater_than(double lo) {
  return {[lo](const ConfigValue& v) -> std::optional<std::string> {
            if (as_number(v) > lo) return std::nullopt;
            return fmt::format("must be > {}, got {}", lo, to_string(v));
          },
          fmt::format("> {}", lo)};
}

KnobValidator in_range(double lo, double hi) {
  return {[lo, hi](const ConfigValue& v) -> std::optional<std::string> {
            const double x = as_number(v);
            if (x >= lo && x <= hi) return std::nullopt;
            return fmt::format("must be in [{}, {}], got {}", lo, hi, to_string(v));
          },
          fmt::format("[{}, {}]", lo, hi)};
}

KnobValidator above_and_at_most(double lo, double hi) {
  return {[lo, hi](const ConfigValue& v) -> std::optional<std::string> {
            const double x = as_number(v);
            if (x > lo && x <= hi) return std::nullopt;
            return fmt::format("must be in ({}, {}], got {}", lo, hi, to_string(v));
          },
          fmt::format("({}, {}]", lo, hi)};
}

KnobValidator one_of(std::vector<std::string> names) {
  std::string accepts = fmt::format("{}", fmt::join(names, " | "));
  return {[names = std::move(names)](const ConfigValue& v) -> std::optional<std::string> {
            const auto& s = std::get<std::string>(v);
            if (std::find(names.begin(), names.end(), s) != names.end()) return std::nullopt;
            return fmt::format("'{}' is not one of: {}", s, fmt::join(names, ", "));
          },
          std::move(accepts)};
}

}  // namespace april::base
