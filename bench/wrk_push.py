"""Row a's single JSON pushes sent by wrk, a small C HTTP/1.1 load generator, instead of jqbench:
the same body as `jqbench --scenario push --batch 1 --format json --arg-bytes N`, over the same
number of keep-alive connections, for a fixed time. jqbench's own CPU per push is part of row
a's total; wrk shows what the master and Redis do with a client that costs less.

  python3 bench/wrk_push.py --url http://127.0.0.1:8080 --pids redis=PID,jqmaster=PID

With --external-worker URL it is row b instead (`jqbench --scenario e2e --batch 1` with that
worker): the worker is registered for every name first, and the run ends when the master has
stored the success of every job wrk pushed (`succeeded` of GET /v1/stats, read every 2 ms once
wrk is done, not during the pushes); jobs_per_s is the jobs over the time from the first push to
the last success seen. Add the worker's PID to --pids so that its CPU counts.

Prints one JSON line shaped like jqbench's (jobs, jobs_per_s, cpu_s_by_process with "wrk" as the
load generator, cpu_sys_s_by_process, cpu_us_per_job, ack_p50_ms, ack_p99_ms). Exits 1 without
that line when wrk is missing or any push was not answered 201."""
import argparse, json, os, shutil, subprocess, sys, tempfile, time, urllib.request

from benchlib import cpu_times

LUA = """wrk.method = "POST"
wrk.body = %s
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK {"requests":%%d,"duration_us":%%d,"non_2xx":%%d,"socket_errors":%%d,' ..
    '"p50_us":%%d,"p99_us":%%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


def request_json(url, body=None, method="GET"):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json",
                                          "Accept": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)


def register(base, worker_url, concurrency):
    """Registers worker_url for every name; its id."""
    return request_json(f"{base}/v1/workers",
                        {"url": worker_url, "names": ["*"], "concurrency": concurrency},
                        "POST")["id"]


def succeeded(base):
    return request_json(f"{base}/v1/stats")["succeeded"]


def wait_done(base, target, deadline):
    """When the master counted `target` successes (time.monotonic()); None past deadline."""
    while time.monotonic() < deadline:
        if succeeded(base) >= target:
            return time.monotonic()
        time.sleep(0.002)
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True, help="the master's base URL")
    p.add_argument("--pids", default="", help="name=pid,... whose CPU is reported")
    p.add_argument("--connections", type=int, default=50)
    p.add_argument("--duration", type=int, default=4, help="seconds")
    p.add_argument("--arg-bytes", type=int, default=16)
    p.add_argument("--external-worker", help="row b: this worker's URL runs the jobs")
    p.add_argument("--worker-concurrency", type=int, default=50)
    p.add_argument("--completion-timeout", type=float, default=60, help="seconds")
    o = p.parse_args()
    wrk = shutil.which("wrk")
    if not wrk:
        print("wrk_push: wrk is not installed (scripts/install-deps.sh installs it)", file=sys.stderr)
        return 1
    body = json.dumps({"name": "bench", "argument": "x" * o.arg_bytes}, separators=(",", ":"))
    pids = dict(kv.split("=") for kv in o.pids.split(",") if kv)
    base = o.url.rstrip("/")
    worker_id = register(base, o.external_worker, o.worker_concurrency) if o.external_worker else None
    succeeded_before = succeeded(base) if worker_id else 0
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(LUA % json.dumps(body))
    try:
        before = {name: cpu_times(pid) for name, pid in pids.items()}
        start = time.monotonic()
        wrk_run = subprocess.Popen(
            [wrk, "-t1", f"-c{o.connections}", f"-d{o.duration}s", "-s", script.name,
             base + "/v1/jobs"], stdout=subprocess.PIPE, text=True)
        out = wrk_run.stdout.read()
        _, status, usage = os.wait4(wrk_run.pid, 0)
        lines = [l for l in out.splitlines() if l.startswith("WRK ")]
        done_at = None
        if worker_id and status == 0 and lines:
            done_at = wait_done(base, succeeded_before + json.loads(lines[-1][4:])["requests"],
                                start + o.completion_timeout)
        after = {name: cpu_times(pid) for name, pid in pids.items()}
    finally:
        os.unlink(script.name)
        if worker_id:
            urllib.request.urlopen(urllib.request.Request(f"{base}/v1/workers/{worker_id}",
                                                          method="DELETE"))
    if status != 0 or not lines:
        print(f"wrk_push: wrk failed:\n{out}", file=sys.stderr)
        return 1
    w = json.loads(lines[-1][4:])
    if w["non_2xx"] or w["socket_errors"] or not w["requests"]:
        print(f"wrk_push: {w['non_2xx']} pushes not answered 201, {w['socket_errors']} socket "
              f"errors, of {w['requests']}", file=sys.stderr)
        return 1
    jobs = w["requests"]
    if worker_id and done_at is None:
        print(f"wrk_push: the worker did not finish the {jobs} jobs within "
              f"{o.completion_timeout} s", file=sys.stderr)
        return 1
    seconds = done_at - start if worker_id else w["duration_us"] / 1e6
    cpu = {n: sum(after[n]) - sum(before[n]) for n in pids}
    cpu_sys = {n: after[n][1] - before[n][1] for n in pids}
    cpu["wrk"] = usage.ru_utime + usage.ru_stime
    cpu_sys["wrk"] = usage.ru_stime
    print(json.dumps({
        "scenario": "e2e" if worker_id else "push", "generator": "wrk", "jobs": jobs,
        "seconds": round(seconds, 3),
        "jobs_per_s": round(jobs / seconds, 1),
        "batch": 1, "connections": o.connections, "format": "json",
        **({"worker": "external", "worker_concurrency": o.worker_concurrency} if worker_id else {}),
        "ack_p50_ms": w["p50_us"] / 1000, "ack_p99_ms": w["p99_us"] / 1000,
        "cpu_s": round(sum(cpu.values()), 3),
        "cpu_us_per_job": round(sum(cpu.values()) * 1e6 / jobs, 2),
        "cpu_s_by_process": {n: round(v, 3) for n, v in cpu.items()},
        "cpu_sys_s_by_process": {n: round(v, 3) for n, v in cpu_sys.items()},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
