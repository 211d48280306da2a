"""`april live --engines` against servers that fail: an HTTP 500, a reply that
is not JSON, a field of the wrong type, a truncated reply, a server that
accepts and never answers, and an `april serve` killed mid-step; over vLLM's
API (--engine-api vllm) an HTTP 500, an error event, an event that is not
JSON, a stream that ends before its finish reason, and a silent server. Each run must
end with one line naming the server's URL and what was wrong, a non-zero exit,
within its timeout, and no --out written.

With --engine-failover, one of two `april serve` killed mid-step is dropped
with one warning naming it, the run ends its steps on the other, and its
--out counts the server lost; when the only server dies, the run fails as
without the option.

usage: engines_faults_check.py APRIL CHECKPOINT_DIR DATASET_JSONL WORKDIR
Runs with /usr/bin/python3 and its standard library only."""
import gzip
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

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_process  # noqa: E402

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

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client left first: its run ended on another request's failure

    def reply(self, status, body, length=None):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self):
        # /get_server_info's slots, and /v1/models' list.
        slots = {"slots0": 0, "slotsneg": -5, "slotstext": "8"}.get(type(self).mode, 8)
        self.reply(200, json.dumps({"max_running_requests": slots, "object": "list", "data": [{"id": "fake", "object": "model"}]}))

    def stream(self, events):
        """A server-sent event stream ended by closing the connection (HTTP/1.0)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for e in events:
            self.wfile.write(("data: " + e + "\n\n").encode())
            self.wfile.flush()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        mode = type(self).mode
        if self.path == "/v1/completions":
            chunk = json.dumps({"choices": [{"index": 0, "token_ids": [5, 6], "finish_reason": None}]})
            if mode == "v500":
                self.reply(500, json.dumps({"error": {"message": "out of memory on the GPU"}}))
            elif mode == "verror":
                self.stream([chunk, json.dumps({"error": {"message": "the KV cache is exhausted"}})])
            elif mode == "vnotjson":
                self.stream(["<html>bad gateway</html>"])
            elif mode == "vtruncated":
                self.stream([chunk])
            elif mode == "vhang":
                time.sleep(20)
            elif mode == "vflood":
                # Tokens without end, within every read's timeout.
                self.stream([chunk] * 5000)
            return
        if self.path != "/generate":
            return self.reply(200, "")
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
        elif mode == "trickle":
            # Headers at once, then the body a byte every 0.5 s: each read within the timeout, the reply never whole.
            body = json.dumps({"output_ids": [5] * 200, "meta_info": {"finish_reason": {"type": "length"}}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for b in body:
                self.wfile.write(bytes([b]))
                self.wfile.flush()
                time.sleep(0.5)
        elif mode == "huge":
            self.reply(200, '{"output_ids": [' + "1, " * (40 << 20) + '1], "meta_info": {"finish_reason": {"type": "length"}}}')
        elif mode == "gzipbomb":
            bomb = gzip.compress(b" " * (200 << 20), compresslevel=9)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(bomb)))
            self.end_headers()
            self.wfile.write(bomb)
            self.wfile.flush()
        elif mode == "badid":
            self.reply(200, json.dumps({"output_ids": [5, 99999999], "meta_info": {"finish_reason": {"type": "length"}}}))
        elif mode == "badlogprob":
            self.reply(200, json.dumps({"output_ids": [5], "meta_info": {"finish_reason": {"type": "length"},
                                                                         "output_token_logprobs": [[0.7, 5, None]]}}))


def fake_server(mode):
    handler = type("Fake_" + mode, (Fake,), {"mode": mode})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def live(url, out, timeout_s=600, extra=()):
    cmd = [april, "live", "--engines", url, "--checkpoint", checkpoint, "--dataset", dataset, "--dataset-layout", "gsm8k",
           "--set", "live.eval_prompts=6", "--set", "rollout_batch_size=2", "--set", "n_samples_per_prompt=2",
           "--set", "max_response_len=100", "--steps", "2", "--policy", "sync", "--out", out, "--engine-timeout", str(timeout_s)] + list(extra)
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
    ("v500", "/v1/completions: HTTP 500: out of memory on the GPU", 600, 60),
    ("verror", "the server sent an error: the KV cache is exhausted", 600, 60),
    ("vnotjson", "/v1/completions stream event 1: not JSON", 600, 60),
    ("vtruncated", "/v1/completions: the stream ended before its finish reason (2 tokens received)", 600, 60),
    ("vhang", "/v1/completions: no reply within 2 s", 2, 30),
    # Replies without a bound in memory or in time.
    ("trickle", "/generate: the reply's body did not arrive whole within 2 s of its first byte", 2, 30),
    ("huge", "/generate: a reply longer than 67108864 bytes", 600, 60),
    ("gzipbomb", "/generate: a reply longer than 67108864 bytes", 600, 60),
    ("vflood", "/v1/completions: the stream brought", 600, 60),
    # Replies no model could have generated, and bounds that bound nothing.
    ("badid", "output token 1 is 99999999, outside the model's vocabulary", 600, 60),
    ("badlogprob", "output token 0's log-prob is 0.7, where a log-prob is at most 0", 600, 60),
    ("slots0", "/get_server_info: max_running_requests is 0, where a count of at least 1", 600, 60),
    ("slotsneg", "/get_server_info: max_running_requests is -5", 600, 60),
    ("slotstext", "/get_server_info: max_running_requests is \"8\"", 600, 60),
]:
    srv, url = fake_server(mode)
    out = os.path.join(work, mode)
    p, took = live(url, out, timeout_s, ("--engine-api", "vllm") if mode.startswith("v") else ())
    err = p.stderr.strip()
    check(p.returncode != 0, f"{mode}: exit 0")
    check(url in err and want in err and len(err.splitlines()) == 1, f"{mode}: stderr {err!r}")
    check(took < within_s, f"{mode}: took {took:.1f} s")
    check(not os.path.exists(out), f"{mode}: --out was written")
    srv.shutdown()



def start_serve():
    return serve_process.start(april, checkpoint, *serve_process.prefill_flags())


def kill_when_busy(proc, url):
    """SIGKILL once the server runs a request (or after 60 s)."""
    def run():
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(url + "/v1/loads", timeout=5) as r:
                    if json.loads(r.read())["loads"][0]["num_running_reqs"] > 0:
                        break
            except OSError:
                pass
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    t = threading.Thread(target=run)
    t.start()
    return t


# A real server killed while it generates: the run fails naming it, with or
# without failover (no server is left).
for extra, name in [((), "killed"), (("--engine-failover",), "killed-alone-failover")]:
    serve, url = start_serve()
    check(url is not None, "april serve did not start")
    if url:
        killer = kill_when_busy(serve, url)
        out = os.path.join(work, name)
        p, took = live(url, out, extra=extra)
        killer.join()
        err = p.stderr.strip()
        check(p.returncode != 0 and url in err, f"{name}: rc {p.returncode}, stderr {err!r}")
        check(len([x for x in err.splitlines() if "error" in x]) == 1, f"{name}: one error line in {err!r}")
        check(not os.path.exists(out), f"{name}: --out was written")
    serve.kill()
    serve.wait()

# Failover: one of two servers killed mid-step; the other ends the run (over
# SGLang's API, and over vLLM's, where the kill cuts the open streams).
for api in ("sglang", "vllm"):
    first, url_a = start_serve()
    second, url_b = start_serve()
    check(url_a is not None and url_b is not None, "april serve did not start")
    if url_a and url_b:
        killer = kill_when_busy(first, url_a)
        out = os.path.join(work, f"failover-{api}")
        p, took = live(f"{url_a},{url_b}", out, extra=("--engine-failover", "--engine-api", api))
        killer.join()
        err = p.stderr.strip()
        check(p.returncode == 0, f"failover {api}: rc {p.returncode}, stderr {err!r}")
        warnings = [x for x in err.splitlines() if "warning" in x]
        check(len(warnings) == 1 and url_a in warnings[0] and "dropped" in warnings[0], f"failover {api}: one warning naming {url_a}: {err!r}")
        check(url_b not in err, f"failover {api}: the server left is not named: {err!r}")
        check("1 of 2 server(s) lost" in p.stdout, f"failover {api}: the summary counts the server lost")
        summary_path = os.path.join(out, "summary.json")
        check(os.path.exists(summary_path), f"failover {api}: --out written")
        if os.path.exists(summary_path):
            with open(summary_path) as f:
                summary = json.load(f)
            check(summary.get("policies", {}).get("sync", {}).get("servers_lost") == 1,
                  f"failover {api}: summary.json counts the server lost: {summary.get('policies')}")
            steps_csv = os.path.join(out, "sync", "steps.csv")
            with open(steps_csv) as f:
                check(len(f.read().strip().splitlines()) == 1 + 2, f"failover {api}: both steps recorded")
    for proc in (first, second):
        proc.kill()
        proc.wait()

if failures:
    sys.exit(f"{len(failures)} checks failed")
print("april live --engines against failing servers: checks ok")
