#pragma once
// The live.* scenario keys, declared beside the code that reads them into the
// live backend's options. Plain C++ (no torch): `april` declares these keys
// without loading the live backend.
#include "adapters/live/live_options.hpp"
#include "base/config.hpp"
#include "tasks/countdown_task.hpp"

namespace april::live {

void declare_live_knobs(base::ConfigSchema& schema);

// mask_staleness_above comes from the policy (mask_tokens_staler_than); device
// from the command line.
LiveOptions live_options(const base::Config& config, const std::string& device, std::int64_t mask_staleness_above);
CountdownParams task_params(const base::Config& config);
ServingOptions serving_options(const base::Config& config);

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::DoubleKey kLiveClipHigh{"live.clip_high"};
inline constexpr base::DoubleKey kLiveClipLow{"live.clip_low"};
inline constexpr base::BoolKey kLiveCudaGraph{"live.cuda_graph"};
inline constexpr base::StringKey kLiveEngineDtype{"live.engine_dtype"};
inline constexpr base::IntKey kLiveEvalPrompts{"live.eval_prompts"};
inline constexpr base::BoolKey kLiveExactPrefill{"live.exact_prefill"};
inline constexpr base::BoolKey kLiveFusedAttention{"live.fused_attention"};
inline constexpr base::DoubleKey kLiveGradClip{"live.grad_clip"};
inline constexpr base::DoubleKey kLiveKlCoef{"live.kl_coef"};
inline constexpr base::DoubleKey kLiveLr{"live.lr"};
inline constexpr base::StringKey kLiveModel{"live.model"};
inline constexpr base::StringKey kLiveOldLogprobs{"live.old_logprobs"};
inline constexpr base::StringKey kLivePolicyLoss{"live.policy_loss"};
inline constexpr base::IntKey kLivePrefillPadTok{"live.prefill_pad_tok"};
inline constexpr base::IntKey kLiveSftBatch{"live.sft_batch"};
inline constexpr base::IntKey kLiveSftSteps{"live.sft_steps"};
inline constexpr base::IntKey kLiveSlots{"live.slots"};
inline constexpr base::IntKey kLiveTaskMaxLen{"live.task_max_len"};
inline constexpr base::DoubleKey kLiveTaskMedianLen{"live.task_median_len"};
inline constexpr base::IntKey kLiveTaskPrompts{"live.task_prompts"};
inline constexpr base::DoubleKey kLiveTaskSigma{"live.task_sigma"};
inline constexpr base::DoubleKey kLiveTemperature{"live.temperature"};
inline constexpr base::IntKey kLiveThreads{"live.threads"};
inline constexpr base::DoubleKey kLiveTisCap{"live.tis_cap"};
inline constexpr base::StringKey kLiveTisScope{"live.tis_scope"};
inline constexpr base::DoubleKey kLiveTopP{"live.top_p"};
inline constexpr base::IntKey kLiveTrainLockstepIterations{"live.train_lockstep_iterations"};
inline constexpr base::DoubleKey kLiveWeightDecay{"live.weight_decay"};
}  // namespace keys

}  // namespace april::live
