#!/usr/bin/env python3
"""Medians, on/off ratios and issue 13's targets from bench/constraints.sh's JSON lines.

    python3 bench/constraints_summary.py bench/results/constraints-<date>.jsonl

Each line is {"test": ..., "result": <jqbench constraints JSON line>}. Runs are grouped by test,
worker and constraint (on/off); a figure is the median of its group, a ratio is median(on) /
median(off), and spread is max/min within a group. Prints Markdown tables, then every run. Runs
of BASELINE_BIN (tests named baseline-<test>) get tables of their own, then a before/after table
of the main figures.
"""
import json
import statistics
import sys
from collections import defaultdict

THROUGHPUT_TARGET = 0.70  # jobs/s, every job constrained, over the run without the constraint
LATENCY_TARGET = 1.2  # dispatch p99 with the backlog held, over the run without it
IDLE_TARGET_PCT = 2.0  # jqmaster's CPU with the backlog held, % of one core


def load(path):
    groups = defaultdict(list)
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            row = json.loads(line)
            r = row["result"]
            groups[(row["test"], r["worker"], r["constraint"])].append(r)
    return groups


def value(run, path):
    for key in path.split("."):
        if not isinstance(run, dict) or key not in run:
            return None
        run = run[key]
    return run


def values(runs, path):
    return [v for v in (value(r, path) for r in runs) if v is not None]


def median(runs, path):
    v = values(runs, path)
    return statistics.median(v) if v else None


def spread(runs, path):
    v = values(runs, path)
    return max(v) / min(v) if v and min(v) > 0 else None


def per_job_us(runs, process):
    """Median CPU µs per job of one process (or "all") in the throughput part."""
    v = []
    for r in runs:
        jobs = r.get("throughput_jobs")
        if not jobs:
            continue
        if process == "all":
            v.append(r["throughput_cpu_s"] * 1e6 / jobs)
        elif process in r.get("throughput_cpu_s_by_process", {}):
            v.append(r["throughput_cpu_s_by_process"][process] * 1e6 / jobs)
    return statistics.median(v) if v else None


def show(v, digits=None):
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if digits is not None:
        return f"{v:.{digits}f}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def met(ok):
    return "" if ok is None else ("yes" if ok else "no")


def throughput_table(groups):
    if not any(key[0] in ("all_constrained", "mixed", "tight") for key in groups):
        return
    print("| workload | worker | on (jobs/s) | off (jobs/s) | on / off | spread on | spread off |"
          " CPU µs/job on | off | jqmaster µs/job on | off | Redis µs/job on | off |"
          " held once (on) | target | met |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
          " ---: | --- | --- |")
    tests = [("all_constrained", "every job constrained, 1,000 tenants"),
             ("mixed", "20 % unconstrained, 1,000 tenants"),
             ("tight", "every job constrained, 20 tenants")]
    for test, label in tests:
        for worker in ("noop", "decode", "external"):
            on, off = groups.get((test, worker, "on")), groups.get((test, worker, "off"))
            if not on and not off:
                continue
            on, off = on or [], off or []
            m_on = median(on, "throughput_jobs_per_s")
            m_off = median(off, "throughput_jobs_per_s")
            r = ratio(m_on, m_off)
            target = test == "all_constrained"
            held = median(on, "throughput_deferred")
            jobs = median(on, "throughput_jobs")
            held_text = f"{held:,.0f} of {jobs:,.0f}" if held is not None and jobs else ""
            print(f"| {label} | {worker} | {show(m_on)} | {show(m_off)} | {show(r, 2)} |"
                  f" {show(spread(on, 'throughput_jobs_per_s'), 2)} |"
                  f" {show(spread(off, 'throughput_jobs_per_s'), 2)} |"
                  f" {show(per_job_us(on, 'all'), 1)} | {show(per_job_us(off, 'all'), 1)} |"
                  f" {show(per_job_us(on, 'jqmaster'), 1)} | {show(per_job_us(off, 'jqmaster'), 1)} |"
                  f" {show(per_job_us(on, 'redis'), 1)} | {show(per_job_us(off, 'redis'), 1)} |"
                  f" {held_text} | {'≥ 0.70' if target else ''} |"
                  f" {met(r >= THROUGHPUT_TARGET) if target and r is not None else ''} |")


