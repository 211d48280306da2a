"""Starting `april serve` for the command-line checks: one way, so that every
check waits for the same readiness line and gives up the same way.

Standard library only (/usr/bin/python3)."""
import os
import subprocess
import time


def prefill_flags():
    """The prefill mode a check's servers run in: the default flags (batched
    prefill), or --exact-prefill when APRIL_SERVE_PREFILL=exact. ctest runs
    each serve check both ways."""
    mode = os.environ.get("APRIL_SERVE_PREFILL", "batched")
    if mode not in ("batched", "exact"):
        raise SystemExit(f"FAIL: APRIL_SERVE_PREFILL={mode!r}: batched or exact")
    return ["--exact-prefill"] if mode == "exact" else []


def start(april, checkpoint, *extra, within_s=60):
    """`april serve --checkpoint CHECKPOINT --port 0 EXTRA...`, once it prints
    that it listens: (the process, its URL). Killed and SystemExit otherwise."""
    p = subprocess.Popen([april, "serve", "--checkpoint", checkpoint, "--port", "0", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + within_s
    while time.time() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        if "listening on http://" in line:
            return p, line.strip().split("listening on ")[1]
    p.kill()
    raise SystemExit("FAIL: the server did not start")
