#!/usr/bin/env python3
"""How the row's processes share the two vCPUs: per process, the time on a CPU and the time
runnable but waiting in a run queue (/proc/<pid>/task/*/schedstat, all threads), and per CPU
the idle and softirq time (/proc/stat), over SECONDS.

    bench/schedstat.py SECONDS name=pid[,name=pid...]

bench/one_run.sh runs it in the middle of a run with SCHEDSTAT=<delay>."""
import sys
import time


def tasks(pid):
    import os
    try:
        return [f"/proc/{pid}/task/{t}/schedstat" for t in os.listdir(f"/proc/{pid}/task")]
    except FileNotFoundError:
        return []


def sample(procs):
    out = {}
    for name, pid in procs:
        run = wait = 0
        for path in tasks(pid):
            try:
                r, w, _ = open(path).read().split()
            except (FileNotFoundError, ValueError):
                continue
            run, wait = run + int(r), wait + int(w)
        out[name] = (run, wait)
    return out


def cpus():
    return [line.split() for line in open("/proc/stat") if line.startswith("cpu") and line[3] != " "]


def main():
    seconds = float(sys.argv[1])
    procs = [tuple(p.split("=")) for p in sys.argv[2].split(",") if p]
    a, ca = sample(procs), cpus()
    time.sleep(seconds)
    b, cb = sample(procs), cpus()
    for name, _ in procs:
        run = (b[name][0] - a[name][0]) / seconds / 1e7
        wait = (b[name][1] - a[name][1]) / seconds / 1e7
        print(f"schedstat {name:10s} on a CPU {run:5.1f} %  runnable, waiting {wait:5.1f} %",
              file=sys.stderr)
    for x, y in zip(ca, cb):
        d = [int(j) - int(i) for i, j in zip(x[1:], y[1:])]
        total = sum(d) or 1
        print(f"schedstat {x[0]:10s} idle {100 * d[3] / total:5.1f} %  softirq "
              f"{100 * d[6] / total:5.1f} %", file=sys.stderr)


if __name__ == "__main__":
    main()
