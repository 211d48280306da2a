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
           // actor_rollout_ref.model.enable_gradient_checkpointing in verl's recipes.
           {"train.full_recompute", true},
           // Fitted on verl-fully-async-qwen2.5-math-7b.json, colocate sync 64.
           {"train.fixed_s", 6.6717},
       },
       "verl-fully-async-qwen2.5-math-7b.json",
       "colocate sync 64"},
      {"verl-megatron",
       "verl with its Megatron workers: balance_batch, vLLM at memory 0.5, fixed cost per step fitted on one verl row",
       {
           {"train.framework", std::string("megatron")},
           {"train.balance", std::string("verl")},
           {"engine.gpu_memory_fraction", 0.5},
           // Megatron's --recompute-granularity full, as verl's Megatron recipes set it.
           {"train.full_recompute", true},
           // Fitted on verl-fully-async-qwen3-30b-a3b.json, colocate sync 128.
           {"train.fixed_s", 10.0788},
       },
       "verl-fully-async-qwen3-30b-a3b.json",
       "colocate sync 128"},
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
