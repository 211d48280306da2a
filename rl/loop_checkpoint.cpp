#include "rl/loop_checkpoint.hpp"

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

RolloutGroup group_from_json(const nlohmann::json& gj) {
  RolloutGroup g;
  g.id = gj.at("id").get<GroupId>();
  g.prompt_id = gj.at("prompt_id").get<std::string>();
  g.prompt_tok = gj.at("prompt_tok").get<std::int32_t>();
  g.correct = gj.at("correct").get<std::vector<std::uint8_t>>();
  g.submit_seq = gj.value("submit_seq", std::int64_t{0});
  for (const auto& sj : gj.at("samples")) {
    RolloutSample smp;
    smp.target_tok = sj.at("target_tok").get<std::int32_t>();
    smp.finished = sj.at("finished").get<bool>();
    for (const auto& seg : sj.at("segments")) {
      smp.segments.push_back({seg.at(0).get<std::int64_t>(), seg.at(1).get<std::int32_t>()});
      smp.generated_tok += smp.segments.back().tokens;
    }
    if (smp.finished) ++g.finished;
    g.samples.push_back(std::move(smp));
  }
  return g;
}

nlohmann::json window_counts_json(const StepMetrics& w) {
  return {{"tokens_generated", w.tokens_generated}, {"batch_response_tok", w.batch_response_tok},
          {"tokens_trained", w.tokens_trained},     {"tokens_offpolicy", w.tokens_offpolicy},
          {"tokens_wasted", w.tokens_wasted},       {"tokens_masked", w.tokens_masked},
          {"tokens_carried", w.tokens_carried},     {"staleness_token_sum", w.staleness_token_sum},
          {"staleness_max", w.staleness_max},       {"groups_submitted", w.groups_submitted},
          {"groups_rejected", w.groups_rejected},   {"samples_truncated", w.samples_truncated}};
}

void load_window_counts(const nlohmann::json& w, StepMetrics& m) {
  m.tokens_generated = w.at("tokens_generated").get<std::int64_t>();
  m.batch_response_tok = w.at("batch_response_tok").get<std::int64_t>();
  m.tokens_trained = w.at("tokens_trained").get<std::int64_t>();
  m.tokens_offpolicy = w.at("tokens_offpolicy").get<std::int64_t>();
  m.tokens_wasted = w.at("tokens_wasted").get<std::int64_t>();
  m.tokens_masked = w.at("tokens_masked").get<std::int64_t>();
  m.tokens_carried = w.at("tokens_carried").get<std::int64_t>();
  m.staleness_token_sum = w.at("staleness_token_sum").get<double>();
  m.staleness_max = w.at("staleness_max").get<std::int64_t>();
  m.groups_submitted = w.at("groups_submitted").get<std::int64_t>();
  m.groups_rejected = w.at("groups_rejected").get<std::int64_t>();
  m.samples_truncated = w.at("samples_truncated").get<std::int64_t>();
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

void RlLoop::load_state(const nlohmann::json& j) {
  if (state_.metrics != nullptr) throw std::logic_error("load_state during a rollout phase");
  driver_->check_kind(j.contains("overlapped"));
  state_.version = j.at("version").get<std::int64_t>();
  state_.next_group_id = j.at("next_group_id").get<GroupId>();
  state_.total_generated = j.at("total_generated_tok").get<std::int64_t>();
  state_.total_trained = j.at("total_trained_tok").get<std::int64_t>();
  state_.total_wasted = j.at("total_wasted_tok").get<std::int64_t>();
  // A checkpoint from before masked tokens were counted apart has none.
  state_.total_masked = j.value("total_masked_tok", std::int64_t{0});
  state_.groups.clear();
  state_.buffer.clear();
  for (const auto& gj : j.at("buffer")) {
    RolloutGroup g = group_from_json(gj);
    state_.buffer.push_back(g.id);
    state_.groups.emplace(g.id, std::move(g));
  }
  if (j.contains("overlapped")) driver_->load(j.at("overlapped"));
}

}  // namespace april::rl
