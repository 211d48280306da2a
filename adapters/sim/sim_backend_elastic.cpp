// Elastic splits in the simulator (verl PRs #6556 and #7373): the idle
// trainer's GPUs serve as hybrid engines until the trainer takes them back.
#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "adapters/sim/sim_backend.hpp"

namespace april::adapters {

void SimBackend::start_lend(std::int64_t version) {
  if (config_.hybrid_engines == 0) throw std::logic_error("start_lend: this cluster has no hybrid engines");
  if (trainer_gpus_ != TrainerGpus::Training || train_running_ || sync_running_) {
    throw std::logic_error("start_lend while the trainer is busy or its GPUs are lent");
  }
  trainer_gpus_ = TrainerGpus::Lending;
  // verl #7373 adds the hybrid replicas to the load balancer before they
  // wake: requests routed to them now wait there until they hold weights
  // and KV cache.
  hybrid_routable_ = true;
  sim_.schedule_in(sim::TimeNs::from_s(config_.to_rollout_s), sim::kTagLendEnd, [this, version] {
    for (std::size_t i = standalone_; i < engines_.size(); ++i) engines_[i]->resume(version, false);
    resumed_since_wait_ = true;
    trainer_gpus_ = TrainerGpus::Lent;
    lent_ = true;
  });
}

std::size_t SimBackend::route_moved(const sim::EngineRequest& r) const {
  const LeastLoaded& index = r.predicted_end_tok > 0 && predictions_seen_ ? by_predicted_tok_ : by_requests_;
  return index.least_in(0, standalone_);
}

void SimBackend::start_reclaim() {
  if (trainer_gpus_ != TrainerGpus::Lent) throw std::logic_error("start_reclaim: the trainer's GPUs are not lent");
  trainer_gpus_ = TrainerGpus::Reclaiming;
  hybrid_routable_ = false;
  // Removed from the balancer, aborted and put to sleep; each request is
  // retried on the other engines with the tokens it has (verl's client
  // resubmits prompt + tokens), re-prefilling them there.
  for (std::size_t h = standalone_; h < engines_.size(); ++h) {
    std::vector<sim::EngineRequestState> moved = engines_[h]->take_all();
    engines_[h]->pause();
    note_load(h);
    for (auto& r : moved) {
      const std::size_t to = route_moved(r.req);
      engines_[to]->adopt(std::move(r));
      note_load(to);
    }
  }
  sim_.schedule_in(sim::TimeNs::from_s(config_.to_trainer_s), sim::kTagReclaimEnd, [this] {
    trainer_gpus_ = TrainerGpus::Training;
    reclaimed_ = true;
  });
}

}  // namespace april::adapters
