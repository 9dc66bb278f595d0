#!/usr/bin/env python3
"""Soak: two masters share one Redis (or a 3-node Redis Cluster); jobs are pushed without pause
while one master after the other is killed with SIGKILL and started again in its place. Then
it checks, from a worker's journal of every attempt, what users are promised.

Scenarios:
  constraints  a concurrency limit of 2 per tenant (a keyed constraint), ordering keys on most
               jobs. Checks: every acknowledged push ran; the jobs of one ordering key never ran
               at once and started in push order; never more than 2 of one tenant at once.
  jobs         unique jobs, on_duplicate: append merges, a schedule ticking every second.
               Checks: two jobs of one unique key never ran at once; every acknowledged append
               is in exactly one job's list; one job per tick, and no tick missed.

    /usr/bin/python3 tests/soak/soak.py --scenario constraints [--cluster] [--duration 45]
        [--kill-every 6] [--master build/cmd/jqmaster] [--dir DIR]

Exit code 0 when every check holds, 1 when one does not (it says which). The masters' logs and
the journal stay in --dir (a new temporary directory by default). Not part of the test suite:
it takes a minute or more and its faults are random; run it after changing what a crash may
interrupt (hand-offs between scripts, start-up, shutdown). Needs redis-server and redis-cli, and
python3-msgpack (scripts/install-deps.sh installs both).
"""
import argparse
import collections
import datetime
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def free_port(bus=False):
    """A free loopback port; with `bus`, one whose cluster bus port (+10000) is free too."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", random.randrange(20000, 55000) if bus else 0))
            port = s.getsockname()[1]
        if not bus:
            return port
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port + 10000))
            return port
        except OSError:
            continue


def call(port, method, path, body=None, timeout=10):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, json.dumps(body) if body is not None else None, headers)
        res = conn.getresponse()
        data = res.read()
        return res.status, (json.loads(data) if data else None)
    finally:
        conn.close()


def wait_for(condition, seconds, what):
    until = time.time() + seconds
    while time.time() < until:
        try:
            if condition():
                return
        except Exception:
            pass
        time.sleep(0.05)
    raise SystemExit("soak: " + what + " did not happen within %d s" % seconds)


class Redis:
    """One redis-server, or three joined into a cluster."""

    def __init__(self, directory, cluster):
        self.procs = []
        self.ports = [free_port(bus=cluster) for _ in range(3 if cluster else 1)]
        try:
            self.start(directory, cluster)
        except BaseException:
            self.stop()
            raise

    def start(self, directory, cluster):
        for port in self.ports:
            args = ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                    "--dir", directory]
            if cluster:
                args += ["--cluster-enabled", "yes",
                         "--cluster-config-file", "nodes-%d.conf" % port]
            log = open(os.path.join(directory, "redis-%d.log" % port), "w")
            self.procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT))
        for port in self.ports:
            wait_for(lambda p=port: self.cli(p, "PING") == "PONG", 10, "redis-server on %d" % port)
        if cluster:
            subprocess.run(["redis-cli", "--cluster", "create"] +
                           ["127.0.0.1:%d" % p for p in self.ports] +
                           ["--cluster-replicas", "0", "--cluster-yes"],
                           capture_output=True, check=True)
            wait_for(lambda: all("cluster_state:ok" in self.cli(p, "CLUSTER", "INFO")
                                 for p in self.ports), 30, "the cluster")
            self.url = "redis+cluster://" + ",".join("127.0.0.1:%d" % p for p in self.ports)
        else:
            self.url = "redis://127.0.0.1:%d" % self.ports[0]

    @staticmethod
    def cli(port, *args):
        return subprocess.run(["redis-cli", "-p", str(port)] + list(args),
                              capture_output=True, text=True).stdout.strip()

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait()


class Masters:
    def __init__(self, binary, redis_url, directory):
        self.binary, self.redis_url, self.directory = binary, redis_url, directory
        self.config = os.path.join(directory, "master.yaml")
        with open(self.config, "w") as f:  # fast retries: jobs a kill failed run again soon
            f.write("retry:\n  base: 0.05\n  max: 0.5\n  jitter: 0\n")
        self.ports = [free_port(), free_port()]
        self.procs = [self.start(0), self.start(1)]
        self.alive = [True, True]

    def start(self, i):
        log = open(os.path.join(self.directory, "master-%d.log" % i), "a")
        proc = subprocess.Popen(
            [self.binary, "--config", self.config, "--listen", "127.0.0.1:%d" % self.ports[i],
             "--redis-url", self.redis_url, "--log-level", "info"],
            stdout=log, stderr=subprocess.STDOUT)
        wait_for(lambda: call(self.ports[i], "GET", "/readyz")[0] == 200, 30, "master %d ready" % i)
        return proc

    def kill_and_restart(self, i):
        self.alive[i] = False
        time.sleep(0.2)  # pushers move to the other master
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait()
        time.sleep(1.0)
        self.procs[i] = self.start(i)
        self.alive[i] = True

    def port_for(self, n):
        i = n % 2
        return self.ports[i if self.alive[i] else 1 - i]

    def stop(self):
        for p in self.procs:
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            p.wait()


def constraints_job(thread, rnd, seq):
    okey = "p%dk%d" % (thread, rnd.randrange(3)) if rnd.random() < 0.7 else None
    arg = {"seq": seq, "tenant": "t%d" % rnd.randrange(4), "ms": rnd.randrange(80), "okey": okey}
    job = {"name": "soak", "argument": arg, "timeout": 3, "max_retry": 20}
    if okey:
        job["ordering_key"] = okey
    return "c", job


def jobs_job(thread, rnd, seq):
    if thread < 2:
        key = "uk%d" % rnd.randrange(5)
        return "u", {"name": "u", "unique_key": key, "argument": {"seq": seq, "k": key, "ms": 50},
                     "timeout": 3, "max_retry": 20}
    key = "ak%d" % rnd.randrange(3)
    return "a", {"name": "a", "unique_key": key, "on_duplicate": "append", "ordering_key": key,
                 "argument": seq, "timeout": 3, "max_retry": 20}


def read_runs(journal):
    """id -> [(start, end, start record)], from the journal's start and end lines."""
    runs, started = collections.defaultdict(list), {}
    with open(journal) as f:
        for line in f:
            r = json.loads(line)
            key = (r["id"], r["attempt"])
            if r["ev"] == "start":
                started.setdefault(key, []).append(r)
            elif started.get(key):
                s = started[key].pop(0)
                runs[r["id"]].append((s["t"], r["t"], s))
    return runs


