#pragma once
// The torch device named on the command line (private: torch).
#include <torch/torch.h>

#include <string>

namespace april::live {

// "cpu", or "cuda" where this libtorch build and the machine have it; anything else is an error that says so.
torch::Device parse_device(const std::string& name);

}  // namespace april::live
