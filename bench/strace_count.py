#!/usr/bin/env python3
"""Syscalls per job from `strace -c -f` of the master during one jqbench run (bench/compare.sh).

    strace_count.py STRACE_SUMMARY JQBENCH_JSON_LINE

Prints one JSON line: the run's jobs, the syscalls in all and per job, and per syscall its calls
per job and share of the calls, for those made at least once per 100 jobs. strace's own times are
left out: tracing slows every call, so only the counts mean something. The count covers the
whole time strace was attached (about half a second before the run and its end), idle wake-ups
included.
"""
import json
import sys


def main():
    summary_path, line = sys.argv[1], sys.argv[2]
    run = json.loads(line)
    jobs = run.get("jobs", 0)
    calls = {}
    with open(summary_path) as f:
        for row in f:
            parts = row.split()
            # % time, seconds, usecs/call, calls, [errors], syscall
            if len(parts) < 5 or not parts[3].isdigit() or parts[-1] == "total":
                continue
            calls[parts[-1]] = int(parts[3])
    total = sum(calls.values())
    per_job = {
        name: [round(n / jobs, 3), round(n / total, 3)]
        for name, n in sorted(calls.items(), key=lambda kv: -kv[1])
        if jobs and n / jobs >= 0.01
    }
    print(json.dumps({"scenario": run.get("scenario"), "jobs": jobs, "syscalls": total,
                      "syscalls_per_job": round(total / jobs, 2) if jobs else None,
                      "by_syscall": per_job}))


if __name__ == "__main__":
    main()
