"""Checkpoints that must neither hang, nor blow up memory, nor poison later
answers, through `april serve` and `april generate` on default flags:

- a weight load of NaN weights, then of the good ones again: greedy tokens
  equal to those before (a decode reads the whole KV cache length, and K/V
  left by the NaN weights poisoned every later request: 0 x NaN is NaN);
- a checkpoint whose model.safetensors is a FIFO: refused at once as "not a
  regular file", by generate and by a weight load, and /generate served;
- a config.json describing a far larger model than its 0.1 M-parameter
  weights: refused, naming config.json, before the model is built (peak
  RSS well under the 2.3 GB the model would take);
- `live --weights-dir` where a file stands in the way: refused in its words,
  not in std::filesystem's.

usage: serve_weights_check.py APRIL CHECKPOINT_DIR WORK_DIR
Runs with /usr/bin/python3 and its standard library only."""
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_process  # noqa: E402

april, checkpoint, work = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def post(url, path, body, timeout=30):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"},
                                 method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def greedy(url, prompt):
    status, body = post(url, "/generate", {"input_ids": prompt, "sampling_params": {"max_new_tokens": 12, "temperature": 0}})
    return body.get("output_ids") if status == 200 else (status, body)


def copy_checkpoint(name):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for f in ("config.json", "generation_config.json", "tokenizer.json", "model.safetensors"):
        shutil.copy(os.path.join(checkpoint, f), d)
    return d


def fill_with_nan(path):
    """Every weight byte 0xFF: NaN in F32, BF16 and F16 alike."""
    with open(path, "rb") as f:
        blob = bytearray(f.read())
    header = struct.unpack("<Q", blob[:8])[0]
    start = 8 + header
    blob[start:] = b"\xff" * (len(blob) - start)
    with open(path, "wb") as f:
        f.write(blob)


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
nan_dir = copy_checkpoint("nan")
fill_with_nan(os.path.join(nan_dir, "model.safetensors"))
fifo_dir = copy_checkpoint("fifo")
os.remove(os.path.join(fifo_dir, "model.safetensors"))
os.mkfifo(os.path.join(fifo_dir, "model.safetensors"))
big_dir = copy_checkpoint("big")
with open(os.path.join(big_dir, "config.json")) as f:
    config = json.load(f)
config.update({"hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 8})
with open(os.path.join(big_dir, "config.json"), "w") as f:
    json.dump(config, f)

server, url = serve_process.start(april, checkpoint)
try:
    prompts = [[7, 8, 9], [11, 22, 33, 44, 55, 66]]
    before = [greedy(url, p) for p in prompts]
    check(all(isinstance(b, list) and len(b) == 12 for b in before), f"greedy before any load: {before}")
    status, body = post(url, "/update_weights_from_disk", {"model_path": nan_dir})
    check(status == 200, f"a NaN weight load: {status} {body}")
    greedy(url, prompts[0])  # tokens of NaN weights: whatever they are
    status, body = post(url, "/update_weights_from_disk", {"model_path": checkpoint})
    check(status == 200 and body.get("success") is True, f"the good weights again: {status} {body}")
    after = [greedy(url, p) for p in prompts]
    check(after == before, f"greedy after NaN weights and the good ones again: {after}, before {before}")

    t0 = time.time()
    status, body = post(url, "/update_weights_from_disk", {"model_path": fifo_dir}, timeout=10)
    took = time.time() - t0
    check(status in (200, 400) and body.get("success") is False and "not a regular file" in body.get("message", "") and took < 5,
          f"a weight load from a FIFO: {status} {body} in {took:.1f} s")
    check(greedy(url, prompts[0]) == before[0], "/generate after the FIFO load was refused")
    status, body = post(url, "/update_weights_from_disk", {"model_path": big_dir}, timeout=30)
    check(body.get("success") is False and "config.json" in body.get("message", "") and "c10" not in body.get("message", ""),
          f"a weight load whose config describes a larger model: {status} {body}")
finally:
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


def run(args, timeout=60):
    try:
        return subprocess.run([april, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


r = run(["generate", "--checkpoint", fifo_dir, "--prompt-ids", "1,2,3", "--max-new-tokens", "2"], timeout=20)
check(r is not None and r.returncode != 0 and "model.safetensors: not a regular file" in r.stderr,
      f"generate on a FIFO model.safetensors: {'hung' if r is None else (r.returncode, r.stderr[-300:])}")
rss_before_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
r = run(["generate", "--checkpoint", big_dir, "--prompt-ids", "1,2,3", "--max-new-tokens", "2"])
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
check(r is not None and r.returncode != 0 and "config.json: describes a" in r.stderr and "c10" not in r.stderr,
      f"generate with a config larger than the weights: {None if r is None else (r.returncode, r.stderr[-300:])}")
check(peak_kb < 1_000_000, f"the largest child's peak RSS: {peak_kb} kB (before the refusal: {rss_before_kb} kB)")
blocker = os.path.join(work, "a-file")
with open(blocker, "w") as f:
    f.write("not a folder\n")
dataset = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "datasets", "gsm8k-sample.jsonl")
r = run(["live", "--checkpoint", checkpoint, "--dataset", dataset, "--dataset-layout", "gsm8k", "--set", "live.eval_prompts=6", "--engines", "http://127.0.0.1:9", "--weights-dir",
         os.path.join(blocker, "w"), "--steps", "1"])
check(r is not None and r.returncode != 0 and f"--weights-dir {blocker}/w: cannot write there" in r.stderr
      and "filesystem error" not in r.stderr, f"--weights-dir under a file: {None if r is None else (r.returncode, r.stderr[-300:])}")
if failures:
    sys.exit(f"{len(failures)} failures")
print("NaN weights replaced, a FIFO checkpoint, a config past its weights, a --weights-dir under a file: checks ok")
