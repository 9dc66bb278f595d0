#!/usr/bin/env python3
"""Whether paging through a large queue holds the master's memory flat (issue 19: "paging through
100,000 queued jobs holds the master's memory flat"). Starts its own redis-server (no
persistence) and jqmaster on free loopback ports, pushes JOBS queued jobs (no worker is
registered, so they stay queued) in batches of 1000 over 16 shards, then pages through all of
them with GET /v1/jobs?state=queued&limit=1000, following next_cursor, and reads jqmaster's
resident memory (VmRSS in /proc/<pid>/status) before the pushes, after them, and after every
page.

  flock /tmp/jq-build.lock bench/browse_memory.py [--jqmaster build-release/cmd/jqmaster]
                                                   [--jobs 100000] [--passes 3]

Each pass pages through the whole queue again (the first pass can still grow the allocator's
pools; later passes show whether anything accumulates). Prints one JSON line: RSS in KiB (before
the pushes, after them, the largest and the last while paging), pages and jobs listed per pass
(every job once: the check fails loudly otherwise), and the time per page (ms: p50, max)."""
import argparse, json, os, socket, subprocess, sys, tempfile, time

from benchlib import call, free_port, pct, ready, wait_for


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def page_through(port, pid, pass_no):
    """One pass over the whole queue: (job ids seen, pages, RSS after each page, ms per page)."""
    seen, rss, times, cursor = set(), [], [], None
    while True:
        path = "/v1/jobs?state=queued&limit=1000" + (f"&cursor={cursor}" if cursor else "")
        started = time.time()
        status, page = call(port, "GET", path, timeout=60)
        times.append((time.time() - started) * 1000)
        if status != 200:
            raise RuntimeError(f"pass {pass_no}: GET {path} answered {status}: {page}")
        for job in page["jobs"]:
            if job["id"] in seen:
                raise RuntimeError(f"pass {pass_no}: {job['id']} listed twice")
            seen.add(job["id"])
        rss.append(rss_kib(pid))
        cursor = page["next_cursor"]
        if cursor is None:
            return seen, len(times), rss, times


def main():
    ap = argparse.ArgumentParser()
    default = "build-release/cmd/jqmaster"
    ap.add_argument("--jqmaster", default=default if os.access(default, os.X_OK)
                    else "build/cmd/jqmaster")
    ap.add_argument("--jobs", type=int, default=100000)
    ap.add_argument("--passes", type=int, default=3)
    a = ap.parse_args()
    if not os.access(a.jqmaster, os.X_OK):
        sys.exit(f"{a.jqmaster}: not an executable (build first: scripts/build.sh)")

    rport, mport = free_port(), free_port()
    tmp = tempfile.mkdtemp()
    config = os.path.join(tmp, "jqmaster.yaml")
    with open(config, "w") as f:
        f.write(f"listen: 127.0.0.1:{mport}\nredis:\n  url: redis://127.0.0.1:{rport}/0\n"
                "shards: 16\nio_threads: 2\nlog:\n  level: warn\n")
    redis = subprocess.Popen(["redis-server", "--port", str(rport), "--save", "", "--appendonly",
                              "no"], stdout=subprocess.DEVNULL)
    master = subprocess.Popen([os.path.abspath(a.jqmaster), "--config", config],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
    try:
        if not wait_for(lambda: ready(mport)):
            raise RuntimeError("jqmaster did not come up")
        before = rss_kib(master.pid)
        pushed = time.time()
        for start in range(0, a.jobs, 1000):
            batch = [{"name": f"browse.{i % 4}", "argument": {"n": i, "to": "user@example.com"},
                      "priority": i % 3}
                     for i in range(start, min(a.jobs, start + 1000))]
            status, _ = call(mport, "POST", "/v1/jobs", batch, timeout=60)
            if status != 201:
                raise RuntimeError(f"push answered {status}")
        push_seconds = time.time() - pushed
        after_push = rss_kib(master.pid)
        passes, all_rss, all_times = [], [], []
        started = time.time()
        for p in range(a.passes):
            seen, pages, rss, times = page_through(mport, master.pid, p + 1)
            if len(seen) != a.jobs:
                raise RuntimeError(f"pass {p + 1}: listed {len(seen)} of {a.jobs} jobs")
            passes.append({"pages": pages, "jobs": len(seen), "rss_kib_max": max(rss),
                           "rss_kib_last": rss[-1]})
            all_rss += rss
            all_times += times
        print(json.dumps({
            "jobs": a.jobs, "jqmaster": a.jqmaster, "push_seconds": round(push_seconds, 1),
            "rss_kib": {"before_push": before, "after_push": after_push, "max": max(all_rss),
                        "last": all_rss[-1]},
            "passes": passes, "page_seconds_total": round(time.time() - started, 1),
            "page_ms": {"p50": pct(all_times, 50), "max": pct(all_times, 100)}}))
    finally:
        master.terminate()
        master.wait()
        redis.terminate()
        redis.wait()


if __name__ == "__main__":
    sys.exit(main())
