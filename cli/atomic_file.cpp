#include "cli/atomic_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace april::cli {

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("{}: cannot open for writing", tmp));
    out << contents;
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("{}: write failed", tmp));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace april::cli
