#include "cli/output_paths.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "base/atomic_file.hpp"

namespace april::cli {

namespace fs = std::filesystem;

void check_output_file(const std::string& path, const std::string& option) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw std::invalid_argument(fmt::format("{} {}: is a folder, not a file", option, path));
  const auto parent = fs::path(path).parent_path();
  const std::string folder = parent.empty() ? std::string(".") : parent.string();
  if (!fs::is_directory(folder, ec)) {
    throw std::invalid_argument(fmt::format("{} {}: folder {} does not exist", option, path, folder));
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw std::invalid_argument(fmt::format("{} {}: folder {} is not writable", option, path, folder));
  }
}

OutputFolder::OutputFolder(std::string dest, const std::string& option) : dest_(std::move(dest)) {
  std::error_code ec;
  if (fs::exists(dest_, ec) && !fs::is_directory(dest_, ec)) {
    throw std::invalid_argument(fmt::format("{} {}: exists and is not a folder", option, dest_));
  }
  const auto parent = fs::path(dest_).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  try {
    staging_ = base::staging_directory_for(dest_);
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("{} {}: cannot write there ({})", option, dest_, e.what()));
  }
}

OutputFolder::~OutputFolder() {
  if (committed_) return;
  base::remove_tree(staging_);
}

void OutputFolder::commit() {
  base::replace_directory_atomically(staging_, dest_);
  committed_ = true;
}

}  // namespace april::cli
