#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>
#include <variant>

#include "base/integer_text.hpp"
#include "scenario/memory_estimate.hpp"
#include "test_support.hpp"

namespace april {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  // One file per test: ctest runs tests in parallel processes.
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const auto path = (std::filesystem::temp_directory_path() / ("april_" + test + "_" + name)).string();
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& text) {
  testing::Fixture f;
  const auto path = write_temp("scenario.json", text);
  try {
    scenario::apply_scenario(f.config, path);
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ScenarioFile, NestedAndDottedKeysAreRead) {
  testing::Fixture f;
  const auto path = write_temp("ok.json", R"({"base": "handcheck", "workload": {"sigma_within": 0.25},
    "april.alpha": 1.5, "rollout_batch_size": 3})");
  scenario::apply_scenario(f.config, path);
  EXPECT_DOUBLE_EQ(f.config.get_double("workload.sigma_within"), 0.25);
  EXPECT_DOUBLE_EQ(f.config.get_double("april.alpha"), 1.5);
  EXPECT_EQ(f.config.get_int("rollout_batch_size"), 3);
  EXPECT_EQ(f.config.get_string("engine.iteration_model"), "constant");  // from the base
}

TEST(ScenarioFile, UnknownKeyNamesFileLineAndKey) {
  const std::string e = error_of("{\n  \"rollout_batch_size\": 4,\n  \"workload\": {\"sigma_wtihin\": 1}\n}");
  EXPECT_NE(e.find("scenario.json:3"), std::string::npos) << e;
  EXPECT_NE(e.find("workload.sigma_wtihin"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean workload.sigma_within"), std::string::npos) << e;
}

TEST(ScenarioFile, BadValuesNameTheKey) {
  EXPECT_NE(error_of(R"({"rollout_batch_size": 0})").find("key 'rollout_batch_size': must be in [1, 1048576]"), std::string::npos);
  EXPECT_NE(error_of(R"({"rollout_batch_size": 2.5})").find("expected an integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"april": {"alpha": "two"}})").find("key 'april.alpha': expected a number"), std::string::npos);
  EXPECT_NE(error_of(R"({"model": "gpt-9"})").find("'gpt-9' is neither one of qwen3-0.6b, qwen3-4b"), std::string::npos);
  EXPECT_NE(error_of(R"({"april.alpha": 0.5})").find("must be in [1, 1073741824]"), std::string::npos);
  EXPECT_NE(error_of(R"({"base": "nope"})").find("key 'base'"), std::string::npos);
  // Integers from 2^63 up are refused, not wrapped into negative numbers (-1 = "no cap").
  for (const std::string big : {"18446744073709551615", "9223372036854775808"}) {
    EXPECT_NE(error_of("{\"april.max_staleness\": " + big + "}").find(big + " is out of the 64-bit integer range"), std::string::npos)
        << big;
  }
}

// One reading of an integer: the command line, --set and a scenario file
// agree on every spelling, and refuse the same ones.
TEST(IntegerText, OneReadingForEverySpelling) {
  for (const std::string text : {"1000", "+1000", "1e3", "1000.0", "1.0e3", "10000e-1"}) {
    const auto r = base::read_integer(text);
    ASSERT_TRUE(std::holds_alternative<std::int64_t>(r)) << text;
    EXPECT_EQ(std::get<std::int64_t>(r), 1000) << text;
  }
  EXPECT_EQ(std::get<std::int64_t>(base::read_integer("-9223372036854775808")), INT64_MIN);
  EXPECT_EQ(std::get<std::int64_t>(base::read_integer("9007199254740993")), 9007199254740993);  // digits: exact past 2^53
  const std::pair<const char*, const char*> refused[] = {{"9223372036854775808", "out of the 64-bit integer range"},
                                                         {"-9223372036854775809", "out of the 64-bit integer range"},
                                                         {"1e19", "out of the 64-bit integer range"},
                                                         {"1e300", "out of the 64-bit integer range"},
                                                         {"9.007199254740993e15", "beyond 2^53"},
                                                         {"1.5", "not a whole number"},
                                                         {"0x10", "not an integer"},
                                                         {" 5", "not an integer"},
                                                         {"5 ", "not an integer"},
                                                         {"nan", "not an integer"},
                                                         {"inf", "not an integer"},
                                                         {"", "empty"},
                                                         {"12abc", "not an integer"}};
  for (const auto& [text, why] : refused) {
    const auto r = base::read_integer(text);
    ASSERT_TRUE(std::holds_alternative<std::string>(r)) << text;
    EXPECT_NE(std::get<std::string>(r).find(why), std::string::npos) << text << ": " << std::get<std::string>(r);
  }
}

TEST(IntegerText, SetAndFileAgree) {
  testing::Fixture by_set, by_file;
  by_set.config.set_from_text("steps", "1e3", "--set");
  by_file.config.set_from_json("steps", nlohmann::json::parse("1e3"), "scenario.json");
  EXPECT_EQ(by_set.config.get_int("steps"), 1000);
  EXPECT_EQ(by_file.config.get_int("steps"), 1000);
  // Quoted as the user wrote it.
  try {
    by_set.config.set_from_text("seed", "18446744073709551615", "--set");
    FAIL();
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'18446744073709551615' is out of the 64-bit integer range"), std::string::npos) << e.what();
  }
  EXPECT_THROW(by_file.config.set_from_json("seed", nlohmann::json::parse("2.5"), "scenario.json"), base::ConfigError);
}

TEST(ScenarioFile, SyntaxErrorsNameTheLine) {
  const std::string e = error_of("{\n  \"steps\": 3,\n  \"seed\": \n}");
  EXPECT_NE(e.find("scenario.json:4: invalid JSON"), std::string::npos) << e;
  EXPECT_NE(error_of("[1, 2]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(error_of("").find("invalid JSON"), std::string::npos);
}

TEST(ScenarioFile, MissingFileAndUnknownScenario) {
  testing::Fixture f;
  try {
    scenario::apply_scenario(f.config, "/nonexistent/x.json");
    FAIL();
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not a built-in scenario (default, handcheck, live-cpu)"), std::string::npos);
  }
}

TEST(SetOption, ParsesAndValidates) {
  testing::Fixture f;
  f.config.apply_assignment("april.alpha=1.25");
  EXPECT_DOUBLE_EQ(f.config.get_double("april.alpha"), 1.25);
  EXPECT_THROW(f.config.apply_assignment("april.alpha"), base::ConfigError);
  EXPECT_THROW(f.config.apply_assignment("steps=ten"), base::ConfigError);
  EXPECT_THROW(f.config.apply_assignment("nope=1"), base::ConfigError);
  EXPECT_THROW(f.config.apply_assignment("engine.fast_forward=maybe"), base::ConfigError);
}

TEST(ScenarioFile, AKeyGivenTwiceIsAnError) {
  EXPECT_NE(error_of("{\n  \"steps\": 3,\n  \"steps\": 4\n}").find(":2: key 'steps' is given twice"), std::string::npos);
  const auto both = error_of("{\"april.alpha\": 2,\n \"april\": {\"alpha\": 3}}");
  EXPECT_NE(both.find("key 'april.alpha' is given twice (dotted and nested)"), std::string::npos) << both;
}

TEST(ScenarioFile, DeepNestingIsAnErrorNotACrash) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
  deep += "1";
  for (int i = 0; i < 100000; ++i) deep += "}";
  EXPECT_NE(error_of(deep).find("nested deeper than 32 levels"), std::string::npos);
}

TEST(ScenarioFile, ANumberTooLargeForJsonNamesTheLine) {
  const auto e = error_of("{\n  \"steps\": 1e400\n}");
  EXPECT_NE(e.find(":2:"), std::string::npos) << e;
}

// Sizes have upper bounds, and an overflow names the key the user set.
TEST(SetOption, SizesAreBoundedAndOverflowsNameTheKeyTheUserSet) {
  testing::Fixture f;
  try {
    f.config.apply_assignment("rollout_batch_size=4294967296");
    FAIL() << "accepted 2^32 groups";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'rollout_batch_size': must be in [1, 1048576]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(f.config.apply_assignment("cluster.tensor_parallel=4297015"), base::ConfigError);
  EXPECT_THROW(f.config.apply_assignment("april.alpha=1e300"), base::ConfigError);
  f.config.apply_assignment("april.alpha=1e9");
  try {
    (void)f.registry.get("april").make(f.config);
    FAIL() << "alpha 1e300 made a policy";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'april.alpha': 1000000000 x rollout_batch_size 32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(f.config.apply_assignment("seed=99999999999999999999"), base::ConfigError);
}

// No numeric knob is unbounded: a huge or hugely negative value is refused
// at the key the user wrote, before anything derived from it can overflow.
// Seeds and staleness caps are exempt: every int64 is a meaningful value.
TEST(SetOption, EveryNumericKnobIsBounded) {
  testing::Fixture f;
  const std::set<std::string> any_int64 = {"seed", "april.max_staleness", "april_adaptive.max_staleness", "april.max_token_staleness",
                                           "sorted.max_staleness"};
  int checked = 0;
  for (const auto& [name, knob] : f.schema.knobs()) {
    if (knob.type == base::KnobType::Double) {
      for (const char* v : {"1e300", "-1e300"}) {
        EXPECT_THROW(f.config.apply_assignment(name + "=" + v), base::ConfigError) << name << " accepted " << v;
      }
      ++checked;
    } else if (knob.type == base::KnobType::Int && any_int64.count(name) == 0) {
      EXPECT_THROW(f.config.apply_assignment(name + "=9223372036854775807"), base::ConfigError) << name;
      EXPECT_THROW(f.config.apply_assignment(name + "=-9223372036854775807"), base::ConfigError) << name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
  // Past the knob bounds, a product of them that leaves int64 nanoseconds is
  // an error saying so, not wrapped time.
  testing::Fixture g("default", {"train.fixed_s=1e7", "steps=2000"});
  try {
    (void)scenario::simulate(g.config, g.registry, "sync");
    FAIL() << "2000 steps of 1e7 s ran";
  } catch (const std::overflow_error& e) {
    EXPECT_NE(std::string(e.what()).find("past what the simulator holds (292 years in ns)"), std::string::npos) << e.what();
  }
}

// Integers read the same from --set as from a JSON file: exactly, past 2^53.
TEST(SetOption, IntegersParseExactly) {
  testing::Fixture f;
  f.config.apply_assignment("seed=9007199254740993");
  EXPECT_EQ(f.config.get_int("seed"), 9007199254740993LL);
  f.config.apply_assignment("steps=1e3");
  EXPECT_EQ(f.config.get_int("steps"), 1000);
  EXPECT_THROW(f.config.apply_assignment("steps=2.5"), base::ConfigError);
}

// Reading a knob as another type is a programming error that must not pass
// silently (a boolean read as a number used to give NaN).
TEST(Knobs, ReadingAKnobAsAnotherTypeThrows) {
  testing::Fixture f;
  EXPECT_THROW((void)f.config.get_double("engine.fast_forward"), std::logic_error);
  EXPECT_THROW((void)f.config.get_double("model"), std::logic_error);
  EXPECT_THROW((void)f.config.get_int("april.alpha"), std::logic_error);
  EXPECT_THROW((void)f.config.get_bool("steps"), std::logic_error);
  EXPECT_THROW((void)f.config.get_string("seed"), std::logic_error);
  EXPECT_THROW((void)f.config.get_int("no.such.knob"), std::logic_error);
  EXPECT_EQ(f.config.get_int("steps"), 50);
  EXPECT_DOUBLE_EQ(f.config.get_double("steps"), 50.0);  // integers read as numbers
  EXPECT_TRUE(f.config.get_bool("engine.fast_forward"));
  EXPECT_EQ(f.config.get_string("model"), "qwen3-4b");
  try {
    (void)f.config.get_double("engine.fast_forward");
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("get_double on the boolean knob 'engine.fast_forward'"), std::string::npos) << e.what();
  }
}

// The KV check reads a trace's own requests (it used to guess from the
// generator's median prompt: a trace of 16-token requests was refused at 111).
TEST(Scenario, KvCapacityIsCheckedAgainstTheTracesLongestRequest) {
  testing::Fixture f("default", {"engine.kv_capacity_tok=111"});
  const std::vector<base::GroupSpec> trace = {testing::group("a", {10, 8}, 6), testing::group("b", {3, 12}, 4)};
  EXPECT_NO_THROW(scenario::validate_scenario(f.config, &trace, "short.jsonl"));
  EXPECT_THROW(scenario::validate_scenario(f.config), base::ConfigError);  // the generator's prompts are longer
  f.config.apply_assignment("engine.kv_capacity_tok=15");
  try {
    scenario::validate_scenario(f.config, &trace, "short.jsonl");
    FAIL() << "a 16-token request fit in 15";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("short.jsonl: prompt 'a' needs 16 KV tokens (6 prompt + 10 response"), std::string::npos)
        << e.what();
  }
  // max_response_len caps what a request can need.
  f.config.apply_assignment("max_response_len=9");
  EXPECT_NO_THROW(scenario::validate_scenario(f.config, &trace, "short.jsonl"));
}

// A request that does not fit is an error naming its prompt, not a bare
// engine failure in the middle of a run.
TEST(Scenario, ARequestTooLongForTheEngineNamesItsPrompt) {
  testing::Fixture f("handcheck", {"engine.kv_capacity_tok=50"});
  auto backend = scenario::make_sim_backend(f.config);
  rl::SampleRequest r;
  r.key = rl::make_sample_key(3, 1);
  r.prompt_id = "long-one";
  r.prompt_tok = 40;
  r.max_new_tok = 20;
  r.target_response_tok = 20;
  try {
    backend->submit(r);
    FAIL() << "a 60-token request fit in 50";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("prompt 'long-one' (sample 1) needs 60 KV tokens"), std::string::npos) << e.what();
  }
}

TEST(Scenario, InconsistentClusterIsAnError) {
  testing::Fixture f("default", {"cluster.engines=8"});  // 8 x TP 2 > 8 GPUs
  EXPECT_THROW(scenario::validate_scenario(f.config), base::ConfigError);
  testing::Fixture g("default", {"april.over_sampling_batch_size=8"});  // B' < B
  EXPECT_THROW(scenario::simulate(g.config, g.registry, "april"), base::ConfigError);
  EXPECT_THROW(scenario::simulate(g.config, g.registry, "fifo"), std::invalid_argument);
}

// A scenario larger than the machine is refused before anything is built,
// with the estimate and what it is made of.
TEST(Scenario, AScenarioLargerThanTheMachineIsRefusedWithTheEstimate) {
  testing::Fixture f("default", {"rollout_batch_size=1048576", "n_samples_per_prompt=65536"});
  try {
    (void)scenario::simulate(f.config, f.registry, "april");
    FAIL() << "2^37 resident samples accepted";
  } catch (const base::ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("137438953472 resident samples x 320 B"), std::string::npos) << m;  // B' = 2^21 groups x n = 2^16
    EXPECT_NE(m.find("more than the"), std::string::npos) << m;
  }
  // The bound is the policy's: sync holds 2B groups, sorted k x B, april B'.
  testing::Fixture g("handcheck", {"rollout_batch_size=100", "n_samples_per_prompt=10", "steps=1000"});
  const auto& c = g.config;
  EXPECT_DOUBLE_EQ(scenario::estimate_memory(c, g.registry.get("sync").make(c)->resident_groups_bound(100), false).resident_samples, 2000);
  EXPECT_DOUBLE_EQ(scenario::estimate_memory(c, g.registry.get("sorted").make(c)->resident_groups_bound(100), false).resident_samples,
                   4000);
  EXPECT_DOUBLE_EQ(scenario::estimate_memory(c, g.registry.get("april").make(c)->resident_groups_bound(100), false).resident_samples, 2000);
  // 2000 samples x 320 B + 1000 steps x 256 B = 896000 B: refused under that limit, run at it.
  scenario::RunOptions tight;
  tight.memory_limit_bytes = 895999;
  EXPECT_THROW((void)scenario::Simulation(c, g.registry, "april", tight), base::ConfigError);
  tight.memory_limit_bytes = 896000;
  EXPECT_NO_THROW((void)scenario::Simulation(c, g.registry, "april", tight));
  // --out's timeline is counted: two points per resident sample and step.
  // 40 B a point: rl::EngineRunningChange, five 64-bit integers.
  EXPECT_DOUBLE_EQ(scenario::estimate_memory(c, 100, true).bytes, 1000 * 320 + 1000 * 256 + 2.0 * 1000 * 1000 * 40);
}

}  // namespace
}  // namespace april
