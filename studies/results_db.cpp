#include "studies/results_db.hpp"
#include "rl/metric_columns.hpp"
#include "studies/sqlite_statement.hpp"

#include <fmt/format.h>

#include <sqlite3.h>
#include <array>
#include <filesystem>

#include "base/hash.hpp"
#include "base/json_value.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>
#include <thread>

namespace april::studies {
using sqlite::BusyError;
using sqlite::is_busy;
using sqlite::retry_busy;
using sqlite::Stmt;
using sqlite::Transaction;

namespace {

std::string steps_table_sql() {
  std::string cols;
  for (const auto& c : rl::step_columns()) {
    if (std::string(c.name) == "step") continue;
    cols += fmt::format(", {} {}", c.name, c.integer ? "INTEGER" : "REAL");
  }
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS steps(run_id INTEGER NOT NULL REFERENCES runs(id), step INTEGER NOT NULL{}, "
      "PRIMARY KEY(run_id, step))",
      cols);
}

// A database with tables but no meta table is someone else's: refused
// before anything in it changes (its journal mode included).
void refuse_foreign(sqlite3* db, const std::string& path) {
  Stmt tables(db, "SELECT name FROM sqlite_master WHERE type='table'", path);
  bool any = false, has_meta = false;
  while (tables.step()) {
    any = true;
    has_meta = has_meta || tables.text_col(0) == "meta";
  }
  if (any && !has_meta) throw DbError(fmt::format("{}: not an april results database (no meta table)", path));
}

}  // namespace

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ResultsDb::ResultsDb(const std::string& path, DbAccess access) : path_(path) {
  if (access == DbAccess::ReadOnly) {
    open_read_only();
    return;
  }
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw DbError(fmt::format("{}: cannot open database: {}", path, msg));
  }
  sqlite3_busy_timeout(db_, 60000);  // other writers hold the lock for one run's insert at most
  try {
    retry_busy([&] {
      refuse_foreign(db_, path_);
      exec("PRAGMA journal_mode=WAL");
      exec("PRAGMA synchronous=NORMAL");
      exec("PRAGMA foreign_keys=ON");
      init_schema();
    });
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

namespace {

// The path as a file: URI (RFC 3986: what is not unreserved or '/' is %XX).
std::string file_uri(const std::string& path, const char* query) {
  std::string out = "file:";
  for (const char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out + "?" + query;
}

// A JSON text the database stores (a run's scenario, a sweep's parameters):
// one changed by hand or by another program is refused by name.
nlohmann::json stored_json(const std::string& text, const std::string& db_path, const char* what, std::int64_t id) {
  nlohmann::json doc;
  if (const auto err = base::parse_json(text, doc)) {
    throw DbError(fmt::format("{}: the {} stored for run {} is not JSON ({})", db_path, what, id, err->reason));
  }
  return doc;
}

}  // namespace

void ResultsDb::open_read_only() {
  // A WAL database is read through its -shm file, which SQLite creates when it
  // can: a read-only command would leave -wal and -shm files beside a database
  // nobody is writing. With no -wal file there, no writer has the database
  // open (a writer's last close removes it), so it is opened as immutable,
  // which creates nothing. With one, a writer may be at work: its -wal and
  // -shm are read as they are. Where neither opens (a folder the user may only
  // read), immutable is tried last.
  std::error_code ec;
  const bool writer_may_be_open = std::filesystem::exists(path_ + "-wal", ec);
  const auto order =
      writer_may_be_open ? std::array<const char*, 2>{"mode=ro", "immutable=1"} : std::array<const char*, 2>{"immutable=1", "mode=ro"};
  for (const char* query : order) {
    sqlite3_close(db_);
    db_ = nullptr;
    if (sqlite3_open_v2(file_uri(path_, query).c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, nullptr) !=
        SQLITE_OK) {
      continue;
    }
    sqlite3_busy_timeout(db_, 60000);
    try {
      check_schema_read_only();
      return;
    } catch (const BusyError&) {
      throw;
    } catch (const DbError&) {
      const int code = sqlite3_errcode(db_) & 0xff;
      if (code != SQLITE_CANTOPEN && code != SQLITE_READONLY) {
        sqlite3_close(db_);
        db_ = nullptr;
        throw;
      }
    }
  }
  const std::string msg = db_ ? sqlite3_errmsg(db_) : "cannot open";
  sqlite3_close(db_);
  db_ = nullptr;
  throw DbError(fmt::format("{}: cannot open the database to read: {}", path_, msg));
}

void ResultsDb::check_schema_read_only() {
  Stmt tables(db_, "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='meta'", path_);
  tables.step();
  if (tables.int_col(0) == 0) throw DbError(fmt::format("{}: not an april results database (no meta table)", path_));
  Stmt v(db_, "SELECT value FROM meta WHERE key='schema_version'", path_);
  if (!v.step()) throw DbError(fmt::format("{}: not an april results database (no schema version)", path_));
  // Reading needs no migration: every version up to ours has the tables read here.
  (void)schema_version_of(v.text_col(0));
}

int ResultsDb::schema_version_of(const std::string& text) const {
  int version = 0;
  try {
    version = std::stoi(text);
  } catch (const std::exception&) {
    throw DbError(fmt::format("{}: unreadable schema_version '{}'", path_, text));
  }
  if (version > kSchemaVersion) {
    throw DbError(
        fmt::format("{}: database schema version {} is newer than this april's ({}); use a newer april", path_, version, kSchemaVersion));
  }
  if (version < 1) throw DbError(fmt::format("{}: unknown schema version {}", path_, version));
  return version;
}

ResultsDb::~ResultsDb() { sqlite3_close(db_); }

void ResultsDb::exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    if (is_busy(rc)) throw BusyError(fmt::format("{}: {}: {}", path_, sql, msg));
    if (msg.find("file is not a database") != std::string::npos) throw DbError(fmt::format("{}: not an SQLite database", path_));
    throw DbError(fmt::format("{}: {}", path_, msg));
  }
}

void ResultsDb::init_schema() {
  Transaction tx(db_, path_);
  refuse_foreign(db_, path_);  // again inside the transaction: another process may have made tables since
  exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  int from_version = kSchemaVersion;
  {
    Stmt v(db_, "SELECT value FROM meta WHERE key='schema_version'", path_);
    if (v.step()) {
      from_version = schema_version_of(v.text_col(0));
    } else {
      Stmt ins(db_, "INSERT INTO meta(key, value) VALUES('schema_version', ?)", path_);
      ins.bind(1, std::to_string(kSchemaVersion));
      ins.step();
    }
  }
  exec(
      "CREATE TABLE IF NOT EXISTS sweeps(id INTEGER PRIMARY KEY, spec_hash TEXT UNIQUE NOT NULL, kind TEXT NOT NULL, "
      "scenario TEXT NOT NULL, spec TEXT NOT NULL, program_version TEXT NOT NULL, created_at TEXT NOT NULL)");
  exec(
      "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, run_key TEXT UNIQUE NOT NULL, scenario_hash TEXT NOT NULL, "
      "scenario_json TEXT NOT NULL, policy TEXT NOT NULL, seed INTEGER NOT NULL, program_version TEXT NOT NULL, "
      "started_at TEXT NOT NULL, finished_at TEXT NOT NULL, wall_time_s REAL, status TEXT NOT NULL, error TEXT, "
      "model_version INTEGER NOT NULL DEFAULT 0)");
  exec(
      "CREATE TABLE IF NOT EXISTS sweep_runs(sweep_id INTEGER NOT NULL REFERENCES sweeps(id), "
      "run_id INTEGER NOT NULL REFERENCES runs(id), params TEXT NOT NULL, PRIMARY KEY(sweep_id, run_id))");
  exec(
      "CREATE TABLE IF NOT EXISTS metrics(run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL, value REAL, "
      "PRIMARY KEY(run_id, name))");
  exec(steps_table_sql());
  if (from_version < kSchemaVersion) migrate(from_version);
  tx.commit();
}

// Brings an older database to kSchemaVersion, inside init_schema's transaction
// (a failure leaves it as it was).
void ResultsDb::migrate(int from_version) {
  if (from_version < 2) {
    // Schema 1 had no model version: its runs count as version 0, so they are
    // never reused by a newer model and are re-run instead.
    exec("ALTER TABLE runs ADD COLUMN model_version INTEGER NOT NULL DEFAULT 0");
  }
  if (from_version < 8) {
    // Step columns appended since (3: section 3b's times; 4: tokens_carried,
    // april_offpolicy_ratio; 5: abort_time_s; 6: tokens_masked; 7: the train
    // phases; 8: the trainer's lent time): add the ones the old steps table lacks.
    std::set<std::string> have;
    {
      Stmt info(db_, "PRAGMA table_info(steps)", path_);
      while (info.step()) have.insert(info.text_col(1));
    }
    for (const auto& c : rl::step_columns()) {
      if (have.count(c.name) == 0) exec(fmt::format("ALTER TABLE steps ADD COLUMN {} {}", c.name, c.integer ? "INTEGER" : "REAL"));
    }
  }
  Stmt up(db_, "UPDATE meta SET value=? WHERE key='schema_version'", path_);
  up.bind(1, std::to_string(kSchemaVersion));
  up.step();
}

std::int64_t ResultsDb::sweep_id(const std::string& kind, const std::string& scenario, const std::string& spec) {
  return retry_busy([&] { return sweep_id_once(kind, scenario, spec); });
}

std::int64_t ResultsDb::sweep_id_once(const std::string& kind, const std::string& scenario, const std::string& spec) {
  const std::string key = base::hash_hex(kind + "\n" + scenario + "\n" + spec);
  Transaction tx(db_, path_);
  {
    Stmt ins(db_, "INSERT OR IGNORE INTO sweeps(spec_hash, kind, scenario, spec, program_version, created_at) VALUES(?,?,?,?,?,?)", path_);
    ins.bind(1, key).bind(2, kind).bind(3, scenario).bind(4, spec).bind(5, std::string(APRIL_VERSION)).bind(6, utc_now_iso8601());
    ins.step();
  }
  Stmt sel(db_, "SELECT id FROM sweeps WHERE spec_hash=?", path_);
  sel.bind(1, key);
  if (!sel.step()) throw DbError(fmt::format("{}: sweep row vanished", path_));
  const auto id = sel.int_col(0);
  tx.commit();
  return id;
}

std::optional<std::int64_t> ResultsDb::finished_run(const std::string& run_key) {
  return retry_busy([&]() -> std::optional<std::int64_t> {
    Stmt sel(db_, "SELECT id FROM runs WHERE run_key=? AND status='done'", path_);
    sel.bind(1, run_key);
    if (sel.step()) return sel.int_col(0);
    return std::nullopt;
  });
}

void ResultsDb::link(std::int64_t sweep, std::int64_t run, const nlohmann::json& params) {
  retry_busy([&] {
    Transaction tx(db_, path_);
    link_in_transaction(sweep, run, params);
    tx.commit();
  });
}

void ResultsDb::link_in_transaction(std::int64_t sweep, std::int64_t run, const nlohmann::json& params) {
  // This sweep's link to the same run (params, policy, seed) from another
  // model version is stale: the run linked now replaces it.
  Stmt stale(db_,
             "DELETE FROM sweep_runs WHERE sweep_id=?1 AND params=?2 AND run_id<>?3 AND run_id IN "
             "(SELECT o.id FROM runs o JOIN runs n ON n.id=?3 "
             "WHERE o.policy=n.policy AND o.seed=n.seed AND o.model_version<>n.model_version)",
             path_);
  stale.bind(1, sweep).bind(2, params.dump()).bind(3, run);
  stale.step();
  Stmt ins(db_, "INSERT OR IGNORE INTO sweep_runs(sweep_id, run_id, params) VALUES(?,?,?)", path_);
  ins.bind(1, sweep).bind(2, run).bind(3, params.dump());
  ins.step();
}

std::int64_t ResultsDb::store_run(std::int64_t sweep, const RunRecord& r, const nlohmann::json& params) {
  return retry_busy([&] { return store_run_once(sweep, r, params); });
}

std::int64_t ResultsDb::store_run_once(std::int64_t sweep, const RunRecord& r, const nlohmann::json& params) {
  Transaction tx(db_, path_);
  std::int64_t run_id = 0;
  bool write = true;
  {
    // A done run (from another writer) is kept; a failed attempt is replaced
    // in place, keeping its id and so every sweep's link to it.
    Stmt old(db_, "SELECT id, status FROM runs WHERE run_key=?", path_);
    old.bind(1, r.run_key);
    if (old.step()) {
      run_id = old.int_col(0);
      write = old.text_col(1) != "done";
    }
  }
  if (write && run_id != 0) {
    for (const char* t : {"DELETE FROM steps WHERE run_id=?", "DELETE FROM metrics WHERE run_id=?"}) {
      Stmt del(db_, t, path_);
      del.bind(1, run_id);
      del.step();
    }
    Stmt up(db_,
            "UPDATE runs SET scenario_hash=?, scenario_json=?, policy=?, seed=?, program_version=?, started_at=?, "
            "finished_at=?, wall_time_s=?, status=?, error=?, model_version=? WHERE id=?",
            path_);
    up.bind(1, r.scenario_hash).bind(2, r.scenario.dump()).bind(3, r.policy).bind(4, r.seed);
    up.bind(5, std::string(APRIL_VERSION)).bind(6, r.started_at).bind(7, r.finished_at).bind(8, r.wall_time_s).bind(9, r.status);
    if (r.error.empty())
      up.bind_null(10);
    else
      up.bind(10, r.error);
    up.bind(11, r.model_version).bind(12, run_id);
    up.step();
  } else if (write) {
    Stmt ins(db_,
             "INSERT INTO runs(run_key, scenario_hash, scenario_json, policy, seed, program_version, started_at, finished_at, "
             "wall_time_s, status, error, model_version) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
             path_);
    ins.bind(1, r.run_key).bind(2, r.scenario_hash).bind(3, r.scenario.dump()).bind(4, r.policy).bind(5, r.seed);
    ins.bind(6, std::string(APRIL_VERSION)).bind(7, r.started_at).bind(8, r.finished_at).bind(9, r.wall_time_s).bind(10, r.status);
    if (r.error.empty())
      ins.bind_null(11);
    else
      ins.bind(11, r.error);
    ins.bind(12, r.model_version);
    ins.step();
    run_id = sqlite3_last_insert_rowid(db_);
  }
  if (write) {
    Stmt met(db_, "INSERT INTO metrics(run_id, name, value) VALUES(?,?,?)", path_);
    for (auto it = r.summary.begin(); it != r.summary.end(); ++it) {
      if (!it->is_number()) continue;
      met.reset();
      met.bind(1, run_id).bind(2, it.key()).bind(3, it->get<double>());
      met.step();
    }
    const auto& cols = rl::step_columns();
    std::string names = "run_id", marks = "?";
    for (const auto& c : cols) {
      names += std::string(",") + c.name;
      marks += ",?";
    }
    Stmt st(db_, fmt::format("INSERT INTO steps({}) VALUES({})", names, marks), path_);
    for (const auto& m : r.steps) {
      st.reset();
      st.bind(1, run_id);
      const rl::DerivedMetrics d = rl::derive(m);
      for (std::size_t c = 0; c < cols.size(); ++c) {
        const auto v = cols[c].value(m, d, nullptr);
        const int idx = static_cast<int>(c) + 2;
        if (!v)
          st.bind_null(idx);
        else if (cols[c].integer)
          st.bind(idx, static_cast<std::int64_t>(*v));
        else
          st.bind(idx, *v);
      }
      st.step();
    }
  }
  link_in_transaction(sweep, run_id, params);
  tx.commit();
  return run_id;
}

std::map<std::string, double> ResultsDb::run_metrics(std::int64_t run) {
  std::map<std::string, double> out;
  Stmt sel(db_, "SELECT name, value FROM metrics WHERE run_id=?", path_);
  sel.bind(1, run);
  while (sel.step()) {
    if (!sel.is_null(1)) out[sel.text_col(0)] = sel.double_col(1);
  }
  return out;
}

std::vector<SweepInfo> ResultsDb::sweeps() {
  std::vector<SweepInfo> out;
  Stmt sel(db_,
           "SELECT s.id, s.kind, s.scenario, s.spec, s.created_at, COUNT(sr.run_id), "
           "COALESCE(SUM(r.status='done'), 0) FROM sweeps s LEFT JOIN sweep_runs sr ON sr.sweep_id=s.id "
           "LEFT JOIN runs r ON r.id=sr.run_id GROUP BY s.id ORDER BY s.id",
           path_);
  while (sel.step()) {
    out.push_back({sel.int_col(0), sel.text_col(1), sel.text_col(2), sel.text_col(3), sel.text_col(4), sel.int_col(5), sel.int_col(6)});
  }
  return out;
}

std::vector<ResultsDb::MetricRow> ResultsDb::sweep_metrics(std::int64_t sweep) {
  std::vector<MetricRow> out;
  std::map<std::int64_t, std::size_t> index;
  Stmt sel(db_,
           "SELECT r.id, sr.params, r.seed, m.name, m.value FROM sweep_runs sr JOIN runs r ON r.id=sr.run_id "
           "JOIN metrics m ON m.run_id=r.id WHERE sr.sweep_id=? AND r.status='done' ORDER BY r.id, m.name",
           path_);
  sel.bind(1, sweep);
  while (sel.step()) {
    const auto id = sel.int_col(0);
    auto [it, fresh] = index.emplace(id, out.size());
    if (fresh) out.push_back({stored_json(sel.text_col(1), path_, "sweep parameters", id), sel.int_col(2), {}});
    if (!sel.is_null(4)) out[it->second].metrics[sel.text_col(3)] = sel.double_col(4);
  }
  return out;
}

std::string ResultsDb::export_sweep_csv(std::int64_t sweep) {
  {
    Stmt chk(db_, "SELECT id FROM sweeps WHERE id=?", path_);
    chk.bind(1, sweep);
    if (!chk.step()) throw DbError(fmt::format("{}: no sweep {}", path_, sweep));
  }
  const auto rows = sweep_metrics(sweep);
  std::vector<std::string> param_names, metric_names;
  for (const auto& r : rows) {
    for (auto it = r.params.begin(); it != r.params.end(); ++it) {
      if (std::find(param_names.begin(), param_names.end(), it.key()) == param_names.end()) param_names.push_back(it.key());
    }
    for (const auto& [k, _] : r.metrics) {
      if (std::find(metric_names.begin(), metric_names.end(), k) == metric_names.end()) metric_names.push_back(k);
    }
  }
  std::sort(metric_names.begin(), metric_names.end());
  std::string out;
  for (const auto& p : param_names) out += p + ",";
  out += "seed";
  for (const auto& m : metric_names) out += "," + m;
  out += "\n";
  for (const auto& r : rows) {
    for (const auto& p : param_names) {
      const auto& v = r.params.contains(p) ? r.params[p] : nlohmann::json();
      out += (v.is_string() ? v.get<std::string>() : v.dump()) + ",";
    }
    out += std::to_string(r.seed);
    for (const auto& m : metric_names) {
      auto it = r.metrics.find(m);
      out += it == r.metrics.end() ? "," : fmt::format(",{:.9g}", it->second);
    }
    out += "\n";
  }
  return out;
}

nlohmann::json ResultsDb::run_json(std::int64_t run) {
  Stmt sel(db_, "SELECT * FROM runs WHERE id=?", path_);
  sel.bind(1, run);
  if (!sel.step()) throw DbError(fmt::format("{}: no run {}", path_, run));
  nlohmann::json j;
  for (int c = 0; c < sel.columns(); ++c) {
    const auto name = sel.column_name(c);
    if (name == "scenario_json")
      j["scenario"] = stored_json(sel.text_col(c), path_, "scenario", run);
    else if (sel.is_null(c))
      j[name] = nullptr;
    else if (name == "id" || name == "seed")
      j[name] = sel.int_col(c);
    else if (name == "wall_time_s")
      j[name] = sel.double_col(c);
    else
      j[name] = sel.text_col(c);
  }
  Stmt met(db_, "SELECT name, value FROM metrics WHERE run_id=? ORDER BY name", path_);
  met.bind(1, run);
  while (met.step()) j["metrics"][met.text_col(0)] = met.is_null(1) ? nlohmann::json() : nlohmann::json(met.double_col(1));
  Stmt cnt(db_, "SELECT COUNT(*) FROM steps WHERE run_id=?", path_);
  cnt.bind(1, run);
  cnt.step();
  j["steps_stored"] = cnt.int_col(0);
  return j;
}

}  // namespace april::studies
