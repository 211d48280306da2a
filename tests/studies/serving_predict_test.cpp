// The serving replay april's engine fit runs on each benchmark row.
#include <gtest/gtest.h>

#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"
#include "studies/serving_rows.hpp"

namespace april::studies {
namespace {

ServingRow moe_row(const std::string& engine) {
  ServingRow r;
  r.id = "test";
  r.engine = engine;
  r.model = "qwen3-30b-a3b";
  r.accelerator = "h100";
  r.input_tok = 1000;
  r.output_tok = 1000;
  r.concurrency = 64;
  r.num_prompts = 128;
  return r;
}

TEST(ServingPredict, TheMoeShareIsSglangsAndVllmsNotTensorRtLlms) {
  const auto model = sim::resolve_model("qwen3-30b-a3b");
  const auto hw = sim::resolve_accelerator("h100");
  EngineFit fit;
  fit.moe_hbm_share = 0.5;
  const double sglang = predict_serving_tok_s(moe_row("sglang"), model, hw, fit);
  const double vllm = predict_serving_tok_s(moe_row("vllm"), model, hw, fit);
  const double trtllm = predict_serving_tok_s(moe_row("trtllm"), model, hw, fit);
  EXPECT_EQ(sglang, vllm);
  // At 64 requests nearly every expert is read each iteration: half the bandwidth for them is much slower.
  EXPECT_GT(trtllm, 1.3 * sglang);
  // At a share of 1 the engines agree.
  fit.moe_hbm_share = 1.0;
  EXPECT_EQ(predict_serving_tok_s(moe_row("sglang"), model, hw, fit), trtllm);
  // A dense model has no routed experts to read more slowly.
  auto dense = moe_row("sglang");
  dense.model = "qwen3-8b";
  fit.moe_hbm_share = 0.5;
  const auto dense_model = sim::resolve_model("qwen3-8b");
  auto dense_trt = dense;
  dense_trt.engine = "trtllm";
  EXPECT_EQ(predict_serving_tok_s(dense, dense_model, hw, fit), predict_serving_tok_s(dense_trt, dense_model, hw, fit));
}

}  // namespace
}  // namespace april::studies
