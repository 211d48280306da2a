#pragma once
// Accelerators: the figures of a GPU and of the node it sits in that the cost
// models use, each from its vendor's datasheet (hardware.cpp cites them). A
// scenario's `hardware` is a built-in name or a JSON file with the same fields.
#include <string>
#include <vector>

namespace april::base {
struct JsonFile;
}

namespace april::sim {

// Bytes in the MiB nvidia-smi and rocm-smi print memory in.
inline constexpr double kBytesPerMiB = 1024.0 * 1024.0;

struct Accelerator {
  std::string name;         // "h100"
  std::string description;  // "NVIDIA H100 SXM5 80GB"
  // Dense tensor-core peaks (vendors also quote 2:4 sparse figures, twice these).
  double bf16_flop_s = 0;
  double fp8_flop_s = 0;  // 0 where the GPU has no FP8 tensor cores
  double hbm_bytes = 0;   // the total the driver reports, which frameworks take their memory fraction of
  double hbm_bytes_s = 0;
  double scale_up_bytes_s = 0;  // NVLink / Infinity Fabric per GPU, one direction
  int gpus_per_node = 8;
  int scale_up_domain_gpus = 8;  // GPUs one scale-up fabric joins (72 in a GB200 NVL72 rack)
  double nic_bytes_s = 0;        // scale-out network per GPU, one direction
  double host_link_bytes_s = 0;  // GPU to host memory (PCIe, NVLink-C2C), one direction: offloading
  std::string source;
  // The fraction of hbm_bytes_s a serving engine reaches is fitted per class
  // of accelerator (sim/fitted_defaults.hpp): "common" (engine.hbm_efficiency)
  // or "h20" (engine.h20_hbm_efficiency, the H20's own rows). A hardware file
  // for another H20 SKU names the class it shares.
  std::string engine_hbm_class = "common";

  // Peak of the given weight precision's matmuls: FP8 falls back to BF16 where there is none.
  [[nodiscard]] double peak_flop_s(bool fp8) const { return fp8 && fp8_flop_s > 0 ? fp8_flop_s : bf16_flop_s; }
};

const std::vector<Accelerator>& builtin_accelerators();
std::vector<std::string> builtin_accelerator_names();
// A built-in name, else the path of a hardware JSON file (fields as in
// Accelerator, units in their names: see accelerator_from_json). Throws
// base::ConfigError naming the file and field.
Accelerator resolve_accelerator(const std::string& name_or_path);
Accelerator accelerator_from_json(const base::JsonFile& f);

}  // namespace april::sim
