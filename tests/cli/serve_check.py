"""`april serve` over loopback, as slime drives SGLang: greedy tokens equal
`april generate`'s, concurrent requests equal the same requests alone, an
aborted request answers with its partial tokens, which resumed on a second
server continue it exactly, bad requests are refused with the JSON path of
what is wrong, and SIGTERM stops the server.

Then `april live --engines` drives both servers: trained over HTTP (weights
loaded through /update_weights_from_disk), sync reaches the same weights bit
for bit as the in-process run; APRIL aborts and resumes over HTTP; a URL with
nothing listening is refused naming it.

usage: serve_check.py APRIL CHECKPOINT_DIR DATASET_JSONL WORKDIR
Runs with /usr/bin/python3 and its standard library only."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_process  # noqa: E402

april, checkpoint, dataset, work = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def start_server():
    return serve_process.start(april, checkpoint, *serve_process.prefill_flags(), "--slots", "8")


def post(url, path, body, timeout=60):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read().decode()
            return r.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


def get(url, path):
    with urllib.request.urlopen(url + path, timeout=30) as r:
        return json.loads(r.read().decode())


def greedy(url, ids, n, rid=None, ignore_eos=True):
    body = {"input_ids": ids, "sampling_params": {"max_new_tokens": n, "temperature": 0, "ignore_eos": ignore_eos},
            "return_logprob": True}
    if rid:
        body["rid"] = rid
    status, reply = post(url, "/generate", body)
    assert status == 200, (status, reply)
    return reply


a, url_a = start_server()
b, url_b = start_server()
try:
    # 1. Greedy tokens and log-probs as `april generate` gives them.
    prompt = [71, 54, 247, 45]
    reply = greedy(url_a, prompt, 6)
    ref = json.loads(subprocess.run([april, "generate", "--checkpoint", checkpoint, "--prompt-ids", ",".join(map(str, prompt)),
                                     "--max-new-tokens", "6", "--greedy", "--json", "--ignore-eos"],
                                    check=True, capture_output=True, text=True).stdout)
    check(reply["output_ids"] == ref["output_ids"], f"greedy ids {reply['output_ids']} != generate's {ref['output_ids']}")
    lps = [x[0] for x in reply["meta_info"]["output_token_logprobs"]]
    check(max(abs(x - y) for x, y in zip(lps, ref["output_logprobs"])) < 1e-5, f"log-probs {lps} != {ref['output_logprobs']}")
    check([x[1] for x in reply["meta_info"]["output_token_logprobs"]] == reply["output_ids"], "logprob triples carry the ids")
    check(reply["meta_info"]["finish_reason"] == {"type": "length", "length": 6}, f"finish {reply['meta_info']['finish_reason']}")
    check(reply["meta_info"]["prompt_tokens"] == 4 and reply["meta_info"]["completion_tokens"] == 6, "token counts")

    # 2. A stop token ends a request, named as SGLang names it.
    stop = reply["output_ids"][2]
    stopped = post(url_a, "/generate", {"input_ids": prompt, "sampling_params": {"max_new_tokens": 6, "temperature": 0,
                                                                                   "stop_token_ids": [stop]}})[1]
    check(stopped["output_ids"] == reply["output_ids"][:3], f"stop token: {stopped['output_ids']}")
    check(stopped["meta_info"]["finish_reason"] == {"type": "stop", "matched": stop}, f"stop: {stopped['meta_info']['finish_reason']}")

    # 3. Eight requests at once give what each gives alone.
    prompts = [[10 + i, 20 + i, 30 + i] for i in range(8)]
    alone = [greedy(url_a, p, 12)["output_ids"] for p in prompts]
    together = [None] * 8

    def one(i):
        together[i] = greedy(url_a, prompts[i], 12)["output_ids"]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(together == alone, "concurrent requests differ from the same requests alone")

    # 4. Abort: the partial tokens come back with finish_reason abort, and
    # prompt + partial on the other server continues the request exactly.
    n = 200
    whole = greedy(url_b, prompt, n)["output_ids"]
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("reply", greedy(url_a, prompt, n, rid="job-7-sample-0")))
    t.start()
    deadline = time.time() + 30
    while time.time() < deadline and get(url_a, "/v1/loads")["loads"][0]["num_running_reqs"] == 0:
        time.sleep(0.005)
    time.sleep(0.05)
    status, _ = post(url_a, "/abort_request", {"rid": "job-7"})
    check(status == 200, f"abort_request answered {status}")
    t.join(60)
    cut = out["reply"]
    partial = cut["output_ids"]
    check(cut["meta_info"]["finish_reason"]["type"] == "abort", f"aborted finish {cut['meta_info']['finish_reason']}")
    check(cut["meta_info"]["id"] == "job-7-sample-0", "the aborted reply names its rid")
    check(0 < len(partial) < n, f"aborted after {len(partial)} of {n} tokens (expected some, not all)")
    check(partial == whole[:len(partial)], "the partial tokens are the uninterrupted run's")
    rest = greedy(url_b, prompt + partial, n - len(partial))["output_ids"]
    check(partial + rest == whole, "prompt + partial resumed on another server does not continue the run exactly")
    check(get(url_a, "/get_server_info")["aborted_requests"] == 1, "the server counts one abort")
    # What slime polls after an abort until the server is idle.
    loads = get(url_a, "/v1/loads")["loads"][0]
    check(loads["num_running_reqs"] == 0 and loads["num_waiting_reqs"] == 0, f"loads after the abort: {loads}")

    # 4b. Pause: in place, a request waits with its KV and, continued, ends
    # as it would have; new requests wait while paused; mode abort answers
    # what is in flight with its partial output.
    def long_request(url, box, key):
        box[key] = greedy(url, prompt, 240)

    def wait_running(url):
        deadline = time.time() + 30
        while time.time() < deadline and get(url, "/v1/loads")["loads"][0]["num_running_reqs"] == 0:
            time.sleep(0.002)

    whole_b = greedy(url_b, prompt, 240)["output_ids"]
    box = {}
    t = threading.Thread(target=long_request, args=(url_b, box, "in_place"))
    t.start()
    wait_running(url_b)
    status, reply = post(url_b, "/pause_generation", {"mode": "in_place"})
    check(status == 200 and reply["status"] == "ok", f"pause in place: {status} {reply}")
    time.sleep(0.5)
    check(t.is_alive() and get(url_b, "/get_server_info")["paused"] is True, "a request paused in place went on")
    check(get(url_b, "/v1/loads")["loads"][0]["num_running_reqs"] == 1, "the paused request is not held")
    waiting = threading.Thread(target=lambda: box.setdefault("during", greedy(url_b, prompt, 4)))
    waiting.start()
    time.sleep(0.3)
    check(waiting.is_alive(), "a request sent while paused ran")
    post(url_b, "/continue_generation", {})
    t.join(60)
    waiting.join(60)
    check(box["in_place"]["output_ids"] == whole_b and box["in_place"]["meta_info"]["finish_reason"]["type"] == "length",
          "paused in place and continued, the request did not end as uninterrupted")
    check(box["during"]["output_ids"] == whole_b[:4], "the request sent while paused")
    t = threading.Thread(target=long_request, args=(url_b, box, "aborted"))
    t.start()
    wait_running(url_b)
    post(url_b, "/pause_generation", {})
    t.join(60)
    check(box["aborted"]["meta_info"]["finish_reason"]["type"] == "abort", "pause (abort) did not abort the request in flight")
    post(url_b, "/continue_generation", {})
    # A request held by a pause is aborted by abort_all too, answering with no tokens.
    post(url_b, "/pause_generation", {"mode": "in_place"})
    held = threading.Thread(target=lambda: box.setdefault("held", greedy(url_b, prompt, 4)))
    held.start()
    time.sleep(0.2)
    check(get(url_b, "/v1/loads")["loads"][0]["num_waiting_reqs"] == 1, "a held request is not counted as waiting")
    post(url_b, "/abort_request", {"abort_all": True})
    held.join(30)
    check(not held.is_alive() and box["held"]["meta_info"]["finish_reason"]["type"] == "abort" and box["held"]["output_ids"] == [],
          f"a held request after abort_all: {box.get('held')}")
    post(url_b, "/continue_generation", {})
    status, reply = post(url_b, "/pause_generation", {"mode": "retract"})
    check(status == 400 and "/mode" in reply["error"]["message"], f"pause retract: {status} {reply}")
    with urllib.request.urlopen(url_b + "/metrics", timeout=30) as r:
        metrics = r.read().decode()
    check("sglang:num_running_reqs{" in metrics and "sglang:num_aborted_requests_total{" in metrics, f"metrics: {metrics[:200]!r}")

    # 5. Refusals, each naming what is wrong.
    for body, status_want, text in [
        (b'{"input_ids": [1, 2', 400, "not JSON"),
        ({"input_ids": [1, 2], "sampling_params": {"max_new_tokens": "x"}}, 400, "/sampling_params/max_new_tokens"),
        ({"input_ids": [1, 2], "sampling_params": {"top_k": 5}}, 400, "/sampling_params/top_k"),
        ({"input_ids": [1, 2], "sampling_params": {"stop": ["\n"]}}, 400, "/sampling_params/stop"),
        ({"input_ids": [1, 2], "sampling_params": {"frequency_penalty": 0.5}}, 400, "/sampling_params/frequency_penalty"),
        ({"text": "hello"}, 400, "/text"),
        ({"input_ids": [[1, 2], [3]]}, 400, "batch"),
        ({"input_ids": []}, 400, "an empty prompt"),
        ({"input_ids": [1, 9999]}, 400, "outside the model's vocabulary"),
        ({"input_ids": [1, 2], "sampling_params": {"max_new_tokens": 1000}}, 400, "past the context length"),
        ({"input_ids": [1, 2], "stream": True}, 400, "/stream"),
        ({"input_ids": [1, 2], "colour": "red"}, 400, "/colour: an unknown field"),
    ]:
        status, reply = post(url_a, "/generate", body)
        msg = (reply or {}).get("error", {}).get("message", "")
        check(status == status_want and text in msg, f"{body!r}: {status} {msg!r}")
    status, reply = post(url_a, "/abort_request", {"rid": 7})
    check(status == 400 and "/rid" in reply["error"]["message"], f"abort with a numeric rid: {status} {reply}")
    info = get(url_a, "/get_model_info")
    check(info["is_generation"] is True and info["weight_version"] == "default", f"model info {info}")

    # 6. april live --engines: the same policies driving both servers over HTTP.
    import csv
    import os
    import shutil
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    run = [april, "live", "--checkpoint", checkpoint, "--dataset", dataset, "--dataset-layout", "gsm8k", "--set", "live.eval_prompts=6",
           "--set", "rollout_batch_size=4", "--set", "n_samples_per_prompt=4", "--set", "max_response_len=24", "--set", "live.temperature=0",
           "--set", "live.threads=1", "--steps", "2"]

    # Training over HTTP: the trainer beside the servers, its weights loaded by
    # them through /update_weights_from_disk each step. Sync (sampled, no
    # aborts) trains to the same weights, bit for bit, as the in-process run.
    train = list(run)
    at = train.index("live.temperature=0")
    del train[at - 1:at + 1]  # sampled, at live.temperature's default of 1
    train += ["--set", "live.lr=0.02", "--policy", "sync"]
    over_http = subprocess.run(train + ["--engines", f"{url_a},{url_b}", "--weights-dir", f"{work}/weights", "--out", f"{work}/http",
                                        "--export", f"{work}/http-exported"],
                               capture_output=True, text=True)
    check(over_http.returncode == 0, f"training over HTTP: {over_http.stdout[-300:]} {over_http.stderr[-300:]}")
    in_process = subprocess.run(train + ["--export", f"{work}/exported"], capture_output=True, text=True)
    check(in_process.returncode == 0, f"training in process: {in_process.stderr[-300:]}")
    if over_http.returncode == 0 and in_process.returncode == 0:
        same = open(f"{work}/weights/v2/model.safetensors", "rb").read() == open(f"{work}/exported/model.safetensors", "rb").read()
        check(same, "the weights trained over HTTP differ from those trained in process")
        exported = open(f"{work}/http-exported/model.safetensors", "rb").read() == open(f"{work}/exported/model.safetensors", "rb").read()
        check(exported and os.path.exists(f"{work}/http-exported/config.json"), "--export over HTTP: not the trained weights")
        check(open(f"{work}/exported/model.safetensors", "rb").read() != open(f"{checkpoint}/model.safetensors", "rb").read(),
              "training changed no weight")
        check(sorted(os.listdir(f"{work}/weights")) == [".april-output", "v2"], f"weights folder {sorted(os.listdir(f'{work}/weights'))}")
        check(get(url_a, "/get_weight_version")["weight_version"] == "2" and get(url_b, "/get_weight_version")["weight_version"] == "2",
              "the servers' weight_version after two syncs")
    # Saved after two steps and resumed for a third, training over HTTP ends on the
    # weights of three steps run at once, bit for bit; the servers hold version 3.
    def with_steps(cmd, n):
        cmd = list(cmd)
        cmd[cmd.index("--steps") + 1] = str(n)
        return cmd

    full = subprocess.run(with_steps(train, 3) + ["--engines", f"{url_a},{url_b}", "--weights-dir", f"{work}/w-full",
                                   "--export", f"{work}/e-full"], capture_output=True, text=True)
    first = subprocess.run(train + ["--engines", f"{url_a},{url_b}", "--weights-dir", f"{work}/w-part", "--save", f"{work}/saved"],
                           capture_output=True, text=True)
    resumed = subprocess.run(with_steps(train, 1) + ["--engines", f"{url_a},{url_b}", "--weights-dir", f"{work}/w-part",
                                      "--resume", f"{work}/saved", "--export", f"{work}/e-resumed"], capture_output=True, text=True)
    check(full.returncode == 0 and first.returncode == 0 and resumed.returncode == 0,
          f"save and resume over HTTP: {full.stderr[-200:]} {first.stderr[-200:]} {resumed.stderr[-200:]}")
    if resumed.returncode == 0:
        check("resumed from" in resumed.stdout and "at step 2" in resumed.stdout, f"resume: {resumed.stdout[-300:]}")
        same = open(f"{work}/e-full/model.safetensors", "rb").read() == open(f"{work}/e-resumed/model.safetensors", "rb").read()
        check(same, "saved after 2 steps and resumed for 1: not the weights of 3 steps at once")
        check(get(url_a, "/get_weight_version")["weight_version"] == "3", "the servers' weight_version after the resumed step")
    wrong = subprocess.run(run + ["--policy", "sync", "--engines", url_a, "--resume", f"{work}/saved"], capture_output=True, text=True)
    check(wrong.returncode != 0 and "servers.json: /trained" in wrong.stderr, f"a trained checkpoint resumed rollout only: {wrong.stderr!r}")
    overlapped = subprocess.run(run + ["--policy", "async", "--engines", url_a, "--save", f"{work}/s-async"], capture_output=True, text=True)
    check(overlapped.returncode != 0 and "colocated policies only" in overlapped.stderr, f"--save with async over HTTP: {overlapped.stderr!r}")
    april_run = subprocess.run(run + ["--policy", "april", "--engines", f"{url_a},{url_b}", "--out", f"{work}/april",
                                      "--timeline", f"{work}/april-timeline.json", "--timeline-detail", "changes"],
                               capture_output=True, text=True)
    check(april_run.returncode == 0, f"live --engines april: {april_run.stderr[-300:]}")
    if april_run.returncode == 0:
        summary = json.load(open(f"{work}/april/summary.json"))
        pol = summary["policies"]["april"]
        check(summary["engines"] == [url_a, url_b], f"summary engines {summary.get('engines')}")
        check(pol["requests_answered"] > 0 and "requests_aborted" in pol, f"april over HTTP: {pol.get('requests_answered')}")
        print(f"april over HTTP: {pol['requests_answered']} requests, {pol['requests_aborted']} aborted")
        # The timeline: a track per server, busy while it has requests, and its requests counted at every change.
        events = json.load(open(f"{work}/april-timeline.json"))["traceEvents"]
        for e in (0, 1):
            busy = [x for x in events if x["ph"] == "X" and x["name"] == "busy" and x["tid"] == e and x["pid"] == 2]
            counts = [x["args"]["running"] for x in events if x["ph"] == "C" and x["name"] == f"requests e{e}"]
            check(busy and all(x["ts"] >= 0 and x["dur"] >= 0 for x in busy), f"timeline: server {e}'s busy spans")
            check(counts and max(counts) > 0 and counts[-1] == 0, f"timeline: server {e}'s requests {counts[:8]}...")
    # Seer's divided rollout over HTTP: each request asks for at most 8 of the
    # 24 tokens, a reply that stops there (finish reason "length") goes back
    # to the pool and out again, so the same rollout takes more requests than
    # whole ones. Greedy on --exact-prefill servers, a chunk continues its
    # sample exactly: the same tokens, generated and trained.
    seer_runs = {}
    for chunk in ("0", "8"):
        o = subprocess.run(run + ["--policy", "seer", "--set", f"seer.chunk_tok={chunk}", "--engines", f"{url_a},{url_b}",
                                  "--out", f"{work}/seer-{chunk}"], capture_output=True, text=True)
        check(o.returncode == 0, f"seer chunk {chunk} over HTTP: {o.stderr[-300:]}")
        if o.returncode == 0:
            seer_runs[chunk] = json.load(open(f"{work}/seer-{chunk}/summary.json"))["policies"]["seer"]
    if len(seer_runs) == 2:
        whole, chunked = seer_runs["0"], seer_runs["8"]
        check(chunked["requests_answered"] > whole["requests_answered"],
              f"chunks over HTTP took no more requests: {chunked['requests_answered']} vs {whole['requests_answered']}")
        for key in ("tokens_generated", "tokens_trained"):
            check(chunked[key] == whole[key], f"seer over HTTP, {key}: {chunked[key]} in chunks of 8, {whole[key]} whole")
        print(f"seer over HTTP: {whole['requests_answered']} requests whole, {chunked['requests_answered']} in chunks of 8")
    # StreamRL's pools over HTTP: the predicted tail (25%) on server 0, the
    # rest on server 1. The history predictor knows nothing in step 1 (the
    # base's dispatch, 8 and 8), then splits 4 and 12: server 0 is sent fewer
    # requests than server 1. Counted from the timeline's per-server counts.
    o = subprocess.run(with_steps(run, 3) + ["--policy", "streamrl", "--set", "streamrl.predictor=history", "--set", "streamrl.tail_engines=1",
                                             "--set", "streamrl.tail_fraction=0.25", "--engines", f"{url_a},{url_b}",
                                             "--timeline", f"{work}/streamrl.json", "--timeline-detail", "changes"],
                       capture_output=True, text=True)
    check(o.returncode == 0, f"streamrl over HTTP: {o.stderr[-300:]}")
    if o.returncode == 0:
        events = json.load(open(f"{work}/streamrl.json"))["traceEvents"]
        sent = []
        for e in (0, 1):
            counts = [x["args"]["running"] for x in events if x["ph"] == "C" and x["name"] == f"requests e{e}"]
            sent.append(sum(1 for a, b in zip([0] + counts, counts) if b > a))
        check(sent == [16, 32], f"streamrl over HTTP: requests sent to each server {sent}, want [16, 32] (8 + 4 + 4 and 8 + 12 + 12)")
        print(f"streamrl over HTTP: requests sent to each server {sent}")
    windows = subprocess.run(run + ["--policy", "sync", "--engines", url_a, "--timeline", f"{work}/w.json", "--timeline-detail", "windows"],
                             capture_output=True, text=True)
    check(windows.returncode != 0 and "--timeline-detail windows" in windows.stderr, f"windows over HTTP: {windows.stderr!r}")
    dead = subprocess.run(run + ["--policy", "sync", "--engines", "http://127.0.0.1:1"], capture_output=True, text=True)
    check(dead.returncode != 0 and "http://127.0.0.1:1" in dead.stderr and dead.stderr.count("\n") == 1, f"a dead URL: {dead.stderr!r}")
    # Overlapped policies over HTTP, training: one_step_off's syncs let the
    # servers finish their requests under the old weights (SGLang's update);
    # async's (recompute) abort them and send them again from prompt +
    # tokens. Every trained token's version is known (the trainer refuses a
    # batch whose versions do not cover its tokens), the servers end on the
    # last version, and only its folder is left.
    for pol in ("one_step_off", "async"):
        wdir = f"{work}/weights-{pol}"
        cmd = list(train)
        cmd[-1] = pol
        cmd[cmd.index("--steps") + 1] = "3"
        o = subprocess.run(cmd + ["--engines", f"{url_a},{url_b}", "--weights-dir", wdir, "--out", f"{work}/{pol}",
                                  "--export", f"{work}/e-{pol}"], capture_output=True, text=True)
        check(o.returncode == 0, f"{pol} over HTTP: {o.stdout[-300:]} {o.stderr[-300:]}")
        if o.returncode != 0:
            continue
        pol_summary = json.load(open(f"{work}/{pol}/summary.json"))["policies"][pol]
        check(pol_summary["offpolicy_token_fraction"] > 0, f"{pol} over HTTP trained no token of an older version: {pol_summary}")
        check(get(url_a, "/get_weight_version")["weight_version"] == "3" and get(url_b, "/get_weight_version")["weight_version"] == "3",
              f"{pol}: the servers' weight_version after three syncs")
        check(sorted(os.listdir(wdir)) == [".april-output", "v3"], f"{pol}: weights folder {sorted(os.listdir(wdir))}")
        # The export is what the servers loaded last, whatever the trainer's next step does beside them.
        check(open(f"{work}/e-{pol}/model.safetensors", "rb").read() == open(f"{wdir}/v3/model.safetensors", "rb").read(),
              f"{pol}: --export is not the weights the servers loaded last")
        print(f"{pol} over HTTP: {pol_summary['requests_answered']} requests, {pol_summary['requests_aborted']} aborted, "
              f"off-policy {pol_summary['offpolicy_token_fraction']:.2f}")
    rollout_export = subprocess.run(run + ["--policy", "sync", "--engines", url_a, "--export", f"{work}/e2"], capture_output=True, text=True)
    check(rollout_export.returncode != 0 and "give --weights-dir" in rollout_export.stderr, f"--export rollout only: {rollout_export.stderr!r}")
    alone = subprocess.run(run + ["--policy", "sync", "--weights-dir", f"{work}/w2"], capture_output=True, text=True)
    check(alone.returncode != 0 and "give --engines" in alone.stderr, f"--weights-dir without --engines: {alone.stderr!r}")
finally:
    for p in (a, b):
        p.send_signal(signal.SIGTERM)
    for p in (a, b):
        try:
            rest = p.communicate(timeout=30)[0]
            check(p.returncode == 0 and "april serve: stopped" in rest, f"SIGTERM: exit {p.returncode}, {rest[-300:]!r}")
        except subprocess.TimeoutExpired:
            p.kill()
            check(False, "the server did not stop within 30 s of SIGTERM")

if failures:
    sys.exit(f"{len(failures)} checks failed")
print("april serve: checks ok")
