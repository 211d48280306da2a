#pragma once
// A small CSV reader: a header row, then records. Handles quoted fields
// ("a,b", doubled quotes) and CRLF line ends. Errors name the file and line.
#include <string>
#include <vector>

namespace april::traces {

struct CsvRow {
  std::size_t line = 0;  // 1-based line in the file
  std::vector<std::string> fields;
};

struct CsvTable {
  std::string path;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
  // Index of a header column; throws TraceError naming the file and column.
  [[nodiscard]] std::size_t column(const std::string& name) const;
};

CsvTable parse_csv(const std::string& text, const std::string& path);
CsvTable read_csv(const std::string& path);

}  // namespace april::traces
