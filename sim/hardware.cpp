#include "sim/hardware.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include "base/config.hpp"
#include "base/json_file.hpp"

namespace april::sim {

namespace {

constexpr double T = 1e12;
constexpr double GB = 1e9;
constexpr double MiB = kBytesPerMiB;
constexpr double Gbit = 1e9 / 8;  // bytes per second in 1 Gb/s

// `hbm_MiB` (the driver's total, as nvidia-smi prints it) or `hbm_GB` (1e9
// bytes), exactly one of them.
double hbm_bytes_from_json(const base::JsonFile& f) {
  const bool mib = f.doc.contains("hbm_MiB") && !f.doc.at("hbm_MiB").is_null();
  const bool gb = f.doc.contains("hbm_GB") && !f.doc.at("hbm_GB").is_null();
  if (mib && gb) {
    throw base::ConfigError(fmt::format("{}: give hbm_MiB or hbm_GB, not both", f.where("hbm_MiB")));
  }
  if (mib) return base::json_double(f, "hbm_MiB", 1, 1e9) * MiB;
  if (!gb) throw base::ConfigError(fmt::format("{}: give hbm_MiB (the total nvidia-smi reports) or hbm_GB", f.path));
  return base::json_double(f, "hbm_GB", 1e-3, 1e6) * GB;
}

}  // namespace

// Vendors quote NVLink as the sum of both directions (H100: 18 links x 50 GB/s
// = 900 GB/s); the cost models send one way at a time, so the figures here are
// half of it. FLOP/s are dense; datasheets give sparse ones beside them
// ("with sparsity"), twice as large. The host link is PCIe x16 (Gen4 32 GB/s,
// Gen5 64 GB/s each way: PCI-SIG's per-lane 16 / 32 GT/s) as each datasheet
// gives it (A100 "PCIe Gen4 64 GB/s", H100 "PCIe Gen5 128 GB/s", both ways),
// and GB200's NVLink-C2C to its Grace CPU (900 GB/s both ways).
// Memory is the total the driver reports (nvidia-smi's MiB, rocm-smi's bytes),
// not the datasheet's round figure: SGLang's mem_fraction_static and vLLM's
// gpu_memory_utilization take their share of the device's total, and an
// "80 GB" H100 reports 81,559 MiB (85.5 GB), 7% above 80e9 bytes. (CUDA's
// own total is about 0.6% below nvidia-smi's, and SGLang takes its fraction
// of the memory free at its start: the pools here are about 1% large.)
const std::vector<Accelerator>& builtin_accelerators() {
  static const std::vector<Accelerator> all = {
      {"a100", "NVIDIA A100 SXM4 80GB", 312 * T, 0, 81920 * MiB, 2.039 * T, 300 * GB, 8, 8, 200 * Gbit, 32 * GB,
       "NVIDIA A100 Tensor Core GPU datasheet (2021): BF16 312 TFLOPS dense (624 sparse), no FP8, 80 GB HBM2e at "
       "2,039 GB/s, NVLink 600 GB/s; DGX A100 user guide: 8 GPUs, 8x ConnectX-6 200 Gb/s for compute"
       "; memory as the driver reports it: 81,920 MiB (nvidia-smi \"NVIDIA A100-SXM4-80GB\", NVIDIA/nccl-tests#228)"},
      {"h100", "NVIDIA H100 SXM5 80GB", 989 * T, 1979 * T, 81559 * MiB, 3.35 * T, 450 * GB, 8, 8, 400 * Gbit, 64 * GB,
       "NVIDIA H100 Tensor Core GPU datasheet: BF16 1,979 / FP8 3,958 TFLOPS with sparsity (989 / 1,979 dense), 80 GB "
       "HBM3 at 3.35 TB/s, NVLink 900 GB/s; DGX H100: 8 GPUs, 8x ConnectX-7 400 Gb/s"
       "; memory as the driver reports it: 81,559 MiB (nvidia-smi \"NVIDIA H100 80GB HBM3\", NVIDIA/nccl#1264, wilicc/gpu-burn#114)"},
      {"h200", "NVIDIA H200 SXM 141GB", 989 * T, 1979 * T, 143771 * MiB, 4.8 * T, 450 * GB, 8, 8, 400 * Gbit, 64 * GB,
       "NVIDIA H200 Tensor Core GPU datasheet: BF16 1,979 / FP8 3,958 TFLOPS with sparsity (989 / 1,979 dense), 141 GB "
       "HBM3e at 4.8 TB/s, NVLink 900 GB/s; HGX H200: 8 GPUs, 400 Gb/s per GPU"
       "; memory as the driver reports it: 143,771 MiB (nvidia-smi in our own runs, bench/results/cuda_h200_*.txt)"},
      {"h20", "NVIDIA H20 96GB", 148 * T, 296 * T, 97871 * MiB, 4.0 * T, 450 * GB, 8, 8, 400 * Gbit, 64 * GB,
       "NVIDIA publishes no H20 datasheet: BF16 148 / FP8 296 TFLOPS dense, 96 GB HBM3 at 4.0 TB/s, NVLink 900 GB/s as "
       "tabulated by LMSYS with Ant Group (SGLang blog, 2025-09-26) and by Tencent Tech (2023-11-28); 96 GB SKU in NVIDIA "
       "AI Enterprise's vGPU list (a 141 GB SKU exists: give it as a hardware file); 8 GPUs per HGX board, 400 Gb/s per GPU"
       "; memory as the driver reports it: 97,871 MiB (nvidia-smi \"NVIDIA H20\", deepseek-ai/DeepGEMM#268, NVIDIA/nccl-tests#338)",
       // Its engines read HBM at the H20's own fitted fraction (sim/fitted_defaults.hpp).
       "h20"},
      {"h800", "NVIDIA H800 SXM5 80GB", 989 * T, 1979 * T, 81559 * MiB, 3.35 * T, 200 * GB, 8, 8, 400 * Gbit, 64 * GB,
       "H800 SXM: H100 compute and memory (989 / 1,979 TFLOPS dense BF16 / FP8, 80 GB at 3.35 TB/s; no public NVIDIA "
       "datasheet), NVLink cut from 900 to 400 GB/s and 8 x 400G ConnectX-7 per node (DeepSeek, 'Insights into "
       "DeepSeek-V3', arXiv 2505.09343, section 4.1); DeepSeek-V3 report (arXiv 2412.19437) 3.1: 8 GPUs per node; "
       "3.2.2: NVLink 160 GB/s and InfiniBand 50 GB/s achieved"
       "; memory as the driver reports it: 81,559 MiB (nvidia-smi \"NVIDIA H800\", NVIDIA/DCGM#183)"},
      {"b200", "NVIDIA B200 (HGX B200)", 2.25e15, 4.5e15, 183359 * MiB, 7.7 * T, 900 * GB, 8, 8, 400 * Gbit, 64 * GB,
       "NVIDIA HGX B200 page: 36 PFLOPS BF16 for 8 GPUs with sparsity ('dense is 1/2'), so 2.25 / 4.5 PF dense BF16 / FP8 "
       "per GPU; DGX B200: 1,440 GB HBM3e (180 GB per GPU); Blackwell datasheet HGX column: 7.7 TB/s; NVLink 5 1.8 TB/s; "
       "8 x ConnectX-7 400 Gb/s"
       "; memory as the driver reports it: 183,359 MiB (nvidia-smi \"NVIDIA B200\", NVIDIA/TensorRT-LLM#10278)"},
      {"gb200", "NVIDIA GB200 NVL72 (one Blackwell GPU)", 2.5e15, 5e15, 189471 * MiB, 8 * T, 900 * GB, 4, 72, 800 * Gbit, 450 * GB,
       "NVIDIA GB200 NVL72 datasheet: per rack 180 PFLOPS BF16 / 360 PFLOPS FP8 dense-equivalent of 72 GPUs "
       "(2.5 / 5 PF each, sparse figures twice), 13.4 TB HBM3e (186 GB per GPU) at 576 TB/s (8 TB/s), NVLink 5 "
       "1.8 TB/s per GPU in one 72-GPU domain; 4 GPUs per compute tray, ConnectX-8 800 Gb/s per GPU (tray and NIC figures from system "
       "vendors)"
       "; memory as the driver reports it: 189,471 MiB (nvidia-smi \"NVIDIA GB200\", vllm-project/vllm#24272)"},
      {"mi300x", "AMD Instinct MI300X", 1307.4 * T, 2614.9 * T, 196592 * MiB, 5.3 * T, 448 * GB, 8, 8, 400 * Gbit, 64 * GB,
       "AMD Instinct MI300X product page: BF16 1,307.4 / FP8 2,614.9 TFLOPS dense (sparse twice; footnote MI300-17), "
       "192 GB HBM3 at 5.3 TB/s, Infinity Fabric links of 128 GB/s: 7 peers x 128 = 896 GB/s in a full mesh of 8 (no "
       "switch; one peer gets 1/7 of it); 400 Gb/s NIC per GPU in AMD's reference platform"
       "; memory as the driver reports it: 196,592 MiB (rocm-smi \"VRAM Total Memory (B): 206141652992\", ROCm/legacy-rocm-build#4750)"},
      {"mi325x", "AMD Instinct MI325X", 1307.4 * T, 2614.9 * T, 262128 * MiB, 6.0 * T, 448 * GB, 8, 8, 400 * Gbit, 64 * GB,
       "AMD Instinct MI325X datasheet: BF16 1,307.4 / FP8 2,614.9 TFLOPS dense, 256 GB HBM3E at 6 TB/s, Infinity "
       "Fabric 896 GB/s aggregate; 8 per platform"
       "; memory as the driver reports it: 262,128 MiB (amd-smi \"262128 MB VRAM\", ROCm/rocm-systems#8263)"},
      {"mi355x", "AMD Instinct MI355X", 2.5e15, 5.0e15, 294896 * MiB, 8 * T, 538 * GB, 8, 8, 400 * Gbit, 64 * GB,
       "AMD Instinct MI355X datasheet: BF16 2.5 / FP8 5.0 PFLOPS dense (sparse twice), 288 GB HBM3E at 8 TB/s, "
       "Infinity Fabric 1,075 GB/s aggregate; 8 per platform"
       "; memory as the driver reports it: 294,896 MiB (rocminfo GPU pool 301973504 KB, ROCm/ATOM#1400; on MI300X the same pool size "
       "equals rocm-smi's total)"},
      {"h100-hbm2e", "NVIDIA H100 SXM5 96GB HBM2e at 500 W (Meta's Grand Teton hosts)", 989 * T, 1979 * T, 91553 * MiB, 2.4 * T, 450 * GB,
       8, 8, 400 * Gbit, 64 * GB,
       "torchtitan's H100 benchmarks (benchmarks/llama3_h100_202412_torchtitan.md at 820504e2): 'Grand Teton H100 hosts: "
       "8 H100 per host, 96GB HBM2e, 2.4 TB/s, default 500W power limit', 400 Gb/s RDMA per GPU; compute and NVLink as "
       "the H100 SXM5 datasheet's (the 500 W limit's effect on clocks is not published); memory the datasheet's 96 GB "
       "(the driver's total is not published)"},
  };
  return all;
}

std::vector<std::string> builtin_accelerator_names() {
  std::vector<std::string> out;
  for (const auto& a : builtin_accelerators()) out.push_back(a.name);
  return out;
}

Accelerator accelerator_from_json(const base::JsonFile& f) {
  base::json_only_fields(
      f, f.doc,
      {"name", "description", "bf16_dense_TFLOP_s", "fp8_dense_TFLOP_s", "hbm_MiB", "hbm_GB", "hbm_TB_s", "scale_up_GB_s", "gpus_per_node",
       "scale_up_domain_gpus", "nic_Gb_s", "host_link_GB_s", "engine_hbm_class", "source"});
  Accelerator a;
  a.name = base::json_string(f, "name");
  a.description = base::json_string_or(f, "description", a.name);
  a.bf16_flop_s = base::json_double(f, "bf16_dense_TFLOP_s", 1e-3, 1e7) * T;
  a.fp8_flop_s = base::json_double_or(f, "fp8_dense_TFLOP_s", 0, 0, 1e7) * T;
  a.hbm_bytes = hbm_bytes_from_json(f);
  a.hbm_bytes_s = base::json_double(f, "hbm_TB_s", 1e-3, 1e4) * T;
  a.scale_up_bytes_s = base::json_double(f, "scale_up_GB_s", 1e-3, 1e6) * GB;
  a.gpus_per_node = static_cast<int>(base::json_int(f, "gpus_per_node", 1, 1024));
  a.scale_up_domain_gpus = static_cast<int>(base::json_int_or(f, "scale_up_domain_gpus", a.gpus_per_node, 1, 1 << 16));
  a.nic_bytes_s = base::json_double(f, "nic_Gb_s", 1e-3, 1e6) * Gbit;
  a.host_link_bytes_s = base::json_double_or(f, "host_link_GB_s", 64, 1e-3, 1e6) * GB;  // PCIe Gen5 x16 unless given
  a.source = base::json_string_or(f, "source", f.path);
  a.engine_hbm_class = base::json_string_or(f, "engine_hbm_class", "common");
  if (a.engine_hbm_class != "common" && a.engine_hbm_class != "h20") {
    throw base::ConfigError(fmt::format("{}: '{}' is neither common nor h20", f.where("engine_hbm_class"), a.engine_hbm_class));
  }
  if (a.scale_up_domain_gpus < a.gpus_per_node) {
    throw base::ConfigError(
        fmt::format("{}: {} is fewer than gpus_per_node {}", f.where("scale_up_domain_gpus"), a.scale_up_domain_gpus, a.gpus_per_node));
  }
  return a;
}

Accelerator resolve_accelerator(const std::string& name_or_path) {
  for (const auto& a : builtin_accelerators()) {
    if (a.name == name_or_path) return a;
  }
  struct stat st {};
  if (::stat(name_or_path.c_str(), &st) != 0) {
    throw base::ConfigError(fmt::format("hardware '{}': neither a built-in accelerator ({}) nor a hardware JSON file", name_or_path,
                                        fmt::join(builtin_accelerator_names(), ", ")));
  }
  return accelerator_from_json(base::read_json_file(name_or_path, "hardware file"));
}

}  // namespace april::sim
