// libFuzzer target: model config.json files, and everything april derives from
// one it accepts (counts, bytes, FLOPs, engine memory, a roofline iteration).
// Any input is read or refused with an exception; a crash, a sanitizer report
// (an overflowing count, say) or a hang is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "base/json_file.hpp"
#include "sim/engine_memory.hpp"
#include "sim/hardware.hpp"
#include "sim/iteration_model.hpp"
#include "sim/model_arch.hpp"
#include "sim/train_phases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace april::sim;
  try {
    const auto file = april::base::parse_json_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json", "model config");
    const auto m = model_from_config(file, "fuzz", "fuzz");
    (void)m.total_params();
    (void)m.active_params();
    (void)m.mtp_params();
    (void)m.kv_bytes_per_token(DType::BF16);
    (void)m.weights_read_bytes(64, DType::FP8);
    const auto& hw = builtin_accelerators()[1];
    (void)engine_memory(m, hw, EngineLayout{8, 0.85, DType::BF16, DType::BF16, false});
    const RooflineIterationModel roofline(hw, m, RooflineParams{0.6, 0.8, 500000, 8, 1, DType::BF16, DType::BF16, false, 0.77, 5000});
    (void)roofline.decode_window_ns(64, 100000, 100);
    (void)train_phase_times(m, hw, TrainerSetup{}, TrainBatchShape{8, 8000, 1000, 4e6});
  } catch (const nlohmann::json::exception&) {
    std::abort();  // the library's own message would reach the user
  } catch (const std::exception&) {
    // A clear refusal is the right outcome for bad input.
  }
  return 0;
}
