#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/stats.hpp"
#include "rl/metric_columns.hpp"
#include "scenario/simulation.hpp"
#include "test_support.hpp"
#include "traces/csv_table.hpp"
#include "traces/jsonl_trace.hpp"
#include "traces/trace_fit.hpp"
#include "traces/trace_import.hpp"
#include "traces/trace_resample.hpp"
#include "traces/trace_stats.hpp"

namespace april::traces {
namespace {

const std::string kAzureDir = APRIL_AZURE_TRACE_DIR;

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const auto path = (std::filesystem::temp_directory_path() / ("april_" + test + "_" + name)).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(AzureTrace, ConversationStatsAreExact) {
  const std::string path = kAzureDir + "/AzureLLMInferenceTrace_conv.csv";
  ASSERT_TRUE(std::filesystem::exists(path)) << "the repository ships this trace: " << path;
  ImportOptions o;
  o.format = "azure";
  o.group_size = 8;
  const auto groups = import_trace(path, o);
  const auto s = compute_stats(groups);
  EXPECT_EQ(s.samples, 19366);
  EXPECT_EQ(s.groups, 2421);  // 19366 / 8, the last group holds 6
  EXPECT_NEAR(s.mean_tok, 211.13, 0.005);
  EXPECT_EQ(s.median_tok, 129);
  EXPECT_EQ(s.max_tok, 1000);
}

TEST(AzureTrace, CodeTraceImports) {
  const std::string path = kAzureDir + "/AzureLLMInferenceTrace_code.csv";
  ASSERT_TRUE(std::filesystem::exists(path)) << "the repository ships this trace: " << path;
  ImportOptions o;
  o.format = "azure";
  const auto s = compute_stats(import_trace(path, o));
  EXPECT_EQ(s.samples, 8819);
  EXPECT_NEAR(s.mean_tok, 27.88, 0.005);
  EXPECT_EQ(s.median_tok, 13);
  EXPECT_EQ(s.max_tok, 1899);
}

TEST(TraceStats, HandComputedValues) {
  // Two groups: {1, e^2} and {e^1, e^3} in log space would be awkward; use plain numbers.
  std::vector<base::GroupSpec> g = {april::testing::group("a", {10, 20, 30}), april::testing::group("b", {40, 50})};
  const auto s = compute_stats(g, 40);
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.mean_tok, 30);
  EXPECT_DOUBLE_EQ(s.median_tok, 30);
  EXPECT_DOUBLE_EQ(s.p90_tok, 46);  // 40 + 0.6 * 10
  EXPECT_DOUBLE_EQ(s.truncated_fraction, 0.4);
  EXPECT_NEAR(s.between_group_share + s.within_group_share, 1.0, 1e-12);
  EXPECT_GT(s.between_group_share, 0.5);  // the groups' levels differ more than their members
}

TEST(CsvAndJsonlImport, GroupByPromptIdInFirstAppearanceOrder) {
  const auto csv = temp_file("in.csv", "id,p,r\nq2,10,5\nq1,20,7\nq2,10,9\n");
  ImportOptions o;
  o.format = "csv";
  o.mapping = parse_mapping("prompt_id=id,prompt_tokens=p,response_tokens=r");
  const auto g = import_trace(csv, o);
  ASSERT_EQ(g.size(), 2U);
  EXPECT_EQ(g[0].prompt_id, "q2");
  EXPECT_EQ(g[0].response_tok, (std::vector<std::int32_t>{5, 9}));
  EXPECT_EQ(g[1].response_tok, (std::vector<std::int32_t>{7}));
  const auto jl = temp_file("in.jsonl", "{\"pid\": 3, \"pt\": 4, \"rt\": 8}\n{\"pid\": 3, \"pt\": 4, \"rt\": 2}\n");
  o.format = "jsonl";
  o.mapping = parse_mapping("prompt_id=pid,prompt_tokens=pt,response_tokens=rt");
  const auto h = import_trace(jl, o);
  ASSERT_EQ(h.size(), 1U);
  EXPECT_EQ(h[0].response_tok, (std::vector<std::int32_t>{8, 2}));
}

std::string import_error(const std::string& format, const std::string& text, const std::string& map = "") {
  const auto path = temp_file("bad." + format, text);
  ImportOptions o;
  o.format = format;
  if (!map.empty()) o.mapping = parse_mapping(map);
  try {
    import_trace(path, o);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TraceImport, ErrorsNameFileLineAndField) {
  const std::string h = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  EXPECT_NE(import_error("azure", h + "t,5,7\nt,5,-3\n").find(":3: field 'GeneratedTokens': must be >= 1"), std::string::npos);
  EXPECT_NE(import_error("azure", h + "t,x,7\n").find(":2: field 'ContextTokens': expected an integer"), std::string::npos);
  // Every row is checked, not only a group's first (groups of 8 here).
  EXPECT_NE(import_error("azure", h + "t,5,7\nt,5,7\nt,-1,7\n").find(":4: field 'ContextTokens'"), std::string::npos);
  EXPECT_NE(import_error("azure", h + "t,5\n").find(":2: expected 3 fields"), std::string::npos);
  EXPECT_NE(import_error("azure", h + "t,5,99999999999999999999\n").find("GeneratedTokens"), std::string::npos);
  EXPECT_NE(import_error("azure", h + "t,5,100000000\n").find("larger than"), std::string::npos);
  EXPECT_NE(import_error("azure", "").find("empty file"), std::string::npos);
  EXPECT_NE(import_error("azure", h).find("no samples"), std::string::npos);
  EXPECT_NE(import_error("azure", "a,b\n1,2\n").find("no column 'TIMESTAMP'"), std::string::npos);
  EXPECT_NE(import_error("csv", "id,p,r\nq,1,\"2\n", "prompt_id=id,prompt_tokens=p,response_tokens=r").find(":2: unterminated"),
            std::string::npos);
  EXPECT_NE(import_error("csv", "id,p,r\nq,1,2\n").find("needs --map"), std::string::npos);
  EXPECT_NE(import_error("csv", "id,p,r\nq,1,2\n", "prompt_id=id,prompt_tokens=p,response_tokens=zz").find("no column 'zz'"),
            std::string::npos);
  EXPECT_NE(import_error("jsonl", "{\"i\": 1, \"p\": 2}\n", "prompt_id=i,prompt_tokens=p,response_tokens=r").find(":1: field 'r': missing"),
            std::string::npos);
  EXPECT_NE(import_error("jsonl", "{\"i\": 1, \"p\": 2, \"r\": 1.5}\n", "prompt_id=i,prompt_tokens=p,response_tokens=r").find("field 'r'"),
            std::string::npos);
  EXPECT_NE(import_error("parquet", "x").find("unknown trace format 'parquet'; known: azure, csv, jsonl"), std::string::npos);
  EXPECT_THROW(parse_mapping("prompt_id"), TraceError);
  EXPECT_THROW(parse_mapping("colour=x"), TraceError);
}

// Every truncation and many byte substitutions of valid inputs: a TraceError
// or a clean parse, never a crash or another exception.
TEST(TraceImport, MutationFuzzNeverCrashes) {
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.99,396,109\n"},
      {"csv", "id,p,r\n\"q,1\",10,5\nq2,20,7\n"},
      {"jsonl", "{\"i\": \"a\", \"p\": 2, \"r\": 3}\n{\"i\": 7, \"p\": 0, \"r\": 12}\n"}};
  const std::string junk = "\",\n-0x9e{}[]: \r";
  int parsed = 0, rejected = 0;
  for (const auto& [format, text] : inputs) {
    ImportOptions o;
    o.format = format;
    if (format != "azure")
      o.mapping = parse_mapping("prompt_id=" + std::string(format == "csv" ? "id" : "i") + ",prompt_tokens=p,response_tokens=r");
    auto attempt = [&](const std::string& t) {
      const auto path = temp_file("fuzz." + format, t);
      try {
        import_trace(path, o);
        ++parsed;
      } catch (const TraceError&) {
        ++rejected;
      }
    };
    for (std::size_t cut = 0; cut <= text.size(); ++cut) attempt(text.substr(0, cut));
    for (std::size_t pos = 0; pos < text.size(); pos += 3) {
      for (char c : junk) {
        std::string m = text;
        m[pos] = c;
        attempt(m);
      }
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

// Fit then synthesise: on a lognormal-shaped trace the quantiles come back
// within 10%; the stated tolerance in the README.
TEST(TraceFit, FitThenSynthMatchesQuantiles) {
  april::testing::Fixture f("default", {"workload.incorrect_len_factor=1", "workload.response_median_tok=700", "workload.sigma_between=0.5",
                                        "workload.sigma_within=0.6", "seed=3"});
  auto gen = scenario::make_generator(f.config);
  std::vector<base::GroupSpec> original;
  for (int i = 0; i < 3000; ++i) original.push_back(gen->next_group(0));
  const auto fit = fit_workload(original);
  EXPECT_NEAR(fit.response_median_tok, 700, 35);
  EXPECT_NEAR(fit.sigma_between, 0.5, 0.05);
  EXPECT_NEAR(fit.sigma_within, 0.6, 0.05);
  EXPECT_EQ(fit.cap_tok, 0);

  april::testing::Fixture g("default", {"seed=4"});
  base::load_config_text(g.config, fit_scenario_json(fit, "test").dump(), "fit.json");
  auto synth_gen = scenario::make_generator(g.config);
  std::vector<base::GroupSpec> synth;
  for (int i = 0; i < 3000; ++i) synth.push_back(synth_gen->next_group(0));
  const auto a = compute_stats(original);
  const auto b = compute_stats(synth);
  for (double q : {0.1, 0.25, 0.5, 0.75, 0.9, 0.99}) {
    const double qa = base::quantile_sorted(a.sorted_tok, q), qb = base::quantile_sorted(b.sorted_tok, q);
    EXPECT_NEAR(qb / qa, 1.0, 0.10) << "quantile " << q << ": original " << qa << ", synthetic " << qb;
  }
}

TEST(TraceFit, RecognisesACap) {
  std::vector<base::GroupSpec> g = {april::testing::group("a", {10, 1000, 1000}), april::testing::group("b", {40, 1000, 7})};
  EXPECT_EQ(fit_workload(g).cap_tok, 1000);
}

TEST(TraceResample, IsSeededAndDrawsWholeGroups) {
  std::vector<base::GroupSpec> g = {april::testing::group("a", {1, 2}), april::testing::group("b", {3, 4}),
                                    april::testing::group("c", {5, 6})};
  TraceResample r1(g, "t", 5), r2(g, "t", 5), r3(g, "t", 6);
  std::string s1, s2, s3;
  for (int i = 0; i < 30; ++i) {
    const auto x = r1.next_group(0);
    ASSERT_EQ(x.response_tok.size(), 2U);
    ASSERT_EQ(x.response_tok[1], x.response_tok[0] + 1);  // whole groups, never mixed
    s1 += x.prompt_id.substr(0, 1);
    s2 += r2.next_group(0).prompt_id.substr(0, 1);
    s3 += r3.next_group(0).prompt_id.substr(0, 1);
  }
  EXPECT_EQ(s1, s2);
  EXPECT_NE(s1, s3);
  EXPECT_NE(s1.find('a'), std::string::npos);
  EXPECT_NE(s1.find('c'), std::string::npos);
}

TEST(TraceDriven, ReplayAndResampleRunTheSimulator) {
  std::vector<base::GroupSpec> g;
  for (int i = 0; i < 10; ++i) g.push_back(april::testing::group(std::string("p").append(std::to_string(i)), {i + 1, 2 * i + 1}));
  for (const std::string mode : {"replay", "resample"}) {
    april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "steps=12", "trace.mode=" + mode});
    scenario::RunOptions o;
    o.trace = g;
    o.trace_name = "t";
    const auto a = scenario::simulate(f.config, f.registry, "april", o);
    const auto b = scenario::simulate(f.config, f.registry, "april", o);
    EXPECT_EQ(rl::steps_csv(a.steps), rl::steps_csv(b.steps)) << mode;
    EXPECT_GT(a.summary.totals.tokens_trained, 0) << mode;
  }
}

}  // namespace
}  // namespace april::traces
