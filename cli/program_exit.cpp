#include "cli/program_exit.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace april::cli {

void print_error(const std::string& line) noexcept {
  std::fputs(line.c_str(), stderr);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

int finish_output(const std::string& program, int rc) {
  std::cout.flush();
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout.good();
  if (!failed) return rc;
  const int err = errno;
  print_error(program + ": error: cannot write to standard output" + (err != 0 ? std::string(": ") + std::strerror(err) : ""));
  return 1;
}

}  // namespace april::cli
