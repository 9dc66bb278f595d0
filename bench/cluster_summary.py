#!/usr/bin/env python3
"""Summarizes bench/cluster.sh's JSON lines: medians over the repetitions, per setup, then the
comparisons the scaling section of docs/BENCHMARKS.md quotes.

Per run: jobs/s, Redis commands and Redis CPU (µs) per job on each node and in all, each node's
share, the time Redis spent inside commands (commandstats usec), jqmaster's CPU (µs) per job and
the latency percentiles jqbench reports; for the fan-out reads the same per call. Then: how
evenly the 3-master cluster spreads the work (and which commands make each node's share),
cluster against one Redis (the client-side cost of routing), replicas against none and
replicas_ack 1 against 0 (the cost of WAIT), and, when the run had BASELINE_BIN, the current
jqmaster against each baseline on one Redis and each later baseline against the earlier ones
(ratios per repetition, as they took turns, and their median).

    python3 bench/cluster_summary.py bench/results/<file>.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def per_job(row, value):
    return value / row["result"]["jobs"]


def master_cpu_us(row):
    cpu = row["result"].get("cpu_s_by_process", {}).get("jqmaster")
    return None if cpu is None else per_job(row, cpu) * 1e6


def redis_calls(row, role=None):
    return per_job(row, sum(n["calls"] for n in row["nodes"] if role in (None, n.get("role"))))


def redis_cpu_us(row, role=None):
    cpu = sum(n["cpu_s"] for n in row["nodes"] if role in (None, n.get("role")))
    return per_job(row, cpu) * 1e6


def other_cores(row):
    """Cores busy with everything but the measured processes (jqmaster and jqbench while they
    were measured, the Redis nodes) over the run's window, from /proc/stat; None for runs
    recorded before it was kept."""
    busy, window = row.get("machine_busy_s"), row.get("window_s")
    if busy is None or not window:
        return None
    measured = row["result"].get("cpu_s", 0) + sum(n["cpu_s"] for n in row["nodes"])
    return max(busy - measured, 0) / window


def print_run(setup, test, rows):
    # fanout_reads.py's lines count calls where jqbench's count jobs.
    unit = "call" if rows[0]["result"].get("scenario") == "reads" else "job"
    count = rows[0]["result"].get("jobs", 0)
    print(f"{setup} {test} ({count} {unit}s, {len(rows)} runs)")
    rate = median([r["result"].get("jobs_per_s") for r in rows])
    print(f"  {unit}s/s                      {rate:,.0f}")
    calls = [[per_job(r, n["calls"]) for n in r["nodes"]] for r in rows]
    cpu = [[per_job(r, n["cpu_s"]) * 1e6 for n in r["nodes"]] for r in rows]
    for i, node in enumerate(rows[0]["nodes"]):
        print(f"  node {i + 1} ({node.get('role', '?'):7}): commands/{unit} "
              f"{median([c[i] for c in calls]):6.3f}   Redis CPU µs/{unit} "
              f"{median([c[i] for c in cpu]):6.2f}   share of commands "
              f"{median([c[i] / sum(c) for c in calls]):6.1%}   share of CPU "
              f"{median([c[i] / sum(c) for c in cpu]):6.1%}")
    print(f"  all nodes: commands/{unit} {median([sum(c) for c in calls]):6.3f}"
          f"   Redis CPU µs/{unit} {median([sum(c) for c in cpu]):6.2f}")
    usec = [per_job(r, sum(v[1] for n in r["nodes"] for v in n.get("by_command", {}).values()))
            for r in rows]
    print(f"  inside commands µs/{unit}      {median(usec):.2f}")
    print(f"  jqmaster CPU µs/{unit}         {median([master_cpu_us(r) for r in rows]):.2f}")
    others = [other_cores(r) for r in rows]
    if any(o is not None for o in others):
        each = ", ".join(f"{o:.2f}" for o in others if o is not None)
        print(f"  other load (cores), per run {each}")
    for key in sorted(rows[0]["result"]):
        if key.endswith(("_p50_ms", "_p99_ms")):
            print(f"  {key:27} {median([r['result'][key] for r in rows]):.3f}")
    print()


def print_spread(test, rows):
    """How far each cluster node's commands and CPU per job are from the nodes' mean, and the
    commands per job per node (calls above 0.005 per job on some node). INFO commandstats counts
    the commands scripts run (redis.call) as well as the client's FCALL."""
    print(f"Spread over the 3 masters (cluster3 {test}): each node against the nodes' mean")
    n = len(rows[0]["nodes"])
    for label, value in (("commands", lambda node: node["calls"]),
                         ("Redis CPU", lambda node: node["cpu_s"])):
        devs = []
        for r in rows:
            vals = [value(node) for node in r["nodes"]]
            mean = sum(vals) / n
            devs.append([v / mean - 1 for v in vals])
        cols = "  ".join(f"node {i + 1} {median([d[i] for d in devs]):+6.1%}" for i in range(n))
        worst = median([max(abs(x) for x in d) for d in devs])
        print(f"  {label:10} {cols}   largest |deviation| {worst:.1%}"
              f" ({'within' if worst <= 0.10 else 'NOT within'} 10%)")
    commands = sorted({c for r in rows for node in r["nodes"] for c in node.get("by_command", {})})
    print("  commands/job by node (usec/job in brackets):")
    for cmd in commands:
        per_node = []
        for i in range(n):
            calls = median([per_job(r, r["nodes"][i].get("by_command", {}).get(cmd, [0, 0])[0])
                            for r in rows])
            usec = median([per_job(r, r["nodes"][i].get("by_command", {}).get(cmd, [0, 0])[1])
                           for r in rows])
            per_node.append((calls, usec))
        if max(c for c, _ in per_node) < 0.005:
            continue
        cells = "  ".join(f"{c:7.3f} ({u:5.2f})" for c, u in per_node)
        print(f"    {cmd:14} {cells}")
    print()


