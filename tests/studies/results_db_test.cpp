#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "base/hash.hpp"
#include "scenario/model_version.hpp"
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

// The first row of a query, each column as text ("" for NULL).
std::vector<std::string> raw_row(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::vector<std::string> row;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return {"cannot open " + path};
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const auto* text = sqlite3_column_text(st, i);
      row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return row;
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
    ResultsDb db(temp_db(std::string("jobs").append(std::to_string(jobs)).append(".db")));
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
    EXPECT_NE(std::string(e.what()).find("schema version 99 is newer than this april's (8)"), std::string::npos) << e.what();
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
  EXPECT_EQ(db.sweeps().at(0).runs, 1);  // the failed attempt was replaced in place
  EXPECT_EQ(id2, id1);
  EXPECT_EQ(db.run_metrics(id2).at("tokens_generated"), 5);
}

// The schema is an interface (notebooks and users' SQL read it): a change
// must bump kSchemaVersion and add a migration, and this pin says so.
TEST(ResultsDb, SchemaIsPinned) {
  const auto path = temp_db("schema.db");
  { ResultsDb db(path); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  std::map<std::string, std::string> tables;
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name", -1, &st, nullptr), SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) tables[reinterpret_cast<const char*>(sqlite3_column_text(st, 0))] = "";
  sqlite3_finalize(st);
  for (auto& [name, cols] : tables) {
    ASSERT_EQ(sqlite3_prepare_v2(raw, ("PRAGMA table_info(" + name + ")").c_str(), -1, &st, nullptr), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
      cols += std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 1))) + " " +
              reinterpret_cast<const char*>(sqlite3_column_text(st, 2)) + ",";
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(raw);
  EXPECT_EQ(raw_row(path, "SELECT value FROM meta WHERE key='schema_version'"), std::vector<std::string>{"8"});
  const std::map<std::string, std::string> want = {
      {"meta", "key TEXT,value TEXT,"},
      {"metrics", "run_id INTEGER,name TEXT,value REAL,"},
      {"runs",
       "id INTEGER,run_key TEXT,scenario_hash TEXT,scenario_json TEXT,policy TEXT,seed INTEGER,program_version TEXT,"
       "started_at TEXT,finished_at TEXT,wall_time_s REAL,status TEXT,error TEXT,model_version INTEGER,"},
      {"steps",
       "run_id INTEGER,step INTEGER,start_time_s REAL,rollout_time_s REAL,train_time_s REAL,sync_time_s REAL,"
       "total_time_s REAL,tokens_generated INTEGER,rollout_throughput_tok_s REAL,effective_throughput_tok_s REAL,"
       "tokens_trained INTEGER,offpolicy_token_fraction REAL,staleness_mean REAL,staleness_max INTEGER,tokens_wasted INTEGER,"
       "engine_busy_fraction REAL,slot_occupancy REAL,buffer_groups INTEGER,buffer_tokens INTEGER,groups_submitted INTEGER,"
       "groups_aborted INTEGER,groups_rejected INTEGER,samples_truncated INTEGER,preemptions INTEGER,reward_mean REAL,"
       "accuracy REAL,batch_ready_s REAL,train_start_s REAL,train_end_s REAL,sync_end_s REAL,tokens_carried INTEGER,"
       "april_offpolicy_ratio REAL,abort_time_s REAL,tokens_masked INTEGER,train_old_logprob_s REAL,train_ref_logprob_s REAL,"
       "train_update_s REAL,train_grad_reduce_s REAL,train_optimizer_s REAL,train_offload_s REAL,train_other_s REAL,"
       "trainer_lent_s REAL,trainer_lent_fraction REAL,"},
      {"sweep_runs", "sweep_id INTEGER,run_id INTEGER,params TEXT,"},
      {"sweeps", "id INTEGER,spec_hash TEXT,kind TEXT,scenario TEXT,spec TEXT,program_version TEXT,created_at TEXT,"},
  };
  EXPECT_EQ(tables, want);
}

