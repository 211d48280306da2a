#!/usr/bin/python3
"""A timeline file from `--timeline FILE --timeline-detail windows` as the
trace-event format and our tracks have it.

Every event carries the format's fields (ph, name, pid, tid; ts but on
metadata; dur on spans; a scope on instants), no time is negative, and each
run named on the command line has an engines process whose tracks hold
prefill and decode windows, in time order and apart on each track, with
their args, and no busy spans (the windows stand for them).

With --per-token-prefill (engines that feed contexts through decode
iterations, as live.exact_prefill runs do) there must be no prefill window.

usage: timeline_check.py [--per-token-prefill] FILE RUN_LABEL...
  (a label as the tracks name it: "april", "sync live", "sync twin")"""
import json
import sys

args = sys.argv[1:]
per_token_prefill = args[:1] == ["--per-token-prefill"]
if per_token_prefill:
    args = args[1:]
path, labels = args[0], args[1:]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


with open(path) as f:
    events = json.load(f)["traceEvents"]
check(len(events) > 0, "the file has events")
process_names = {}
for e in events:
    check(all(k in e for k in ("ph", "name", "pid", "tid")), f"format fields in {e}")
    if e["ph"] == "M":
        if e["name"] == "process_name":
            process_names[e["pid"]] = e["args"]["name"]
        continue
    check(isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, f"a time, not negative, in {e}")
    if e["ph"] == "X":
        check(e.get("dur", -1) >= 0, f"a duration in {e}")
    if e["ph"] == "i":
        check(e.get("s") == "t", f"an instant's scope in {e}")

for label in labels:
    pids = [pid for pid, name in process_names.items() if name == f"{label}: engines"]
    check(len(pids) == 1, f"one engines process for {label!r} (have {sorted(process_names.values())})")
    if len(pids) != 1:
        continue
    # The engines' side of the weight syncs ("version N") is a track of its own.
    spans = [e for e in events if e["pid"] == pids[0] and e["ph"] == "X" and not e["name"].startswith("version ")]
    names = {e["name"] for e in spans}
    if per_token_prefill:
        check(names >= {"decode"} and "prefill" not in names, f"{label}: decode windows only (have {sorted(names)})")
    else:
        check("prefill" in names and "decode" in names, f"{label}: prefill and decode windows (have {sorted(names)})")
    check("busy" not in names, f"{label}: no busy spans beside the windows")
    by_track = {}
    for e in spans:
        by_track.setdefault(e["tid"], []).append(e)
    for tid, track in by_track.items():
        for prev, cur in zip(track, track[1:]):
            # Microseconds with three decimals: compare in nanoseconds.
            check(round(cur["ts"] * 1000) >= round((prev["ts"] + prev["dur"]) * 1000),
                  f"{label} engine {tid}: windows in order and apart ({prev} then {cur})")
        for e in track:
            a = e["args"]
            check(a.get("batch", 0) >= 1 and a.get("iterations", 0) >= 1 and "kv_tok" in a, f"{label}: window args in {e}")
            check((e["name"] == "prefill") == (a.get("prefill_tok", 0) > 0), f"{label}: prefill windows name their tokens: {e}")

if failures:
    sys.exit(f"{len(failures)} failures")
print(f"timeline {path}: ok ({len(events)} events)")