def held_table(groups):
    held = groups.get(("held", "decode", "on"), [])
    none = groups.get(("held_none", "decode", "on"), [])
    off = groups.get(("held_off", "decode", "off"), [])
    if not held and not none and not off:
        return
    print()
    print("| figure | backlog held | no backlog | held / none | constraint off | held / off |"
          " spread held | spread none | spread off | target | met |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    rows = [
        ("dispatch (push sent → worker read it) p99, ms", "latency_to_worker_p99_ms", True),
        ("dispatch p50, ms", "latency_to_worker_p50_ms", False),
        ("dispatch p99.9, ms", "latency_to_worker_p999_ms", False),
        ("push-to-completion (done) p99, ms", "latency_done_p99_ms", False),
        ("push ack p99, ms", "latency_ack_p99_ms", False),
        ("rate sent, jobs/s", "latency_rate_sent_per_s", False),
    ]
    for label, path, target in rows:
        a, b, c = median(held, path), median(none, path), median(off, path)
        r = ratio(a, b)
        print(f"| {label} | {show(a)} | {show(b)} | {show(r, 2)} | {show(c)} |"
              f" {show(ratio(a, c), 2)} | {show(spread(held, path), 2)} |"
              f" {show(spread(none, path), 2)} | {show(spread(off, path), 2)} |"
              f" {'≤ 1.2× (held / none)' if target else ''} |"
              f" {met(r <= LATENCY_TARGET) if target and r is not None else ''} |")
    for process in ("jqmaster", "redis", "jqbench"):
        path = f"idle_cpu_pct_by_process.{process}"
        a, b, c = median(held, path), median(none, path), median(off, path)
        target = process == "jqmaster"
        print(f"| idle CPU of {process}, % of a core | {show(a, 2)} | {show(b, 2)} | |"
              f" {show(c, 2)} | | | | | {'< 2 % (held)' if target else ''} |"
              f" {met(a < IDLE_TARGET_PCT) if target and a is not None else ''} |")
    for label, path in (("backlog pushed, s", "backlog_push_s"),
                        ("backlog pushed and all held, s", "backlog_held_s"),
                        ("idle settle (first 1-s window under 5 %), s", "idle_settle_s"),
                        ("DELETE of the constraint answered, s", "release_delete_s"),
                        ("backlog run after the DELETE, s", "release_s"),
                        ("backlog run after the DELETE, jobs/s", "release_jobs_per_s")):
        print(f"| {label} | {show(median(held, path))} | | | | | {show(spread(held, path), 2)} |"
              f" | | | |")
    redis = ("held", held), ("none", none), ("off", off)
    print()
    print("Redis per latency job (median calls / µs, warm-up included):")
    print()
    commands = sorted({c for _, runs in redis for r in runs
                       for c in r.get("latency_redis_by_command", {})})
    for command in commands:
        cells = []
        for name, runs in redis:
            v = [r["latency_redis_by_command"][command] for r in runs
                 if command in r.get("latency_redis_by_command", {})]
            if v:
                cells.append(f"{name} {statistics.median(x[0] for x in v):.2f} /"
                             f" {statistics.median(x[1] for x in v):.2f}")
        print(f"- {command}: " + " · ".join(cells))


def every_run(groups):
    print()
    print("Every run:")
    print()
    for (test, worker, constraint), runs in sorted(groups.items()):
        if test.startswith("held"):
            cells = [f"p99 {show(r.get('latency_to_worker_p99_ms'))} ms, idle jqmaster"
                     f" {show(value(r, 'idle_cpu_pct_by_process.jqmaster'), 2)} %" for r in runs]
        else:
            cells = [show(r.get("throughput_jobs_per_s")) for r in runs]
        print(f"- {test} {worker} {constraint}: " + " · ".join(cells))


def before_after(groups, baseline):
    print()
    print("Before (BASELINE_BIN) and after (this build), medians:")
    print()
    print("| figure | before | after | after / before |")
    print("| --- | ---: | ---: | ---: |")
    rows = []
    for worker in ("noop", "decode", "external"):
        for constraint in ("on", "off"):
            rows.append((f"every job constrained, {worker}, constraint {constraint}: jobs/s",
                         ("all_constrained", worker, constraint), "throughput_jobs_per_s"))
    rows += [("20 % unconstrained, constraint on: jobs/s", ("mixed", "decode", "on"),
              "throughput_jobs_per_s"),
             ("20 tenants (the limit binds), constraint on: jobs/s", ("tight", "decode", "on"),
              "throughput_jobs_per_s")]
    for process in ("redis", "jqmaster"):
        rows.append((f"the same: {process} CPU µs per job", ("tight", "decode", "on"),
                     f"throughput_cpu_s_by_process.{process}"))
    rows += [("dispatch p99 with 100,000 held, ms", ("held", "decode", "on"),
              "latency_to_worker_p99_ms"),
             ("dispatch p99 without the backlog, ms", ("held_none", "decode", "on"),
              "latency_to_worker_p99_ms"),
             ("idle CPU of jqmaster with 100,000 held, % of a core", ("held", "decode", "on"),
              "idle_cpu_pct_by_process.jqmaster")]
    for label, key, path in rows:
        b, a = median(baseline.get(key, []), path), median(groups.get(key, []), path)
        if "CPU µs per job" in label:  # seconds over the run's jobs
            jobs_b = median(baseline.get(key, []), "throughput_jobs")
            jobs_a = median(groups.get(key, []), "throughput_jobs")
            b = b * 1e6 / jobs_b if b is not None and jobs_b else None
            a = a * 1e6 / jobs_a if a is not None and jobs_a else None
        if a is None and b is None:
            continue
        print(f"| {label} | {show(b)} | {show(a)} | {show(ratio(a, b), 2)} |")
    for worker in ("noop", "decode", "external"):
        ratios = []
        for g in (baseline, groups):
            on, off = g.get(("all_constrained", worker, "on")), g.get(("all_constrained", worker, "off"))
            ratios.append(ratio(median(on or [], "throughput_jobs_per_s"),
                                median(off or [], "throughput_jobs_per_s")))
        if any(r is not None for r in ratios):
            print(f"| every job constrained, {worker}: on / off | {show(ratios[0], 2)} |"
                  f" {show(ratios[1], 2)} | |")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: constraints_summary.py RESULTS.jsonl")
    every = load(sys.argv[1])
    groups = {k: v for k, v in every.items() if not k[0].startswith("baseline-")}
    baseline = {(k[0][len("baseline-"):],) + k[1:]: v for k, v in every.items()
                if k[0].startswith("baseline-")}
    throughput_table(groups)
    held_table(groups)
    every_run(groups)
    if baseline:
        print()
        print("## Baseline (BASELINE_BIN)")
        print()
        throughput_table(baseline)
        held_table(baseline)
        every_run(baseline)
        before_after(groups, baseline)


if __name__ == "__main__":
    main()
