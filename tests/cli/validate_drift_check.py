"""Checks `april validate`'s machine drift when it profiles between the live steps.

Each step's slowdown comes from the profile's slices beside it, and the profile
says where each slice ended; a run given a calibration has neither
(validate_report_check.py).
"""
import csv
import json
import math
import os
import sys

out = sys.argv[1]
steps = int(sys.argv[2])
report = json.load(open(os.path.join(out, "report.json")))
profile = json.load(open(os.path.join(out, "profile.json")))
# One slice after each round of live steps.
assert len(profile["slices"]) == steps, profile["slices"]
ends = [s["iterations_end"] for s in profile["slices"]]
assert ends == sorted(ends) and ends[-1] == len(profile["iterations"]), ends
slow = report["machine_slowdown_by_step"]
assert len(slow) == steps, slow
# Each slice holds more than a pass here: every step's neighbours measured repeated shapes.
assert all(s is not None and math.isfinite(s) and 0.2 < s < 5 for s in slow), slow
for name, p in report["policies"].items():
    adj = p["median_step_error_drift_adjusted"]
    assert adj is not None and math.isfinite(adj) and adj >= 0, (name, adj)
# The probes on a live batch took the live runs' own batches (use_live_batches):
# each side-by-side probe's batch has the shape of a step some policy trained.
live_shapes = set()
for name in report["policies"]:
    with open(os.path.join(out, f"{name}_live_train_steps.csv")) as f:
        live_shapes |= {(float(r["samples"]), float(r["tokens"]), float(r["longest_tok"])) for r in csv.DictReader(f)}
probed = [(t["samples"], t["tokens"], t["longest_tok"]) for t in profile["train_beside_engines"]]
assert probed and all(s in live_shapes for s in probed), (probed, live_shapes)
print("validate drift: ok")
