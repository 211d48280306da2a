#pragma once
// The version of the simulation model: what a stored run's results depend on
// besides its inputs. Bump it in the same commit as any change that alters
// simulated results (event sequence, token counts, times), and re-pin the
// digest in tests/scenario/model_version_test.cpp; that test fails when results change
// and this number does not. Runs stored under another model version are
// re-run, never reused (studies/run_batch, studies/results_db).
#include <cstdint>

namespace april::scenario {

// 1: the first versioned model (slime's same-instant ties and refill rule,
//    sync's whole-wave refill under the filter).
// 2: runs report tokens_carried and april_offpolicy_ratio (times and tokens
//    as in 1; re-run so that stored runs carry the new metrics).
// 3: an abort takes time: the abort latency, each engine's wait for its
//    iteration boundary (that iteration's tokens kept, its finished samples
//    complete), then per-request release (engine.abort_*).
// 4: masked batch tokens are counted as tokens_masked, no longer in
//    tokens_wasted (runs that mask only: april.mask_offpolicy,
//    april.max_token_staleness); every other result as in 3.
// 5: a weight sync that starts at the instant an engine's iteration ends
//    stops that engine there, as docs/design.md 3b's instant order says (4 let
//    the next iteration begin with the old weights); overlapped runs only.
// 6: models from config.json and accelerators with their node figures: the
//    roofline counts exact parameters (Qwen3-4B 4,022,468,096, not 4.02e9),
//    linear FLOPs without the embedding lookup, attention FLOPs over the
//    cached context, per-GPU KV reads, and the all-reduces of a
//    tensor-parallel engine; training counts activated parameters.
// 7: train steps as verl and slime report them (train.time_model=phases, the
//    new default): old-logprob forward, update over PPO mini-batches and
//    epochs with attention FLOPs, Megatron or FSDP communication, optimizer,
//    colocated offload; train.fixed_s defaults to 0 (was 2 s).
// 8: FSDP as verl runs it: gradients reduce-scattered in fp32, a shard group
//    (train.fsdp_shard_gpus, HSDP) whose replicas all-reduce their gradient
//    shards, Ulysses sequence parallel (train.context_parallel), and the
//    offloaded bf16 weights sharded like the Adam state. Megatron runs are
//    as in 7.
// 9: the run fingerprint tells engines apart (an engine's events carry its
//    index, sim/event_tags.hpp); times and tokens as in 8, fingerprints of
//    runs with more than one engine differ.
// 10: accelerators' memory is the total the driver reports (H100 81,559 MiB,
//    85.5 GB; H200 143,771 MiB), not the datasheet's round figure read as 1e9
//    bytes (80 GB): every engine's KV pool, and so every KV-bound run (its
//    preemptions, its admissions), changes; so do the plan's memory checks.
//    And sync.per_transfer_ms_per_node_doubling defaults to its fit on verl's
//    per-tensor rows (0.2582 ms, was 0): multi-node per_tensor, bucketed
//    and checkpoint_engine syncs cost more per transfer. Runs report
//    trainer_lent_s (elastic splits' lent time).
// 11: defaults fitted on component benchmarks (sim/fitted_defaults.hpp):
//    engine compute / HBM efficiency, iteration overhead, the routed experts'
//    own compute efficiency, collective latency per ring step (tp - 1 per
//    collective); the trainer's MFU, a fixed cost per micro-batch, full
//    activation recomputation on by default, the TP activation all-reduces of
//    each layer, and FSDP gathers of each model-parallel rank's parameters
//    (not the whole model's) under TP, PP or EP.
// 12: the trainer's elementwise work is memory-bound time beside its
//    matmuls (train.activation_passes, fitted with train.mfu and the
//    micro-batch cost on the same training benchmarks): every trained step's
//    time changes, most on accelerators with little HBM per FLOP.
// 13: the trainer's defaults refitted with torchtitan's H100 rows on the
//    hardware their source states (h100-hbm2e: 96 GB HBM2e at 2.4 TB/s, not
//    the SXM5's 3.35): train.mfu 0.550, 10.2 ms per micro-batch, 30.0
//    activation passes; every trained step's time changes.
// 14: the trainer's defaults are each framework's profile, fitted on that
//    framework's training benchmarks (NeMo's Megatron-Core recipes beside
//    torchtitan's and AutoModel's FSDP2): train.fsdp_mfu 0.572 and 30.7
//    activation passes, train.megatron_mfu 0.847 and 6.0 passes, 23.5 ms per
//    micro-batch; train.mfu and train.activation_passes default to the
//    framework's. Every trained step's time changes, Megatron's most.
// 15: the engine fitted on 70 serving rows, the H20's among them: the H20 its
//    own HBM efficiency (engine.h20_hbm_efficiency 0.372, against 0.720 on
//    every other accelerator), 1,569 us per iteration. Every rollout's times
//    change, an H20's most.
// 16: the engine fitted on 76 serving rows, six more MoE rows at 64-500
//    requests in flight among them: SGLang's and vLLM's routed experts' weights read at
//    engine.moe_hbm_share 0.692 of the dense weights' bandwidth. Every MoE
//    rollout's times change; the other efficiencies moved with the refit, and
//    the trainer's activation passes with engine.hbm_efficiency (FSDP2 33.84,
//    Megatron-Core 6.611), which they run at.
inline constexpr std::int64_t kModelVersion = 16;

}  // namespace april::scenario
