#include "rl/colocated_driver.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "rl/rl_loop.hpp"
#include "rl/sorted_group_ids.hpp"

namespace april::rl {

using policies::GroupId;

void ColocatedDriver::on_submitted(GroupId id) { loop_.state_.submitted.push_back(id); }

void ColocatedDriver::act_on(const policies::Decisions& d) {
  if (d.train || d.start_sync || !d.pull.empty()) {
    throw std::logic_error("only a policy that overlaps rollout and training starts train steps, syncs or pulls itself");
  }
  if (!d.end_with_batch) return;
  RolloutState& st = loop_.state_;
  const SortedGroupIds accepted(st.accepted);
  std::vector<char> seen(accepted.size(), 0);
  for (GroupId id : *d.end_with_batch) {
    const std::size_t at = accepted.find(id);
    if (at == SortedGroupIds::npos) throw std::logic_error(fmt::format("policy batched group {} which is not accepted and complete", id));
    if (seen[at] != 0) throw std::logic_error(fmt::format("policy batched group {} twice", id));
    seen[at] = 1;
  }
  if (d.end_with_batch->empty()) throw std::logic_error("policy ended the rollout phase with an empty batch");
  batch_ = *d.end_with_batch;
  drop_unbatched_ = d.drop_unbatched;
}

StepMetrics ColocatedDriver::run_step() {
  RolloutState& st = loop_.state_;
  StepMetrics m;
  m.step = st.version;
  m.engines = backend_.engines();
  m.max_running = backend_.max_running_per_engine();
  st.metrics = &m;
  st.submitted.clear();
  st.accepted.clear();
  st.completed_pending.clear();
  batch_.reset();
  drop_unbatched_ = false;
  st.in_flight_groups = 0;
  st.in_flight_samples = 0;
  phase_counters_ = backend_.counters();
  phase_start_s_ = backend_.now_s();

  loop_.apply(loop_.policy_.on_step_start(loop_));
  while (!batch_) {
    if (!st.completed_pending.empty()) {
      const GroupId id = st.completed_pending.front();
      st.completed_pending.pop_front();
      loop_.on_group_complete(id);
      continue;
    }
    if (st.in_flight_samples == st.held_samples) {
      throw std::logic_error(
          fmt::format("step {}: the policy left nothing at the engines without forming a batch "
                      "({} accepted of {} needed, {} samples held)",
                      st.version, st.accepted.size(), loop_.opt_.batch_size, st.held_samples));
    }
    backend_.wait_for_completions_into(finished_);
    loop_.record_finished(finished_);
  }
  end_phase(*batch_, m);
  st.metrics = nullptr;
  ++st.version;
  return m;
}

void ColocatedDriver::end_phase(const std::vector<GroupId>& batch, StepMetrics& m) {
  RolloutState& st = loop_.state_;
  // Abort what is still running; its progress is kept. A sample that ends
  // while the abort takes effect is complete; its group, not in the batch,
  // goes back to the buffer with the others.
  const double t_abort_start = backend_.now_s();
  const std::vector<SampleProgress> aborted = backend_.abort_all();
  st.for_each_sample_fetched_ahead(
      aborted.size(), [&](std::size_t i) { return aborted[i].key; },
      [&](std::size_t i) {
        const SampleProgress& p = aborted[i];
        RolloutGroup& g = st.group(key_group(p.key));
        RolloutSample& s = g.samples.at(static_cast<std::size_t>(key_index(p.key)));
        if (!s.in_flight || s.held) throw std::logic_error("backend aborted a sample that is not in flight");
        if (p.finished) {
          if (p.stopped_at_max_new && s.generated_tok + p.new_tok < st.max_response_len) {
            st.take_back(p);  // its chunk ended, not the sample
            return;
          }
          (void)st.finish_sample(g, s, p);  // a complete group waits in the buffer like the others
          return;
        }
        st.take_back(p);
      });
  if (st.held_samples > 0) {
    for (GroupId id : st.submitted) st.drop_held(st.group(id));  // held samples go back unstarted
  }
  if (st.in_flight_samples != 0) throw std::logic_error("backend lost track of in-flight samples on abort");
  const double t_rollout_end = backend_.now_s();
  m.abort_time_s = t_rollout_end - t_abort_start;
  const BackendCounters c1 = backend_.counters();

  const SortedGroupIds in_batch(batch);
  const std::vector<TrainSample> train = loop_.take_batch(batch, m, st.version);

  // Everything else submitted this phase goes back to the buffer, in
  // submission order, or is dropped when the policy said so.
  for (GroupId id : st.submitted) {
    if (in_batch.contains(id)) continue;
    RolloutGroup& g = st.group(id);
    g.in_flight = false;
    if (g.rejected) {
      st.groups.erase(id);
      continue;
    }
    ++m.groups_aborted;
    if (drop_unbatched_) {
      st.discard_tokens(g);
      st.groups.erase(id);
      continue;
    }
    st.buffer.push_back(id);
  }

  const TrainReport report = backend_.train(train, st.version);
  m.reward_mean = report.reward_mean;
  m.accuracy = report.accuracy;
  m.train_phases = report.phases;
  const double t_train_end = backend_.now_s();
  backend_.sync_weights(st.version + 1);
  const double t_sync_end = backend_.now_s();

  m.start_time_s = phase_start_s_;
  m.rollout_time_s = t_rollout_end - phase_start_s_;
  m.train_time_s = t_train_end - t_rollout_end;
  m.sync_time_s = t_sync_end - t_train_end;
  m.step_time_s = m.rollout_time_s + m.train_time_s + m.sync_time_s;
  m.batch_ready_s = t_abort_start;  // the batch formed at the last acceptance; the abort starts at that instant
  m.train_start_s = t_rollout_end;
  m.train_end_s = t_train_end;
  m.sync_end_s = t_sync_end;
  m.gpus = loop_.opt_.gpus;
  m.busy_engine_s = c1.busy_engine_s - phase_counters_.busy_engine_s;
  m.running_slot_s = c1.running_slot_s - phase_counters_.running_slot_s;
  m.preemptions = c1.preemptions - phase_counters_.preemptions;
  m.buffer_groups = static_cast<std::int64_t>(st.buffer.size());
  m.buffer_tokens = st.held_tok();
}

void ColocatedDriver::suspend() {
  throw std::logic_error("suspend is for overlapped runs; a colocated run pauses between steps by itself");
}

void ColocatedDriver::check_can_save() const {
  if (loop_.state_.metrics != nullptr) throw std::logic_error("save_state during a rollout phase");
}

void ColocatedDriver::check_kind(bool has_overlapped_part) const {
  if (has_overlapped_part) throw std::invalid_argument("the checkpoint is of a run that overlaps rollout and training");
}

}  // namespace april::rl
