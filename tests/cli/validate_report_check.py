"""Checks that `april validate`'s report has every field with sane values."""
import csv
import json
import math
import os
import sys

report = json.load(open(sys.argv[1]))
assert set(report["policies"]) == {"sync", "april", "one_step_off"}, report["policies"].keys()
for name, p in report["policies"].items():
    for key in ("steps", "instant_steps", "instant_steps_predicted", "median_step_rollout_error", "p90_step_rollout_error",
                "total_time_error", "live_rollout_throughput_tok_s", "sim_rollout_throughput_tok_s", "live_rollout_time_s",
                "sim_rollout_time_s", "live_tokens_generated", "sim_tokens_generated", "steps_same_tokens"):
        assert key in p, f"{name}: missing {key}"
    assert p["steps"] == 5 and len(p["live_rollout_time_s"]) == 5 and len(p["sim_rollout_time_s"]) == 5
    for side in ("live", "sim"):
        for key in ("train_time_s", "sync_time_s", "tokens_trained"):
            v = p[f"{side}_{key}"]
            assert len(v) == 5 and all(x >= 0 for x in v), f"{name}: {side}_{key} = {v}"
    assert 0 <= p["instant_steps_predicted"] <= p["instant_steps"] <= 5
    for key in ("median_step_rollout_error", "p90_step_rollout_error"):
        assert 0 <= p[key] < 10 and math.isfinite(p[key]), f"{name}: {key} = {p[key]}"
    assert p["median_step_rollout_error"] <= p["p90_step_rollout_error"]
    assert -1 < p["total_time_error"] < 10
    assert p["live_rollout_throughput_tok_s"] > 0 and p["sim_rollout_throughput_tok_s"] > 0
    assert all(t >= 0 for t in p["live_rollout_time_s"] + p["sim_rollout_time_s"])
    # On the live run's own lengths the twin replays the live schedule: these
    # policies decide by counts, not times (one_step_off's syncs wait for the
    # whole rollout), so every step decodes the same tokens.
    assert p["live_tokens_generated"] == p["sim_tokens_generated"], f"{name}: {p['live_tokens_generated']} vs {p['sim_tokens_generated']}"
    assert p["steps_same_tokens"] == 5
    # one_step_off trains beside the engine: compared on whole steps, on a disaggregated twin.
    assert p["overlapped"] == (name == "one_step_off") and p["compared_time"] == ("step_time_s" if p["overlapped"] else "rollout_time_s")
    assert p["live_effective_throughput_tok_s"] > 0 and p["sim_effective_throughput_tok_s"] > 0
    if name == "sync":
        assert p["effective_gain_measured"] is None and p["effective_gain_error_ci95_pp"] is None
    else:
        assert math.isfinite(p["effective_gain_error_pp"]), name
        # The error's interval over this run's 4 steps after the warm-up.
        lo, hi = p["effective_gain_error_ci95_pp"]
        assert math.isfinite(lo) and math.isfinite(hi) and lo <= hi, (name, lo, hi)
    if p["overlapped"]:
        assert p["iteration_time_ratio_alone"] is not None and p["iteration_time_ratio_alone"] > 0
        # The sum ratios, recomputed from the iterations written beside the report (after the warm-up step).
        with open(os.path.join(os.path.dirname(sys.argv[1]), f"{name}_live_iterations.csv")) as f:
            its = [r for r in csv.DictReader(f) if int(r["step"]) >= report["warmup_steps"]]
        for flag, key in (("1", "iteration_time_sum_ratio_beside_train"), ("0", "iteration_time_sum_ratio_alone")):
            side = [r for r in its if r["beside_train"] == flag]
            if not side:
                assert p[key] is None, (name, key, p[key])
                continue
            expected = sum(float(r["time_s"]) for r in side) / sum(float(r["predicted_s"]) for r in side)
            assert abs(p[key] - expected) < 1e-3 * expected, (name, key, p[key], expected)
    else:
        assert p["iteration_time_sum_ratio_beside_train"] is None and p["iteration_time_sum_ratio_alone"] is None, name
    # Every policy trains after the warm-up: its train steps against the model of them.
    assert p["train_time_ratio"] is not None and 0 < p["train_time_ratio"] < 10, f"{name}: {p['train_time_ratio']}"
    assert 0 <= p["train_beside_engine_share"] <= 1 and (p["overlapped"] or p["train_beside_engine_share"] == 0), name
    # The default warm-up: step 0 is left out of the errors and gains, its ratio reported apart.
    assert len(p["warmup_live_over_sim"]) == 1 and p["warmup_live_over_sim"][0] > 0, p["warmup_live_over_sim"]
assert report["warmup_steps"] == 1
# Given a calibration, nothing was profiled between the steps: no drift to read, none taken out.
assert report["machine_slowdown_by_step"] == [], report["machine_slowdown_by_step"]
assert all(p["median_step_error_drift_adjusted"] is None for p in report["policies"].values())
for key in ("gain_measured", "gain_predicted", "gain_error_pp"):
    assert report[key] is not None and math.isfinite(report[key]), key
assert report["calibration"]["engine"]["iteration_model"] == "linear"
# Each policy's train steps beside the report: shape, time, model and page faults.
for name, p in report["policies"].items():
    with open(os.path.join(os.path.dirname(sys.argv[1]), f"{name}_live_train_steps.csv")) as f:
        rows = list(csv.DictReader(f))
    assert rows and set(rows[0]) == {"step", "samples", "tokens", "longest_tok", "time_s", "beside_engine_s", "predicted_alone_s",
                                     "minor_faults"}, (name, rows[:1])
    assert all(int(r["minor_faults"]) >= 0 and float(r["time_s"]) > 0 for r in rows), name
print("validate report: ok")
