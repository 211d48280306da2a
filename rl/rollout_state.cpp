#include "rl/rollout_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "base/cache_lines.hpp"

namespace april::rl {

using policies::GroupId;

RolloutGroup& RolloutState::group(GroupId id) {
  RolloutGroup* g = groups.find(id);
  if (g == nullptr) throw std::logic_error(fmt::format("policy named unknown group {}", id));
  return *g;
}

const RolloutGroup& RolloutState::group(GroupId id) const {
  const RolloutGroup* g = groups.find(id);
  if (g == nullptr) throw std::logic_error(fmt::format("unknown group {}", id));
  return *g;
}

RolloutSample& RolloutState::sample(SampleKey key) { return group(key_group(key)).samples.at(static_cast<std::size_t>(key_index(key))); }

policies::GroupInfo RolloutState::info(GroupId id) const {
  const RolloutGroup& g = group(id);
  policies::GroupInfo out;
  out.id = id;
  out.samples = static_cast<std::int32_t>(g.samples.size());
  out.finished_samples = g.finished;
  out.complete = g.finished == out.samples;
  for (const auto& s : g.samples) {
    out.generated_tok += s.generated_tok;
    for (const auto& seg : s.segments) {
      if (out.oldest_version < 0 || seg.version < out.oldest_version) out.oldest_version = seg.version;
      if (seg.version < version) out.offpolicy_tok += seg.tokens;
    }
  }
  return out;
}

void RolloutState::prefetch_group(GroupId id) const {
  base::prefetch_lines(base::cache_lines(groups.slot_address(id), RolloutGroup::kHotBytes));
}

void RolloutState::prefetch_samples(GroupId id) const {
  const RolloutGroup* g = groups.find(id);
  if (g == nullptr || g->samples.empty()) return;
  base::prefetch_lines(base::cache_lines_of_span(g->samples.data(), g->samples.size()));
}

void RolloutState::prefetch_sample(SampleKey key) const {
  const RolloutGroup* g = groups.find(key_group(key));
  const auto index = static_cast<std::size_t>(key_index(key));
  if (g == nullptr || index >= g->samples.size()) return;
  base::prefetch_lines(base::cache_lines_of(&g->samples[index]));
}

std::int64_t RolloutState::group_tokens(const RolloutGroup& g) {
  std::int64_t n = 0;
  for (const auto& s : g.samples) n += s.generated_tok;
  return n;
}

std::int64_t RolloutState::counted_held_tok() const {
  std::int64_t n = 0;
  groups.for_each([&](const RolloutGroup& g) { n += group_tokens(g); });
  return n;
}

void RolloutState::add_progress(RolloutSample& s, const SampleProgress& p) {
  if (p.by_version.empty()) return add_tokens(s, p.new_tok, version);
  std::int64_t sum = 0;
  for (const auto& [v, tokens] : p.by_version) {
    if (v > version) throw std::logic_error(fmt::format("backend reported tokens of version {} while rolling out {}", v, version));
    add_tokens(s, tokens, v);
    sum += tokens;
  }
  if (sum != p.new_tok) throw std::logic_error("backend's tokens by version do not add up to its progress");
}

void RolloutState::add_tokens(RolloutSample& s, std::int32_t new_tok, std::int64_t v) {
  if (new_tok < 0) throw std::logic_error("backend reported negative progress");
  if (new_tok == 0) return;
  s.generated_tok += new_tok;
  if (s.generated_tok > max_response_len) throw std::logic_error("a sample generated past max_response_len");
  if (!s.segments.empty() && s.segments.back().version == v) {
    s.segments.back().tokens += new_tok;
  } else {
    s.segments.push_back({v, new_tok});
  }
  total_generated += new_tok;
  metrics->tokens_generated += new_tok;
}

void RolloutState::take_back(const SampleProgress& p) {
  RolloutSample& s = sample(p.key);
  add_progress(s, p);
  s.in_flight = false;
  s.chunk_ended = false;
  --in_flight_samples;
}

void RolloutState::discard_tokens(RolloutGroup& g) {
  const std::int64_t n = group_tokens(g);
  total_wasted += n;
  metrics->tokens_wasted += n;
  for (auto& s : g.samples) {
    s.generated_tok = 0;
    s.segments.clear();
    s.finished = false;
  }
  g.finished = 0;
}

void RolloutState::drop_held(RolloutGroup& g) {
  for (auto& s : g.samples) {
    if (!s.held) continue;
    s.held = false;
    s.in_flight = false;
    s.chunk_ended = false;
    --held_samples;
    --in_flight_samples;
  }
}

bool RolloutState::filter_rejects(const RolloutGroup& g) const {
  if (!dynamic_sampling_filter || g.correct.empty()) return false;
  const bool all_same = std::all_of(g.correct.begin(), g.correct.end(), [&](std::uint8_t c) { return c == g.correct.front(); });
  return all_same;  // DAPO: all right or all wrong gives zero advantage
}

bool RolloutState::end_chunk(const SampleProgress& p) {
  RolloutSample& s = sample(p.key);
  if (!s.in_flight || s.held) throw std::logic_error("backend finished a sample that is not in flight");
  if (s.generated_tok + p.new_tok >= max_response_len) return false;
  add_progress(s, p);
  s.held = true;
  s.chunk_ended = true;
  ++held_samples;
  return true;
}

bool RolloutState::finish_sample(RolloutGroup& g, RolloutSample& s, const SampleProgress& p) {
  add_progress(s, p);
  s.in_flight = false;
  s.chunk_ended = false;
  s.finished = true;
  --in_flight_samples;
  if (s.target_tok > max_response_len) ++metrics->samples_truncated;
  return ++g.finished == static_cast<std::int32_t>(g.samples.size());
}

void RolloutState::record_finished(const std::vector<SampleProgress>& finished) {
  // Groups completing at one instant are counted in submission order,
  // whichever engines their samples ran on (docs/design.md section 3).
  const std::size_t first_new = completed_pending.size();
  for (const SampleProgress& p : finished) {
    RolloutGroup& g = group(key_group(p.key));
    RolloutSample& s = g.samples.at(static_cast<std::size_t>(key_index(p.key)));
    if (!s.in_flight || s.held) throw std::logic_error("backend finished a sample that is not in flight");
    if (finish_sample(g, s, p)) {
      g.in_flight = false;
      --in_flight_groups;
      completed_pending.push_back(g.id);
    }
  }
  std::sort(completed_pending.begin() + static_cast<std::ptrdiff_t>(first_new), completed_pending.end(),
            [this](GroupId a, GroupId b) { return group(a).submit_seq < group(b).submit_seq; });
}

TakenBatch RolloutState::take_batch(const std::vector<GroupId>& batch, StepMetrics& m, std::int64_t trained_version,
                                    std::int64_t mask_above) {
  TakenBatch out;
  std::int64_t trained = 0, masked = 0;
  out.samples.reserve(batch.size() * (batch.empty() ? 0 : group(batch.front()).samples.size()));
  out.ids.reserve(batch.size());
  for_each_group_fetched_ahead(batch, [&](GroupId id) {
    RolloutGroup& g = group(id);
    out.ids.emplace_back(id, g.prompt_id);
    m.batch_ready_s = std::max(m.batch_ready_s, g.accepted_s);
    for (std::size_t i = 0; i < g.samples.size(); ++i) {
      const RolloutSample& s = g.samples[i];
      TrainSample ts{make_sample_key(id, static_cast<std::int32_t>(i)), g.prompt_tok, s.generated_tok, 0, {}};
      for (const Segment& seg : s.segments) {
        ts.segments.emplace_back(seg.version, seg.tokens);
        const std::int64_t staleness = trained_version - seg.version;
        m.batch_response_tok += seg.tokens;
        m.staleness_token_sum += static_cast<double>(staleness * seg.tokens);
        m.staleness_max = std::max(m.staleness_max, staleness);
        if (staleness >= 1) m.tokens_offpolicy += seg.tokens;
        if (mask_above >= 0 && staleness > mask_above) ts.masked_tok += seg.tokens;
      }
      trained += s.generated_tok - ts.masked_tok;
      masked += ts.masked_tok;
      out.samples.push_back(ts);
    }
  });
  m.tokens_trained += trained;
  m.tokens_masked += masked;
  total_trained += trained;
  total_masked += masked;
  return out;
}

}  // namespace april::rl
