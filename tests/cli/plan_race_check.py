"""`april plan`'s race against its exhaustive search on the docs' three
workloads (docs/plan.md), as a user runs them (--steps 20 --repeats 3
--jobs 2, the default constraint): the same best plan, the same designs in
the same order each with the same best plan, and that plan's figures equal
digit for digit (the finalists run the exhaustive search's own seeds).
Prints each workload's wall times and their ratio, taken in one run.

usage: plan_race_check.py APRIL SCENARIO_DIR WORK_DIR
Runs with /usr/bin/python3 and its standard library only."""
import json
import os
import subprocess
import sys
import time

april, scenarios, work = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(work, exist_ok=True)
WORKLOADS = [("qwen2.5-math-7b-128xh20-colocated.json", "1,2,4"), ("qwen3-30b-a3b-64xh20.json", "2,4,8"),
             ("deepseek-v3-256xh800.json", "16,32,64")]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def search(scenario, tp, exhaustive):
    out = os.path.join(work, f"{scenario}.{'exhaustive' if exhaustive else 'race'}.json")
    args = [april, "plan", "--scenario", os.path.join(scenarios, scenario), "--tp", tp, "--steps", "20", "--repeats", "3",
            "--jobs", "2", "--json", out] + (["--exhaustive"] if exhaustive else [])
    t0 = time.monotonic()
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    took = time.monotonic() - t0
    if r.returncode != 0:
        check(False, f"{' '.join(args[1:])}: exit {r.returncode}: {r.stderr[-400:]}")
        return None, took
    with open(out) as f:
        return json.load(f), took


def ran(result):
    return [p for p in result["plans"] if "excluded" not in p and "stopped" not in p]


def per_design(result):
    best = {}
    for p in ran(result):
        best.setdefault(p["policy"], p)
    return [(policy, p["plan"], p["effective_throughput_tok_s"]) for policy, p in best.items()]


for scenario, tp in WORKLOADS:
    race, race_s = search(scenario, tp, False)
    full, full_s = search(scenario, tp, True)
    if race is None or full is None:
        continue
    check(ran(race) and ran(full) and ran(race)[0]["plan"] == ran(full)[0]["plan"],
          f"{scenario}: best plan {ran(race)[0]['plan'] if ran(race) else None} in the race, "
          f"{ran(full)[0]['plan'] if ran(full) else None} in the exhaustive search")
    check(per_design(race) == per_design(full), f"{scenario}: each design's best differs:\n  race       {per_design(race)}\n"
                                                f"  exhaustive {per_design(full)}")
    stopped = sum(1 for p in race["plans"] if "stopped" in p)
    print(f"{scenario}: {len(race['plans'])} plans; race {race_s:.1f} s ({race['simulations']} simulations, {100 * race['simulated_steps_fraction']:.0f}% of the steps, {stopped} stopped), "
          f"exhaustive {full_s:.1f} s ({full['simulations']} simulations): {full_s / race_s:.2f}x")
if failures:
    sys.exit(f"{len(failures)} failures")
print("the race and the exhaustive search agree on the three workloads")