def overlaps(intervals):
    """Pairs of (start, end, owner) of different owners that overlap in time."""
    found, latest = [], None  # latest: the interval ending last among those started so far
    for interval in sorted(intervals):
        if latest and interval[0] < latest[1] and interval[2] != latest[2]:
            found.append((latest, interval))
        if not latest or interval[1] > latest[1]:
            latest = interval
    return found


def check_constraints(runs, acked, problems):
    lost = [i for i in acked if i not in runs]
    if lost:
        problems.append("%d acknowledged jobs never ran (%s ...)" % (len(lost), lost[:3]))
    lines = collections.defaultdict(list)
    events = []
    for i, rs in runs.items():
        arg = rs[0][2]["arg"]
        if arg.get("okey"):
            lines[arg["okey"]].append((arg["seq"], min(r[0] for r in rs), max(r[1] for r in rs), i))
        for start, end, _ in rs:
            events += [(start, 1, arg["tenant"]), (end, -1, arg["tenant"])]
    for key, jobs in lines.items():
        jobs.sort()
        for a, b in zip(jobs, jobs[1:]):
            if b[1] < a[2]:
                problems.append("ordering key %s: job %s started before %s had ended" % (key, b[3], a[3]))
    running, most = collections.Counter(), collections.Counter()
    for _, step, tenant in sorted(events, key=lambda e: (e[0], e[1])):
        running[tenant] += step
        most[tenant] = max(most[tenant], running[tenant])
    if any(n > 2 for n in most.values()):
        problems.append("a tenant ran more than 2 at once: %s" % dict(most))
    print("constraints: %d acknowledged, %d ran, most at once per tenant %s" %
          (len(acked), len(runs), dict(most)))