def compare(title, base_rows, rows, base_name, name):
    """The medians of both and their ratio (name / base_name)."""
    print(title)
    metrics = (
        ("jobs/s", lambda r: r["result"].get("jobs_per_s")),
        ("jqmaster CPU µs/job", master_cpu_us),
        ("Redis commands/job (all nodes)", redis_calls),
        ("Redis CPU µs/job (all nodes)", redis_cpu_us),
        ("Redis CPU µs/job (masters)", lambda r: redis_cpu_us(r, "master")),
        ("Redis CPU µs/job (replicas)", lambda r: redis_cpu_us(r, "replica")),
        ("ack p50 ms", lambda r: r["result"].get("ack_p50_ms")),
        ("ack p99 ms", lambda r: r["result"].get("ack_p99_ms")),
    )
    print(f"  {'':32} {base_name:>18} {name:>18}   ratio")
    for label, fn in metrics:
        a = median([fn(r) for r in base_rows])
        b = median([fn(r) for r in rows])
        if a != a or b != b or (a == 0 and b == 0):  # nan: not in these runs
            continue
        ratio = b / a if a else float("nan")
        print(f"  {label:32} {a:18,.2f} {b:18,.2f}   {ratio:.3f}")
    print()


def compare_paired(title, base_rows, rows):
    """Current / baseline per repetition (the two ran in turn), then the median of the ratios."""
    print(title)
    for label, fn in (("jobs/s", lambda r: r["result"].get("jobs_per_s")),
                      ("jqmaster CPU µs/job", master_cpu_us),
                      ("Redis commands/job", redis_calls),
                      ("Redis CPU µs/job", redis_cpu_us)):
        pairs = [(fn(a), fn(b)) for a, b in zip(base_rows, rows)]
        ratios = [b / a for a, b in pairs if a]
        each = ", ".join(f"{a:,.2f} -> {b:,.2f}" for a, b in pairs)
        print(f"  {label:22} {each}   ratio per rep "
              f"{', '.join(f'{x:.3f}' for x in ratios)}   median {median(ratios):.3f}")
    others = [(other_cores(a), other_cores(b)) for a, b in zip(base_rows, rows)]
    if all(a is not None and b is not None for a, b in others):
        print(f"  {'other load (cores)':22} {', '.join(f'{a:.2f} -> {b:.2f}' for a, b in others)}")
    print()


def main(path):
    runs = defaultdict(list)
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                row = json.loads(line)
                runs[(row["setup"], row["test"])].append(row)
    print(f"{path}: medians of the runs of each setup\n")
    for (setup, test), rows in runs.items():
        print_run(setup, test, rows)
    for test in ("e2e", "push_single"):
        if ("cluster3", test) in runs:
            print_spread(test, runs[("cluster3", test)])
        if ("single", test) in runs and ("cluster3", test) in runs:
            compare(f"Cluster (3 masters) against one Redis, {test}: the routing cost is in "
                    "jqmaster's CPU", runs[("single", test)], runs[("cluster3", test)],
                    "single", "cluster3")
    acks = [runs.get((f"cluster3+replicas-ack{a}", "push_single")) for a in (0, 1)]
    if ("cluster3", "push_single") in runs and acks[0]:
        compare("Single pushes: 3 masters + 3 replicas (ack 0) against 3 masters (replication)",
                runs[("cluster3", "push_single")], acks[0], "cluster3", "3+3 ack0")
    if all(acks):
        compare("replicas_ack 1 against 0, single pushes on 3 masters + 3 replicas (cost of WAIT)",
                acks[0], acks[1], "ack0", "ack1")
    baselines = [setup for setup, test in runs if setup.startswith("single-") and test == "e2e"]
    pairs = [(b, "single") for b in baselines]
    pairs += [(a, b) for i, a in enumerate(baselines) for b in baselines[i + 1:]]
    for before, after in pairs:
        for test in ("e2e", "push_single"):
            if (before, test) in runs and (after, test) in runs:
                compare_paired(f"One Redis, {test}: {after} against {before} "
                               f"({before} -> {after} per repetition)",
                               runs[(before, test)], runs[(after, test)])


if __name__ == "__main__":
    main(sys.argv[1])
