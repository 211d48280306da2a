#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "studies/results_db.hpp"
#include "studies/run_batch.hpp"
#include "test_support.hpp"

namespace april::studies {
namespace {

std::string temp_db(const std::string& name) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const auto path = (std::filesystem::temp_directory_path() / ("april_" + test + "_" + name)).string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

std::vector<RunSpec> specs_for(april::testing::Fixture& f, const std::vector<std::string>& policies, int seeds) {
  std::vector<RunSpec> out;
  for (const auto& p : policies) {
    for (int s = 1; s <= seeds; ++s) {
      base::Config c = f.config;
      c.set("seed", std::int64_t{s}, "test");
      out.push_back({{{"policy", p}}, p, c});
    }
  }
  return out;
}

TEST(ResultsDb, StoresRunsWithMetricsAndStepsAndSkipsThemOnRerun) {
  const auto path = temp_db("a.db");
  april::testing::Fixture f("handcheck", {"steps=4"});
  const auto specs = specs_for(f, {"sync", "april"}, 3);
  {
    ResultsDb db(path);
    const auto sweep = db.sweep_id("sweep", "handcheck", "spec");
    const auto out = run_batch(db, sweep, f.registry, specs, {2, std::nullopt, "", {}});
    ASSERT_EQ(out.size(), 6U);
    for (const auto& o : out) {
      EXPECT_FALSE(o.skipped);
      EXPECT_FALSE(o.failed) << o.error;
      EXPECT_GT(o.metrics.at("tokens_generated"), 0);
    }
    const auto j = db.run_json(out[3].run_id);
    EXPECT_EQ(j["policy"], "april");
    EXPECT_EQ(j["steps_stored"], 4);
    EXPECT_EQ(j["status"], "done");
  }
  {
    ResultsDb db(path);
    const auto sweep = db.sweep_id("sweep", "handcheck", "spec");
    EXPECT_EQ(sweep, 1);  // the same sweep again
    const auto out = run_batch(db, sweep, f.registry, specs, {1, std::nullopt, "", {}});
    for (const auto& o : out) EXPECT_TRUE(o.skipped);
    const auto csv = db.export_sweep_csv(sweep);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);  // header + 6 runs
    EXPECT_EQ(csv.rfind("policy,seed,", 0), 0U) << csv.substr(0, 80);
    ASSERT_EQ(db.sweeps().size(), 1U);
    EXPECT_EQ(db.sweeps()[0].done, 6);
  }
}

TEST(ResultsDb, SameSeedSameMetricsWhateverTheJobCount) {
  april::testing::Fixture f("default", {"steps=5"});
  const auto specs = specs_for(f, {"april"}, 4);
  std::vector<std::map<std::string, double>> by_jobs[2];
  for (int jobs : {1, 2}) {
    ResultsDb db(temp_db("jobs" + std::to_string(jobs) + ".db"));
    for (const auto& o : run_batch(db, db.sweep_id("sweep", "default", "x"), f.registry, specs, {jobs, std::nullopt, "", {}})) {
      by_jobs[jobs - 1].push_back(o.metrics);
    }
  }
  EXPECT_EQ(by_jobs[0], by_jobs[1]);
}

TEST(ResultsDb, RefusesADatabaseFromAFutureSchemaVersion) {
  const auto path = temp_db("future.db");
  { ResultsDb db(path); }
  raw_exec(path, "UPDATE meta SET value='99' WHERE key='schema_version'");
  try {
    ResultsDb db(path);
    FAIL() << "opened a future database";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 99 is newer than this april's (1)"), std::string::npos) << e.what();
  }
}

TEST(ResultsDb, RefusesFilesThatAreNotAprilDatabases) {
  const auto text = temp_db("text.db");
  std::ofstream(text) << "this is not sqlite, just some text that is long enough to have a header............\n";
  EXPECT_THROW(ResultsDb db(text), DbError);
  const auto other = temp_db("other.db");
  raw_exec(other, "CREATE TABLE users(id INTEGER)");
  try {
    ResultsDb db(other);
    FAIL();
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("not an april results database"), std::string::npos);
  }
}

TEST(ResultsDb, FailedRunsAreRecordedAndRetried) {
  const auto path = temp_db("fail.db");
  ResultsDb db(path);
  const auto sweep = db.sweep_id("sweep", "x", "y");
  RunRecord r;
  r.run_key = "k1";
  r.scenario_hash = "h";
  r.scenario = nlohmann::json::object();
  r.policy = "april";
  r.status = "failed";
  r.error = "boom";
  r.started_at = r.finished_at = utc_now_iso8601();
  const auto id1 = db.store_run(sweep, r, {{"a", 1}});
  EXPECT_FALSE(db.finished_run("k1"));
  EXPECT_EQ(db.run_json(id1)["error"], "boom");
  r.status = "done";
  r.error.clear();
  r.summary = {{"tokens_generated", 5}};
  const auto id2 = db.store_run(sweep, r, {{"a", 1}});
  EXPECT_EQ(db.finished_run("k1"), id2);
  EXPECT_EQ(db.run_json(id2)["status"], "done");
  EXPECT_EQ(db.sweeps().at(0).runs, 1);  // the failed attempt was replaced, not kept beside
  EXPECT_EQ(db.run_metrics(id2).at("tokens_generated"), 5);
}

}  // namespace
}  // namespace april::studies
