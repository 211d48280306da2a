"""Checks `april validate`'s machine drift when it profiles between the live steps.

Each step's slowdown comes from the profile's slices beside it, and the profile
says where each slice ended; a run given a calibration has neither
(validate_report_check.py).
"""
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
print("validate drift: ok")
