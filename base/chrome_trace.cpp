#include "base/chrome_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace april::base {

void ChromeTrace::name_process(std::int64_t pid, const std::string& name, std::int64_t sort_index) {
  events_.push_back({'M', pid, 0, 0, 0, "process_name", {{"name", name}}});
  events_.push_back({'M', pid, 0, 0, 0, "process_sort_index", {{"sort_index", sort_index}}});
}

void ChromeTrace::name_thread(std::int64_t pid, std::int64_t tid, const std::string& name) {
  events_.push_back({'M', pid, tid, 0, 0, "thread_name", {{"name", name}}});
}

void ChromeTrace::span(std::int64_t pid, std::int64_t tid, const std::string& name, std::int64_t start_ns, std::int64_t end_ns,
                       nlohmann::json args) {
  events_.push_back({'X', pid, tid, start_ns, std::max<std::int64_t>(0, end_ns - start_ns), name, std::move(args)});
}

void ChromeTrace::instant(std::int64_t pid, std::int64_t tid, const std::string& name, std::int64_t at_ns, nlohmann::json args) {
  events_.push_back({'i', pid, tid, at_ns, 0, name, std::move(args)});
}

void ChromeTrace::counter(std::int64_t pid, const std::string& name, std::int64_t at_ns, nlohmann::json series) {
  events_.push_back({'C', pid, 0, at_ns, 0, name, std::move(series)});
}

std::string ChromeTrace::microseconds(std::int64_t ns) {
  const std::int64_t whole = ns / 1000, frac = std::llabs(ns % 1000);
  if (ns < 0 && whole == 0) return fmt::format("-0.{:03}", frac);
  return fmt::format("{}.{:03}", whole, frac);
}

std::string ChromeTrace::text() const {
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  for (std::size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    out += fmt::format("{{\"ph\": \"{}\", \"name\": {}, \"pid\": {}, \"tid\": {}", e.phase, nlohmann::json(e.name).dump(), e.pid, e.tid);
    if (e.phase != 'M') out += fmt::format(", \"ts\": {}", microseconds(e.ts_ns));
    if (e.phase == 'X') out += fmt::format(", \"dur\": {}", microseconds(e.dur_ns));
    if (e.phase == 'i') out += ", \"s\": \"t\"";  // scope: the thread's track
    if (!e.args.empty()) out.append(", \"args\": ").append(e.args.dump());
    out += i + 1 < events_.size() ? "},\n" : "}\n";
  }
  out += "]}\n";
  return out;
}

}  // namespace april::base
