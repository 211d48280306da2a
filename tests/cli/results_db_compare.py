#!/usr/bin/env python3
"""Compares two april results databases run by run: the same runs (by run
key), every one done, with bit-identical metrics and step rows and the same
sweep parameters. Host timings (wall time, start and finish) may differ.

usage: results_db_compare.py EXPECTED.db ACTUAL.db [EXPECTED_RUNS]
"""
import sqlite3
import sys


def load(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    runs = {}
    for rid, key, status, policy, seed, scenario in db.execute(
            "SELECT id, run_key, status, policy, seed, scenario_json FROM runs"):
        runs[rid] = {"key": key, "status": status, "policy": policy, "seed": seed, "scenario": scenario,
                     "metrics": {}, "steps": [], "params": set()}
    for rid, name, value in db.execute("SELECT run_id, name, value FROM metrics"):
        runs[rid]["metrics"][name] = value
    cols = [r[1] for r in db.execute("PRAGMA table_info(steps)") if r[1] != "run_id"]
    for row in db.execute(f"SELECT run_id, {', '.join(cols)} FROM steps ORDER BY run_id, step"):
        runs[row[0]]["steps"].append(tuple(row[1:]))
    for rid, params in db.execute("SELECT run_id, params FROM sweep_runs"):
        runs[rid]["params"].add(params)
    by_key = {}
    for r in runs.values():
        if r["key"] in by_key:
            sys.exit(f"FAIL: {path}: run {r['key']} is stored twice")
        by_key[r["key"]] = r
    return by_key


def main():
    expected, actual = load(sys.argv[1]), load(sys.argv[2])
    if len(sys.argv) > 3 and len(expected) != int(sys.argv[3]):
        sys.exit(f"FAIL: {sys.argv[1]} holds {len(expected)} runs, expected {sys.argv[3]}")
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    if missing or extra:
        sys.exit(f"FAIL: {len(missing)} runs missing from {sys.argv[2]}, {len(extra)} runs it should not hold")
    for key, e in expected.items():
        a = actual[key]
        for field in ("status", "policy", "seed", "scenario", "params"):
            if e[field] != a[field]:
                sys.exit(f"FAIL: run {key}: {field} differs: {e[field]!r} vs {a[field]!r}")
        if e["status"] != "done":
            sys.exit(f"FAIL: run {key} is {e['status']}")
        if e["metrics"] != a["metrics"]:
            diff = sorted(n for n in set(e["metrics"]) | set(a["metrics"]) if e["metrics"].get(n) != a["metrics"].get(n))
            sys.exit(f"FAIL: run {key}: metrics differ: {diff}")
        if e["steps"] != a["steps"]:
            sys.exit(f"FAIL: run {key}: step rows differ")
    print(f"{len(expected)} runs identical")


if __name__ == "__main__":
    main()
