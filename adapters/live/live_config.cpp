#include "adapters/live/live_config.hpp"

#include "base/run_keys.hpp"

namespace april::live {

void declare_live_knobs(base::ConfigSchema& s) {
  using base::KnobType;
  s.add({keys::kLiveModel.name, KnobType::String, std::string("small"), "", "transformer size: tiny, small (~10M), medium, large",
         base::one_of({"tiny", "small", "medium", "large"})});
  s.add({keys::kLiveSlots.name, KnobType::Int, std::int64_t{64}, "requests",
         "engine slots (running cap); keep >= B' x n to run every request at once", base::in_range(1, 4096)});
  s.add({keys::kLiveTemperature.name, KnobType::Double, 1.0, "", "sampling temperature; 0 = greedy", base::in_range(0, 10)});
  s.add({keys::kLiveTopP.name, KnobType::Double, 1.0, "", "nucleus sampling mass", base::in_range(0.01, 1)});
  s.add({keys::kLiveExactPrefill.name,
         KnobType::Bool,
         true,
         "",
         "prefill through the decode kernel one token per iteration (bitwise batch- and resume-invariant) instead of one batched forward",
         {}});
  s.add({keys::kLiveFusedAttention.name,
         KnobType::Bool,
         false,
         "",
         "the engine's decode attends through torch 2.x's fused scaled_dot_product_attention (libtorch >= 2; an error on 1.x); "
         "prefill and training keep the manual path, whose shapes change with every batch",
         {}});
  s.add({keys::kLiveCudaGraph.name,
         KnobType::Bool,
         true,
         "",
         "on CUDA, the engine replays its fixed-shape decode from a captured CUDA graph (no effect on CPU)",
         {}});
  s.add({keys::kLiveEngineDtype.name, KnobType::String, std::string("float32"), "",
         "the engine's weights and KV cache: float32, or bfloat16 (as SGLang serves; the trainer keeps float32 master weights "
         "and each weight sync converts)",
         base::one_of({"float32", "bfloat16"})});
  s.add({keys::kLivePrefillPadTok.name, KnobType::Int, std::int64_t{1}, "tokens",
         "batched prefill pads its longest context up to a multiple of this (at most the model's length), bounding the distinct "
         "prefill shapes, each of which costs a slow first pass on a GPU; 1 = no padding",
         base::in_range(1, 4096)});
  s.add({keys::kLiveLr.name, KnobType::Double, 5e-4, "", "AdamW learning rate", base::above_and_at_most(0, 10)});
  s.add({keys::kLiveWeightDecay.name, KnobType::Double, 0.01, "", "AdamW weight decay", base::in_range(0, 10)});
  s.add({keys::kLiveGradClip.name, KnobType::Double, 1.0, "", "gradient norm clip", base::above_and_at_most(0, 1e6)});
  s.add({keys::kLivePolicyLoss.name, KnobType::String, std::string("dapo"), "",
         "how the clipped surrogate averages: grpo (per sequence, then over sequences: DeepSeekMath), dapo (over all tokens of "
         "the batch: DAPO's token-level loss) or gspo (one ratio per sequence, the geometric mean of its tokens': GSPO, whose "
         "paper clips at 3e-4 below and 4e-4 above; live.tis_cap does not apply to it)",
         base::one_of({"grpo", "dapo", "gspo"})});
  s.add({keys::kLiveClipLow.name, KnobType::Double, 0.2, "", "PPO clip below 1 (DAPO: 0.2)", base::in_range(0, 1)});
  s.add({keys::kLiveClipHigh.name, KnobType::Double, 0.28, "", "PPO clip above 1 (DAPO: 0.28)", base::in_range(0, 10)});
  s.add({keys::kLiveKlCoef.name, KnobType::Double, 0.0, "", "KL penalty to the warm-started reference (k3); 0 = none",
         base::in_range(0, 1e6)});
  s.add({keys::kLiveOldLogprobs.name, KnobType::String, std::string("recompute"), "",
         "pi_old of the PPO ratio: recompute (slime's default: the trainer's forward with the weights before the update) or "
         "rollout (the log-probs the sampler returned)",
         base::one_of({"recompute", "rollout"})});
  s.add({keys::kLiveTisCap.name, KnobType::Double, 0.0, "",
         "truncated importance sampling (slime's --use-tis): token weight clamp(pi_old / pi_rollout, 0, C); 0 = off (slime's default)",
         base::in_range(0, 1e6)});
  s.add({keys::kLiveTisScope.name, KnobType::String, std::string("all"), "", "tokens the TIS weight applies to: all (as slime) or stale",
         base::one_of({"all", "stale"})});
  s.add({keys::kLiveSftSteps.name, KnobType::Int, std::int64_t{300}, "steps", "supervised warm-start steps before RL",
         base::in_range(0, 10'000'000)});
  s.add({keys::kLiveSftBatch.name, KnobType::Int, std::int64_t{32}, "examples", "warm-start batch size", base::in_range(1, 1 << 16)});
  s.add({keys::kLiveThreads.name, KnobType::Int, std::int64_t{1}, "threads",
         "torch intra-op threads (BLAS runs single-threaded), for the engine and, in an overlapped run, for the trainer beside it; "
         "on 2 cores, 1 was faster and steadier than 2",
         base::in_range(1, 256)});
  s.add({keys::kLiveTrainLockstepIterations.name, KnobType::Int, std::int64_t{0}, "iterations",
         "overlapped policies: 0 = a train step ends when computed; K > 0 = it ends after exactly K engine iterations (waiting for "
         "the trainer if need be), making the run reproducible",
         base::in_range(0, 1 << 30)});
  s.add({keys::kLiveEvalPrompts.name, KnobType::Int, std::int64_t{64}, "prompts", "held-out prompts for greedy accuracy before and after",
         base::in_range(0, 1 << 20)});
  s.add({keys::kLiveTaskMedianLen.name, KnobType::Double, 6.0, "", "countdown task: median start number N (answer: N + 1 tokens)",
         base::in_range(1, 4096)});
  s.add({keys::kLiveTaskSigma.name, KnobType::Double, 0.7, "", "countdown task: lognormal sigma of N", base::in_range(0, 10)});
  s.add({keys::kLiveTaskMaxLen.name, KnobType::Int, std::int64_t{32}, "", "countdown task: largest N", base::in_range(1, 4096)});
  s.add({keys::kLiveTaskPrompts.name, KnobType::Int, std::int64_t{0}, "prompts",
         "countdown task: training prompts in the dataset, cycled epoch after epoch; 0 = every group a new prompt",
         base::in_range(0, std::int64_t{1} << 40)});
}

LiveOptions live_options(const base::Config& c, const std::string& device, std::int64_t mask_staleness_above) {
  // The filter reads each sample's correctness from the workload before the
  // run; the countdown task's is known only once the sample is generated.
  if (c.get(base::keys::kDynamicSampling)) {
    throw base::ConfigError(
        "filter.dynamic_sampling is not supported by the live backend (the countdown task's correctness is "
        "known only after generation)");
  }
  LiveOptions lo;
  lo.model_size = c.get(live::keys::kLiveModel);
  lo.device = device;
  lo.slots = c.get(live::keys::kLiveSlots);
  lo.temperature = c.get(live::keys::kLiveTemperature);
  lo.top_p = c.get(live::keys::kLiveTopP);
  lo.exact_prefill = c.get(live::keys::kLiveExactPrefill);
  lo.serving = serving_options(c);
  lo.lr = c.get(live::keys::kLiveLr);
  lo.weight_decay = c.get(live::keys::kLiveWeightDecay);
  lo.grad_clip = c.get(live::keys::kLiveGradClip);
  lo.policy_loss = c.get(live::keys::kLivePolicyLoss);
  if (lo.policy_loss == "gspo" && c.get(live::keys::kLiveTisCap) > 0) {
    throw base::ConfigError("live.tis_cap weighs tokens, and live.policy_loss=gspo has one ratio per sequence: set one of them");
  }
  lo.clip_low = c.get(live::keys::kLiveClipLow);
  lo.clip_high = c.get(live::keys::kLiveClipHigh);
  lo.kl_coef = c.get(live::keys::kLiveKlCoef);
  lo.tis_cap = c.get(live::keys::kLiveTisCap);
  lo.recompute_old_logprobs = c.get(live::keys::kLiveOldLogprobs) == "recompute";
  lo.tis_stale_only = c.get(live::keys::kLiveTisScope) == "stale";
  lo.mask_staleness_above = mask_staleness_above;
  lo.sft_steps = c.get(live::keys::kLiveSftSteps);
  lo.sft_batch = c.get(live::keys::kLiveSftBatch);
  lo.threads = c.get(live::keys::kLiveThreads);
  lo.train_lockstep_iterations = c.get(live::keys::kLiveTrainLockstepIterations);
  lo.max_response_len = static_cast<std::int32_t>(c.get(base::keys::kMaxResponseLen));
  lo.seed = static_cast<std::uint64_t>(c.get(base::keys::kSeed));
  return lo;
}

ServingOptions serving_options(const base::Config& c) {
  ServingOptions s;
  s.fused_attention = c.get(live::keys::kLiveFusedAttention);
  s.cuda_graph = c.get(live::keys::kLiveCudaGraph);
  s.bf16 = c.get(live::keys::kLiveEngineDtype) == "bfloat16";
  s.prefill_pad_tok = c.get(live::keys::kLivePrefillPadTok);
  return s;
}

CountdownParams task_params(const base::Config& c) {
  CountdownParams tp;
  tp.median_len = c.get(live::keys::kLiveTaskMedianLen);
  tp.sigma = c.get(live::keys::kLiveTaskSigma);
  tp.max_len = c.get(live::keys::kLiveTaskMaxLen);
  tp.dataset_prompts = c.get(live::keys::kLiveTaskPrompts);
  return tp;
}

}  // namespace april::live
