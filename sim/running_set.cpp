#include "sim/running_set.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "base/cache_lines.hpp"

namespace april::sim {

void RunningSet::set_version(std::int64_t version) {
  if (!marks_.empty() && marks_.back().version == version) return;
  if (!marks_.empty() && marks_.back().clock == clock_) {
    marks_.back().version = version;  // nothing ran under the mark it replaces
    if (marks_.size() >= 2 && marks_[marks_.size() - 2].version == version) marks_.pop_back();
    return;
  }
  marks_.push_back({clock_, version});
}

std::int64_t RunningSet::finish_clock(const RunningRequest& r) { return r.base_clock + r.feed_tok + (r.stop_at_tok - r.generated_tok); }

void RunningSet::admit(Request r) {
  // The heap entry packs both; a set this large or this long-lived is past any engine's.
  if (slots_.size() > FinishEntry::kSlotMask) throw std::length_error("an engine's running set holds more than 2^24 requests");
  RunningRequest c;
  c.key = r.req.key;
  c.touched_on_finish = r.req.touched_on_finish;
  c.base_clock = clock_;
  c.prompt_tok = r.req.prompt_tok;
  c.generated_tok = r.req.generated_tok;
  c.stop_at_tok = r.req.stop_at_tok;
  c.predicted_end_tok = r.req.predicted_end_tok;
  c.submitted_tok = r.submitted_tok;
  c.feed_tok = r.feed_tok;
  c.held_kv_tok = r.held_kv_tok;
  c.stop_is_max_new = r.req.stop_is_max_new ? 1 : 0;
  // cached_tok is spent: the engine prefilled the rest at this admission,
  // and a request that leaves running keeps none (its KV stays behind).
  const std::int64_t finish = finish_clock(c);
  if (finish >= FinishEntry::kMaxClock) throw std::length_error("an engine ran past 2^40 - 1 iterations");
  if (!r.by_version.empty()) {
    if (earlier_free_.empty()) {
      if (earlier_.size() >= (std::size_t{1} << 31) - 1) throw std::length_error("an engine holds more than 2^31 preempted requests");
      earlier_.emplace_back();
      earlier_free_.push_back(static_cast<std::uint32_t>(earlier_.size() - 1));
    }
    const std::uint32_t at = earlier_free_.back();
    earlier_free_.pop_back();
    earlier_[at] = std::move(r.by_version);
    c.earlier = (at + 1) & 0x7fffffffU;  // at < 2^31 - 1, checked above
  }
  if (c.predicted_end_tok > 0) predicted_.add(prediction_start(c), prediction_end(c));
  const Finish f = Finish::of(finish, slots_.size());
  finishes_.push(f);
  slot_finish_.push_back(f.packed);
  slots_.push_back(c);
  ++live_;
}

std::int64_t RunningSet::iterations_to_next_finish() {
  drop_stale_finishes();
  if (finishes_.empty()) throw std::logic_error("no running request to finish");
  return finishes_.top().clock() - clock_;
}

void RunningSet::drop_stale_finishes() {
  // Only a preempted request leaves its finish behind: without one, the top is live.
  while (stale_finishes_ > 0 && !finishes_.empty() && !is_live(finishes_.top())) {
    finishes_.pop();
    --stale_finishes_;
  }
}

bool RunningSet::is_live(const Finish& f) const {
  // A slot past the end, dead, or holding a later admission's entry means it has left.
  const std::size_t slot = f.slot();
  return slot < slot_finish_.size() && slot_finish_[slot] == f.packed;
}

std::array<std::uintptr_t, 5> RunningSet::next_finish_addresses() const {
  if (finishes_.empty()) return {};
  const Finish& f = finishes_.top();
  // Integer arithmetic: a stale top's slot may lie past the vectors' ends, and a hint is never read through.
  const std::size_t slot = f.slot();
  // What the submitter reads is in the request's first line, asked for at
  // the pops (take_finished). A stale top's slot holds another request, or
  // a dead one: its lines are a wasted fetch, never a wrong result.
  const auto touched = slot < slots_.size() ? slots_[slot].touched_on_finish : std::array<std::uintptr_t, 2>{};
  // The top and its children's line, which the pop reads first.
  return {base::cache_lines(reinterpret_cast<std::uintptr_t>(&f), sizeof(Finish) * (1 + FinishHeap::kArity)),
          base::cache_lines(reinterpret_cast<std::uintptr_t>(slot_finish_.data()) + slot * sizeof(std::uint64_t), sizeof(std::uint64_t)),
          base::cache_lines(reinterpret_cast<std::uintptr_t>(slots_.data()) + slot * sizeof(RunningRequest), sizeof(RunningRequest)),
          touched[0], touched[1]};
}

void RunningSet::take_finished(std::vector<Request>& out) {
  drop_stale_finishes();
  finished_.clear();
  while (!finishes_.empty() && finishes_.top().clock() <= clock_) {
    const Finish f = finishes_.top();
    if (stale_finishes_ == 0 || is_live(f)) {
      finished_.push_back(f);
      slot_finish_[f.slot()] = kDead;  // a stale twin of it, popped next, is then told apart
    } else {
      --stale_finishes_;
    }
    finishes_.pop();
  }
  // The next finish's request, whose hint the engine reads when it
  // schedules its next boundary (next_finish_addresses).
  if (!finishes_.empty() && finishes_.top().slot() < slots_.size()) {
    base::prefetch_lines(base::cache_lines_of(&slots_[finishes_.top().slot()]));
  }
  // Admission order: slots are in it.
  std::sort(finished_.begin(), finished_.end(), [](const Finish& a, const Finish& b) { return a.slot() < b.slot(); });
  for (const Finish& f : finished_) {
    out.push_back(take_out(f.slot()));
    --live_;
    ++dead_;
  }
  if (dead_ > 64 && dead_ > live_) compact();
}

RunningSet::Request RunningSet::take_newest() {
  while (!slots_.empty() && slot_finish_.back() == kDead) {
    slots_.pop_back();
    slot_finish_.pop_back();
    --dead_;
  }
  if (slots_.empty()) throw std::logic_error("no running request to take");
  Request r = take_out(slots_.size() - 1);
  slots_.pop_back();
  slot_finish_.pop_back();
  --live_;
  ++stale_finishes_;  // its finish stays in the heap until it surfaces
  // A KV-starved engine preempts and readmits its newest request every few
  // iterations, each time leaving a finish that surfaces only at the
  // request's old end: the heap would grow by one per preemption. Past as
  // many stale entries as live ones it is rebuilt from the live requests
  // (amortized O(1) per preemption; the order of equal finishes is the
  // same, by admission number).
  if (stale_finishes_ > live_ + 64) rebuild_finishes();
  return r;
}

void RunningSet::rebuild_finishes() {
  finishes_.clear();
  for (const std::uint64_t packed : slot_finish_) {
    if (packed != kDead) finishes_.add_unordered(Finish{packed});
  }
  finishes_.heapify();
  stale_finishes_ = 0;
}

std::vector<RunningSet::Request> RunningSet::take_all() {
  std::vector<Request> out;
  out.reserve(live_);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slot_finish_[i] != kDead) out.push_back(take_out(i));
  }
  slots_.clear();
  slot_finish_.clear();
  live_ = dead_ = 0;
  finishes_.clear();
  stale_finishes_ = 0;
  return out;
}