// A database written by schema 1 (no model version) is migrated in place; its
// runs count as model version 0, so the same sweep re-runs them and the
// sweep's results then hold the new run only.
TEST(ResultsDb, MigratesSchemaOneAndReRunsItsRuns) {
  const auto path = temp_db("v1.db");
  raw_exec(path,
           "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
           "INSERT INTO meta VALUES('schema_version','1');"
           "CREATE TABLE sweeps(id INTEGER PRIMARY KEY, spec_hash TEXT UNIQUE NOT NULL, kind TEXT NOT NULL, scenario TEXT NOT NULL, "
           "spec TEXT NOT NULL, program_version TEXT NOT NULL, created_at TEXT NOT NULL);"
           "CREATE TABLE runs(id INTEGER PRIMARY KEY, run_key TEXT UNIQUE NOT NULL, scenario_hash TEXT NOT NULL, "
           "scenario_json TEXT NOT NULL, policy TEXT NOT NULL, seed INTEGER NOT NULL, program_version TEXT NOT NULL, "
           "started_at TEXT NOT NULL, finished_at TEXT NOT NULL, wall_time_s REAL, status TEXT NOT NULL, error TEXT);"
           "CREATE TABLE sweep_runs(sweep_id INTEGER NOT NULL REFERENCES sweeps(id), run_id INTEGER NOT NULL REFERENCES runs(id), "
           "params TEXT NOT NULL, PRIMARY KEY(sweep_id, run_id));"
           "CREATE TABLE metrics(run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL, value REAL, PRIMARY KEY(run_id, name));");
  april::testing::Fixture f("handcheck", {"steps=3"});
  const auto specs = specs_for(f, {"sync"}, 1);
  {
    // What schema 1 stored for that run, keyed as it was then.
    const auto key = base::hash_hex(f.config.resolved().dump() + "\nsync\ngenerator");
    raw_exec(path,
             "INSERT INTO sweeps VALUES(1, 'h', 'sweep', 'handcheck', 'spec', '0.1.0', 'then');"
             "INSERT INTO runs VALUES(1, '" +
                 key +
                 "', 'h', '{}', 'sync', 1, '0.1.0', 'then', 'then', 0.1, 'done', NULL);"
                 "INSERT INTO sweep_runs VALUES(1, 1, '{\"policy\":\"sync\"}');"
                 "INSERT INTO metrics VALUES(1, 'tokens_generated', 12345);");
  }
  ResultsDb db(path);
  EXPECT_EQ(db.run_json(1)["model_version"], "0");
  const auto out = run_batch(db, 1, f.registry, specs, {1, std::nullopt, "", {}});
  ASSERT_EQ(out.size(), 1U);
  EXPECT_FALSE(out[0].skipped);
  EXPECT_NE(out[0].run_id, 1);
  const auto rows = db.sweep_metrics(1);
  ASSERT_EQ(rows.size(), 1U);  // the stale run is no longer linked
  EXPECT_NE(rows[0].metrics.at("tokens_generated"), 12345);
  EXPECT_EQ(db.run_json(out[0].run_id)["model_version"], std::to_string(scenario::kModelVersion));
}

// A schema 2 database (steps without section 3b's times) gains the new step
// columns in place; its stored rows keep their values, NULL in the new ones.
TEST(ResultsDb, MigratesSchemaTwoAddingTheNewStepColumns) {
  const auto path = temp_db("v2.db");
  april::testing::Fixture f("handcheck", {"steps=2"});
  {
    ResultsDb db(path);
    (void)run_batch(db, db.sweep_id("sweep", "handcheck", "spec"), f.registry, specs_for(f, {"sync"}, 1), {1, std::nullopt, "", {}});
  }
  raw_exec(path,
           "ALTER TABLE steps DROP COLUMN batch_ready_s; ALTER TABLE steps DROP COLUMN train_start_s;"
           "ALTER TABLE steps DROP COLUMN train_end_s; ALTER TABLE steps DROP COLUMN sync_end_s;"
           "ALTER TABLE steps DROP COLUMN tokens_carried; ALTER TABLE steps DROP COLUMN april_offpolicy_ratio;"
           "ALTER TABLE steps DROP COLUMN abort_time_s; ALTER TABLE steps DROP COLUMN tokens_masked;"
           "ALTER TABLE steps DROP COLUMN train_update_s; ALTER TABLE steps DROP COLUMN train_other_s;"
           "ALTER TABLE steps DROP COLUMN trainer_lent_s;"
           "UPDATE meta SET value='2' WHERE key='schema_version';");
  { ResultsDb db(path); }
  // Both steps kept, with their tokens; no times for them.
  EXPECT_EQ(raw_row(path,
                    "SELECT count(*), count(sync_end_s), count(april_offpolicy_ratio), count(abort_time_s), count(tokens_masked), "
                    "count(train_update_s), count(trainer_lent_s), sum(tokens_generated > 0) FROM steps"),
            (std::vector<std::string>{"2", "0", "0", "0", "0", "0", "0", "2"}));
  EXPECT_EQ(raw_row(path, "SELECT value FROM meta WHERE key='schema_version'"), std::vector<std::string>{"8"});
}

