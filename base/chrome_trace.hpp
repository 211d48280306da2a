#pragma once
// Chrome's trace-event format, the JSON that Perfetto (ui.perfetto.dev) and
// chrome://tracing open ("Trace Event Format", Google, 2016:
// docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU).
// A trace is {"traceEvents": [...]}; each event has a phase `ph` (X: a span
// with `dur`, i: an instant, C: counter values, M: a process or thread
// name), a time `ts` and a process `pid` and thread `tid`. Times are in
// microseconds; ours are integer nanoseconds, written with three decimals,
// so simulated time maps to the trace exactly.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace april::base {

class ChromeTrace {
 public:
  // Names shown for a process (a track group) and a thread (a track); a
  // process's sort index orders the groups top to bottom.
  void name_process(std::int64_t pid, const std::string& name, std::int64_t sort_index);
  void name_thread(std::int64_t pid, std::int64_t tid, const std::string& name);
  // A span from `start_ns` to `end_ns` (an empty one is kept: an instant
  // that has a length of zero is still an event that happened).
  void span(std::int64_t pid, std::int64_t tid, const std::string& name, std::int64_t start_ns, std::int64_t end_ns,
            nlohmann::json args = nlohmann::json::object());
  // An instant on one thread's track.
  void instant(std::int64_t pid, std::int64_t tid, const std::string& name, std::int64_t at_ns,
               nlohmann::json args = nlohmann::json::object());
  // Counter values (one series per key of `series`) from `at_ns` on.
  void counter(std::int64_t pid, const std::string& name, std::int64_t at_ns, nlohmann::json series);

  [[nodiscard]] std::size_t events() const { return events_.size(); }
  // The whole trace as JSON text, events in the order they were added.
  [[nodiscard]] std::string text() const;

  // "1234.567": nanoseconds as the format's microseconds, exactly.
  static std::string microseconds(std::int64_t ns);

 private:
  struct Event {
    char phase;
    std::int64_t pid, tid, ts_ns, dur_ns;
    std::string name;
    nlohmann::json args;
  };
  std::vector<Event> events_;
};

}  // namespace april::base
