"""Many HTTP requests at once from one thread, over raw non-blocking sockets
and a selector, for `april serve`'s load test and bench
(tests/cli/serve_load_check.py, bench/serve_load_bench.py).

Threads would measure the client: a thousand Python threads on two cores
send their requests over a second or more. Here every connection is opened
in one pass, and each outcome is classified by what the server did:
answered (an HTTP status and a whole body), reset, cut (closed before a whole
reply), refused (nothing listening), or no reply by the deadline.

Standard library only (/usr/bin/python3)."""
import errno
import json
import os
import selectors
import socket
import time


class Outcome:
    """One request's fate. `kind` is "answered", "reset", "cut", "refused" or "timeout"."""

    def __init__(self, index):
        self.index = index
        self.kind = "timeout"
        self.status = None
        self.body = b""
        self.latency_s = None
        self.detail = ""

    def json(self):
        return json.loads(self.body.decode()) if self.body else None


def http_request(host, port, method, path, body=b"", extra_headers=""):
    """The bytes of one HTTP/1.1 request that asks the server to close after its reply."""
    return (f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n{extra_headers}\r\n").encode() + body


def parse_response(data):
    """(status, body) of a whole response in `data`, or None if it is not whole yet."""
    head_end = data.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    lines = data[:head_end].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        return None
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = data[head_end + 4:]
    if len(body) < length:
        return None
    return int(parts[1]), body[:length]


def fire(host, port, requests, deadline_s=60.0):
    """Opens one connection per request (the bytes of each, from http_request)
    all at once, sends each and reads its reply. Returns one Outcome per
    request, in order. Bounded: nothing runs past deadline_s."""
    sel = selectors.DefaultSelector()
    out = [Outcome(i) for i in range(len(requests))]
    state = {}  # fd -> [index, socket, bytes left to send, bytes read, start]
    start_all = time.monotonic()
    for i, req in enumerate(requests):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        err = s.connect_ex((host, port))
        if err not in (0, errno.EINPROGRESS):
            out[i].kind, out[i].detail = "refused", os.strerror(err)
            s.close()
            continue
        state[s.fileno()] = [i, s, memoryview(req), bytearray(), time.monotonic()]
        sel.register(s, selectors.EVENT_WRITE)

    def finish(fd, kind, detail=""):
        i, s, _, data, t0 = state.pop(fd)
        sel.unregister(s)
        s.close()
        o = out[i]
        o.kind, o.detail = kind, detail
        if kind == "answered":
            o.status, o.body = parse_response(bytes(data))
            o.latency_s = time.monotonic() - t0

    while state and time.monotonic() - start_all < deadline_s:
        for key, events in sel.select(timeout=0.2):
            fd = key.fd
            if fd not in state:
                continue
            i, s, left, data, _ = state[fd]
            try:
                if events & selectors.EVENT_WRITE:
                    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if err:
                        finish(fd, "refused" if err == errno.ECONNREFUSED else "reset", os.strerror(err))
                        continue
                    n = s.send(left)
                    state[fd][2] = left = left[n:]
                    if not left:
                        sel.modify(s, selectors.EVENT_READ)
                    continue
                chunk = s.recv(65536)
            except (ConnectionResetError, BrokenPipeError) as e:
                # A reply already whole counts, however the connection ended.
                if parse_response(bytes(data)) is not None:
                    finish(fd, "answered")
                else:
                    finish(fd, "reset", str(e))
                continue
            except BlockingIOError:
                continue
            if chunk:
                data += chunk
                continue
            finish(fd, "answered" if parse_response(bytes(data)) is not None else "cut",
                   "" if data else "closed with no reply")
    for fd in list(state):
        i, s, left, data, _ = state.pop(fd)
        sel.unregister(s)
        s.close()
        out[i].detail = f"no whole reply within {deadline_s} s ({len(data)} bytes read, {'sent' if not left else 'not all sent'})"
    sel.close()
    return out


def generate_body(ids, max_new_tokens, rid):
    return json.dumps({"input_ids": ids, "rid": rid,
                       "sampling_params": {"max_new_tokens": max_new_tokens, "temperature": 0, "ignore_eos": True}}).encode()


def rss_kib(pid):
    """The process's (VmRSS, VmHWM) in KiB, from /proc/PID/status."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                values[name] = int(rest.split()[0])
    return values["VmRSS"], values["VmHWM"]


def percentile(values, q):
    """The q-quantile (0..1) of values, nearest rank."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q * len(s) + 0.5)) - 1))]
