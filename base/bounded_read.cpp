#include "base/bounded_read.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/config.hpp"

namespace april::base {

std::string read_file_bounded(const std::string& path, std::size_t max_bytes, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw ConfigError(fmt::format("{}: cannot open {} ({})", path, what, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) throw ConfigError(fmt::format("{}: is a folder, not a {} file", path, what));
  // A device or a pipe could block or never end; inputs are files.
  if (!S_ISREG(st.st_mode)) throw ConfigError(fmt::format("{}: not a regular file; a {} is read from a file", path, what));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot open {} ({})", path, what, std::strerror(errno)));
  std::string out;
  constexpr std::size_t kChunk = 64 * 1024;
  char buf[kChunk];
  while (in) {
    in.read(buf, static_cast<std::streamsize>(kChunk));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (out.size() + got > max_bytes) {
      throw ConfigError(
          fmt::format("{}: larger than {} MiB, far more than a {} holds; refusing to read it whole", path, max_bytes >> 20, what));
    }
    out.append(buf, got);
  }
  if (in.bad()) throw ConfigError(fmt::format("{}: read error in {}", path, what));
  return out;
}

}  // namespace april::base
