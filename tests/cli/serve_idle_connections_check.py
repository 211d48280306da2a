"""`april serve` on its default flags with more idle connections than it has
handler threads (1,120: --slots 64 + --max-queued-requests 1024 + 32), in a
process whose address space is limited as a container limits it (3 GB):
1,200 clients connect and send nothing. The server must neither abort (a
thread each at the default 8 MiB stack is 9.6 GB of address space) nor stop
answering: /health and a /generate are answered at once while the 1,200
wait, and the server still serves once they are gone.

Then 1,200 slow clients, each sending its request head a byte a second:
for 8 s (past the 5 s idle timeout) /health is answered within 1 s every
second and a /generate at once, the server holds no thread per slow client
and its memory grows by less than 64 MiB; meanwhile a client that closes
its /v1/completions stream after 3 tokens has its request aborted, and a
body of exactly --max-body-bytes is read (and refused 400 as not JSON)
while one byte more is refused 413; 20 of the slow clients trickle on, and
each is answered 408 once 30 s have passed since its first byte.

usage: serve_idle_connections_check.py APRIL CHECKPOINT_DIR
Runs with /usr/bin/python3 and its standard library only."""
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import time
import urllib.request

april, checkpoint = sys.argv[1], sys.argv[2]
IDLE = 1200
ADDRESS_SPACE = 3_000_000_000
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    # 700 connections and the server's own files: past a soft limit of 1024.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))


def get(url, path, timeout=10):
    with urllib.request.urlopen(url + path, timeout=timeout) as r:
        return r.status, r.read().decode()


