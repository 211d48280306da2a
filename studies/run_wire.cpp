#include "studies/run_wire.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "base/json_value.hpp"
#include "rl/step_fields.hpp"

namespace april::studies {
namespace {

using nlohmann::json;

// The wire form lists StepMetrics' fields one by one; a field added to the
// struct and not to the list would vanish between ranks. The size pins the struct
// (x86-64: 33 eight-byte fields, 2 optional doubles and the optional train
// phases); when it changes, add the new field to rl/step_fields.hpp and to
// the round-trip test, then update the size.
static_assert(sizeof(rl::StepMetrics) == 33 * 8 + 2 * sizeof(std::optional<double>) + sizeof(std::optional<rl::TrainPhases>),
              "StepMetrics changed: add the new field to rl/step_fields.hpp and update this size");

// JSON has no NaN or infinity; they travel as strings.
json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double to_double(const json& j, const char* name) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  throw std::invalid_argument(fmt::format("run wire form: field '{}' is not a number: {}", name, j.dump()));
}

const json& field(const json& j, const char* name) {
  if (!j.is_object() || !j.contains(name)) throw std::invalid_argument(fmt::format("run wire form: field '{}' is missing", name));
  return j.at(name);
}

std::int64_t int_field(const json& j, const char* name) {
  const json& v = field(j, name);
  if (!v.is_number_integer()) throw std::invalid_argument(fmt::format("run wire form: field '{}' is not an integer: {}", name, v.dump()));
  return v.get<std::int64_t>();
}

std::string string_field(const json& j, const char* name) {
  const json& v = field(j, name);
  if (!v.is_string()) throw std::invalid_argument(fmt::format("run wire form: field '{}' is not a string: {}", name, v.dump()));
  return v.get<std::string>();
}

json parse(const std::string& text) {
  json doc;
  if (const auto err = base::parse_json(text, doc)) {
    throw std::invalid_argument(fmt::format("run wire form: not JSON (byte {}: {})", err->byte, err->reason));
  }
  return doc;
}

// The train phases' doubles in a fixed order, for the byte form.
constexpr double rl::TrainPhases::*kPhaseFields[] = {
    &rl::TrainPhases::old_logprob_s, &rl::TrainPhases::ref_logprob_s, &rl::TrainPhases::update_s, &rl::TrainPhases::grad_reduce_s,
    &rl::TrainPhases::optimizer_s,   &rl::TrainPhases::offload_s,     &rl::TrainPhases::other_s};
static_assert(sizeof(rl::TrainPhases) == sizeof(kPhaseFields) / sizeof(kPhaseFields[0]) * sizeof(double),
              "TrainPhases changed: list the new field in kPhaseFields");

}  // namespace

std::string spec_to_wire(std::int64_t index, const RunSpec& spec) {
  json j = {{"index", index}, {"params", spec.params}, {"policy", spec.policy}, {"config", spec.config.assigned()}};
  return j.dump();
}

WireSpec spec_from_wire(const std::string& text, const base::ConfigSchema& schema) {
  const json j = parse(text);
  WireSpec w{int_field(j, "index"), RunSpec{field(j, "params"), string_field(j, "policy"), base::Config(schema)}};
  const json& config = field(j, "config");
  if (!config.is_object()) throw std::invalid_argument("run wire form: field 'config' is not an object");
  for (auto it = config.begin(); it != config.end(); ++it) w.spec.config.set_from_json(it.key(), it.value(), "run wire form");
  return w;
}

namespace {

// Steps travel as raw 8-byte values in the field table's order (a run of
// thousands of steps as JSON costs about a tenth of its simulation to encode
// and decode; as bytes, next to nothing). Both ranks run the same april on
// the same architecture, which the header's field list and byte count check.
constexpr std::size_t kStepBytes = [] {
  std::size_t n = 0;
  rl::for_each_step_field([&](const char*, auto member, rl::OverSteps) {
    using T = std::decay_t<decltype(std::declval<rl::StepMetrics>().*member)>;
    if constexpr (std::is_same_v<T, std::optional<rl::TrainPhases>>)
      n += 8 + sizeof(rl::TrainPhases);
    else
      n += std::is_same_v<T, std::optional<double>> ? 16 : 8;
  });
  return n;
}();

template <typename T>
void put(std::string& out, T v) {
  static_assert(sizeof(T) == 8);
  char bytes[8];
  std::memcpy(bytes, &v, 8);
  out.append(bytes, 8);
}

template <typename T>
T take(const char*& p) {
  static_assert(sizeof(T) == 8);
  T v;
  std::memcpy(&v, p, 8);
  p += 8;
  return v;
}

json step_field_names() {
  json names = json::array();
  rl::for_each_step_field([&](const char* name, auto, rl::OverSteps) { names.push_back(name); });
  return names;
}

}  // namespace

