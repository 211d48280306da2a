#include "adapters/live/live_config.hpp"

namespace april::live {

LiveOptions live_options(const base::Config& c, const std::string& device, bool mask_offpolicy) {
  LiveOptions lo;
  lo.model_size = c.get_string("live.model");
  lo.device = device;
  lo.slots = c.get_int("live.slots");
  lo.temperature = c.get_double("live.temperature");
  lo.top_p = c.get_double("live.top_p");
  lo.exact_prefill = c.get_bool("live.exact_prefill");
  lo.lr = c.get_double("live.lr");
  lo.weight_decay = c.get_double("live.weight_decay");
  lo.grad_clip = c.get_double("live.grad_clip");
  lo.clip_low = c.get_double("live.clip_low");
  lo.clip_high = c.get_double("live.clip_high");
  lo.kl_coef = c.get_double("live.kl_coef");
  lo.tis_cap = c.get_double("live.tis_cap");
  lo.mask_offpolicy = mask_offpolicy;
  lo.sft_steps = c.get_int("live.sft_steps");
  lo.sft_batch = c.get_int("live.sft_batch");
  lo.threads = c.get_int("live.threads");
  lo.max_response_len = static_cast<std::int32_t>(c.get_int("max_response_len"));
  lo.seed = static_cast<std::uint64_t>(c.get_int("seed"));
  return lo;
}

CountdownParams task_params(const base::Config& c) {
  CountdownParams tp;
  tp.median_len = c.get_double("live.task_median_len");
  tp.sigma = c.get_double("live.task_sigma");
  tp.max_len = c.get_int("live.task_max_len");
  return tp;
}

}  // namespace april::live
