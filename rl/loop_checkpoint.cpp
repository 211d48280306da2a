#include "rl/loop_checkpoint.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <utility>

#include <stdexcept>

#include "rl/rl_loop.hpp"
#include "rl/step_driver.hpp"

namespace april::rl {

using policies::GroupId;

nlohmann::json group_json(const RolloutGroup& g) {
  nlohmann::json gj;
  gj["id"] = g.id;
  gj["prompt_id"] = g.prompt_id;
  gj["prompt_tok"] = g.prompt_tok;
  gj["correct"] = g.correct;
  gj["submit_seq"] = g.submit_seq;
  gj["samples"] = nlohmann::json::array();
  for (const auto& smp : g.samples) {
    nlohmann::json sj;
    sj["target_tok"] = smp.target_tok;
    sj["finished"] = smp.finished;
    sj["segments"] = nlohmann::json::array();
    for (const auto& seg : smp.segments) sj["segments"].push_back({seg.version, seg.tokens});
    gj["samples"].push_back(sj);
  }
  return gj;
}

RolloutGroup group_from_json(const base::JsonValue& gj) {
  constexpr std::int64_t kMaxTok = std::int64_t{1} << 30;
  RolloutGroup g;
  g.id = gj.at("id").integer(0, std::int64_t{1} << 43);  // SampleKey keeps 44 bits for the group
  g.prompt_id = gj.at("prompt_id").string();
  g.prompt_tok = static_cast<std::int32_t>(gj.at("prompt_tok").integer(0, kMaxTok));
  for (const auto& c : gj.at("correct").elements()) g.correct.push_back(static_cast<std::uint8_t>(c.integer(0, 1)));
  if (const auto seq = gj.find("submit_seq")) g.submit_seq = seq->integer(0, INT64_MAX);
  for (const auto& sj : gj.at("samples").elements()) {
    RolloutSample smp;
    smp.target_tok = static_cast<std::int32_t>(sj.at("target_tok").integer(0, kMaxTok));
    smp.finished = sj.at("finished").boolean();
    for (const auto& seg : sj.at("segments").elements()) {
      const auto parts = seg.elements();
      if (parts.size() != 2) seg.fail("a segment is [version, tokens]");
      smp.segments.push_back({parts[0].integer(0, INT64_MAX), static_cast<std::int32_t>(parts[1].integer(0, kMaxTok))});
      smp.generated_tok += smp.segments.back().tokens;
    }
    if (smp.finished) ++g.finished;
    g.samples.push_back(std::move(smp));
  }
  if (g.samples.empty() || g.samples.size() > 0xfffffU) gj.at("samples").fail("a group holds 1 to 1M samples");
  return g;
}

RolloutGroup& hold_group_from_json(RolloutState& st, const base::JsonValue& j) {
  RolloutGroup g = group_from_json(j);
  const base::JsonValue id = j.at("id");
  if (st.groups.find(g.id) != nullptr) id.fail(fmt::format("group {} is in the checkpoint twice", g.id));
  if (!st.groups.fits(g.id)) {
    id.fail(fmt::format("group {} is more than {} ids from the others held with it; april never holds groups so far apart", g.id,
                        GroupStore<RolloutGroup>::kMaxSpan));
  }
  return st.groups.emplace(std::move(g));
}

namespace {

// The counts of a step in progress that a checkpoint keeps, written and read
// from this one list.
constexpr std::pair<const char*, std::int64_t StepMetrics::*> kWindowCounts[] = {
    {"tokens_generated", &StepMetrics::tokens_generated},  {"batch_response_tok", &StepMetrics::batch_response_tok},
    {"tokens_trained", &StepMetrics::tokens_trained},      {"tokens_offpolicy", &StepMetrics::tokens_offpolicy},
    {"tokens_wasted", &StepMetrics::tokens_wasted},        {"tokens_masked", &StepMetrics::tokens_masked},
    {"tokens_carried", &StepMetrics::tokens_carried},      {"staleness_max", &StepMetrics::staleness_max},
    {"groups_submitted", &StepMetrics::groups_submitted},  {"groups_rejected", &StepMetrics::groups_rejected},
    {"samples_truncated", &StepMetrics::samples_truncated}};

}  // namespace

nlohmann::json window_counts_json(const StepMetrics& w) {
  nlohmann::json j = {{"staleness_token_sum", w.staleness_token_sum}};
  for (const auto& [name, field] : kWindowCounts) j[name] = w.*field;
  return j;
}

void load_window_counts(const base::JsonValue& w, StepMetrics& m) {
  for (const auto& [name, field] : kWindowCounts) m.*field = w.at(name).integer(0, INT64_MAX);
  m.staleness_token_sum = w.at("staleness_token_sum").number(0, 1e300);
}

nlohmann::json RlLoop::save_state() const {
  driver_->check_can_save();
  nlohmann::json j;
  j["version"] = state_.version;
  j["next_group_id"] = state_.next_group_id;
  j["total_generated_tok"] = state_.total_generated;
  j["total_trained_tok"] = state_.total_trained;
  j["total_wasted_tok"] = state_.total_wasted;
  j["total_masked_tok"] = state_.total_masked;
  j["buffer"] = nlohmann::json::array();
  for (GroupId id : state_.buffer) j["buffer"].push_back(group_json(state_.group(id)));
  if (auto overlapped = driver_->save()) j["overlapped"] = std::move(*overlapped);
  return j;
}

void RlLoop::load_state(const nlohmann::json& j) { load_state(base::JsonValue(j, "loop state")); }

void RlLoop::load_state(const base::JsonValue& j) {
  if (state_.metrics != nullptr) throw std::logic_error("load_state during a rollout phase");
  driver_->check_kind(j.has("overlapped"));
  const auto count = [&](const char* key) { return j.at(key).integer(0, INT64_MAX); };
  state_.version = count("version");
  state_.next_group_id = count("next_group_id");
  state_.total_generated = count("total_generated_tok");
  state_.total_trained = count("total_trained_tok");
  state_.total_wasted = count("total_wasted_tok");
  // A checkpoint from before masked tokens were counted apart has none.
  const auto masked = j.find("total_masked_tok");
  state_.total_masked = masked ? masked->integer(0, INT64_MAX) : 0;
  state_.groups.clear();
  state_.buffer.clear();
  for (const auto& gj : j.at("buffer").elements()) {
    state_.buffer.push_back(hold_group_from_json(state_, gj).id);
  }
  if (j.has("overlapped")) driver_->load(j.at("overlapped"));
  // The step metrics read the held tokens from the accounts
  // (RolloutState::held_tok): they must add up to what the groups hold.
  // All are at least 0: each step below stays in range.
  std::int64_t rest = state_.total_generated;
  bool adds_up = true;
  for (const std::int64_t part : {state_.total_trained, state_.total_masked, state_.total_wasted}) {
    adds_up = adds_up && part <= rest;
    if (adds_up) rest -= part;
  }
  if (!adds_up || rest != state_.counted_held_tok()) {
    j.at("total_generated_tok")
        .fail(fmt::format("{} generated tokens are not trained ({}) + masked ({}) + wasted ({}) + held in its groups ({})",
                          state_.total_generated, state_.total_trained, state_.total_masked, state_.total_wasted,
                          state_.counted_held_tok()));
  }
}

}  // namespace april::rl