std::string record_to_wire(std::int64_t index, const RunRecord& r) {
  json j = {{"index", index},
            {"run_key", r.run_key},
            {"scenario_hash", r.scenario_hash},
            {"scenario", r.scenario},
            {"policy", r.policy},
            {"seed", r.seed},
            {"started_at", r.started_at},
            {"finished_at", r.finished_at},
            {"wall_time_s", number(r.wall_time_s)},
            {"model_version", r.model_version},
            {"status", r.status},
            {"error", r.error},
            {"summary", r.summary},
            {"steps", r.steps.size()},
            {"step_fields", step_field_names()}};
  // JSON text never holds a raw NUL (it escapes one), so a NUL ends it.
  std::string out = j.dump();
  out.push_back('\0');
  out.reserve(out.size() + r.steps.size() * kStepBytes);
  for (const auto& m : r.steps) {
    rl::for_each_step_field([&](const char*, auto member, rl::OverSteps) {
      using T = std::decay_t<decltype(m.*member)>;
      if constexpr (std::is_same_v<T, std::optional<rl::TrainPhases>>) {
        put<std::int64_t>(out, (m.*member).has_value() ? 1 : 0);
        const auto phases = (m.*member).value_or(rl::TrainPhases{});
        for (const auto field : kPhaseFields) put<double>(out, phases.*field);
      } else if constexpr (std::is_same_v<T, std::optional<double>>) {
        put<std::int64_t>(out, (m.*member).has_value() ? 1 : 0);
        put<double>(out, (m.*member).value_or(0.0));
      } else {
        put<T>(out, m.*member);
      }
    });
  }
  return out;
}

WireRecord record_from_wire(const std::string& text) {
  const auto nul = text.find('\0');
  if (nul == std::string::npos) throw std::invalid_argument("run wire form: a record without its steps block");
  const json j = parse(text.substr(0, nul));
  WireRecord w;
  w.index = int_field(j, "index");
  RunRecord& r = w.record;
  r.run_key = string_field(j, "run_key");
  r.scenario_hash = string_field(j, "scenario_hash");
  r.scenario = field(j, "scenario");
  r.policy = string_field(j, "policy");
  r.seed = int_field(j, "seed");
  r.started_at = string_field(j, "started_at");
  r.finished_at = string_field(j, "finished_at");
  r.wall_time_s = to_double(field(j, "wall_time_s"), "wall_time_s");
  r.model_version = int_field(j, "model_version");
  r.status = string_field(j, "status");
  r.error = string_field(j, "error");
  r.summary = field(j, "summary");
  if (field(j, "step_fields") != step_field_names()) {
    throw std::invalid_argument("run wire form: the sender's step fields differ from this april's (ranks of different versions?)");
  }
  const std::int64_t steps = int_field(j, "steps");
  const std::size_t block = text.size() - nul - 1;
  if (steps < 0 || block != static_cast<std::size_t>(steps) * kStepBytes) {
    throw std::invalid_argument(fmt::format("run wire form: {} steps need {} bytes, the record carries {}", steps,
                                            static_cast<std::size_t>(std::max<std::int64_t>(steps, 0)) * kStepBytes, block));
  }
  const char* p = text.data() + nul + 1;
  r.steps.resize(static_cast<std::size_t>(steps));
  for (auto& m : r.steps) {
    rl::for_each_step_field([&](const char*, auto member, rl::OverSteps) {
      using T = std::decay_t<decltype(m.*member)>;
      if constexpr (std::is_same_v<T, std::optional<rl::TrainPhases>>) {
        const auto present = take<std::int64_t>(p);
        rl::TrainPhases phases;
        for (const auto field : kPhaseFields) phases.*field = take<double>(p);
        m.*member = present != 0 ? std::optional<rl::TrainPhases>(phases) : std::nullopt;
      } else if constexpr (std::is_same_v<T, std::optional<double>>) {
        const auto present = take<std::int64_t>(p);
        const auto v = take<double>(p);
        m.*member = present != 0 ? std::optional<double>(v) : std::nullopt;
      } else {
        m.*member = take<T>(p);
      }
    });
  }
  return w;
}

}  // namespace april::studies
