#!/usr/bin/env python3
"""Schedules (issue 19): the CPU an idle master spends holding many schedules, and what one tick
costs Redis. Starts its own Redis and jqmaster(s) on free loopback ports.

  bench/schedules.py [--jqmaster build/cmd/jqmaster] [--schedules 1000] [--idle-seconds 20]
                     [--tick-seconds 20]

1. Creates `--schedules` schedules whose next tick is an hour away (`every: 3600`), waits until
   the master logged loading them, then reads jqmaster's and redis-server's CPU time from
   /proc/<pid>/stat over `--idle-seconds` (as % of one core).
2. With one master, then with two on the same Redis: INFO commandstats over `--tick-seconds`
   with none of the schedules ticking (the baseline: heartbeats, reaping, ...), then over as long
   with one more schedule ticking every second; the difference per tick made is the cost of one
   tick, by command (FCALL calls and the commands the scripts ran inside).

Prints one JSON line."""
import argparse, json, os, socket, subprocess, sys, tempfile, time

from benchlib import call, cpu_seconds, free_port, ready, wait_for


def redis(port, *args):
    """One command over RESP; the reply's bulk text (enough for INFO and +OK)."""
    frame = f"*{len(args)}\r\n" + "".join(f"${len(a)}\r\n{a}\r\n" for a in args)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(frame.encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            data += chunk
            if not chunk or (data.startswith(b"+") and data.endswith(b"\r\n")):
                break
            if data.startswith(b"$"):
                head, _, rest = data.partition(b"\r\n")
                if len(rest) >= int(head[1:]) + 2:
                    return rest[:int(head[1:])].decode()
    return data.decode()


def commandstats(port):
    """{command: calls} from INFO commandstats."""
    out = {}
    for line in redis(port, "INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_"):
            name, _, rest = line[len("cmdstat_"):].partition(":")
            out[name] = int(dict(kv.split("=") for kv in rest.split(","))["calls"])
    return out


def delta(after, before):
    return {k: after.get(k, 0) - before.get(k, 0) for k in set(after) | set(before)
            if after.get(k, 0) != before.get(k, 0)}


def start_master(binary, port, redis_port, tmp):
    return subprocess.Popen([binary, "--listen", f"127.0.0.1:{port}", "--redis-url",
                             f"redis://127.0.0.1:{redis_port}/0", "--log-level", "info"],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, f"m{port}.log"), "w"),
                            cwd=tmp)


def runs(port, name):
    return call(port, "GET", f"/v1/schedules/{name}")[1]["runs"]


def tick_cost(redis_port, master_port, seconds):
    """Commands per tick: a window with a schedule ticking every second minus a window as long
    without it."""
    before = commandstats(redis_port)
    time.sleep(seconds)
    baseline = delta(commandstats(redis_port), before)
    call(master_port, "PATCH", "/v1/schedules/bench-tick", {"paused": False})
    first = runs(master_port, "bench-tick")
    before = commandstats(redis_port)
    time.sleep(seconds)
    ticking = delta(commandstats(redis_port), before)
    made = runs(master_port, "bench-tick") - first
    call(master_port, "PATCH", "/v1/schedules/bench-tick", {"paused": True})
    # The GETs of `runs` above and the PATCH are outside both windows.
    per_tick = {k: round((ticking.get(k, 0) - baseline.get(k, 0)) / made, 2)
                for k in set(ticking) | set(baseline)}
    per_tick = {k: v for k, v in sorted(per_tick.items()) if abs(v) >= 0.05}
    scripts = {k: v for k, v in per_tick.items() if k in ("fcall", "evalsha", "eval")}
    return {"ticks": made, "commands_per_tick": round(sum(per_tick.values()), 1),
            "script_calls_per_tick": round(sum(scripts.values()), 2), "by_command": per_tick}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jqmaster", default="build/cmd/jqmaster")
    ap.add_argument("--schedules", type=int, default=1000)
    ap.add_argument("--idle-seconds", type=float, default=20)
    ap.add_argument("--tick-seconds", type=float, default=20)
    a = ap.parse_args()
    binary = os.path.abspath(a.jqmaster)
    if not os.access(binary, os.X_OK):
        sys.exit(f"{a.jqmaster}: not an executable (build first: scripts/build.sh)")
    tmp = tempfile.mkdtemp(prefix="jq-bench-schedules-")
    rport, mport, second_port = free_port(), free_port(), free_port()
    procs = [subprocess.Popen(["redis-server", "--port", str(rport), "--save", "", "--appendonly",
                               "no"], stdout=subprocess.DEVNULL)]
    try:
        assert wait_for(lambda: redis(rport, "PING").startswith("+PONG"), 30), "redis did not start"
        master = start_master(binary, mport, rport, tmp)
        procs.append(master)
        assert wait_for(lambda: ready(mport), 30), "jqmaster did not come up"
        for i in range(a.schedules):
            call(mport, "POST", "/v1/schedules", {"name": f"bench-{i:05d}", "every": 3600,
                                                  "job": {"name": "bench.hourly"}})
        call(mport, "POST", "/v1/schedules", {"name": "bench-tick", "every": 1, "paused": True,
                                              "job": {"name": "bench.tick"}})
        # Let the change events of the creates settle, then read everything once again from a
        # fresh master (what the runner holds after a restart).
        master.terminate()
        master.wait()
        master = start_master(binary, mport, rport, tmp)
        procs[1] = master
        log = os.path.join(tmp, f"m{mport}.log")
        assert wait_for(lambda: f"schedules: {a.schedules + 1} loaded" in open(log).read(), 30), \
            "the master did not load the schedules"
        time.sleep(1)
        m0, r0, t0 = cpu_seconds(master.pid), cpu_seconds(procs[0].pid), time.monotonic()
        time.sleep(a.idle_seconds)
        m1, r1, t1 = cpu_seconds(master.pid), cpu_seconds(procs[0].pid), time.monotonic()
        idle = {"schedules": a.schedules, "seconds": round(t1 - t0, 1),
                "jqmaster_cpu_percent": round(100 * (m1 - m0) / (t1 - t0), 3),
                "redis_cpu_percent": round(100 * (r1 - r0) / (t1 - t0), 3)}

        one_master = tick_cost(rport, mport, a.tick_seconds)
        second = start_master(binary, second_port, rport, tmp)
        procs.append(second)
        assert wait_for(lambda: ready(second_port), 30), "the second jqmaster did not come up"
        time.sleep(1)
        two_masters = tick_cost(rport, mport, a.tick_seconds)
        jobs = call(mport, "GET", "/v1/queues/bench.tick")[1]["ready"]
        print(json.dumps({"idle": idle, "tick_one_master": one_master,
                          "tick_two_masters": two_masters, "tick_jobs_queued": jobs,
                          "tick_runs": runs(mport, "bench-tick")}))
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait()


if __name__ == "__main__":
    sys.exit(main())
