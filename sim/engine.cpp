#include "sim/engine.hpp"

#include <cmath>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "base/cache_lines.hpp"

namespace april::sim {

Engine::Engine(std::size_t index, Simulator& sim, const IterationModel& model, EngineConfig config, EngineListener& listener)
    : index_(index), sim_(sim), model_(model), config_(config), listener_(listener) {
  if (config_.kv_capacity_tok <= 0) throw std::invalid_argument("engine KV capacity must be positive");
}

void Engine::submit(const EngineRequest& request) {
  Request r;
  r.req = request;
  r.submitted_tok = request.generated_tok;
  enqueue(std::move(r));
}

void Engine::adopt(EngineRequestState moved) {
  Request r;
  r.req = moved.req;
  r.req.cached_tok = 0;  // its KV stayed behind: prompt and tokens are prefilled here
  r.submitted_tok = moved.submitted_tok;
  r.by_version = std::move(moved.by_version);
  enqueue(std::move(r));
}

void Engine::enqueue(Request r) {
  const EngineRequest& request = r.req;
  if (request.stop_at_tok <= request.generated_tok) throw std::logic_error("submitted a request with nothing to generate");
  if (request.prompt_tok + static_cast<std::int64_t>(request.stop_at_tok) > config_.kv_capacity_tok) {
    throw std::invalid_argument("a request does not fit in the engine's KV capacity");
  }
  if (request.prompt_tok + static_cast<std::int64_t>(request.stop_at_tok) > INT32_MAX) {
    throw std::invalid_argument("a request's context (prompt + response) exceeds 2^31 - 1 tokens");
  }
  waiting_predicted_tok_ += waiting_work_tok(r);
  waiting_.push_back(std::move(r));
  if (busy_) {
    // The new request joins at the first iteration boundary after now
    // (per-iteration stepping would admit it there).
    cut_at_next_boundary();
  } else if (!kick_pending_ && !paused_) {
    // Start after the caller has submitted everything for this instant.
    kick_pending_ = true;
    kick_event_ = sim_.schedule_at(
        sim_.now(), engine_event_tag(kTagEngineKick, index_), [this] { kick(); }, segment_end_hint());
  }
}

std::int64_t Engine::waiting_work_tok(const Request& r) {
  return r.req.predicted_end_tok > 0 ? std::max<std::int64_t>(1, r.req.predicted_end_tok - r.req.generated_tok) : 0;
}

std::int64_t Engine::predicted_outstanding_tok() {
  // A running request's count is the running set's (its clock); a waiting one's is its own.
  return running_.predicted_outstanding_tok() + waiting_predicted_tok_;
}

PrefetchHint Engine::segment_end_hint() const {
  // A boundary reads nearly all of this engine (its queues, running set,
  // segment and counters) and, when a request finishes there, that request
  // and its submitter's records.
  const auto next = running_.next_finish_addresses();
  return PrefetchHint{{base::cache_lines_of(this), next[0], next[1], next[2], next[3], next[4]}};
}

void Engine::kick() {
  kick_pending_ = false;
  if (!busy_) boundary();
}

void Engine::cut_at_next_boundary(bool boundary_now_counts) {
  if (!busy_ || !config_.fast_forward || seg_iterations_ <= 1) return;
  const std::int64_t done = iterations_done_by(sim_.now());
  const bool at_boundary = done > 0 && seg_start_ + TimeNs(segment_time_ns(done)) == sim_.now();
  const std::int64_t cut = boundary_now_counts && at_boundary ? done : done + 1;
  if (cut < seg_iterations_) {
    sim_.cancel(seg_event_);
    seg_iterations_ = cut;
    seg_event_ = sim_.schedule_at(
        seg_start_ + TimeNs(segment_time_ns(cut)), engine_event_tag(kTagEngineSegmentEnd, index_), [this] { on_segment_end(); },
        segment_end_hint());
  }
}

void Engine::drop_running_kv() {
  // Back to the queue's front in admission order, KV released: the next
  // admission re-prefills prompt + tokens (counted as prefill).
  auto running = running_.take_all();
  for (auto it = running.rbegin(); it != running.rend(); ++it) {
    resident_kv_tok_ -= it->held_kv_tok;
    it->held_kv_tok = 0;
    it->req.cached_tok = 0;
    it->feed_tok = 0;
    waiting_predicted_tok_ += waiting_work_tok(*it);
    waiting_.push_front(std::move(*it));
  }
  drop_kv_pending_ = false;
}

void Engine::pause(bool stop_at_boundary_now) {
  if (paused_) throw std::logic_error("engine paused twice");
  paused_ = true;
  if (stop_at_boundary_now && busy_ && seg_start_ == sim_.now()) {
    // The iteration starting now has done nothing yet: the engine is at its
    // boundary, so it stops here. Its admissions stay admitted, their
    // prefill not done.
    sim_.cancel(seg_event_);
    busy_ = false;
    counters_.prefill_tok -= seg_counted_prefill_tok_;
  }
  cut_at_next_boundary(stop_at_boundary_now);
  if (kick_pending_) {
    sim_.cancel(kick_event_);
    kick_pending_ = false;
  }
}

void Engine::resume(std::int64_t version, bool drop_kv) {
  if (!paused_) throw std::logic_error("engine resumed without a pause");
  paused_ = false;
  version_ = version;
  if (drop_kv) {
    // An iteration still running (it began before the sync) keeps its KV
    // until it ends; the drop happens at that boundary.
    if (busy_) {
      drop_kv_pending_ = true;
    } else {
      drop_running_kv();
    }
  }
}

void Engine::start_if_idle() {
  if (paused_ || busy_ || kick_pending_ || (running_.empty() && waiting_.empty())) return;
  kick_pending_ = true;
  kick_event_ = sim_.schedule_at(
      sim_.now(), engine_event_tag(kTagEngineKick, index_), [this] { kick(); }, segment_end_hint());
}

TimeNs Engine::busy_until() const { return busy_ ? seg_start_ + TimeNs(segment_time_ns(seg_iterations_)) : sim_.now(); }

std::int64_t Engine::segment_time_ns(std::int64_t iterations) const {
  // Segments with prefill are always a single iteration.
  const std::int64_t ns =
      seg_prefill_tok_ > 0
          ? model_.iteration_ns(IterationShape{seg_batch_, seg_kv0_tok_, seg_prefill_requests_, seg_prefill_tok_, seg_prefill_longest_tok_})
          : model_.decode_window_ns(seg_batch_, seg_kv0_tok_, iterations);
  if (seg_time_factor_ == 1.0) return ns;  // exact: no rounding where nothing slows the engine
  return std::llround(static_cast<double>(ns) * seg_time_factor_);
}

void Engine::set_time_factor(double factor) {
  if (factor == time_factor_) return;
  time_factor_ = factor;
  cut_at_next_boundary();  // the next iteration starts a segment at the new speed
}

std::int64_t Engine::iterations_done_by(TimeNs t) const {
  // Largest d in [0, seg_iterations_] with seg_start + time(d) <= t: time(d)
  // grows with d, so a binary search. A segment's iterations differ little in
  // length, so the bracket starts around the average's guess and widens by
  // doubling until it holds the answer: about four window sums instead of
  // log2(iterations) (every submission to a busy engine asks). Same d as a
  // plain search.
  const std::int64_t budget = (t - seg_start_).ns();
  std::int64_t lo = 0, hi = seg_iterations_;
  const std::int64_t total_ns = segment_time_ns(seg_iterations_);
  if (budget >= total_ns) return seg_iterations_;
  if (total_ns > 0 && seg_iterations_ > 4) {
    const auto guess =
        static_cast<std::int64_t>(static_cast<double>(budget) / static_cast<double>(total_ns) * static_cast<double>(seg_iterations_));
    const std::int64_t g = std::clamp<std::int64_t>(guess, 0, seg_iterations_ - 1);
    if (segment_time_ns(g) <= budget) {
      // time(g) fits: the answer is in [g, hi); widen up from g.
      lo = g;
      for (std::int64_t step = 1; lo + step < hi; step *= 2) {
        if (segment_time_ns(lo + step) > budget) {
          hi = lo + step - 1;
          break;
        }
        lo += step;
      }
    } else {
      // time(g) does not: the answer is in [lo, g - 1]; widen down from g.
      hi = g - 1;
      for (std::int64_t step = 1; hi - step >= lo; step *= 2) {
        if (segment_time_ns(hi - step + 1) <= budget) {
          lo = hi - step + 1;
          break;
        }
        hi -= step;
      }
    }
  } else {
    hi = seg_iterations_ - 1;  // time(seg_iterations_) > budget
  }
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (segment_time_ns(mid) <= budget)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

void Engine::apply_iterations(std::int64_t iterations, TimeNs end) {
  const auto batch = static_cast<std::int64_t>(running_.live());
  std::int64_t fed = 0;  // context tokens fed (per-token prefill), not new tokens
  if (config_.per_token_prefill) {
    running_.for_each_live([&](const RunningRequest& r) { fed += std::min(iterations, running_.feed_now(r)); });
  }
  // Each running request gains a token (or feeds one) per iteration, under
  // the segment's version: the running set's clock carries all of it.
  running_.advance(iterations);
  resident_kv_tok_ += batch * iterations;  // a fed or a new token: one KV entry each
  counters_.iterations += iterations;
  counters_.decoded_tok += batch * iterations - fed;
  const std::int64_t elapsed = (end - seg_start_).ns();
  counters_.busy_ns += elapsed;
  counters_.running_ns += batch * elapsed;
}

void Engine::report_window(std::int64_t iterations, TimeNs end, bool aborted) {
  if (!config_.report_windows) return;
  listener_.on_window(
      index_, EngineWindow{seg_start_, end, iterations, seg_batch_, seg_kv0_tok_, seg_prefill_tok_, seg_prefill_requests_, aborted});
}

void Engine::on_segment_end() {
  report_window(seg_iterations_, sim_.now(), false);
  apply_iterations(seg_iterations_, sim_.now());
  busy_ = false;
  boundary();
}

void Engine::boundary() {
  // 1. Finished requests leave. Notified in admission order, deterministically.
  finished_scratch_.clear();
  running_.take_finished(finished_scratch_);
  for (const auto& r : finished_scratch_) resident_kv_tok_ -= r.held_kv_tok;
  if (paused_) {
    // A sync is on: the iteration that was running has ended; none starts until resume.
    listener_.on_running_changed(index_, sim_.now(), occupancy());
    // Non-const: each finished request's tokens-by-version move to the listener.
    for (auto& r : finished_scratch_) {
      listener_.on_request_finished(index_, r.req.key, r.req.generated_tok - r.submitted_tok, std::move(r.by_version),
                                    r.req.stop_is_max_new);
    }
    return;
  }
  if (drop_kv_pending_) drop_running_kv();

  // 2. Each running request needs room for one more token; else preempt the newest.
  bool preempted = false;
  while (!running_.empty() && resident_kv_tok_ + static_cast<std::int64_t>(running_.live()) > config_.kv_capacity_tok) {
    Request r = running_.take_newest();
    resident_kv_tok_ -= r.held_kv_tok;
    r.req.cached_tok = 0;
    waiting_predicted_tok_ += waiting_work_tok(r);
    waiting_.push_front(std::move(r));
    ++counters_.preemptions;
    preempted = true;
  }

  // 3. Admit from the queue while there is room (not right after a preemption, as vLLM).
  std::int64_t prefill = 0, prefill_requests = 0, prefill_longest = 0;
  if (!preempted) {
    while (!waiting_.empty()) {
      const Request& head = waiting_.front();
      const auto n = static_cast<std::int64_t>(running_.live());
      if (config_.max_running > 0 && n >= config_.max_running) break;
      if (resident_kv_tok_ + context_tok(head) + n + 1 > config_.kv_capacity_tok) break;
      const std::int64_t to_prefill = config_.per_token_prefill ? context_tok(head) : context_tok(head) - head.req.cached_tok;
      prefill += to_prefill;
      ++prefill_requests;
      prefill_longest = std::max(prefill_longest, to_prefill);
      Request r = std::move(waiting_.front());
      waiting_.pop_front();
      waiting_predicted_tok_ -= waiting_work_tok(r);
      // Batched: the prefill writes the whole context's KV now. Per-token:
      // one context token per iteration; the last one fed yields a new token.
      r.feed_tok = config_.per_token_prefill ? static_cast<std::int32_t>(context_tok(r) - 1) : 0;
      r.held_kv_tok = config_.per_token_prefill ? 0 : static_cast<std::int32_t>(context_tok(r));
      resident_kv_tok_ += r.held_kv_tok;
      running_.admit(std::move(r));
    }
  }
  counters_.prefill_tok += prefill;
  seg_counted_prefill_tok_ = prefill;
  if (config_.per_token_prefill) prefill = prefill_requests = prefill_longest = 0;  // no prefill pass
  seg_prefill_tok_ = prefill;
  seg_prefill_requests_ = prefill_requests;
  seg_prefill_longest_tok_ = prefill_longest;
  start_segment();

  for (auto& r : finished_scratch_) {
    listener_.on_request_finished(index_, r.req.key, r.req.generated_tok - r.submitted_tok, std::move(r.by_version), r.req.stop_is_max_new);
  }
}

void Engine::start_segment() {
  listener_.on_running_changed(index_, sim_.now(), occupancy());
  if (running_.empty()) {
    if (!waiting_.empty()) throw std::logic_error("engine stalled: requests wait but none can be admitted");
    return;
  }
  seg_start_ = sim_.now();
  running_.set_version(version_);  // the tokens of this segment's iterations
  seg_time_factor_ = time_factor_;
  seg_batch_ = static_cast<std::int64_t>(running_.live());
  seg_kv0_tok_ = resident_kv_tok_;
  if (seg_prefill_tok_ > 0 || !config_.fast_forward) {
    seg_iterations_ = 1;
  } else {
    const std::int64_t to_finish = running_.iterations_to_next_finish();
    const std::int64_t to_overflow = (config_.kv_capacity_tok - resident_kv_tok_) / seg_batch_;
    seg_iterations_ = std::min(to_finish, to_overflow);
  }
  busy_ = true;
  seg_event_ = sim_.schedule_at(
      seg_start_ + TimeNs(segment_time_ns(seg_iterations_)), engine_event_tag(kTagEngineSegmentEnd, index_), [this] { on_segment_end(); },
      segment_end_hint());
}

std::vector<AbortedRequest> Engine::abort_all() {
  std::vector<AbortedRequest> out;
  for (auto& r : take_all()) out.push_back({r.req.key, r.req.generated_tok - r.submitted_tok, std::move(r.by_version)});
  return out;
}

std::vector<EngineRequestState> Engine::take_all() {
  std::vector<Request> out;
  if (kick_pending_) {
    sim_.cancel(kick_event_);
    kick_pending_ = false;
  }
  if (busy_) {
    sim_.cancel(seg_event_);
    const std::int64_t done = iterations_done_by(sim_.now());
    // A prefill iteration not complete computed nothing that stays: the
    // request prefills again where it goes (as pause(true) counts it).
    if (done == 0) counters_.prefill_tok -= seg_counted_prefill_tok_;
    report_window(done, sim_.now(), true);
    // Tokens of complete iterations count; busy time runs until now.
    apply_iterations(done, seg_start_ + TimeNs(segment_time_ns(done)));
    const std::int64_t tail = (sim_.now() - (seg_start_ + TimeNs(segment_time_ns(done)))).ns();
    counters_.busy_ns += tail;
    counters_.running_ns += static_cast<std::int64_t>(running_.live()) * tail;
    busy_ = false;
  }
  for (auto& r : running_.take_all()) out.push_back(std::move(r));
  waiting_.for_each([&out](Request& r) { out.push_back(std::move(r)); });
  waiting_.clear();
  waiting_predicted_tok_ = 0;
  resident_kv_tok_ = 0;
  listener_.on_running_changed(index_, sim_.now(), occupancy());
  return out;
}

}  // namespace april::sim
