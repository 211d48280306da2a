#pragma once
// A small CSV reader: a header row, then records. Handles quoted fields
// ("a,b", doubled quotes) and CRLF line ends. Errors name the file and line.
#include <functional>
#include <istream>
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

// Streams a CSV: `on_header(header)` once, then `on_row(row)` per record, in
// bounded memory (base::for_each_line); rows with another field count than
// the header are TraceErrors naming the line.
void for_each_csv_record(std::istream& in, const std::string& path, const std::function<void(const CsvTable& header)>& on_header,
                         const std::function<void(const CsvRow& row)>& on_row);
// The whole table of text already in memory (small inputs, tests).
CsvTable parse_csv(const std::string& text, const std::string& path);

}  // namespace april::traces
