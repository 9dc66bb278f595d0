#!/usr/bin/env python3
"""What a job merged by on_duplicate append costs as its list grows (issue 19, "Merging
duplicates"): Redis memory of the record and of its bucket, and the time of a merging push, at 1
and at 1,000 elements. Starts its own redis-server (no persistence; hash-max-listpack-value as
given: 64 is Redis's default, 256 what the embedded Redis uses) and jqmaster on free loopback
ports; no worker, so the job waits.

  flock /tmp/jq-build.lock bench/append_cost.py [--jqmaster build-release/cmd/jqmaster]
                                                [--listpack-value 64] [--argument-bytes 32]

It first pushes 61 small jobs (other records sharing the bucket the appended job lands in, as they
would in a busy store), then 1,000 single pushes of one unique_key with on_duplicate append, one
request at a time, and prints one JSON line: the record's bytes and the bucket's MEMORY USAGE and
encoding before the first append and after the last, and the median round trip of the first 100
and of the last 100 appends (ms), and Redis's time per script call (FCALL) over those two
windows (µs; the master's own periodic scripts are in it too, a few per second)."""
import argparse, json, os, socket, statistics, subprocess, sys, tempfile, time

from benchlib import call, free_port, ready, wait_for


def redis_cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), "--raw", *args], check=True,
                          capture_output=True, text=True).stdout.strip()


def bucket_of(job_id):
    """The record bucket key and slot of a job id <shard>-<field> (docs/REDIS.md)."""
    shard, field = job_id.split("-")
    return f"jq:{{{shard}}}:jobs:{field[:8]}", field[8:]


def measure(rport, job_id):
    key, slot = bucket_of(job_id)
    return {"record_bytes": int(redis_cli(rport, "HSTRLEN", key, slot)),
            "bucket_bytes": int(redis_cli(rport, "MEMORY", "USAGE", key, "SAMPLES", "0")),
            "bucket_records": int(redis_cli(rport, "HLEN", key)),
            "bucket_encoding": redis_cli(rport, "OBJECT", "ENCODING", key).strip('"')}


def script_usec(rport):
    for line in redis_cli(rport, "INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_fcall:"):
            fields = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
            return int(fields["calls"]), float(fields["usec"])
    return 0, 0.0


def main():
    ap = argparse.ArgumentParser()
    default = "build-release/cmd/jqmaster"
    ap.add_argument("--jqmaster", default=default if os.access(default, os.X_OK)
                    else "build/cmd/jqmaster")
    ap.add_argument("--listpack-value", type=int, default=64)
    ap.add_argument("--argument-bytes", type=int, default=32)
    ap.add_argument("--appends", type=int, default=1000)
    a = ap.parse_args()
    if not os.access(a.jqmaster, os.X_OK):
        sys.exit(f"{a.jqmaster}: not an executable (build first: scripts/build.sh)")

    rport, mport = free_port(), free_port()
    tmp = tempfile.mkdtemp()
    config = os.path.join(tmp, "jqmaster.yaml")
    with open(config, "w") as f:
        f.write(f"listen: 127.0.0.1:{mport}\nredis:\n  url: redis://127.0.0.1:{rport}/0\n"
                "shards: 1\nlog:\n  level: warn\n")
    redis = subprocess.Popen(["redis-server", "--port", str(rport), "--save", "", "--appendonly",
                              "no", "--hash-max-listpack-value", str(a.listpack_value)],
                             stdout=subprocess.DEVNULL)
    master = subprocess.Popen([os.path.abspath(a.jqmaster), "--config", config],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
    try:
        if not wait_for(lambda: ready(mport)):
            raise RuntimeError("jqmaster did not come up")
        # Fields 1-61 fill the first bucket; the appended job is field 62, the first of the next
        # bucket, which the 61 jobs after it then share.
        call(mport, "POST", "/v1/jobs", [{"name": "other", "argument": {"n": i}} for i in range(61)])
        filler = "x" * max(0, a.argument_bytes - 20)
        job = {"name": "account.sync", "unique_key": "account-7", "on_duplicate": "append"}
        status, first = call(mport, "POST", "/v1/jobs", dict(job, argument={"n": 0, "p": filler}))
        assert status == 201, first
        job_id = first["id"]
        call(mport, "POST", "/v1/jobs", [{"name": "other", "argument": {"n": i}} for i in range(61)])
        before = measure(rport, job_id)
        times, redis_usec = [], {}
        window = {1: "first_100", a.appends - 100: "last_100"}
        for i in range(1, a.appends):
            if i in window:
                opened = script_usec(rport)
            started = time.perf_counter()
            status, answer = call(mport, "POST", "/v1/jobs", dict(job, argument={"n": i, "p": filler}))
            times.append((time.perf_counter() - started) * 1000)
            if status != 200 or answer.get("id") != job_id or not answer.get("merged"):
                raise RuntimeError(f"append {i}: {status} {answer}")
            for first, name in window.items():
                if i == first + 99:
                    calls, usec = script_usec(rport)
                    redis_usec[name] = round((usec - opened[1]) / max(1, calls - opened[0]), 1)
        after = measure(rport, job_id)
        _, page = call(mport, "GET", "/v1/jobs?state=queued&name=account.sync")
        listed = page["jobs"][0]["argument"]
        assert [e["n"] for e in listed] == list(range(a.appends)), "the list is not complete"
        print(json.dumps({
            "appends": a.appends, "argument_bytes": len(json.dumps({"n": 0, "p": filler})),
            "hash_max_listpack_value": a.listpack_value, "one_element": before,
            "all_elements": after,
            "push_ms_median": {"first_100": round(statistics.median(times[:100]), 3),
                               "last_100": round(statistics.median(times[-100:]), 3)},
            "redis_usec_per_script_call": redis_usec}))
    finally:
        master.terminate()
        master.wait()
        redis.terminate()
        redis.wait()


if __name__ == "__main__":
    sys.exit(main())
