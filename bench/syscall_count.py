#!/usr/bin/env python3
"""Syscalls per job of the master during one jqbench run (bench/compare.sh, bench/profile.sh).

    syscall_count.py SUMMARY_FILE JQBENCH_JSON_LINE

SUMMARY_FILE is what `perf trace -s -p PID -o FILE` (one table per thread, summed here) or
`strace -c -f -p PID -o FILE` wrote. Prints one JSON line: the run's jobs, the syscalls in all and
per job, and per syscall [calls per job, share of the calls, failed calls per job (e.g. a read
that finds nothing to read: EAGAIN)] for those made at least once per 100 jobs, plus the run's
connections_opened (an open loop opens connections when a slowed
master answers late; their accept and close calls are counted too). Only counts are kept: tracing
slows every call, so its times mean little. The count covers the whole time the tracer was
attached (about half a second before the run, and its end), idle wake-ups included.
"""
import json
import re
import sys

NUMBER = re.compile(r"^\d+(\.\d+)?$")


def count_calls(path):
    """{syscall: [calls, errors]}, summed over the threads' tables."""
    calls = {}
    with open(path) as f:
        for row in f:
            parts = row.split()
            if len(parts) < 4 or parts[-1] == "total" or parts[0] == "syscall":
                continue
            if NUMBER.match(parts[0]) and len(parts) >= 5 and parts[3].isdigit():
                # strace: % time, seconds, usecs/call, calls, [errors], syscall
                name, n = parts[-1], int(parts[3])
                errors = int(parts[4]) if len(parts) == 6 and parts[4].isdigit() else 0
            elif parts[1].isdigit() and parts[2].isdigit():
                # perf trace: syscall, calls, errors, total, min, avg, max, stddev
                name, n, errors = parts[0], int(parts[1]), int(parts[2])
            else:
                continue
            c = calls.setdefault(name, [0, 0])
            c[0] += n
            c[1] += errors
    return calls


def main():
    summary_path, line = sys.argv[1], sys.argv[2]
    run = json.loads(line)
    # The count covers the warm-up; the constraints scenario names its jobs by its part.
    jobs = run.get("jobs", 0) + run.get("warmup_jobs", 0) + run.get("throughput_jobs", 0)
    calls = count_calls(summary_path)
    total = sum(n for n, _ in calls.values())
    per_job = {
        name: [round(n / jobs, 3), round(n / total, 3), round(errors / jobs, 3)]
        for name, (n, errors) in sorted(calls.items(), key=lambda kv: -kv[1][0])
        if jobs and n / jobs >= 0.01
    }
    print(json.dumps({"scenario": run.get("scenario"), "jobs": jobs, "syscalls": total,
                      "syscalls_per_job": round(total / jobs, 2) if jobs else None,
                      "connections_opened": run.get("connections_opened", run.get("connections")),
                      "result_connections_opened": run.get("result_connections_opened"),
                      "by_syscall": per_job}))


if __name__ == "__main__":
    main()
