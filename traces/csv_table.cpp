#include "traces/csv_table.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "base/line_reader.hpp"
#include "traces/jsonl_trace.hpp"

namespace april::traces {
namespace {

std::vector<std::string> split_record(const std::string& line, const std::string& path, std::size_t lineno) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (quoted) throw TraceError(fmt::format("{}:{}: unterminated quoted field", path, lineno));
  out.push_back(std::move(cur));
  return out;
}

}  // namespace

std::size_t CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  throw TraceError(fmt::format("{}:1: no column '{}' in the header (columns: {})", path, name, fmt::join(header, ", ")));
}

void for_each_csv_record(std::istream& in, const std::string& path, const std::function<void(const CsvTable& header)>& on_header,
                         const std::function<void(const CsvRow& row)>& on_row) {
  CsvTable t;
  t.path = path;
  base::for_each_line<TraceError>(in, path, base::kMaxTraceLineBytes, base::kMaxTraceBytes, [&](std::string& line, std::size_t lineno) {
    if (line.empty()) return;
    auto fields = split_record(line, path, lineno);
    if (t.header.empty()) {
      if (!fields.empty() && fields[0].rfind("\xEF\xBB\xBF", 0) == 0) fields[0] = fields[0].substr(3);  // BOM
      t.header = std::move(fields);
      on_header(t);
      return;
    }
    if (fields.size() != t.header.size()) {
      throw TraceError(fmt::format("{}:{}: expected {} fields as in the header, got {}", path, lineno, t.header.size(), fields.size()));
    }
    on_row(CsvRow{lineno, std::move(fields)});
  });
  if (t.header.empty()) throw TraceError(fmt::format("{}: empty file (no header)", path));
}

CsvTable parse_csv(const std::string& text, const std::string& path) {
  CsvTable t;
  std::istringstream in(text);
  for_each_csv_record(
      in, path, [&](const CsvTable& header) { t = header; }, [&](const CsvRow& row) { t.rows.push_back(row); });
  return t;
}

}  // namespace april::traces
