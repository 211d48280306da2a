// The HTTP backend's sampling options come from the scenario in one place:
// `april validate --engines` sampled at top_p 1.0 whatever live.top_p said
// while `april live --engines` honoured it.
#include <gtest/gtest.h>

#include "adapters/live/http_backend.hpp"
#include "base/config.hpp"
#include "policies/registry.hpp"
#include "scenario/scenario.hpp"

namespace april::live {
namespace {

TEST(HttpBackendOptions, SamplingComesFromTheScenariosLiveKeys) {
  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  base::Config c(schema);
  c.set_from_text("live.top_p", "0.7", "test");
  c.set_from_text("live.temperature", "0.5", "test");
  c.set_from_text("seed", "9", "test");
  const auto o = http_backend_options(c);
  EXPECT_EQ(o.top_p, 0.7);
  EXPECT_EQ(o.temperature, 0.5);
  EXPECT_EQ(o.seed, 9u);
  // The defaults where the scenario says nothing.
  base::Config d(schema);
  const auto od = http_backend_options(d);
  EXPECT_EQ(od.top_p, d.get_double("live.top_p"));
  EXPECT_EQ(od.temperature, d.get_double("live.temperature"));
}

}  // namespace
}  // namespace april::live
