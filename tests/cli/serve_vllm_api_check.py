"""vLLM's /v1/completions over loopback, served by `april serve` and driven
by `april live --engine-api vllm`:
- a greedy completion, streamed or not, gives /generate's ids and log-probs;
- a stream closed by its client is aborted in the engine (the server goes
  idle), and the ids received, resumed as prompt + ids on a second server,
  continue it exactly (vLLM's only abort outside its dev mode);
- bad bodies are refused with the JSON path of what is wrong;
- `april live --engine-api vllm` rolls out the same tokens as over SGLang's
  API (sync, sampled: the seed's 64 bits travel as vLLM's signed seed),
  APRIL aborts and resumes by closing streams and async runs beside them,
  leaving both servers idle; training over vLLM's API and the options
  without --engines are refused.

usage: serve_vllm_api_check.py APRIL CHECKPOINT_DIR DATASET_JSONL WORKDIR
Runs with /usr/bin/python3 and its standard library only."""
import csv
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
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


def post(url, path, body, timeout=60):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def get(url, path):
    with urllib.request.urlopen(url + path, timeout=30) as r:
        return json.loads(r.read().decode())


def events(text):
    """The JSON events of a stream's text, and whether it ended with [DONE]."""
    out, done = [], False
    for block in text.split("\n\n"):
        block = block.strip()
        if block.startswith("data: "):
            if block[6:] == "[DONE]":
                done = True
            else:
                out.append(json.loads(block[6:]))
    return out, done


def streamed_ids(evs):
    ids, lps, finish = [], [], None
    for e in evs:
        for c in e["choices"]:
            ids += c["token_ids"]
            if c.get("logprobs"):
                lps += c["logprobs"]["token_logprobs"]
            finish = c["finish_reason"] or finish
    return ids, lps, finish


def idle(url, within_s=10):
    deadline = time.time() + within_s
    while time.time() < deadline:
        if get(url, "/v1/loads")["loads"][0]["num_running_reqs"] == 0 and get(url, "/v1/loads")["loads"][0]["num_waiting_reqs"] == 0:
            return True
        time.sleep(0.02)
    return False


