#pragma once
// Configuration knobs, SimGrid style: each knob is declared once, with its
// name, unit, default, help and validator, by the module that reads it.
// A Config holds values for one run; there is no global registry.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/config_error.hpp"

namespace april::base {

using ConfigValue = std::variant<std::int64_t, double, bool, std::string>;
enum class KnobType { Int, Double, Bool, String };

// A knob's check: an error message, or nullopt when the value is acceptable;
// `accepts` says what it accepts ("[1, 1048576]", "one of: a, b"), for `april keys`.
struct KnobValidator {
  std::function<std::optional<std::string>(const ConfigValue&)> check;
  std::string accepts;

  explicit operator bool() const { return static_cast<bool>(check); }
  std::optional<std::string> operator()(const ConfigValue& v) const { return check(v); }
};

struct Knob {
  std::string name;
  KnobType type = KnobType::Double;
  ConfigValue default_value;
  std::string unit;  // "tok", "s", "GB/s", "" for counts and ratios
  std::string help;
  KnobValidator validate;  // may be empty
};

// A knob's name with its type, declared once beside the code that owns it
// (base/run_keys.hpp: the keys every layer reads): config.get(kSeed) cannot
// misspell the key or misread its type, as get_int("sede") could.
template <typename T>
struct TypedKey {
  const char* name;
};
using IntKey = TypedKey<std::int64_t>;
using DoubleKey = TypedKey<double>;
using BoolKey = TypedKey<bool>;
using StringKey = TypedKey<std::string>;

class ConfigSchema {
 public:
  void add(Knob knob);  // throws std::logic_error on a repeated name
  [[nodiscard]] const Knob* find(const std::string& name) const;
  [[nodiscard]] const std::map<std::string, Knob>& knobs() const { return knobs_; }
  // Names close to `name`, for "did you mean" hints.
  [[nodiscard]] std::vector<std::string> similar(const std::string& name) const;

  // Named sets of defaults chosen by one String knob (`selector`, a framework
  // profile): a knob a run does not set reads the selected profile's value,
  // else its own default. Every value is checked against its knob now
  // (std::logic_error: the profiles are built in). Declare after the knobs.
  using Profile = std::map<std::string, ConfigValue>;
  void add_profiles(const std::string& selector, std::map<std::string, Profile> profiles);
  [[nodiscard]] const std::string& profile_selector() const { return profile_selector_; }
  // The profile's value of `knob`, or nullptr when it sets none.
  [[nodiscard]] const ConfigValue* profile_value(const std::string& profile, const std::string& knob) const;
  [[nodiscard]] const std::map<std::string, Profile>& profiles() const { return profiles_; }

 private:
  std::map<std::string, Knob> knobs_;
  std::string profile_selector_;
  std::map<std::string, Profile> profiles_;
};

class Config {
 public:
  explicit Config(const ConfigSchema& schema) : schema_(&schema) {}

  // `where` names the source for errors: "file.json:12", "--set", "scenario handcheck".
  void set(const std::string& name, const ConfigValue& value, const std::string& where);
  // Typed writes: a key's name and type come from its declaration, as typed reads do.
  void set(IntKey key, std::int64_t value, const std::string& where) { set(key.name, ConfigValue(value), where); }
  void set(DoubleKey key, double value, const std::string& where) { set(key.name, ConfigValue(value), where); }
  void set(BoolKey key, bool value, const std::string& where) { set(key.name, ConfigValue(value), where); }
  void set(const StringKey& key, const std::string& value, const std::string& where) { set(key.name, ConfigValue(value), where); }
  void set_from_text(const std::string& name, const std::string& text, const std::string& where);
  void set_from_json(const std::string& name, const nlohmann::json& value, const std::string& where);
  // Back to the knob's default, as if never set (a derived default such as
  // cluster.engines in disaggregated mode then applies again).
  void unset(const std::string& name);
  // "key=value", as given to --set.
  void apply_assignment(const std::string& assignment);

  // Typed reads: each throws std::logic_error when the knob is undeclared or
  // of another type (a programming error, not a user's), so a misread knob
  // never turns into a silent NaN. get_double also reads Int knobs.
  [[nodiscard]] std::int64_t get_int(const std::string& name) const;
  [[nodiscard]] double get_double(const std::string& name) const;
  [[nodiscard]] bool get_bool(const std::string& name) const;
  [[nodiscard]] const std::string& get_string(const std::string& name) const;
  [[nodiscard]] bool is_set(const std::string& name) const { return values_.count(name) != 0; }
  [[nodiscard]] std::int64_t get(IntKey key) const { return get_int(key.name); }
  [[nodiscard]] double get(DoubleKey key) const { return get_double(key.name); }
  [[nodiscard]] bool get(BoolKey key) const { return get_bool(key.name); }
  [[nodiscard]] const std::string& get(const StringKey& key) const { return get_string(key.name); }

  // Every knob with its effective value, for summary.json and hashing.
  [[nodiscard]] nlohmann::json resolved() const;
  // Only the knobs set explicitly, by name. set_from_json of each on a fresh
  // Config of the same schema rebuilds this one exactly (resolved() would not:
  // a derived default such as cluster.engines must stay unset).
  [[nodiscard]] nlohmann::json assigned() const;
  [[nodiscard]] const ConfigSchema& schema() const { return *schema_; }

  // From now on, the name of every knob read goes into `log` (nullptr: stop).
  // Which keys a component reads (a policy's, say) is then a fact a test can
  // check, not a claim. A copy of this Config logs into the same set.
  void log_reads_into(std::set<std::string>* log) const { read_log_ = log; }

 private:
  const Knob& knob_or_throw(const std::string& name, const std::string& where) const;
  const ConfigValue& value(const std::string& name) const;
  const Knob& knob_of_type(const std::string& name, std::initializer_list<KnobType> allowed, const char* getter) const;

  const ConfigSchema* schema_;
  std::map<std::string, ConfigValue> values_;
  mutable std::set<std::string>* read_log_ = nullptr;
};

// Loads a scenario JSON file (nested objects or dotted keys) into `config`.
// Errors name the file, the line and the key.
void load_config_file(Config& config, const std::string& path);
// Same, from text already read; `path` is used in messages only.
void load_config_text(Config& config, const std::string& text, const std::string& path);

// Refuses a JSON text that gives a key twice in one object (the parser would
// keep the last silently) or nests deeper than 32 levels, naming path and line.
void check_json_structure(const std::string& text, const std::string& path);

std::string to_string(const ConfigValue& v);
std::string type_name(KnobType t);

// Common validators.
KnobValidator at_least(double lo);
KnobValidator greater_than(double lo);
KnobValidator in_range(double lo, double hi);
KnobValidator above_and_at_most(double lo, double hi);  // (lo, hi]
KnobValidator one_of(std::vector<std::string> names);

}  // namespace april::base
