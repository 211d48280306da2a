#include "cli/terminal_progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace april::cli {

namespace {

// How often the line is redrawn at most: often enough to look alive, rarely
// enough to cost nothing beside a simulation step.
constexpr double kRedrawEvery_s = 0.2;

std::string duration_text(double s) {
  const auto whole = static_cast<std::int64_t>(std::llround(std::max(0.0, s)));
  if (whole < 60) return fmt::format("{} s", whole);
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m", whole / 3600, whole / 60 % 60);
}

}  // namespace

TerminalProgress::TerminalProgress(std::string what, std::string unit, std::int64_t total)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      terminal_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

TerminalProgress::~TerminalProgress() { finish(); }

std::string TerminalProgress::line(const std::string& what, const std::string& unit, std::int64_t done, std::int64_t total,
                                   const std::string& label, double elapsed_s) {
  std::string text = fmt::format("{}: {}/{} {}", what, done, total, unit);
  if (!label.empty()) text += fmt::format(" ({})", label);
  text += fmt::format(", {} elapsed", duration_text(elapsed_s));
  // The estimate assumes the remaining units cost what the done ones did.
  if (done > 0 && done < total) {
    text += fmt::format(", ETA {}", duration_text(elapsed_s / static_cast<double>(done) * static_cast<double>(total - done)));
  }
  return text;
}

// stdio calls that report failure by return value: an unwritable stderr must
// not end the work.
void TerminalProgress::update(std::int64_t done, const std::string& label) {
  if (!terminal_) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < kQuietFor_s) return;
  if (drawn_ && std::chrono::duration<double>(now - last_draw_).count() < kRedrawEvery_s) return;
  last_draw_ = now;
  // \r to the line's start, \x1b[K (ANSI: erase to the end of the line).
  std::string text = "\r";
  text.append(line(what_, unit_, done, total_, label, elapsed)).append("\x1b[K");
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

void TerminalProgress::run_step(std::int64_t done, std::int64_t run_total, const std::string& label) {
  update(earlier_runs_done_ + done, label);
  if (done == run_total) earlier_runs_done_ += run_total;
}

void TerminalProgress::finish() {
  if (!drawn_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace april::cli