// A run stored by an older model version is re-run, not reused, and replaces
// the old one in the sweep; the same model version is reused.
TEST(ResultsDb, RunsFromAnOlderModelVersionAreReRun) {
  const auto path = temp_db("model.db");
  april::testing::Fixture f("handcheck", {"steps=3"});
  const auto specs = specs_for(f, {"april"}, 1);
  ResultsDb db(path);
  const auto sweep = db.sweep_id("sweep", "handcheck", "spec");
  RunRecord old;
  old.run_key = run_key(specs[0].config, "april", "generator", scenario::kModelVersion - 1);
  old.model_version = scenario::kModelVersion - 1;
  old.scenario = nlohmann::json::object();
  old.policy = "april";
  old.seed = 1;
  old.started_at = old.finished_at = utc_now_iso8601();
  old.summary = {{"tokens_generated", 7}};
  const auto old_id = db.store_run(sweep, old, specs[0].params);
  const auto first = run_batch(db, sweep, f.registry, specs, {1, std::nullopt, "", {}});
  EXPECT_FALSE(first[0].skipped);
  EXPECT_NE(first[0].run_id, old_id);
  const auto rows = db.sweep_metrics(sweep);
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_NE(rows[0].metrics.at("tokens_generated"), 7);
  const auto again = run_batch(db, sweep, f.registry, specs, {1, std::nullopt, "", {}});
  EXPECT_TRUE(again[0].skipped);
  EXPECT_EQ(again[0].run_id, first[0].run_id);
}

// A store that throws (here a real SQLite trigger aborting every insert of an
// april run's metrics) ends with the run recorded as failed and the process
// alive; the other runs are stored, worker threads joined.
TEST(ResultsDb, AStoreThatThrowsRecordsTheRunAsFailed) {
  const auto path = temp_db("throw.db");
  { ResultsDb db(path); }
  raw_exec(path,
           "CREATE TRIGGER refuse_april BEFORE INSERT ON metrics "
           "WHEN (SELECT policy FROM runs WHERE id=NEW.run_id)='april' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;");
  april::testing::Fixture f("handcheck", {"steps=3"});
  const auto specs = specs_for(f, {"sync", "april"}, 2);
  ResultsDb db(path);
  const auto sweep = db.sweep_id("sweep", "handcheck", "spec");
  const auto out = run_batch(db, sweep, f.registry, specs, {2, std::nullopt, "", {}});
  ASSERT_EQ(out.size(), 4U);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (specs[i].policy == "sync") {
      EXPECT_FALSE(out[i].failed) << out[i].error;
      continue;
    }
    EXPECT_TRUE(out[i].failed);
    EXPECT_NE(out[i].error.find("storing the results failed"), std::string::npos) << out[i].error;
    EXPECT_NE(out[i].error.find("disk on fire"), std::string::npos) << out[i].error;
    ASSERT_GT(out[i].run_id, 0);
    const auto j = db.run_json(out[i].run_id);
    EXPECT_EQ(j["status"], "failed");
    EXPECT_EQ(j["steps_stored"], 0);
  }
  EXPECT_EQ(db.sweeps().at(0).done, 2);
}

// Replacing a failed run keeps its id, so other sweeps' links to it survive.
TEST(ResultsDb, ReplacingAFailedRunKeepsOtherSweepsLinks) {
  const auto path = temp_db("links.db");
  ResultsDb db(path);
  const auto a = db.sweep_id("sweep", "x", "a");
  const auto b = db.sweep_id("sweep", "x", "b");
  RunRecord r;
  r.run_key = "k";
  r.scenario = nlohmann::json::object();
  r.policy = "sync";
  r.status = "failed";
  r.error = "boom";
  r.started_at = r.finished_at = utc_now_iso8601();
  const auto id = db.store_run(a, r, {{"p", 1}});
  db.link(b, id, {{"p", 1}});
  r.status = "done";
  r.error.clear();
  r.summary = {{"tokens_generated", 3}};
  EXPECT_EQ(db.store_run(a, r, {{"p", 1}}), id);
  const auto sweeps = db.sweeps();
  ASSERT_EQ(sweeps.size(), 2U);
  EXPECT_EQ(sweeps[0].runs, 1);
  EXPECT_EQ(sweeps[1].runs, 1);
  EXPECT_EQ(sweeps[1].done, 1);
}

}  // namespace
}  // namespace april::studies
