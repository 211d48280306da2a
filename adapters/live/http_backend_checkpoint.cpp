// HttpBackend's checkpoint (--save and --resume with --engines): the samples
// it holds, the servers' weight version and the trainer's state.
#include <filesystem>

#include "adapters/live/detail/http_backend_impl.hpp"
#include "base/atomic_file.hpp"
#include "base/bounded_read.hpp"

namespace april::live {

void HttpBackend::save(const std::string& dir) const {
  const auto& im = *impl_;
  if (!im.flights.empty() || im.sync != Impl::SyncPhase::kNone || im.train_running.valid()) {
    throw std::logic_error("http backend: save with requests in flight or a train step or sync running; save between colocated steps");
  }
  std::filesystem::create_directories(dir);
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& [key, st] : im.store) {
    samples.push_back({{"key", key}, {"prompt_id", st.prompt_id}, {"tokens", st.tokens}, {"logprobs", st.logprobs}});
  }
  const nlohmann::json j = {{"version", im.version}, {"trained", im.opt.trainer != nullptr}, {"samples", samples}};
  base::write_file_atomically((std::filesystem::path(dir) / "servers.json").string(), j.dump());
  if (im.opt.trainer != nullptr) im.opt.trainer->save_state(dir);
}

void HttpBackend::load(const std::string& dir) {
  auto& im = *impl_;
  // Bounded reads, and a malformed file refused by the path of what is wrong.
  constexpr std::size_t kMaxStateBytes = std::size_t{4} << 30;
  constexpr std::int64_t kMaxTok = std::int64_t{1} << 31;
  const auto path = (std::filesystem::path(dir) / "servers.json").string();
  if (!std::filesystem::exists(path)) {
    throw std::invalid_argument(fmt::format("{}: checkpoint has no servers.json (not written by april live --engines)", dir));
  }
  const auto doc = base::parse_json_document(base::read_file_bounded(path, kMaxStateBytes, "checkpoint"), path);
  const base::JsonValue v(doc, path);
  const bool trained = v.at("trained").boolean();
  if (trained != (im.opt.trainer != nullptr)) {
    v.at("trained").fail(trained ? "the checkpoint trained over --weights-dir; this run is rollout only: give --weights-dir"
                                 : "the checkpoint is rollout only; this run trains (--weights-dir)");
  }
  im.store.clear();
  for (const auto& s : v.at("samples").elements()) {
    Impl::Stored st;
    st.prompt_id = s.at("prompt_id").string();
    for (const auto t : s.at("tokens").integers(0, kMaxTok)) st.tokens.push_back(static_cast<std::int32_t>(t));
    for (const double lp : s.at("logprobs").numbers(-1e30, 1)) st.logprobs.push_back(static_cast<float>(lp));
    im.store[static_cast<rl::SampleKey>(s.at("key").integer(0, INT64_MAX))] = std::move(st);
  }
  im.version = v.at("version").integer(0, INT64_MAX);
  if (im.opt.trainer == nullptr) return;
  im.opt.trainer->load_state(dir);
  // The servers take the saved policy as its version.
  const auto weights = im.write_weights(im.version);
  for (const auto& [server, why] : update_servers(im.opt.urls, im.lost, im.dialect.weight_load_route(), weights, im.version,
                                                  im.opt.connect_timeout_s, im.opt.request_timeout_s)) {
    im.lose(server, why);
  }
  im.weights_loaded(weights);
}

}  // namespace april::live
