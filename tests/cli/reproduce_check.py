#!/usr/bin/env python3
"""Checks `april reproduce --json` against the documented predictions: every
published figure is still reproduced, and no relative error moved by more
than 2 points from the one documented in docs/published-runs.md."""
import json
import subprocess
import sys

april, setup, expected_path = sys.argv[1:4]
got = json.loads(subprocess.run([april, "reproduce", setup, "--json"], check=True, capture_output=True, text=True).stdout)
expected = json.load(open(expected_path))["rows"]
by_key = {(r["row"], r["metric"]): r for r in got}
fails = 0
for e in expected:
    g = by_key.pop((e["row"], e["metric"]), None)
    if g is None:
        print(f"FAIL: {e['row']} {e['metric']}: no longer reproduced")
        fails += 1
    elif abs(g["error"] - e["error"]) > 0.02:
        print(f"FAIL: {e['row']} {e['metric']}: error {100 * g['error']:+.1f}% (documented {100 * e['error']:+.1f}%)")
        fails += 1
for k in by_key:
    print(f"FAIL: {k[0]} {k[1]}: reproduced but not documented")
    fails += 1
print(f"{len(expected)} documented figures, {fails} drifted")
sys.exit(1 if fails else 0)
