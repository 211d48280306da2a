#include "adapters/live/http_backend.hpp"

#include "adapters/live/detail/http_backend_impl.hpp"

namespace april::live {

HttpBackend::HttpBackend(HttpBackendOptions options, const LiveTask& task) : impl_(std::make_unique<Impl>(std::move(options), task)) {}

HttpBackend::~HttpBackend() {
  if (!impl_->flights.empty()) {
    impl_->close_streams();
    for (std::size_t i = 0; i < impl_->opt.urls.size(); ++i) {
      if (impl_->lost[i]) continue;
      try {
        impl_->dialect.abort_server(impl_->opt.urls[i], impl_->opt.connect_timeout_s, impl_->opt.connect_timeout_s * 2);
      } catch (const std::exception&) {
        // Leaving anyway: the requests end at their servers' own pace.
      }
    }
  }
  impl_->settle();
}

double HttpBackend::now_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - impl_->t0).count(); }
std::int64_t HttpBackend::engines() const { return static_cast<std::int64_t>(impl_->opt.urls.size()); }
std::int64_t HttpBackend::max_running_per_engine() const {
  return impl_->slots.empty() ? 0 : *std::min_element(impl_->slots.begin(), impl_->slots.end());
}

void HttpBackend::submit(const rl::SampleRequest& r) {
  auto& im = *impl_;
  auto& st = im.store[r.key];
  if (r.generated_tok == 0) {
    st.tokens.clear();
    st.logprobs.clear();
  }
  st.prompt_id = r.prompt_id;
  if (static_cast<std::int32_t>(st.tokens.size()) != r.generated_tok) {
    throw std::logic_error(
        fmt::format("http backend: sample {} holds {} tokens, the loop says {}", r.key, st.tokens.size(), r.generated_tok));
  }
  if (im.flights.count(r.key) != 0 || std::any_of(im.held.begin(), im.held.end(), [&](const auto& h) { return h.key == r.key; })) {
    throw std::logic_error(fmt::format("http backend: sample {} submitted while in flight", r.key));
  }
  if (im.sync != Impl::SyncPhase::kNone) {
    // The servers are taking new weights: it goes when they hold them.
    im.held.push_back({r.key, r.max_new_tok, {r.engine_first, r.engine_count}});
    return;
  }
  im.start(r.key, r.max_new_tok, {r.engine_first, r.engine_count});
}

std::vector<rl::SampleProgress> HttpBackend::wait_for_completions() {
  auto& im = *impl_;
  if (im.flights.empty()) throw std::logic_error("wait_for_completions with nothing in flight");
  for (;;) {
    std::vector<rl::SampleProgress> out;
    for (auto it = im.flights.begin(); it != im.flights.end();) {
      if (!it->second.queued && it->second.answer.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        if (auto p = im.take(it->first, it->second)) {
          out.push_back(std::move(*p));
          it = im.flights.erase(it);
        } else {
          ++it;  // sent again to a server left
        }
      } else {
        ++it;
      }
    }
    if (!out.empty()) return out;  // in key order: the map's
    std::unique_lock<std::mutex> lock(im.mu);
    im.cv.wait_for(lock, std::chrono::milliseconds(50));
  }
}

std::vector<rl::SampleProgress> HttpBackend::abort_all() {
  auto& im = *impl_;
  // Every server is told and every flight collected before an error is
  // thrown: none is left half taken.
  std::string error;
  const auto post_aborts = [&] {
    const auto e = im.post_aborts();
    if (error.empty()) error = e;
  };
  post_aborts();
  // A request still on its way when the abort came (connecting, or queued
  // at the server) runs on: the abort is sent again every 0.2 s until every
  // flight has answered.
  for (;;) {
    bool all = true;
    for (auto& [key, f] : im.flights) {
      if (f.answer.valid() && f.answer.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
        all = false;
        break;
      }
    }
    if (all || !error.empty()) break;
    post_aborts();
  }
  std::vector<rl::SampleProgress> out;
  for (auto& [key, f] : im.flights) {
    try {
      out.push_back(*im.take(key, f, true));
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
  }
  im.flights.clear();
  if (!error.empty()) throw std::runtime_error(error);
  return out;
}

rl::TrainReport HttpBackend::train(const std::vector<rl::TrainSample>& batch, std::int64_t version) {
  auto& im = *impl_;
  if (im.opt.trainer == nullptr) return im.scored(batch);
  const auto data = im.train_data(batch);
  return im.opt.trainer->train(data, version);
}

void HttpBackend::sync_weights(std::int64_t new_version) {
  auto& im = *impl_;
  im.version = new_version;
  if (im.opt.trainer == nullptr) return;
  const auto dir = im.write_weights(new_version);
  for (const auto& [server, why] : update_servers(im.opt.urls, im.lost, im.dialect.weight_load_route(), dir, new_version,
                                                  im.opt.connect_timeout_s, im.opt.request_timeout_s)) {
    im.lose(server, why);
  }
  im.weights_loaded(dir);
}

rl::BackendCounters HttpBackend::counters() const { return {}; }

std::string HttpBackend::loaded_weights_dir() const { return impl_->last_weights ? impl_->last_weights->string() : std::string(); }

std::vector<std::int32_t> HttpBackend::sample_tokens(rl::SampleKey key) const {
  const auto it = impl_->store.find(key);
  return it == impl_->store.end() ? std::vector<std::int32_t>{} : it->second.tokens;
}

std::vector<rl::EngineRunningChange> HttpBackend::take_engine_changes() { return std::exchange(impl_->changes, {}); }

std::int64_t HttpBackend::servers_lost() const { return static_cast<std::int64_t>(impl_->lost.size()) - impl_->servers_left(); }
std::int64_t HttpBackend::requests_answered() const { return impl_->answered; }
std::int64_t HttpBackend::requests_aborted() const { return impl_->aborted; }

}  // namespace april::live
