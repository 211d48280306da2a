#pragma once
// Reading the rows of a component-benchmark file ({"rows": [...]}) with
// errors that name the file, the line (where the row's id is), the row and
// the field, as every input of april is read.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_file.hpp"

namespace april::studies {

// (index, row) of every row of the file's "rows" list that is not "excluded"
// (a string saying why); refuses a file without one.
std::vector<std::pair<std::size_t, const nlohmann::json*>> component_rows(const base::JsonFile& f);

// A built-in model name as it is, else a config file's path relative to `dir`.
std::string builtin_or_beside(const std::string& model, const std::filesystem::path& dir);

class RowFields {
 public:
  RowFields(const base::JsonFile& f, const nlohmann::json* row, std::size_t index);
  // "path:line: row 'id', field 'key'".
  [[nodiscard]] std::string where(const std::string& key) const;
  [[noreturn]] void refuse(const std::string& key, const std::string& why) const;
  [[nodiscard]] std::string text(const std::string& key) const;
  [[nodiscard]] std::string text_or(const std::string& key, const std::string& fallback) const;
  // An integer in [lo, hi]; `fallback` when absent or null (-1: required).
  [[nodiscard]] std::int64_t count(const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const;
  [[nodiscard]] double number(const std::string& key, double lo, double hi) const;
  // The number, or 0 when absent or null.
  [[nodiscard]] double number_or_zero(const std::string& key, double lo, double hi) const;
  [[nodiscard]] bool flag_or(const std::string& key, bool fallback) const;
  // Resolves the row's model and accelerator now, so that either is refused,
  // by its field, before any fit runs.
  void check_resolves(const std::string& model, const std::string& accelerator) const;
  // The row's source: an object with a url and a verbatim quote.
  [[nodiscard]] nlohmann::json source() const;

 private:
  const base::JsonFile& f_;
  const nlohmann::json& x_;
  std::size_t index_;
  std::string id_;
};

}  // namespace april::studies
