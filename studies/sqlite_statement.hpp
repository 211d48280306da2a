#pragma once
// The results database's SQLite access: a prepared statement, a transaction
// that rolls back unless committed, and the retry of a whole operation when
// another writer holds the lock. Errors name the database file.
#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

#include "studies/results_db.hpp"

namespace april::studies::sqlite {

// The database is locked by another writer past the busy timeout, or in a way
// SQLite does not wait for (e.g. switching to WAL while another process opens
// the file). The whole operation is retried: its transaction rolled back.
class BusyError : public DbError {
 public:
  using DbError::DbError;
};

inline bool is_busy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

template <typename F>
auto retry_busy(F&& f) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (int attempt = 0;; ++attempt) {
    try {
      return f();
    } catch (const BusyError&) {
      if (std::chrono::steady_clock::now() > deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(5 + 5 * std::min(attempt, 20)));
    }
  }
}

// One prepared statement, finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql, const std::string& path) : db_(db), path_(path) {
    const int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr);
    if (rc != SQLITE_OK) {
      if (is_busy(rc)) throw BusyError(fmt::format("{}: {}", path, sqlite3_errmsg(db)));
      throw DbError(fmt::format("{}: {} (in: {})", path, sqlite3_errmsg(db), sql));
    }
  }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, std::int64_t v) { return check(sqlite3_bind_int64(st_, i, v)); }
  Stmt& bind(int i, double v) { return check(sqlite3_bind_double(st_, i, v)); }
  Stmt& bind(int i, const std::string& v) {
    return check(sqlite3_bind_text(st_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Stmt& bind_null(int i) { return check(sqlite3_bind_null(st_, i)); }
  // True while a row is available.
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    if (is_busy(rc)) throw BusyError(fmt::format("{}: {}", path_, sqlite3_errmsg(db_)));
    throw DbError(fmt::format("{}: {}", path_, sqlite3_errmsg(db_)));
  }
  void reset() {
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
  }
  std::int64_t int_col(int i) { return sqlite3_column_int64(st_, i); }
  double double_col(int i) { return sqlite3_column_double(st_, i); }
  bool is_null(int i) { return sqlite3_column_type(st_, i) == SQLITE_NULL; }
  std::string text_col(int i) {
    const auto* t = sqlite3_column_text(st_, i);
    return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t));
  }
  int columns() { return sqlite3_column_count(st_); }
  std::string column_name(int i) { return sqlite3_column_name(st_, i); }

 private:
  Stmt& check(int rc) {
    if (rc != SQLITE_OK) throw DbError(fmt::format("{}: {}", path_, sqlite3_errmsg(db_)));
    return *this;
  }
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
  std::string path_;
};

// Rolls back unless committed.
class Transaction {
 public:
  Transaction(sqlite3* db, const std::string& path) : db_(db), path_(path) { run("BEGIN IMMEDIATE"); }
  // Rolls back an unfinished transaction. A destructor cannot throw, so a
  // failed ROLLBACK is reported on stderr: the connection may then be unusable.
  ~Transaction() {
    if (done_) return;
    char* err = nullptr;
    if (sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, &err) != SQLITE_OK && sqlite3_get_autocommit(db_) == 0) {
      std::fprintf(stderr, "%s: ROLLBACK failed: %s\n", path_.c_str(), err ? err : sqlite3_errmsg(db_));
    }
    sqlite3_free(err);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    run("COMMIT");
    done_ = true;
  }

 private:
  void run(const char* sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      if (is_busy(rc)) throw BusyError(fmt::format("{}: {}: {}", path_, sql, msg));
      throw DbError(fmt::format("{}: {}: {}", path_, sql, msg));
    }
  }
  sqlite3* db_;
  std::string path_;
  bool done_ = false;
};

}  // namespace april::studies::sqlite
