"""`april profile --engine URL` against an `april serve` on loopback, then
`april calibrate` on what it wrote.

The profile holds a prefill and a decode point per batch (1, 2, 4 up to the
server's 4 slots) and prompt length (16 and a quarter of the context) per
pass, an abort and a weight load per pass, and no train step; the fit to it
predicts each decode point within 30% (the server's own iterations timed over
HTTP), and its train time is zero. A URL with nothing listening is refused
naming it, with nothing written.

usage: profile_engine_check.py APRIL CHECKPOINT_DIR WORKDIR
Runs with /usr/bin/python3 and its standard library only."""
import json
import os
import shutil
import subprocess
import sys

april, checkpoint, work = sys.argv[1:4]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
serve = subprocess.Popen([april, "serve", "--checkpoint", checkpoint, "--port", "0", "--slots", "4"], stdout=subprocess.PIPE, text=True)
url = None
for line in serve.stdout:
    if "listening on " in line:
        url = line.strip().split("listening on ")[1]
        break
check(url is not None, "april serve did not start")
try:
    if url:
        profile = os.path.join(work, "profile.json")
        p = subprocess.run([april, "profile", "--engine", url, "--repeats", "2", "--decode-tok", "16", "--out", profile],
                           capture_output=True, text=True, timeout=300)
        check(p.returncode == 0, f"profile --engine: {p.stderr[-400:]}")
        if p.returncode == 0:
            doc = json.load(open(profile))
            its = doc["iterations"]
            prefill = [i for i in its if i["prefill_requests"] > 0]
            decode = [i for i in its if i["prefill_requests"] == 0]
            # Batches 1, 2, 4 and prompts 16 and 64 (a quarter of 256 positions), two passes.
            check(len(prefill) == 12 and len(decode) == 12, f"points: {len(prefill)} prefill, {len(decode)} decode")
            check(sorted({i["batch"] for i in its}) == [1, 2, 4], f"batches {sorted({i['batch'] for i in its})}")
            check(all(i["prefill_tok"] == i["batch"] * i["prefill_longest_tok"] for i in prefill), "prefill tokens = batch x prompt")
            check(all(i["time_s"] > 0 for i in its), "every point took time")
            check(len(doc["aborts"]) == 2 and all(a["requests"] == 4 for a in doc["aborts"]), f"aborts {doc['aborts']}")
            check(len(doc["sync_s"]) == 2 and all(s > 0 for s in doc["sync_s"]), f"weight loads {doc['sync_s']}")
            check(doc["train"] == [] and doc["slots"] == 4, "no train step; the server's slots")
            model = os.path.join(work, "model.json")
            c = subprocess.run([april, "calibrate", profile, "--out", model], capture_output=True, text=True)
            check(c.returncode == 0, f"calibrate: {c.stderr[-400:]}")
            if c.returncode == 0:
                m = json.load(open(model))
                engine = m["engine"]
                base_s = engine["linear_base_us"] * 1e-6
                per_req_s = engine["linear_per_request_us"] * 1e-6
                per_kv_s = engine["linear_per_kv_tok_ns"] * 1e-9
                for i in decode:
                    pred = base_s + per_req_s * i["batch"] + per_kv_s * i["kv_tok"]
                    check(abs(pred - i["time_s"]) <= 0.3 * i["time_s"],
                          f"decode batch {i['batch']} kv {i['kv_tok']}: predicted {pred * 1e3:.3f} ms, measured {i['time_s'] * 1e3:.3f}")
                check(m["train"]["linear_base_s"] == 0 and m["train"]["linear_per_tok_us"] == 0, f"train model {m['train']}")
    dead = subprocess.run([april, "profile", "--engine", "http://127.0.0.1:1", "--out", os.path.join(work, "dead.json")],
                          capture_output=True, text=True)
    check(dead.returncode != 0 and "http://127.0.0.1:1" in dead.stderr and dead.stderr.count("\n") == 1,
          f"a dead URL: {dead.stderr!r}")
    check(not os.path.exists(os.path.join(work, "dead.json")), "a failed profile wrote its file")
finally:
    serve.terminate()
    serve.wait()

if failures:
    sys.exit(f"{len(failures)} checks failed")
print("april profile --engine: checks ok")
