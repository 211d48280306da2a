// libFuzzer target: trace parsers (our JSONL, the CSV reader, the Azure
// import) and the statistics computed on what they accept.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "traces/csv_table.hpp"
#include "traces/jsonl_trace.hpp"
#include "traces/trace_import.hpp"
#include "traces/trace_stats.hpp"

namespace {

// One temporary file per process: import_trace reads a path.
const std::string& temp_path() {
  static const std::string path = [] {
    char name[] = "/tmp/april-fuzz-trace-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd >= 0) ::close(fd);
    return std::string(name);
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto groups = april::traces::parse_jsonl_trace(text, "fuzz.jsonl");
    (void)april::traces::compute_stats(groups);
  } catch (const nlohmann::json::exception&) {
    std::abort();  // the library's own message would reach the user
  } catch (const std::exception&) {
  }
  try {
    (void)april::traces::parse_csv(text, "fuzz.csv");
  } catch (const nlohmann::json::exception&) {
    std::abort();  // the library's own message would reach the user
  } catch (const std::exception&) {
  }
  try {
    if (std::FILE* f = std::fopen(temp_path().c_str(), "wb")) {
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
      april::traces::ImportOptions o;
      o.format = "azure";
      const auto groups = april::traces::import_trace(temp_path(), o);
      (void)april::traces::compute_stats(groups);
    }
  } catch (const nlohmann::json::exception&) {
    std::abort();  // the library's own message would reach the user
  } catch (const std::exception&) {
  }
  return 0;
}