server = subprocess.Popen([april, "serve", "--checkpoint", checkpoint, "--port", "0"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, preexec_fn=limit)
url = None
max_body_bytes = None
deadline = time.time() + 60
while time.time() < deadline:
    line = server.stdout.readline()
    if not line:
        break
    if "bodies up to" in line:
        max_body_bytes = int(line.split("bodies up to ")[1].split(" bytes")[0])
    if "listening on http://" in line:
        url = line.strip().split("listening on ")[1]
        break
if url is None:
    server.kill()
    sys.exit(f"FAIL: the server did not start under a {ADDRESS_SPACE} byte address space: {server.stdout.read()[-500:]}")
host, port = url[len("http://"):].split(":")
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
idle = []
try:
    for _ in range(IDLE):
        idle.append(socket.create_connection((host, int(port)), timeout=10))
    time.sleep(1.0)  # the server takes each one
    t0 = time.time()
    try:
        status, body = get(url, "/health", timeout=3)
    except OSError as e:
        status, body = None, str(e)
    took = time.time() - t0
    check(status == 200 and took < 1, f"/health beside {IDLE} idle connections: {status or body} in {took:.2f} s")
    req = urllib.request.Request(url + "/generate", data=json.dumps({"input_ids": [1, 2, 3], "sampling_params": {
        "max_new_tokens": 4, "temperature": 0}}).encode(), headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=3) as r:
            check(r.status == 200 and len(json.loads(r.read())["output_ids"]) == 4, "a /generate beside the idle connections")
    except OSError as e:
        check(False, f"a /generate beside {IDLE} idle connections: {e}")
    check(server.poll() is None, f"the server ended ({server.returncode}) with {IDLE} idle connections")
finally:
    for s in idle:
        s.close()
time.sleep(0.5)
check(server.poll() is None, f"the server ended ({server.returncode}) once the idle connections closed")


def proc_status(field):
    with open(f"/proc/{server.pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def generate_ok():
    req = urllib.request.Request(url + "/generate", data=json.dumps({"input_ids": [1, 2, 3], "sampling_params": {
        "max_new_tokens": 4, "temperature": 0}}).encode(), headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=3) as r:
            return r.status == 200 and len(json.loads(r.read())["output_ids"]) == 4
    except OSError:
        return False


def server_info():
    return json.loads(get(url, "/get_server_info")[1])


def stream_closed_is_aborted():
    """A /v1/completions stream its client closes after 3 tokens: aborted in the engine, nothing left running."""
    model = json.loads(get(url, "/v1/models")[1])["data"][0]["id"]
    aborted_before = server_info()["aborted_requests"]
    conn = http.client.HTTPConnection(f"{host}:{port}", timeout=10)
    conn.request("POST", "/v1/completions", json.dumps({"model": model, "prompt": [5, 6, 7], "max_tokens": 200, "temperature": 0,
                                                        "ignore_eos": True, "stream": True}), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    got = 0
    while got < 3:
        line = resp.fp.readline()
        if not line:
            break
        if line.startswith(b"data: {"):
            got += len(json.loads(line[6:])["choices"][0]["token_ids"])
    conn.sock.close()
    conn.close()
    for _ in range(40):  # 2 s at most: the slow clients' next bytes are due
        info = server_info()
        if info["aborted_requests"] == aborted_before + 1:
            loads = json.loads(get(url, "/v1/loads")[1])["loads"][0]
            return got >= 3 and loads["num_running_reqs"] == 0
        time.sleep(0.05)
    return False


def bodies_at_the_limit():
    """Exactly --max-body-bytes is read whole (then refused 400: it is not JSON); one byte more is refused 413."""
    limit_bytes = max_body_bytes
    outcomes = []
    for size in (limit_bytes, limit_bytes + 1):
        req = urllib.request.Request(url + "/generate", data=b"x" * size, headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                outcomes.append(r.status)
        except urllib.error.HTTPError as e:
            outcomes.append(e.code)
        except OSError as e:
            outcomes.append(str(e))
    return outcomes == [400, 413] or print("bodies:", outcomes)


SLOW, TRICKLING, REQUEST_TIMEOUT_S = 1200, 20, 30
if server.poll() is None:
    threads_before, rss_before_kb = proc_status("Threads"), proc_status("VmRSS")
    slow = []
    try:
        for _ in range(SLOW):
            s = socket.create_connection((host, int(port)), timeout=10)
            s.sendall(b"POST /generate HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            slow.append(s)
        first_byte = time.time()
        worst_health, threads_most, rss_most_kb = 0.0, 0, 0
        for second in range(8):
            time.sleep(1.0)
            for s in slow:
                s.sendall(b"a")
            t0 = time.time()
            try:
                status, _ = get(url, "/health", timeout=3)
            except OSError as e:
                status = str(e)
            worst_health = max(worst_health, time.time() - t0)
            check(status == 200, f"/health beside {SLOW} slow clients at {second + 1} s: {status}")
            threads_most = max(threads_most, proc_status("Threads"))
            rss_most_kb = max(rss_most_kb, proc_status("VmRSS"))
            if second == 2:
                check(stream_closed_is_aborted(), f"a stream closed mid-way beside {SLOW} slow clients")
            if second == 4:
                check(bodies_at_the_limit(), f"bodies at --max-body-bytes beside {SLOW} slow clients")
        check(worst_health < 1, f"/health beside {SLOW} slow clients: {worst_health:.2f} s at worst")
        check(generate_ok(), f"a /generate beside {SLOW} slow clients")
        check(threads_most < threads_before + 64,
              f"threads beside {SLOW} slow clients: {threads_most} (before: {threads_before})")
        check(rss_most_kb < rss_before_kb + 64 * 1024,
              f"memory beside {SLOW} slow clients: {rss_most_kb} kB (before: {rss_before_kb} kB)")
        for s in slow[TRICKLING:]:
            s.close()
        trickling = slow[:TRICKLING]
        del slow[TRICKLING:]
        replies = {}
        while len(replies) < TRICKLING and time.time() - first_byte < REQUEST_TIMEOUT_S + 5:
            time.sleep(1.0)
            for i, s in enumerate(trickling):
                if i in replies:
                    continue
                try:
                    s.sendall(b"a")
                    s.settimeout(0.01)
                    data = s.recv(4096)
                    replies[i] = (time.time() - first_byte, data)
                except socket.timeout:
                    pass
                except OSError as e:
                    replies[i] = (time.time() - first_byte, str(e).encode())
        for i in range(TRICKLING):
            at, data = replies.get(i, (None, b""))
            check(at is not None and REQUEST_TIMEOUT_S - 1 < at < REQUEST_TIMEOUT_S + 3 and data.startswith(b"HTTP/1.1 408")
                  and b"not sent whole within 30 s" in data, f"a client trickling its head: {at} s, {data[:120]!r}")
        check(server.poll() is None and get(url, "/health")[0] == 200, "/health once the slow clients are gone")
        print(f"{SLOW} slow clients: /health {worst_health * 1000:.0f} ms at worst, threads {threads_before} -> {threads_most}, "
              f"RSS {rss_before_kb} -> {rss_most_kb} kB")
    finally:
        for s in slow:
            s.close()
if server.poll() is None:
    check(get(url, "/health")[0] == 200, "/health after the idle connections closed")
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
rest = server.stdout.read()
check("bad_alloc" not in rest and "terminate" not in rest, f"the server's output: {rest[-400:]}")
if failures:
    sys.exit(f"{len(failures)} failures")
print(f"april serve with {IDLE} idle and {SLOW} slow connections in {ADDRESS_SPACE} bytes of address space: checks ok")