def check_jobs(runs, acked_appends, problems):
    unique = collections.defaultdict(list)
    lists = {}
    ticks = collections.Counter()
    for i, rs in runs.items():
        first = rs[0][2]
        if first["name"] == "u":
            unique[first["arg"]["k"]] += [(s, e, i) for s, e, _ in rs]
        elif first["name"] == "a":
            lists[i] = first["arg"]
        elif first["name"] == "s":
            ticks[first["scheduled_at"]] += 1
    for key, intervals in unique.items():
        for a, b in overlaps(intervals):
            problems.append("unique key %s: jobs %s and %s ran at once" % (key, a[2], b[2]))
    seen = collections.Counter(x for arguments in lists.values() for x in arguments)
    missing = [s for s in acked_appends if seen[s] == 0]
    twice = [s for s, n in seen.items() if n > 1]
    if missing or twice:
        problems.append("appends: %d missing, %d twice" % (len(missing), len(twice)))
    doubled = [t for t, n in ticks.items() if n > 1]
    if doubled:
        problems.append("schedule: ticks with more than one job: %s" % doubled[:3])
    at = sorted(datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
                for t in ticks)
    gaps = [round(b - a, 3) for a, b in zip(at, at[1:]) if b - a > 1.001]
    if gaps:
        problems.append("schedule: ticks missed (gaps of %s s)" % gaps[:3])
    print("jobs: %d unique keys, %d appends in %d jobs, %d ticks" %
          (len(unique), len(acked_appends), len(lists), len(ticks)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=["constraints", "jobs"], required=True)
    parser.add_argument("--cluster", action="store_true", help="a 3-node Redis Cluster")
    parser.add_argument("--duration", type=float, default=45)
    parser.add_argument("--kill-every", type=float, default=6)
    parser.add_argument("--master", default=os.path.join(ROOT, "build", "cmd", "jqmaster"))
    parser.add_argument("--dir", default=None)
    o = parser.parse_args()
    directory = o.dir or tempfile.mkdtemp(prefix="jq-soak-")
    os.makedirs(directory, exist_ok=True)
    print("soak: %s on %s, logs in %s" % (o.scenario, "a cluster" if o.cluster else "one Redis",
                                           directory), flush=True)
    redis = Redis(directory, o.cluster)
    masters, worker = None, None
    journal = os.path.join(directory, "journal.jsonl")
    try:
        masters = Masters(o.master, redis.url, directory)
        worker_port = free_port()
        worker = subprocess.Popen([sys.executable, os.path.join(HERE, "journal_worker.py"),
                                   str(worker_port), journal])
        wait_for(lambda: call(masters.ports[0], "POST", "/v1/workers",
                              {"url": "http://127.0.0.1:%d/" % worker_port, "names": ["*"],
                               "concurrency": 12})[0] in (200, 201), 10, "the registration")
        if o.scenario == "constraints":
            make = constraints_job
            call(masters.ports[0], "POST", "/v1/constraints",
                 {"name": "tenant", "match": {"name": "soak"}, "key": "/tenant", "concurrency": 2})
        else:
            make = jobs_job
            call(masters.ports[0], "POST", "/v1/schedules",
                 {"name": "tick", "every": 1, "job": {"name": "s", "timeout": 3}})
        acked, appends, lock, stop = {}, [], threading.Lock(), threading.Event()
        counter = iter(range(1, 1 << 62))

        def push(thread):
            rnd = random.Random(thread)
            for n in range(1 << 62):
                if stop.is_set():
                    return
                with lock:
                    seq = next(counter)
                kind, job = make(thread, rnd, seq)
                try:
                    status, body = call(masters.port_for(thread + n), "POST", "/v1/jobs", job, 15)
                except OSError:
                    status = 0  # a master killed under the push: it may or may not be stored
                with lock:
                    if status in (200, 201) and kind == "a":
                        appends.append(seq)
                    elif status == 201:
                        acked[body["id"]] = seq
                time.sleep(0.03)

        pushers = [threading.Thread(target=push, args=(t,)) for t in range(4 if make is constraints_job else 3)]
        for p in pushers:
            p.start()
        end, kills = time.time() + o.duration, 0
        while time.time() < end:
            time.sleep(o.kill_every)
            masters.kill_and_restart(kills % 2)
            kills += 1
        stop.set()
        for p in pushers:
            p.join()
        if o.scenario == "jobs":
            call(masters.ports[0], "DELETE", "/v1/schedules/tick")
        last, still = None, time.time()
        while True:
            stats = call(masters.ports[0], "GET", "/v1/stats")[1]
            left = (stats["ready"], stats["scheduled"], stats["running"])
            if sum(left) == 0:
                break
            if left != last:
                last, still = left, time.time()
            if time.time() - still > 30:
                print("soak: no progress for 30 s:", stats)
                break
            time.sleep(0.2)
        print("soak: %d kills; stats %s" % (kills, stats))
    finally:
        if masters:
            masters.stop()
        if worker:
            worker.terminate()
        redis.stop()
    problems = []
    runs = read_runs(journal)
    if o.scenario == "constraints":
        check_constraints(runs, acked, problems)
    else:
        check_jobs(runs, appends, problems)
    for p in problems:
        print("FAILED:", p)
    print("soak: %s" % ("FAILED" if problems else "every check holds"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
