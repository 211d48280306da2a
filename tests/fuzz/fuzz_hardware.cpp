// libFuzzer target: hardware JSON files (`--set hardware=FILE`), and what april
// derives from an accelerator it accepts (engine memory, a roofline
// iteration, a train step). Any input is read or refused with our error; a
// crash, a sanitizer report, a hang or a JSON library exception is a bug.
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
#include "sim/model_catalog.hpp"
#include "sim/train_phases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace april::sim;
  try {
    const auto file = april::base::parse_json_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json", "hardware file");
    const auto hw = accelerator_from_json(file);
    const auto m = resolve_model("qwen3-4b");
    (void)engine_memory(m, hw, EngineLayout{1, 0.85, DType::BF16, DType::BF16, false});
    const RooflineIterationModel roofline(hw, m, RooflineParams{0.6, 0.8, 500000, 1, 1, DType::BF16, DType::BF16, false, 0.77, 5000});
    (void)roofline.decode_window_ns(64, 100000, 100);
    TrainerSetup setup;
    setup.gpus = 8;
    (void)train_phase_times(m, hw, setup, TrainBatchShape{8, 8000, 1000, 4e6});
  } catch (const nlohmann::json::exception&) {
    std::abort();  // the library's own message would reach the user
  } catch (const std::exception&) {
    // A clear refusal is the right outcome for bad input.
  }
  return 0;
}
