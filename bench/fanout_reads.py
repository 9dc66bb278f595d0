#!/usr/bin/env python3
"""Times reads that need every shard (GET /v1/stats, /v1/queues), for bench/cluster.sh: CALLS
requests one after another on one keep-alive connection, and prints one JSON line shaped like
jqbench's (jobs = calls, so the per-job figures of cluster_summary.py read per call), with the
master's CPU over the calls from /proc.

    python3 bench/fanout_reads.py URL MASTER_PID PATH CALLS
"""
import http.client
import json
import sys
import time
import urllib.parse

from benchlib import cpu_seconds, pct


def main(url, pid, path, calls):
    address = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    headers = {"Accept": "application/json"}
    conn.request("GET", path, headers=headers)  # one untimed call opens the connection
    conn.getresponse().read()
    cpu0, start, times = cpu_seconds(pid), time.perf_counter(), []
    for _ in range(calls):
        t = time.perf_counter()
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            sys.exit(f"GET {path}: {response.status}")
        times.append((time.perf_counter() - t) * 1e3)
    seconds, cpu = time.perf_counter() - start, cpu_seconds(pid) - cpu0
    print(json.dumps({"scenario": "reads", "path": path, "jobs": calls,
                      "seconds": round(seconds, 3), "jobs_per_s": round(calls / seconds, 1),
                      "cpu_s": round(cpu, 3),
                      "cpu_s_by_process": {"jqmaster": round(cpu, 3)},
                      "call_p50_ms": pct(times, 50, 3), "call_p99_ms": pct(times, 99, 3)}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
