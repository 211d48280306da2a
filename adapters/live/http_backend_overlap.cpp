// live::HttpBackend's overlapped operations (docs/design.md 3b over HTTP): a
// train step on a thread of its own beside the servers, and weight syncs
// that either interrupt the requests (recompute) or let the servers finish
// them under the old weights.
#include "adapters/live/http_backend.hpp"

#include "adapters/live/detail/http_backend_impl.hpp"

namespace april::live {

// A live trainer's call is what it is: a local step costs what its batch costs.
void HttpBackend::start_train(const std::vector<rl::TrainSample>& batch, std::int64_t version, std::int64_t /*local_steps*/) {
  auto& im = *impl_;
  if (im.train_running.valid() || im.train_report_now || im.sync != Impl::SyncPhase::kNone || im.sync_ends_now) {
    throw std::logic_error("http backend: start_train while the trainer is busy");
  }
  if (im.opt.trainer == nullptr) {
    im.train_report_now = im.scored(batch);
    return;
  }
  // The batch's tokens are copied out now: the servers go on while the trainer reads them.
  im.train_running = std::async(std::launch::async,
                                [trainer = im.opt.trainer, data = im.train_data(batch), version] { return trainer->train(data, version); });
}

void HttpBackend::start_sync(std::int64_t new_version, bool recompute) {
  auto& im = *impl_;
  if (im.train_running.valid() || im.train_report_now || im.sync != Impl::SyncPhase::kNone || im.sync_ends_now) {
    throw std::logic_error("http backend: start_sync while the trainer is busy");
  }
  im.sync_version = new_version;
  if (im.opt.trainer == nullptr) {
    // Rollout only: the servers' weights stay; the version alone changes.
    im.version = new_version;
    im.sync_ends_now = true;
    return;
  }
  if (recompute) {
    // AReaL's interruptible rollout: every request stops, keeping its
    // tokens; once all have answered the servers load the weights, and
    // each is sent again from prompt + tokens (wait_for_events).
    im.sync = Impl::SyncPhase::kAborting;
    if (const auto error = im.post_aborts(); !error.empty()) throw std::runtime_error(error);
  } else {
    // The servers' own update: each lets the requests it runs finish under
    // the old weights, holds new ones, and loads (SGLang's
    // /update_weights_from_disk); april holds what the loop submits meanwhile.
    im.begin_update();
  }
}

rl::BackendEvents HttpBackend::wait_for_events() {
  auto& im = *impl_;
  for (;;) {
    rl::BackendEvents ev;
    for (auto it = im.flights.begin(); it != im.flights.end();) {
      Impl::Flight& f = it->second;
      if (f.parked || f.queued || f.answer.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ++it;
        continue;
      }
      auto p = im.take(it->first, f);
      if (!p) {
        ++it;  // its server was lost: sent again
        continue;
      }
      if (p->finished) {
        ev.finished.push_back(std::move(*p));
        it = im.flights.erase(it);
        continue;
      }
      if (im.sync != Impl::SyncPhase::kAborting) {
        throw std::runtime_error(fmt::format("{}: answered request {} as aborted, which april did not abort", im.opt.urls[f.server],
                                             f.body.value("rid", f.body.value("request_id", std::string("?")))));
      }
      f.earlier = std::move(p->by_version);
      f.parked = true;
      ++it;
    }
    if (im.train_report_now) {
      ev.train_ended = std::move(im.train_report_now);
      im.train_report_now.reset();
    } else if (im.train_running.valid() && im.train_running.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      ev.train_ended = im.train_running.get();  // rethrows the trainer's error
    }
    if (im.sync_ends_now) {
      im.sync_ends_now = false;
      ev.sync_ended = true;
    }
    if (im.sync == Impl::SyncPhase::kAborting) {
      if (std::all_of(im.flights.begin(), im.flights.end(), [](const auto& kv) { return kv.second.parked || kv.second.queued; })) {
        im.begin_update();
      } else if (std::chrono::steady_clock::now() - im.last_abort_post > std::chrono::milliseconds(200)) {
        // A request still on its way when the abort came (connecting, or
        // queued at the server) runs on: the abort is sent again.
        if (const auto error = im.post_aborts(); !error.empty()) throw std::runtime_error(error);
      }
    }
    if (im.sync == Impl::SyncPhase::kUpdating && im.sync_update.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      for (auto& p : im.end_update()) ev.finished.push_back(std::move(p));
      ev.sync_ended = true;
    }
    if (!ev.finished.empty() || ev.train_ended || ev.sync_ended) return ev;
    if (im.flights.empty() && !im.train_running.valid() && im.sync == Impl::SyncPhase::kNone) {
      throw std::logic_error("wait_for_events with nothing in flight, training or syncing");
    }
    std::unique_lock<std::mutex> lock(im.mu);
    im.cv.wait_for(lock, std::chrono::milliseconds(20));
  }
}

}  // namespace april::live
