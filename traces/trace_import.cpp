#include "traces/trace_import.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "traces/csv_table.hpp"
#include "traces/jsonl_lines.hpp"
#include "traces/jsonl_trace.hpp"

namespace april::traces {
namespace {

constexpr std::int64_t kMaxTokens = 1 << 24;

std::int32_t parse_tokens(const std::string& text, const std::string& path, std::size_t line, const std::string& field, std::int64_t min) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
    throw TraceError(fmt::format("{}:{}: field '{}': expected an integer token count, got '{}'", path, line, field, text));
  }
  if (v < min) throw TraceError(fmt::format("{}:{}: field '{}': must be >= {}, got {}", path, line, field, min, v));
  if (v > kMaxTokens) throw TraceError(fmt::format("{}:{}: field '{}': {} is larger than {} tokens", path, line, field, v, kMaxTokens));
  return static_cast<std::int32_t>(v);
}

const std::string& mapped(const ImportOptions& o, const std::string& field) {
  auto it = o.mapping.find(field);
  if (it == o.mapping.end()) {
    throw TraceError(fmt::format("--format {} needs --map with {} (prompt_id=COL,prompt_tokens=COL,response_tokens=COL)", o.format, field));
  }
  return it->second;
}

std::vector<base::GroupSpec> import_azure(const std::string& path, const ImportOptions& o) {
  if (o.group_size < 1) throw TraceError("--group-size must be >= 1");
  auto in = open_trace_file(path);
  std::size_t ctx = 0, gen = 0, row_index = 0;
  std::vector<base::GroupSpec> groups;
  for_each_csv_record(
      in, path,
      [&](const CsvTable& header) {
        (void)header.column("TIMESTAMP");  // the format's signature: fail early on another CSV
        ctx = header.column("ContextTokens");
        gen = header.column("GeneratedTokens");
      },
      [&](const CsvRow& r) {
        // Every row's context is checked, though a group keeps its first row's.
        const auto context = parse_tokens(r.fields[ctx], path, r.line, "ContextTokens", 0);
        if (row_index++ % static_cast<std::size_t>(o.group_size) == 0) {
          base::GroupSpec g;
          g.prompt_id = fmt::format("azure-{}", groups.size());
          g.prompt_tok = context;
          groups.push_back(std::move(g));
        }
        groups.back().response_tok.push_back(parse_tokens(r.fields[gen], path, r.line, "GeneratedTokens", 1));
      });
  if (groups.empty()) throw TraceError(fmt::format("{}: no samples", path));
  return groups;
}

// Groups rows by prompt id, in order of first appearance.
struct Grouper {
  std::vector<base::GroupSpec> groups;
  std::unordered_map<std::string, std::size_t> index;
  void add(const std::string& id, std::int32_t prompt_tok, std::int32_t response_tok) {
    auto [it, fresh] = index.emplace(id, groups.size());
    if (fresh) {
      base::GroupSpec g;
      g.prompt_id = id;
      g.prompt_tok = prompt_tok;
      groups.push_back(std::move(g));
    }
    groups[it->second].response_tok.push_back(response_tok);
  }
};

std::vector<base::GroupSpec> import_csv(const std::string& path, const ImportOptions& o) {
  // The mapping is checked before a byte is read: a missing --map should not wait for a large file.
  for (const auto* field : {"prompt_id", "prompt_tokens", "response_tokens"}) (void)mapped(o, field);
  auto in = open_trace_file(path);
  std::size_t id = 0, pt = 0, rt = 0;
  std::vector<std::string> names;
  Grouper g;
  for_each_csv_record(
      in, path,
      [&](const CsvTable& header) {
        id = header.column(mapped(o, "prompt_id"));
        pt = header.column(mapped(o, "prompt_tokens"));
        rt = header.column(mapped(o, "response_tokens"));
        names = header.header;
      },
      [&](const CsvRow& r) {
        if (r.fields[id].empty()) throw TraceError(fmt::format("{}:{}: field '{}': empty prompt id", path, r.line, names[id]));
        g.add(r.fields[id], parse_tokens(r.fields[pt], path, r.line, names[pt], 0), parse_tokens(r.fields[rt], path, r.line, names[rt], 1));
      });
  if (g.groups.empty()) throw TraceError(fmt::format("{}: no samples", path));
  return std::move(g.groups);
}

std::int32_t json_tokens(const nlohmann::json& v, const std::string& path, std::size_t line, const std::string& field, std::int64_t min) {
  if (!v.is_number_integer()) throw TraceError(fmt::format("{}:{}: field '{}': expected an integer, got {}", path, line, field, v.dump()));
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxTokens)) {
    throw TraceError(fmt::format("{}:{}: field '{}': {} is larger than {} tokens", path, line, field, v.dump(), kMaxTokens));
  }
  return parse_tokens(std::to_string(v.get<std::int64_t>()), path, line, field, min);
}

std::vector<base::GroupSpec> import_jsonl(const std::string& path, const ImportOptions& o) {
  const std::string id_key = mapped(o, "prompt_id");
  const std::string pt_key = mapped(o, "prompt_tokens");
  const std::string rt_key = mapped(o, "response_tokens");
  Grouper g;
  auto in = open_trace_file(path);
  for_each_jsonl_object(in, path, [&](const nlohmann::json& j, std::size_t line) {
    for (const auto* key : {&id_key, &pt_key, &rt_key}) {
      if (!j.contains(*key)) throw TraceError(fmt::format("{}:{}: field '{}': missing", path, line, *key));
    }
    const auto& idv = j[id_key];
    std::string id;
    if (idv.is_string())
      id = idv.get<std::string>();
    else if (idv.is_number_integer())
      id = idv.dump();
    else
      throw TraceError(fmt::format("{}:{}: field '{}': expected a string or integer id", path, line, id_key));
    g.add(id, json_tokens(j[pt_key], path, line, pt_key, 0), json_tokens(j[rt_key], path, line, rt_key, 1));
  });
  if (g.groups.empty()) throw TraceError(fmt::format("{}: no samples", path));
  return std::move(g.groups);
}

}  // namespace

std::vector<std::string> import_formats() { return {"azure", "csv", "jsonl"}; }

std::map<std::string, std::string> parse_mapping(const std::string& text) {
  std::map<std::string, std::string> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == part.size()) {
      throw TraceError(fmt::format("--map: '{}' is not FIELD=COLUMN", part));
    }
    const std::string field = part.substr(0, eq);
    if (field != "prompt_id" && field != "prompt_tokens" && field != "response_tokens") {
      throw TraceError(fmt::format("--map: unknown field '{}' (prompt_id, prompt_tokens, response_tokens)", field));
    }
    out[field] = part.substr(eq + 1);
  }
  return out;
}

std::vector<base::GroupSpec> import_trace(const std::string& path, const ImportOptions& o) {
  if (o.format == "azure") return import_azure(path, o);
  if (o.format == "csv") return import_csv(path, o);
  if (o.format == "jsonl") return import_jsonl(path, o);
  throw TraceError(fmt::format("unknown trace format '{}'; known: {}", o.format, fmt::join(import_formats(), ", ")));
}

std::vector<base::GroupSpec> load_trace(const std::string& path, const ImportOptions& o) {
  if (o.format.empty() || o.format == "ours") return read_jsonl_trace(path);
  return import_trace(path, o);
}

}  // namespace april::traces
