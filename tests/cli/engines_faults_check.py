"""`april live --engines` against servers that fail: an HTTP 500, a reply that
is not JSON, a field of the wrong type, a truncated reply, a server that
accepts and never answers, and an `april serve` killed mid-step. Each run must
end with one line naming the server's URL and what was wrong, a non-zero exit,
within its timeout, and no --out written.

usage: engines_faults_check.py APRIL CHECKPOINT_DIR DATASET_JSONL WORKDIR
Runs with /usr/bin/python3 and its standard library only."""
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request

april, checkpoint, dataset, work = sys.argv[1:5]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


class Fake(http.server.BaseHTTPRequestHandler):
    mode = "500"

    def log_message(self, *args):
        pass

    def reply(self, status, body, length=None):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self):
        self.reply(200, json.dumps({"max_running_requests": 8}))

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/generate":
            return self.reply(200, "")
        mode = type(self).mode
        if mode == "500":
            self.reply(500, json.dumps({"error": {"message": "out of memory on the GPU"}}))
        elif mode == "notjson":
            self.reply(200, "<html>bad gateway</html>")
        elif mode == "wrongtype":
            self.reply(200, json.dumps({"output_ids": "1 2 3", "meta_info": {"finish_reason": {"type": "length"}}}))
        elif mode == "truncated":
            self.reply(200, '{"output_ids": [1, 2', length=400)
            self.connection.close()
        elif mode == "hang":
            time.sleep(20)


def fake_server(mode):
    handler = type("Fake_" + mode, (Fake,), {"mode": mode})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def live(url, out, timeout_s=600):
    cmd = [april, "live", "--engines", url, "--checkpoint", checkpoint, "--dataset", dataset, "--dataset-layout", "gsm8k",
           "--set", "live.eval_prompts=6", "--set", "rollout_batch_size=2", "--set", "n_samples_per_prompt=2",
           "--set", "max_response_len=100", "--steps", "2", "--policy", "sync", "--out", out, "--engine-timeout", str(timeout_s)]
    start = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return p, time.time() - start


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
for mode, want, timeout_s, within_s in [
    ("500", "HTTP 500: out of memory on the GPU", 600, 60),
    ("notjson", "/generate reply: not JSON", 600, 60),
    ("wrongtype", "/output_ids", 600, 60),
    ("truncated", "/generate: the connection closed before a whole reply", 600, 60),
    ("hang", "/generate: no reply within 2 s", 2, 30),
]:
    srv, url = fake_server(mode)
    out = os.path.join(work, mode)
    p, took = live(url, out, timeout_s)
    err = p.stderr.strip()
    check(p.returncode != 0, f"{mode}: exit 0")
    check(url in err and want in err and len(err.splitlines()) == 1, f"{mode}: stderr {err!r}")
    check(took < within_s, f"{mode}: took {took:.1f} s")
    check(not os.path.exists(out), f"{mode}: --out was written")
    srv.shutdown()

# A real server killed while it generates.
serve = subprocess.Popen([april, "serve", "--checkpoint", checkpoint, "--port", "0", "--exact-prefill"], stdout=subprocess.PIPE, text=True)
url = None
for line in serve.stdout:
    if "listening on " in line:
        url = line.strip().split("listening on ")[1]
        break
check(url is not None, "april serve did not start")
if url:
    def kill_when_busy():
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(url + "/v1/loads", timeout=5) as r:
                    if json.loads(r.read())["loads"][0]["num_running_reqs"] > 0:
                        break
            except OSError:
                pass
            time.sleep(0.01)
        serve.send_signal(signal.SIGKILL)

    killer = threading.Thread(target=kill_when_busy)
    killer.start()
    out = os.path.join(work, "killed")
    p, took = live(url, out)
    killer.join()
    err = p.stderr.strip()
    check(p.returncode != 0 and url in err and len(err.splitlines()) == 1, f"killed: rc {p.returncode}, stderr {err!r}")
    check(not os.path.exists(out), "killed: --out was written")
serve.kill()
serve.wait()

if failures:
    sys.exit(f"{len(failures)} checks failed")
print("april live --engines against failing servers: checks ok")