void RunningSet::compact() {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slot_finish_[i] == kDead) continue;
    slots_[kept] = slots_[i];
    slot_finish_[kept] = Finish::of(finish_clock(slots_[kept]), kept).packed;
    ++kept;
  }
  slots_.resize(kept);
  slot_finish_.resize(kept);
  dead_ = 0;
  rebuild_finishes();  // the slots moved (stale entries go with the old heap)
}

std::int64_t RunningSet::feed_now(const RunningRequest& r) const {
  return r.feed_tok - std::min<std::int64_t>(clock_ - r.base_clock, r.feed_tok);
}

std::int64_t RunningSet::prediction_start(const RunningRequest& r) { return r.base_clock + r.feed_tok; }

std::int64_t RunningSet::prediction_end(const RunningRequest& r) {
  return static_cast<std::int64_t>(r.predicted_end_tok) - r.generated_tok + prediction_start(r);
}

std::int64_t RunningSet::generated_now(const RunningRequest& r) const {
  const std::int64_t elapsed = clock_ - r.base_clock;
  return r.generated_tok + (elapsed - std::min<std::int64_t>(elapsed, r.feed_tok));
}

RunningSet::Request RunningSet::take_out(std::size_t slot) {
  RunningRequest& c = slots_[slot];
  slot_finish_[slot] = kDead;
  if (c.predicted_end_tok > 0) predicted_.remove(prediction_start(c), prediction_end(c));
  Request r;
  r.req.key = c.key;
  r.req.prompt_tok = c.prompt_tok;
  r.req.stop_at_tok = c.stop_at_tok;
  r.req.predicted_end_tok = c.predicted_end_tok;
  r.req.stop_is_max_new = c.stop_is_max_new != 0;
  r.req.touched_on_finish = c.touched_on_finish;
  r.submitted_tok = c.submitted_tok;
  if (c.earlier != 0) {
    r.by_version = std::move(earlier_[c.earlier - 1]);
    earlier_free_.push_back(c.earlier - 1);
    c.earlier = 0;
  }
  const std::int64_t elapsed = clock_ - c.base_clock;
  const std::int64_t fed = std::min<std::int64_t>(elapsed, c.feed_tok);
  // New tokens over clock [from, clock_), each under the version its iteration ran with.
  const std::int64_t from = c.base_clock + fed;
  if (from < clock_) {
    auto m = std::upper_bound(marks_.begin(), marks_.end(), from, [](std::int64_t at, const VersionMark& v) { return at < v.clock; });
    if (m == marks_.begin()) throw std::logic_error("tokens before the first version mark");
    --m;
    for (std::int64_t at = from; at < clock_; ++m) {
      const std::int64_t end = (m + 1 == marks_.end()) ? clock_ : std::min(clock_, (m + 1)->clock);
      const auto tokens = static_cast<std::int32_t>(end - at);
      if (tokens > 0) {
        if (!r.by_version.empty() && r.by_version.back().version == m->version) {
          r.by_version.back().tokens += tokens;
        } else {
          r.by_version.push_back({m->version, tokens});
        }
      }
      at = end;
    }
  }
  r.req.generated_tok = static_cast<std::int32_t>(c.generated_tok + (elapsed - fed));
  r.feed_tok = static_cast<std::int32_t>(c.feed_tok - fed);
  r.held_kv_tok = static_cast<std::int32_t>(c.held_kv_tok + elapsed);
  return r;
}

}  // namespace april::sim
