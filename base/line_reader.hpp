#pragma once
// Streams a text input line by line in bounded memory: a line longer than
// `max_line_bytes` or an input longer than `max_total_bytes` is refused with
// the path and line, so /dev/zero, a binary file or an endless stream ends in
// a clear error within seconds instead of growing until the kernel kills us.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <string>

#include <fmt/format.h>

namespace april::base {

// Bounds that fit what traces hold: a trace line is one group (a few KB),
// a trace file may be gigabytes.
inline constexpr std::size_t kMaxTraceLineBytes = 16u << 20;
inline constexpr std::uint64_t kMaxTraceBytes = std::uint64_t{64} << 30;

// Calls `fn(line, lineno)` for each line of `in` (1-based numbers; the line
// without its '\n' or a trailing '\r'). Throws `Error` (the caller's error
// type, built from a message) naming `path` on a bound or a read error.
template <typename Error>
void for_each_line(std::istream& in, const std::string& path, std::size_t max_line_bytes, std::uint64_t max_total_bytes,
                   const std::function<void(std::string& line, std::size_t lineno)>& fn) {
  constexpr std::size_t kChunk = 1 << 16;
  std::string buf(kChunk, '\0');
  std::string line;
  std::size_t lineno = 1;
  std::uint64_t total = 0;
  const auto emit = [&] {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    fn(line, lineno);
    line.clear();
    ++lineno;
  };
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(kChunk));
    const auto got = static_cast<std::size_t>(in.gcount());
    total += got;
    if (total > max_total_bytes) {
      throw Error(fmt::format("{}: larger than {} GiB; refusing to read on", path, max_total_bytes >> 30));
    }
    std::size_t start = 0;
    for (std::size_t i = 0; i < got; ++i) {
      if (buf[i] != '\n') continue;
      line.append(buf, start, i - start);
      start = i + 1;
      emit();
    }
    line.append(buf, start, got - start);
    if (line.size() > max_line_bytes) {
      throw Error(fmt::format("{}:{}: a line longer than {} MiB; not a text file of this kind", path, lineno, max_line_bytes >> 20));
    }
  }
  if (in.bad()) throw Error(fmt::format("{}: read error", path));
  if (!line.empty()) emit();
}

}  // namespace april::base
