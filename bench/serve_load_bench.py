#!/usr/bin/env python3
"""`april serve` under a burst of 1,000 concurrent POST /generate requests:
requests/s, p50 and p99 latency, the server's RSS and peak RSS, and how many
were answered, refused (503 past the bound on open requests) or failed (a
connection refused, reset, cut, or no reply by the deadline).

Each configuration is a fresh server on loopback, driven by waves of N
requests opened at once from this one process (tests/cli/sglang_load.py:
raw sockets and a selector, so that the client does not throttle the
burst). Greedy, each request its own rid and prompt of 3 tokens, 4 new
tokens, on the test fixture checkpoint (a 0.12M-parameter Qwen3) unless
--checkpoint says otherwise: the figures are those of the HTTP side and the
engine's scheduling, not of a model's arithmetic.

  usage: bench/serve_load_bench.py [--april BUILD/cli/april] [--checkpoint DIR] [--requests N] [--waves W]
                                   [--config "ARGS"]...
The default configurations: april serve's defaults (--slots 64, bound 64 +
1024 open); and a bound below the burst (--slots 64 --max-queued-requests 64).
Standard library only."""
import argparse
import os
import platform
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
import sglang_load as load  # noqa: E402

HOST = "127.0.0.1"


def start(april, checkpoint, extra):
    p = subprocess.Popen([april, "serve", "--checkpoint", checkpoint, "--port", "0", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    banner = []
    deadline = time.time() + 120
    while time.time() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        banner.append(line.strip())
        if "listening on http://" in line:
            return p, int(line.strip().rsplit(":", 1)[1]), banner
    p.kill()
    raise SystemExit(f"serve_load_bench: the server did not start: {banner}")


def threads_of(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("Threads:")).split()[1])


def run_config(args, extra):
    p, port, banner = start(args.april, args.checkpoint, extra)
    print(f"\nserver: april serve {' '.join(extra) or '(defaults)'}")
    print(f"  {banner[0] if banner else ''}")
    print(f"  RSS at start {load.rss_kib(p.pid)[0] / 1024:.1f} MiB, {threads_of(p.pid)} threads")
    print(f"  {'wave':>4} {'wall s':>7} {'req/s':>7} {'answered':>8} {'refused':>8} {'failed':>6} {'p50 s':>7} {'p99 s':>7}"
          f" {'p50 503 s':>9} {'RSS MiB':>8} {'threads':>7}")
    try:
        for wave in range(1, args.waves + 1):
            reqs = [load.http_request(HOST, port, "POST", "/generate",
                                      load.generate_body([i % 448, i // 448 + 1, (i * 37) % 448], 4, f"bench-{wave}-{i}"))
                    for i in range(args.requests)]
            t0 = time.monotonic()
            out = load.fire(HOST, port, reqs, deadline_s=args.deadline)
            wall = time.monotonic() - t0
            ok = sorted(o.latency_s for o in out if o.kind == "answered" and o.status == 200)
            refused = sorted(o.latency_s for o in out if o.kind == "answered" and o.status == 503)
            failed = len(out) - len(ok) - len(refused)
            time.sleep(0.3)
            rss, _ = load.rss_kib(p.pid)
            p503 = f"{load.percentile(refused, 0.5):9.3f}" if refused else f"{'-':>9}"
            print(f"  {wave:>4} {wall:7.2f} {len(out) / wall:7.0f} {len(ok):>8} {len(refused):>8} {failed:>6}"
                  f" {load.percentile(ok, 0.5):7.3f} {load.percentile(ok, 0.99):7.3f} {p503} {rss / 1024:8.1f} {threads_of(p.pid):>7}")
            kinds = sorted({f"{o.kind} {o.detail}" for o in out if o.kind != "answered"})
            if kinds:
                print(f"       failed: {kinds[:3]}")
        print(f"  peak RSS (VmHWM) {load.rss_kib(p.pid)[1] / 1024:.1f} MiB")
    finally:
        p.terminate()
        try:
            p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--april", default=os.path.join(ROOT, "build", "cli", "april"))
    ap.add_argument("--checkpoint", default=os.path.join(ROOT, "tests", "live", "hf", "qwen3"))
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--waves", type=int, default=3)
    ap.add_argument("--deadline", type=float, default=60.0, help="seconds a wave may take")
    ap.add_argument("--config", action="append", help="april serve options for one server (repeatable)")
    args = ap.parse_args()
    configs = [shlex.split(c) for c in args.config] if args.config else [[], ["--slots", "64", "--max-queued-requests", "64"]]
    print(f"april serve under load: {args.requests} concurrent POST /generate per wave, {args.waves} waves per server")
    print(f"  each greedy, its own rid and 3-token prompt, 4 new tokens; checkpoint {os.path.relpath(args.checkpoint, ROOT)}")
    print(f"  client and server on one machine: {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
          f"python {platform.python_version()}")
    print("  req/s = requests / wall time of the wave; p50/p99 = latency of the answered (200) ones, connect to whole reply;")
    print("  refused = 503 past the bound on open requests; failed = not connected, reset, cut, or no reply in time")
    for extra in configs:
        run_config(args, extra)


if __name__ == "__main__":
    main()
