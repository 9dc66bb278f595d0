#!/usr/bin/env python3
"""How late delayed jobs start, and how soon a job held by a constraint starts after the slot it
waits for frees (issue 13: both within 50 ms on an idle master). Starts its own Redis, jqmaster
and a worker (this process, threaded HTTP server) on free loopback ports.

  bench/flow_latency.py [--jqmaster build/cmd/jqmaster] [--jobs 50]

Prints one JSON line: delay lateness (ms: p50, p99, max) and slot hand-over gaps (ms: p50, p99,
max): the time from a worker's answer to the next held job arriving at it."""
import argparse, json, os, socket, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from benchlib import call, free_port, ready
from benchlib import pct as pct1
from benchlib import wait_for as wait_for_slow


def wait_for(cond, timeout=20):
    return wait_for_slow(cond, timeout, interval=0.01)


def pct(values, p):
    return pct1(values, p, digits=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jqmaster", default="build/cmd/jqmaster")
    ap.add_argument("--jobs", type=int, default=50)
    a = ap.parse_args()

    arrivals, answers, lock = {}, [], threading.Lock()

    class Worker(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            got = time.time()
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            name = self.headers.get("X-Jq-Job-Id", "")
            with lock:
                arrivals[name] = got
            if self.path.startswith("/slow"):
                time.sleep(0.1)
            body = b'{"type":"success","value":null}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            with lock:
                answers.append(time.time())

    wport, rport, mport = free_port(), free_port(), free_port()
    server = ThreadingHTTPServer(("127.0.0.1", wport), Worker)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tmp = tempfile.mkdtemp()
    if not os.access(a.jqmaster, os.X_OK):
        sys.exit(f"{a.jqmaster}: not an executable (build first: scripts/build.sh)")
    redis = subprocess.Popen(["redis-server", "--port", str(rport), "--save", "", "--appendonly",
                              "no"], stdout=subprocess.DEVNULL)
    master = subprocess.Popen([os.path.abspath(a.jqmaster), "--listen", f"127.0.0.1:{mport}", "--redis-url",
                               f"redis://127.0.0.1:{rport}/0", "--log-level", "warn"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
    try:
        assert wait_for(lambda: ready(mport)), "jqmaster did not come up"
        call(mport, "POST", "/v1/workers", {"url": f"http://127.0.0.1:{wport}/", "names": ["later"],
                                            "concurrency": 64})
        call(mport, "POST", "/v1/workers", {"url": f"http://127.0.0.1:{wport}/slow",
                                            "names": ["held"], "concurrency": 64})
        # Delayed: pushed one by one, each due 0.3-0.8 s later.
        due = {}
        for i in range(a.jobs):
            delay = 0.3 + 0.01 * i
            pushed = time.time()
            _, r = call(mport, "POST", "/v1/jobs", {"name": "later", "delay": delay})
            due[r["id"]] = pushed + delay
        assert wait_for(lambda: all(j in arrivals for j in due)), "delayed jobs did not all run"
        late = [(arrivals[j] - due[j]) * 1000 for j in due]
        # Held: concurrency 1, each job takes 0.1 s at the worker; the gap from one answer to the
        # next arrival is the hand-over.
        call(mport, "POST", "/v1/constraints", {"name": "one", "match": {"name": "held"},
                                                 "concurrency": 1})
        held = [call(mport, "POST", "/v1/jobs", {"name": "held"})[1]["id"] for _ in range(a.jobs)]
        assert wait_for(lambda: all(j in arrivals for j in held), 60), "held jobs did not all run"
        starts = sorted(arrivals[j] for j in held)
        with lock:
            ends = sorted(answers)
        gaps = []
        for s in starts[1:]:
            before = [e for e in ends if e <= s]
            if before:
                gaps.append((s - before[-1]) * 1000)
        print(json.dumps({"delay_late_ms": {"p50": pct(late, 50), "p99": pct(late, 99),
                                            "max": pct(late, 100), "min": pct(late, 0)},
                          "handover_ms": {"p50": pct(gaps, 50), "p99": pct(gaps, 99),
                                          "max": pct(gaps, 100)},
                          "jobs": a.jobs}))
    finally:
        master.terminate()
        master.wait()
        redis.terminate()
        redis.wait()
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
