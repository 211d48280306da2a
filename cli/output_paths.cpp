#include "cli/output_paths.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "base/atomic_file.hpp"

namespace april::cli {

namespace fs = std::filesystem;

namespace {

// Where a regular-file output really goes: a symbolic link's final target.
fs::path resolved_file(const std::string& path) {
  std::error_code ec;
  const auto target = fs::weakly_canonical(fs::path(path), ec);
  return ec ? fs::path(path) : target;
}

bool is_stream(const std::string& path) {
  if (path == "-") return true;
  std::error_code ec;
  const auto st = fs::status(path, ec);  // follows links: /dev/stdout is a link to a pipe or a terminal
  return !ec && (st.type() == fs::file_type::fifo || st.type() == fs::file_type::character || st.type() == fs::file_type::socket);
}

}  // namespace

void check_output_file(const std::string& path_in, const std::string& option) {
  if (path_in == "-") return;
  std::error_code ec;
  if (fs::is_directory(path_in, ec)) throw std::invalid_argument(fmt::format("{} {}: is a folder, not a file", option, path_in));
  if (is_stream(path_in)) {
    if (::access(path_in.c_str(), W_OK) != 0) throw std::invalid_argument(fmt::format("{} {}: is not writable", option, path_in));
    return;
  }
  const std::string path = resolved_file(path_in).string();
  const auto parent = fs::path(path).parent_path();
  const std::string folder = parent.empty() ? std::string(".") : parent.string();
  if (!fs::is_directory(folder, ec)) {
    throw std::invalid_argument(fmt::format("{} {}: folder {} does not exist", option, path, folder));
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw std::invalid_argument(fmt::format("{} {}: folder {} is not writable", option, path, folder));
  }
}

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      const auto& [oa, a] = outputs[i];
      const auto& [ob, b] = outputs[j];
      if (a.empty() || b.empty() || a == "-" || b == "-") continue;
      if (resolved_file(a) == resolved_file(b)) {
        throw std::invalid_argument(fmt::format("{} {} and {} {} are the same file; one would write over the other", oa, a, ob, b));
      }
    }
  }
}

void check_outputs_apart(const std::vector<OutputSpec>& outputs) {
  // Whether `inner` is `outer` or lies under it (both resolved).
  const auto within = [](const fs::path& inner, const fs::path& outer) {
    auto i = inner.begin();
    for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
      if (o->empty()) continue;  // a trailing separator
      if (i == inner.end() || *i != *o) return false;
    }
    return true;
  };
  for (std::size_t a = 0; a < outputs.size(); ++a) {
    for (std::size_t b = 0; b < outputs.size(); ++b) {
      const auto& x = outputs[a];
      const auto& y = outputs[b];
      if (a == b || !y.folder || x.path.empty() || y.path.empty() || x.path == "-") continue;
      if (x.folder && a > b) continue;  // two folders: one report, either order
      const auto rx = resolved_file(x.path), ry = resolved_file(y.path);
      if (!within(rx, ry) && !(x.folder && within(ry, rx))) continue;
      if (x.folder) {
        throw std::invalid_argument(fmt::format("{} {} and {} {} overlap; each folder is replaced whole, so one would lose the other",
                                                x.option, x.path, y.option, y.path));
      }
      throw std::invalid_argument(
          fmt::format("{} {} is inside {} {}, which is replaced whole: the file would be lost", x.option, x.path, y.option, y.path));
    }
  }
}

void write_output_file(const std::string& path, const std::string& contents) {
  if (is_stream(path)) {
    std::FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "w");
    if (f == nullptr) throw std::runtime_error(fmt::format("{}: cannot open for writing ({})", path, std::strerror(errno)));
    const bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size() && std::fflush(f) == 0;
    const int err = errno;
    if (f != stdout) std::fclose(f);
    if (!ok) throw std::runtime_error(fmt::format("{}: write failed ({})", path == "-" ? "standard output" : path, std::strerror(err)));
    return;
  }
  base::write_file_atomically(resolved_file(path).string(), contents);
}

void check_output_folder(const std::string& path, const std::string& option) {
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (ec || status.type() == fs::file_type::not_found) return;  // a new folder
  if (status.type() != fs::file_type::directory) {
    throw std::invalid_argument(fmt::format("{} {}: exists and is not a folder{}", option, path,
                                            status.type() == fs::file_type::symlink ? " (a symbolic link)" : ""));
  }
  if (fs::exists(fs::path(path) / kOutputMarker, ec)) return;  // written by april before
  std::vector<std::string> names;
  std::size_t count = 0;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    if (names.size() < 5) names.push_back(it->path().filename().string());
    ++count;
  }
  if (ec) throw std::invalid_argument(fmt::format("{} {}: cannot read the folder ({})", option, path, ec.message()));
  if (count == 0) return;
  std::sort(names.begin(), names.end());
  throw std::invalid_argument(fmt::format(
      "{} {}: the folder holds {} entr{} april did not write ({}{}); april replaces an output folder whole, so it "
      "writes only to a new or empty folder or one it wrote before (marked by {})",
      option, path, count, count == 1 ? "y" : "ies", fmt::join(names, ", "), count > names.size() ? ", ..." : "", kOutputMarker));
}

OutputFolder::OutputFolder(std::string dest, const std::string& option) : dest_(std::move(dest)) {
  check_output_folder(dest_, option);
  std::error_code ec;
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
  base::write_file_atomically((fs::path(staging_) / kOutputMarker).string(),
                              "written by april; a later april run may replace this folder whole\n");
  base::replace_directory_atomically(staging_, dest_);
  committed_ = true;
}

}  // namespace april::cli
