#include "base/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace april::base {
namespace {

namespace fs = std::filesystem;

// Unique per process and call, so concurrent writers of one path never share
// a temporary.
std::string temp_name(const std::string& path, const char* what) {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}.{}-{}-{}.tmp", path, what, ::getpid(), counter.fetch_add(1));
}

std::string old_name(const std::string& dest) { return dest + ".old.tmp"; }

// nftw callback: children come before their folder (FTW_DEPTH).
int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return;  // best effort for folders on file systems that refuse
  ::fsync(fd);
  ::close(fd);
}

std::string parent_of(const std::string& path) {
  const auto p = fs::path(path).parent_path();
  return p.empty() ? std::string(".") : p.string();
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& contents) {
  // The rename would put a regular file in the place of whatever is there:
  // a symlink, a FIFO or a device is the user's, not a result to replace.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    const char* what = S_ISLNK(st.st_mode)    ? "a symbolic link"
                       : S_ISDIR(st.st_mode)  ? "a folder"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                                              : "a device or socket";
    throw std::runtime_error(fmt::format("{}: is {}, not a regular file: april writes results only to a new or regular file", path, what));
  }
  const std::string tmp = temp_name(path, "part");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: {}: {}", path, what, std::strerror(err)));
  };
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write failed");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) fail("flush to disk failed");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: close failed: {}", path, std::strerror(err)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: cannot replace: {}", path, std::strerror(err)));
  }
  fsync_path(parent_of(path), O_RDONLY | O_DIRECTORY);
}

std::string staging_directory_for(const std::string& dest) {
  const std::string dir = temp_name(dest, "staging");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot create {}: {}", dest, dir, ec.message()));
  return dir;
}

void replace_directory_atomically(const std::string& staging, const std::string& dest) {
  fsync_path(staging, O_RDONLY | O_DIRECTORY);
  std::error_code ec;
  if (!fs::exists(dest, ec)) {
    if (::rename(staging.c_str(), dest.c_str()) != 0) {
      throw std::runtime_error(fmt::format("{}: cannot put {} in place: {}", dest, staging, std::strerror(errno)));
    }
    fsync_path(parent_of(dest), O_RDONLY | O_DIRECTORY);
    return;
  }
#ifdef RENAME_EXCHANGE
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dest.c_str(), RENAME_EXCHANGE) == 0) {
    fsync_path(parent_of(dest), O_RDONLY | O_DIRECTORY);
    remove_tree(staging);  // now the old version
    return;
  }
#endif
  // No atomic swap here: move the old version aside, then the new one in.
  const std::string old = old_name(dest);
  remove_tree(old);
  if (::rename(dest.c_str(), old.c_str()) != 0) {
    throw std::runtime_error(fmt::format("{}: cannot move the old version aside: {}", dest, std::strerror(errno)));
  }
  if (::rename(staging.c_str(), dest.c_str()) != 0) {
    const int err = errno;
    ::rename(old.c_str(), dest.c_str());
    throw std::runtime_error(fmt::format("{}: cannot put {} in place: {}", dest, staging, std::strerror(err)));
  }
  fsync_path(parent_of(dest), O_RDONLY | O_DIRECTORY);
  remove_tree(old);
}

bool recover_directory(const std::string& dest) {
  std::error_code ec;
  const std::string old = old_name(dest);
  if (fs::exists(dest, ec) || !fs::is_directory(old, ec)) return false;
  if (::rename(old.c_str(), dest.c_str()) != 0) {
    throw std::runtime_error(fmt::format("{}: cannot restore the previous version from {}: {}", dest, old, std::strerror(errno)));
  }
  return true;
}

bool remove_tree(const std::string& path) noexcept {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT;
  // FTW_PHYS: a link is removed, never followed.
  return ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

}  // namespace april::base
