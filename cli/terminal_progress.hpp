#pragma once
// A one-line progress report on stderr for work that takes more than a
// moment: "simulate: 120/350 steps (sorted), 3 s elapsed, ETA 6 s". Drawn
// only when stderr is a terminal, and only once the work has run for
// kQuietFor_s (a command that finishes at once prints nothing extra); not on
// a terminal (a pipe, a log, CI) it prints nothing. The line is erased when
// the work ends, so the program's own output follows undisturbed.
#include <chrono>
#include <cstdint>
#include <string>

namespace april::cli {

class TerminalProgress {
 public:
  // `what` names the work ("simulate"), `unit` what `total` counts ("steps").
  TerminalProgress(std::string what, std::string unit, std::int64_t total);
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;
  ~TerminalProgress();

  // `done` units of `total` are done; `label` says what runs now (may be empty).
  void update(std::int64_t done, const std::string& label = "");
  // More work than first counted (a search that found more candidates).
  void add_to_total(std::int64_t more) { total_ += more; }
  // For scenario::RunOptions::on_step over runs made one after another: run
  // `label` has done `done` of its `run_total` steps, after the runs before it.
  void run_step(std::int64_t done, std::int64_t run_total, const std::string& label);
  // Erases the line (idempotent).
  void finish();

  static constexpr double kQuietFor_s = 1.0;
  // The line drawn for these figures (no terminal codes): what update() shows.
  static std::string line(const std::string& what, const std::string& unit, std::int64_t done, std::int64_t total, const std::string& label,
                          double elapsed_s);

 private:
  std::string what_, unit_;
  std::int64_t total_ = 0;
  std::int64_t earlier_runs_done_ = 0;  // run_step: the steps of the runs that ended
  bool terminal_ = false;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace april::cli
