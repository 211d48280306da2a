// LiveBackend's checkpoint: the trainer's weights and optimizer, the samples
// it holds, and an overlapped run's engine version and started train step.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "adapters/live/detail/live_backend_impl.hpp"
#include "adapters/live/detail/torch_files.hpp"
#include "base/atomic_file.hpp"
#include "base/bounded_read.hpp"
#include "base/json_value.hpp"

namespace april::live {

void LiveBackend::save_hf(const std::string& dir) {
  if (impl_->opt.hf_checkpoint.empty())
    throw std::logic_error("live backend: save_hf on april's own model, which has no Hugging Face layout");
  if (impl_->train_running.valid()) impl_->train_running.wait();
  HfSaveOptions o;
  o.dtype = impl_->hf_file_dtype;
  save_hf_checkpoint(impl_->trainer->policy(), impl_->opt.hf_checkpoint, dir, o);
}

void LiveBackend::save(const std::string& dir) const {
  if (impl_->train_running.valid()) {
    throw std::logic_error("live backend: save while a train step computes; save between steps");
  }
  if (!impl_->flight.empty()) {
    throw std::logic_error(fmt::format("live backend: save with {} samples in flight (suspend the loop first)", impl_->flight.size()));
  }
  std::filesystem::create_directories(dir);
  save_to(impl_->trainer->policy(), (std::filesystem::path(dir) / "model.pt").string());
  save_to(impl_->trainer->optimizer(), (std::filesystem::path(dir) / "optimizer.pt").string());
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [key, st] : impl_->store) {
    j.push_back({{"key", key}, {"prompt_id", st.prompt_id}, {"tokens", st.tokens}, {"logprobs", st.logprobs}});
  }
  base::write_file_atomically((std::filesystem::path(dir) / "samples.json").string(), j.dump());
  // Overlapped runs: the engine's version, and a train step started but not
  // yet computing (its batch; the weights saved are those it starts from).
  nlohmann::json o;
  o["engine_version"] = impl_->engine_version;
  o["train_job"] = nullptr;
  if (impl_->train_to_start) {
    auto& job = o["train_job"];
    job["version"] = impl_->train_to_start->second;
    job["samples"] = nlohmann::json::array();
    for (const auto& d : impl_->train_to_start->first) {
      job["samples"].push_back({{"prompt", d.prompt},
                                {"response", d.response},
                                {"rollout_logprobs", d.rollout_logprobs},
                                {"token_version", d.token_version},
                                {"reward", d.reward},
                                {"group", d.group}});
    }
  }
  base::write_file_atomically((std::filesystem::path(dir) / "overlap.json").string(), o.dump());
}

void LiveBackend::load(const std::string& dir) {
  const auto p = std::filesystem::path(dir);
  for (const char* f : {"model.pt", "optimizer.pt", "samples.json"}) {
    if (!std::filesystem::exists(p / f)) throw std::invalid_argument(fmt::format("{}: checkpoint has no {}", dir, f));
  }
  load_from(impl_->trainer->policy(), (p / "model.pt").string());
  load_from(impl_->trainer->optimizer(), (p / "optimizer.pt").string());
  impl_->trainer->policy()->to(impl_->device);
  copy_weights(impl_->trainer->policy(), impl_->engine->model());
  // Bounded reads, and a malformed file refused by the path of what is wrong.
  constexpr std::size_t kMaxStateBytes = std::size_t{4} << 30;
  constexpr std::int64_t kMaxTok = std::int64_t{1} << 31;
  const auto samples_path = (p / "samples.json").string();
  const auto samples_doc = base::parse_json_document(base::read_file_bounded(samples_path, kMaxStateBytes, "checkpoint"), samples_path);
  impl_->store.clear();
  for (const auto& s : base::JsonValue(samples_doc, samples_path).elements()) {
    Stored st;
    st.prompt_id = s.at("prompt_id").string();
    for (const auto t : s.at("tokens").integers(0, kMaxTok)) st.tokens.push_back(static_cast<std::int32_t>(t));
    for (const double lp : s.at("logprobs").numbers(-1e30, 1)) st.logprobs.push_back(static_cast<float>(lp));
    impl_->store[static_cast<rl::SampleKey>(s.at("key").integer(0, INT64_MAX))] = std::move(st);
  }
  impl_->flight.clear();
  impl_->train_to_start.reset();
  impl_->engine_version = 0;
  // Checkpoints written before overlapped runs could be saved have no overlap.json.
  const auto overlap_path = (p / "overlap.json").string();
  if (std::filesystem::exists(overlap_path)) {
    const auto overlap_doc = base::parse_json_document(base::read_file_bounded(overlap_path, kMaxStateBytes, "checkpoint"), overlap_path);
    const base::JsonValue o(overlap_doc, overlap_path);
    impl_->engine_version = o.at("engine_version").integer(0, INT64_MAX);
    if (const auto job = o.find("train_job")) {
      std::vector<TrainSampleData> data;
      for (const auto& d : job->at("samples").elements()) {
        TrainSampleData t;
        for (const auto v : d.at("prompt").integers(0, kMaxTok)) t.prompt.push_back(static_cast<std::int32_t>(v));
        for (const auto v : d.at("response").integers(0, kMaxTok)) t.response.push_back(static_cast<std::int32_t>(v));
        for (const double v : d.at("rollout_logprobs").numbers(-1e30, 1)) t.rollout_logprobs.push_back(static_cast<float>(v));
        t.token_version = d.at("token_version").integers(0, INT64_MAX);
        t.reward = d.at("reward").number(-1e30, 1e30);
        t.group = d.at("group").integer(0, INT64_MAX);
        data.push_back(std::move(t));
      }
      impl_->train_to_start.emplace(std::move(data), job->at("version").integer(0, INT64_MAX));
    }
  }
}

}  // namespace april::live
