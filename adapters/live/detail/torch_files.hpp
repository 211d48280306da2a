#pragma once
// torch::save and torch::load with the file named in their errors:
// libtorch's own message names the archive's inner record, not the file (a
// full disk says "PytorchStreamWriter failed writing file data/0").
#include <fmt/format.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace april::live {

template <typename T>
void save_to(const T& value, const std::string& path) {
  try {
    torch::save(value, path);
  } catch (const c10::Error& e) {
    throw std::runtime_error(fmt::format("{}: cannot write: {}", path, e.what_without_backtrace()));
  }
}

template <typename T>
void load_from(T&& value, const std::string& path) {
  try {
    torch::load(value, path);
  } catch (const c10::Error& e) {
    throw std::runtime_error(fmt::format("{}: cannot read: {}", path, e.what_without_backtrace()));
  }
}

}  // namespace april::live
