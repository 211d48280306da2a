#include "sim/framework_profiles.hpp"

#include <fmt/format.h>

#include <map>

namespace april::sim {

const std::vector<FrameworkProfile>& framework_profiles() {
  // Each setting is the framework's own default or what its published recipes
  // run, with its source beside it; train.fixed_s is the one fitted value: the
  // time a step spends outside its rollout, train and sync phases (rewards,
  // advantages, batch balancing, logging), bisected on one published row's
  // step time with that file's other fitted inputs (`april reproduce --fit`).
  static const std::vector<FrameworkProfile> profiles = {
      {"verl-fsdp2",
       "verl with its FSDP2 workers: balance_batch, vLLM at memory 0.5, fixed cost per step fitted on one verl row",
       {
           {"train.framework", std::string("fsdp")},
           // verl/trainer/config/ppo_trainer.yaml: trainer.balance_batch True.
           {"train.balance", std::string("verl")},
           // verl's rollout config: gpu_memory_utilization 0.5.
           {"engine.gpu_memory_fraction", 0.5},
           // verl/trainer/config/model/hf_model.yaml L34: enable_gradient_checkpointing True, which its FSDP workers apply.
           {"train.full_recompute", true},
           // Fitted on verl-fully-async-qwen2.5-math-7b.json, colocate sync 64.
           {"train.fixed_s", 6.6717},
       },
       "verl-fully-async-qwen2.5-math-7b.json",
       "colocate sync 64"},
      {"verl-megatron",
       "verl with its Megatron workers: balance_batch, vLLM at memory 0.5, no recomputation, fixed cost per step fitted on one verl "
       "row",
       {
           {"train.framework", std::string("megatron")},
           {"train.balance", std::string("verl")},
           {"engine.gpu_memory_fraction", 0.5},
           // verl/trainer/config/engine/megatron.yaml L58 at b178a3cd: override_transformer_config.recompute_granularity
           // null, no recomputation (actor_rollout_ref.model.enable_gradient_checkpointing is FSDP's); its published
           // tables' scripts leave it so.
           {"train.full_recompute", false},
           // Fitted on verl-fully-async-qwen3-30b-a3b.json, colocate sync 128.
           {"train.fixed_s", 5.6173},
       },
       "verl-fully-async-qwen3-30b-a3b.json",
       "colocate sync 128"},
      {"nemo-rl-megatron",
       "NeMo RL with its Megatron policy workers: vLLM at memory 0.6, the reference model's KL forward, the optimizer offloaded "
       "for each colocated refit, no activation checkpointing; nothing fitted",
       {
           // NeMo RL's performance recipes (examples/configs/recipes/llm/performance/*.yaml at v0.6.0):
           // policy.megatron_cfg.enabled true.
           {"train.framework", std::string("megatron")},
           // examples/configs/grpo_math_1B.yaml at v0.6.0, the recipes' defaults:
           // policy.generation.vllm_cfg.gpu_memory_utilization 0.6 (L298).
           {"engine.gpu_memory_fraction", 0.6},
           // loss_fn.reference_policy_kl_penalty 0.01 (L50): the reference forward runs every step; so does the
           // previous policy's log-prob forward (grpo.py L1747, policy.get_logprobs each step).
           {"train.ref_logprob", true},
           {"train.old_logprob", true},
           // grpo.py refit_policy_generation (L1117): policy.offload_before_refit() when colocated, which april
           // applies to colocated runs only.
           {"train.offload", true},
           // policy.megatron_cfg.activation_checkpointing false (L133).
           {"train.full_recompute", false},
       },
       "",
       ""},
      {"slime",
       "slime (Megatron trainer, SGLang engines): even data-parallel shares, full recomputation; nothing fitted",
       {
           {"train.framework", std::string("megatron")},
           // slime's --balance-data is off by default: Megatron's even split.
           {"train.balance", std::string("even")},
           // slime's model scripts pass --recompute-granularity full.
           {"train.full_recompute", true},
       },
       "",
       ""},
  };
  return profiles;
}

void declare_framework_profiles(base::ConfigSchema& s) {
  std::vector<std::string> names = {""};
  std::string about;
  std::map<std::string, base::ConfigSchema::Profile> settings;
  for (const auto& p : framework_profiles()) {
    names.push_back(p.name);
    about += fmt::format("; {}: {}", p.name, p.about);
    settings[p.name] = p.settings;
  }
  s.add({keys::kFramework.name, base::KnobType::String, std::string(""), "",
         "the RL framework whose defaults apply beneath the keys a scenario sets (empty: none)" + about, base::one_of(names)});
  s.add_profiles(keys::kFramework.name, std::move(settings));
}

}  // namespace april::sim
