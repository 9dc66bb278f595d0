#!/usr/bin/env python3
"""Summarizes bench/cluster.sh's JSON lines: medians over the repetitions, per setup.

For the e2e runs: jobs/s, Redis commands and Redis CPU (µs) per job on each node and in all,
each node's share of the commands, and jqmaster's CPU (µs) per job. For the push runs
(replicas_ack 0 and 1): pushes/s, the request latency percentiles jqbench reports, and Redis
commands per push.
"""
import json
import statistics
import sys
from collections import defaultdict


def median(values):
    return statistics.median(values) if values else float("nan")


def main(path):
    runs = defaultdict(list)
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                row = json.loads(line)
                runs[(row["setup"], row["test"])].append(row)
    print(f"{path}: medians of {max(len(v) for v in runs.values())} runs\n")
    for (setup, test), rows in runs.items():
        jobs = rows[0]["result"].get("jobs", 0)
        print(f"{setup} {test} ({jobs} jobs)")
        per_s = median([r["result"].get("jobs_per_s", 0) for r in rows])
        print(f"  jobs/s                      {per_s:,.0f}")
        nodes = len(rows[0]["nodes"])
        calls = [[n["calls"] / r["result"]["jobs"] for n in r["nodes"]] for r in rows]
        cpu = [[n["cpu_s"] * 1e6 / r["result"]["jobs"] for n in r["nodes"]] for r in rows]
        for i in range(nodes):
            print(f"  node {i + 1}: commands/job {median([c[i] for c in calls]):6.3f}"
                  f"   Redis CPU µs/job {median([c[i] for c in cpu]):6.2f}"
                  f"   share of commands {median([c[i] / sum(c) for c in calls]):6.1%}")
        print(f"  all nodes: commands/job {median([sum(c) for c in calls]):6.3f}"
              f"   Redis CPU µs/job {median([sum(c) for c in cpu]):6.2f}")
        master = [r["result"].get("cpu_s_by_process", {}).get("jqmaster") for r in rows]
        master = [m * 1e6 / r["result"]["jobs"] for m, r in zip(master, rows) if m is not None]
        if master:
            print(f"  jqmaster CPU µs/job         {median(master):.2f}")
        for key in sorted(rows[0]["result"]):
            if key.endswith(("_p50_ms", "_p99_ms")):
                print(f"  {key:27} {median([r['result'][key] for r in rows]):.3f}")
        print()


if __name__ == "__main__":
    main(sys.argv[1])
