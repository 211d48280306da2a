#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace april::cli {

ProgressPrinter::ProgressPrinter() : tty_(isatty(fileno(stderr)) != 0) {}

// Progress goes to stderr with stdio calls that report failure by return
// value: an unwritable stderr must not end a sweep.
void ProgressPrinter::operator()(const studies::BatchProgress& p) {
  const double done = p.total > 0 ? static_cast<double>(p.finished) / static_cast<double>(p.total) : 1.0;
  const auto ran = p.finished - p.skipped;
  const double eta = ran > 0 ? p.elapsed_s / static_cast<double>(ran) * static_cast<double>(p.total - p.finished) : 0.0;
  if (tty_) {
    const int width = 30;
    const int fill = static_cast<int>(done * width);
    std::fputs(fmt::format("\r[{}{}] {}/{} runs, {} skipped, {} failed, ETA {:.0f} s   ", std::string(static_cast<std::size_t>(fill), '#'),
                           std::string(static_cast<std::size_t>(width - fill), '.'), p.finished, p.total, p.skipped, p.failed, eta)
                   .c_str(),
               stderr);
    drawn_ = true;
    std::fflush(stderr);
  }
  // Not on a terminal (a pipe, a log, CI): quiet; the summary line says what ran.
}

void ProgressPrinter::finish() {
  if (tty_ && drawn_) std::fputc('\n', stderr);
}

}  // namespace april::cli
