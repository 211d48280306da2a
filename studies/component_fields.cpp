#include "studies/component_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/config.hpp"
#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"

namespace april::studies {

namespace {

// The field, or nullptr when absent (contains + at: GCC's null-dereference
// analysis flags nlohmann's find iterators under -Werror).
const nlohmann::json* field(const nlohmann::json& x, const std::string& key) { return x.contains(key) ? &x.at(key) : nullptr; }

}  // namespace

std::vector<std::pair<std::size_t, const nlohmann::json*>> component_rows(const base::JsonFile& f) {
  const auto* it = field(f.doc, "rows");
  if (it == nullptr || !it->is_array() || it->empty()) {
    throw base::ConfigError(fmt::format("{}: expected a non-empty list of benchmark rows", f.where("rows")));
  }
  std::vector<std::pair<std::size_t, const nlohmann::json*>> out;
  std::size_t i = 0;
  for (const auto& row : *it) {
    if (!row.is_object()) throw base::ConfigError(fmt::format("{}: row {} is not an object", f.where("rows"), i + 1));
    // A row kept for the record but not used says why ("excluded": "precision fp8: ...").
    if (row.contains("excluded")) {
      const auto& why = row.at("excluded");
      if (!why.is_string() || why.get<std::string>().empty()) {
        throw base::ConfigError(fmt::format("{}: row {}: \"excluded\" must say why", f.where("rows"), i + 1));
      }
    } else {
      out.emplace_back(i, &row);
    }
    ++i;
  }
  return out;
}

std::string builtin_or_beside(const std::string& model, const std::filesystem::path& dir) {
  const auto names = sim::builtin_model_names();
  if (std::find(names.begin(), names.end(), model) != names.end()) return model;
  return (dir / model).string();
}

RowFields::RowFields(const base::JsonFile& f, const nlohmann::json* row, std::size_t index) : f_(f), x_(*row), index_(index) {
  const auto* it = field(x_, "id");
  id_ = it != nullptr && it->is_string() ? it->get<std::string>() : fmt::format("#{}", index + 1);
}

std::string RowFields::where(const std::string& key) const {
  // The row's line: where its id first appears in the text.
  const auto at = f_.text.find(fmt::format("\"{}\"", id_));
  const auto line = at == std::string::npos ? std::string() : fmt::format(":{}", base::line_of_byte(f_.text, at));
  return fmt::format("{}{}: row '{}', field '{}'", f_.path, line, id_, key);
}

void RowFields::refuse(const std::string& key, const std::string& why) const {
  throw base::ConfigError(fmt::format("{}: {}", where(key), why));
}

std::string RowFields::text(const std::string& key) const {
  const auto* it = field(x_, key);
  if (it == nullptr || it->is_null()) refuse(key, "is missing");
  if (!it->is_string() || it->get<std::string>().empty()) refuse(key, fmt::format("expected a non-empty string, got {}", it->dump()));
  return it->get<std::string>();
}

std::string RowFields::text_or(const std::string& key, const std::string& fallback) const {
  const auto* it = field(x_, key);
  return it == nullptr || it->is_null() ? fallback : text(key);
}

std::int64_t RowFields::count(const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const {
  const auto* it = field(x_, key);
  if (it == nullptr || it->is_null()) {
    if (fallback < 0) refuse(key, "is missing");
    return fallback;
  }
  if (!it->is_number_integer()) refuse(key, fmt::format("expected an integer, got {}", it->dump()));
  const auto v = it->get<std::int64_t>();
  if (v < lo || v > hi) refuse(key, fmt::format("{} is not in [{}, {}]", v, lo, hi));
  return v;
}

double RowFields::number(const std::string& key, double lo, double hi) const {
  const auto* it = field(x_, key);
  if (it == nullptr || it->is_null()) refuse(key, "is missing");
  if (!it->is_number()) refuse(key, fmt::format("expected a number, got {}", it->dump()));
  const double v = it->get<double>();
  if (!(std::isfinite(v) && v >= lo && v <= hi)) refuse(key, fmt::format("{} is not in [{}, {}]", v, lo, hi));
  return v;
}

double RowFields::number_or_zero(const std::string& key, double lo, double hi) const {
  const auto* it = field(x_, key);
  return it == nullptr || it->is_null() ? 0.0 : number(key, lo, hi);
}

bool RowFields::flag_or(const std::string& key, bool fallback) const {
  const auto* it = field(x_, key);
  if (it == nullptr || it->is_null()) return fallback;
  if (!it->is_boolean()) refuse(key, fmt::format("expected true or false, got {}", it->dump()));
  return it->get<bool>();
}

void RowFields::check_resolves(const std::string& model, const std::string& accelerator) const {
  try {
    (void)sim::resolve_model(model);
  } catch (const base::ConfigError& e) {
    refuse("april_model", e.what());
  }
  try {
    (void)sim::resolve_accelerator(accelerator);
  } catch (const base::ConfigError& e) {
    refuse("accelerator", e.what());
  }
}

nlohmann::json RowFields::source() const {
  const auto* it = field(x_, "source");
  if (it == nullptr || !it->is_object()) refuse("source", "expected an object with the url and the verbatim quote");
  for (const char* k : {"url", "quote"}) {
    const auto* v = field(*it, k);
    if (v == nullptr || !v->is_string() || v->get<std::string>().empty()) refuse(fmt::format("source.{}", k), "is missing");
  }
  return *it;
}

}  // namespace april::studies
