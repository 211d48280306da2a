#include "adapters/live/hf_trainer.hpp"

#include <optional>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/device.hpp"
#include "adapters/live/detail/grpo.hpp"
#include "adapters/live/detail/hf_checkpoint.hpp"
#include "adapters/live/detail/torch_files.hpp"

#include <filesystem>

namespace april::live {

struct HfTrainer::Impl {
  LiveOptions opt;
  torch::Device device;
  StDtype file_dtype = StDtype::BF16;
  std::unique_ptr<GrpoTrainer> trainer;

  Impl(const LiveOptions& o, std::int64_t max_seq) : opt(o), device(parse_device(o.device)) {
    configure_runtime(o.threads);
    torch::manual_seed(o.seed);
    auto ck = load_hf_checkpoint(o.hf_checkpoint, max_seq, torch::kCPU, torch::kFloat32);
    file_dtype = ck.file_dtype;
    std::optional<Transformer> reference;
    if (o.kl_coef > 0) {
      reference = Transformer(ck.model->config());
      copy_weights(ck.model, *reference);
    }
    trainer = std::make_unique<GrpoTrainer>(ck.model, reference, grpo_options(o), device);
  }
};

HfTrainer::HfTrainer(const LiveOptions& options, std::int64_t max_seq) : impl_(std::make_unique<Impl>(options, max_seq)) {}
HfTrainer::~HfTrainer() = default;

rl::TrainReport HfTrainer::train(const std::vector<TrainSampleData>& batch, std::int64_t version) {
  const auto st = impl_->trainer->step(batch, version);
  if (impl_->device.is_cuda()) torch::cuda::synchronize();
  return {st.reward_mean, st.accuracy, st.loss, std::nullopt};
}

void HfTrainer::write_weights(const std::string& dir) {
  HfSaveOptions o;
  o.dtype = impl_->file_dtype;
  save_hf_checkpoint(impl_->trainer->policy(), impl_->opt.hf_checkpoint, dir, o);
}

void HfTrainer::save_state(const std::string& dir) {
  const auto p = std::filesystem::path(dir);
  save_to(impl_->trainer->policy(), (p / "model.pt").string());
  save_to(impl_->trainer->optimizer(), (p / "optimizer.pt").string());
}

void HfTrainer::load_state(const std::string& dir) {
  const auto p = std::filesystem::path(dir);
  for (const char* f : {"model.pt", "optimizer.pt"}) {
    if (!std::filesystem::exists(p / f)) throw std::invalid_argument(fmt::format("{}: checkpoint has no {}", dir, f));
  }
  load_from(impl_->trainer->policy(), (p / "model.pt").string());
  load_from(impl_->trainer->optimizer(), (p / "optimizer.pt").string());
  impl_->trainer->policy()->to(impl_->device);
}

}  // namespace april::live
