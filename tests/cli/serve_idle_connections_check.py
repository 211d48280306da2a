"""`april serve` on its default flags with more idle connections than it has
handler threads (1,120: --slots 64 + --max-queued-requests 1024 + 32), in a
process whose address space is limited as a container limits it (3 GB):
1,200 clients connect and send nothing. The server must neither abort (a
thread each at the default 8 MiB stack is 9.6 GB of address space) nor stop
answering: /health and a /generate are answered at once while the 1,200
wait, and the server still serves once they are gone.

usage: serve_idle_connections_check.py APRIL CHECKPOINT_DIR
Runs with /usr/bin/python3 and its standard library only."""
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
deadline = time.time() + 60
while time.time() < deadline:
    line = server.stdout.readline()
    if not line:
        break
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
print(f"april serve with {IDLE} idle connections in {ADDRESS_SPACE} bytes of address space: checks ok")