a, url_a = serve_process.start(april, checkpoint, *serve_process.prefill_flags(), "--slots", "8")
b, url_b = serve_process.start(april, checkpoint, *serve_process.prefill_flags(), "--slots", "8")
try:
    # 1. The model list names what is served; its id is the body's "model".
    models = get(url_a, "/v1/models")
    check(models["object"] == "list" and models["data"][0]["id"] == checkpoint and models["data"][0]["max_model_len"] > 0, f"models {models}")

    # 2. Greedy, streamed and not, as /generate gives it.
    prompt = [71, 54, 247, 45]
    body = {"model": checkpoint, "prompt": prompt, "max_tokens": 12, "temperature": 0, "ignore_eos": True, "logprobs": 0}
    status, text = post(url_a, "/v1/completions", body)
    check(status == 200, f"completion: {status} {text[:200]}")
    whole = json.loads(text)["choices"][0]
    # A model this server does not serve: 404, as vLLM's NotFoundError, naming both.
    status_x, text_x = post(url_a, "/v1/completions", dict(body, model="no-such-model"))
    check(status_x == 404 and "no-such-model" in text_x and "does not exist" in text_x and checkpoint in text_x,
          f"unknown model: {status_x} {text_x[:300]}")
    status, text = post(url_a, "/v1/completions", dict(body, stream=True, stream_options={"include_usage": True}))
    evs, done = events(text)
    ids, lps, finish = streamed_ids(evs)
    status_g, text_g = post(url_a, "/generate", {"input_ids": prompt, "return_logprob": True,
                                                 "sampling_params": {"max_new_tokens": 12, "temperature": 0, "ignore_eos": True}})
    ref = json.loads(text_g)
    check(whole["token_ids"] == ref["output_ids"] == ids, f"greedy ids: completion {whole['token_ids']}, stream {ids}, generate {ref['output_ids']}")
    ref_lps = [x[0] for x in ref["meta_info"]["output_token_logprobs"]]
    check(max(abs(x - y) for x, y in zip(lps, ref_lps)) < 1e-6 and len(lps) == 12, f"streamed log-probs {lps} != {ref_lps}")
    check(done and finish == "length" and whole["finish_reason"] == "length", f"finish: stream {finish} (done {done}), whole {whole['finish_reason']}")
    check(evs[-1]["choices"] == [] and evs[-1]["usage"]["completion_tokens"] == 12, f"usage event {evs[-1]}")

    # 3. A stream its client closes is aborted in the engine; its ids resume exactly elsewhere.
    full = 200
    aborted_before = get(url_a, "/get_server_info")["aborted_requests"]
    conn = http.client.HTTPConnection(url_a.split("//")[1], timeout=30)
    conn.request("POST", "/v1/completions", json.dumps({"prompt": prompt, "max_tokens": full, "temperature": 0, "ignore_eos": True,
                                                        "stream": True}), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    got, buf = [], b""
    while len(got) < 3:
        line = resp.fp.readline()
        if line.startswith(b"data: {"):
            got += json.loads(line[6:])["choices"][0]["token_ids"]
    conn.sock.close()
    conn.close()
    check(idle(url_a), "the server still runs a request whose stream was closed")
    check(get(url_a, "/get_server_info")["aborted_requests"] == aborted_before + 1, "the closed stream was not counted aborted")
    check(3 <= len(got) < full, f"{len(got)} tokens received before the close")
    status, text = post(url_b, "/v1/completions", {"prompt": prompt + got, "max_tokens": full - len(got), "temperature": 0, "ignore_eos": True})
    rest = json.loads(text)["choices"][0]["token_ids"]
    status, text = post(url_b, "/v1/completions", {"prompt": prompt, "max_tokens": full, "temperature": 0, "ignore_eos": True})
    check(got + rest == json.loads(text)["choices"][0]["token_ids"], "closed after some tokens and resumed elsewhere: not the uninterrupted completion")

    # 4. Refusals name the field.
    for bad, want in [({"prompt": [1], "n": 2, "best_of": 3}, "/best_of: only n"),
                      ({"prompt": [1], "logprobs": 3}, "/logprobs"), ({"prompt": [1], "bogus": 1}, "bogus"),
                      ({"prompt": [100000]}, "outside the model's vocabulary")]:
        status, text = post(url_a, "/v1/completions", bad)
        check(status == 400 and want in text, f"{bad}: {status} {text[:200]}")

    # 5. april live over vLLM's API: the same tokens as over SGLang's.
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    run = [april, "live", "--checkpoint", checkpoint, "--dataset", dataset, "--dataset-layout", "gsm8k", "--set", "live.eval_prompts=6",
           "--set", "rollout_batch_size=4", "--set", "n_samples_per_prompt=4", "--set", "max_response_len=24", "--set", "live.threads=1",
           "--steps", "3", "--engines", f"{url_a},{url_b}"]
    outs = {}
    for api in ("sglang", "vllm"):
        p = subprocess.run(run + ["--policy", "sync", "--engine-api", api, "--out", f"{work}/sync-{api}"], capture_output=True, text=True)
        check(p.returncode == 0, f"sync over {api}: {p.stderr[-300:]}")
        if p.returncode == 0:
            with open(f"{work}/sync-{api}/sync/steps.csv") as f:
                outs[api] = [(r["tokens_generated"], r["reward_mean"], r["accuracy"]) for r in csv.DictReader(f)]
    check(len(outs) == 2 and outs["sglang"] == outs["vllm"], f"sync tokens over the two APIs differ: {outs}")
    for pol in ("april", "async"):
        p = subprocess.run(run + ["--policy", pol, "--engine-api", "vllm", "--engine-slots", "8", "--out", f"{work}/{pol}"],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"{pol} over vLLM's API: {p.stderr[-300:]}")
        if p.returncode == 0:
            summary = json.load(open(f"{work}/{pol}/summary.json"))
            s = summary["policies"][pol]
            check(summary["engine_api"] == "vllm", f"summary engine_api {summary.get('engine_api')}")
            check(s["requests_answered"] > 0, f"{pol}: no request answered")
            if pol == "april":
                check(s["requests_aborted"] > 0, f"april over vLLM's API aborted nothing: {s}")
            print(f"{pol} over vLLM's API: {s['requests_answered']} requests, {s['requests_aborted']} aborted")
        check(idle(url_a) and idle(url_b), f"{pol}: a server still runs requests after the run")
    for extra, want in [(["--engine-api", "vllm", "--weights-dir", f"{work}/w"], "vLLM has no /update_weights_from_disk"),
                        (["--engine-api", "grpc"], "--engine-api 'grpc': sglang or vllm")]:
        p = subprocess.run(run + ["--policy", "sync"] + extra, capture_output=True, text=True)
        check(p.returncode != 0 and want in p.stderr and p.stderr.count("\n") == 1, f"{extra}: {p.stderr!r}")
    no_engines = [x for x in run if x not in ("--engines", f"{url_a},{url_b}")]
    p = subprocess.run(no_engines + ["--policy", "sync", "--engine-api", "vllm"], capture_output=True, text=True)
    check(p.returncode != 0 and "give --engines" in p.stderr, f"--engine-api without --engines: {p.stderr!r}")
    # 6. SIGTERM with a stream open: it ends with its finish reason and [DONE], not cut.
    c, url_c = serve_process.start(april, checkpoint, *serve_process.prefill_flags(), "--slots", "8")
    conn = http.client.HTTPConnection(url_c.split("//")[1], timeout=30)
    conn.request("POST", "/v1/completions", json.dumps({"prompt": prompt, "max_tokens": 240, "temperature": 0, "ignore_eos": True,
                                                        "stream": True}), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    first = resp.readline()  # through the chunked decoding (resp.fp is the raw socket)
    c.send_signal(signal.SIGTERM)
    try:
        rest = resp.read().decode()
    except http.client.IncompleteRead as e:
        rest = "CUT: " + e.partial.decode()
    evs, done = events(first.decode() + rest)
    finish = [ch["finish_reason"] for e in evs for ch in e["choices"] if ch["finish_reason"]]
    check(done and finish in (["abort"], ["length"]), f"a stream open at SIGTERM: finish {finish}, done {done}, {rest[-200:]!r}")
    c.communicate(timeout=30)
    check(c.returncode == 0, f"SIGTERM with a stream open: exit {c.returncode}")
finally:
    for p in (a, b):
        p.send_signal(signal.SIGTERM)
    for p in (a, b):
        try:
            p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            check(False, "the server did not stop within 30 s of SIGTERM")

if failures:
    sys.exit(f"{len(failures)} checks failed")
print("vLLM's /v1/completions over april serve: checks ok")
