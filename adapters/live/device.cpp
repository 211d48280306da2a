#include "adapters/live/detail/device.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace april::live {

torch::Device parse_device(const std::string& d) {
  if (d == "cpu") return torch::kCPU;
  if (d == "cuda") {
    if (!torch::cuda::is_available()) throw std::invalid_argument("device 'cuda': this libtorch build or machine has no CUDA device");
    return torch::kCUDA;
  }
  throw std::invalid_argument(fmt::format("unknown device '{}' (cpu or cuda)", d));
}

}  // namespace april::live
