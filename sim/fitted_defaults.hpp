#pragma once
// The cost models' defaults that no datasheet states, fitted on component
// benchmarks others measured and published: the engine's on serving
// throughput (calibration/serving_rows.json), the trainer's on training
// throughput (calibration/training_rows.json). `april components` re-derives
// each from those rows; ctest `components.fit_matches_defaults` fails when a
// value here drifts from its fit. RL step-time tables are never fitted here.
namespace april::sim::fitted {

// Engine (RooflineParams).
inline constexpr double kEngineComputeEfficiency = 0.417;
inline constexpr double kEngineHbmEfficiency = 0.679;
inline constexpr double kEngineIterationOverheadUs = 620;
inline constexpr double kEngineMoeComputeEfficiency = 0.306;
inline constexpr double kEngineCollectiveLatencyUs = 8.24;

// Trainer (TrainerSetup): each framework's profile, its matmuls' MFU and its
// elementwise passes over the activations (PyTorch FSDP2 eager against
// Megatron-Core with Transformer Engine's fused kernels), and one cost per
// micro-batch for both.
inline constexpr double kTrainFsdpMfu = 0.572;
inline constexpr double kTrainMegatronMfu = 0.847;
inline constexpr double kTrainFsdpActivationPasses = 30.69;
inline constexpr double kTrainMegatronActivationPasses = 6.006;
inline constexpr double kTrainMicroBatchOverheadS = 0.02345;

}  // namespace april::sim::fitted
