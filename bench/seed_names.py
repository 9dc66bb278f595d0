"""Makes a master know N more job names, as a user with many kinds of jobs has: one job of each
of the names extra-1..extra-N is pushed (in batches of at most 1,000, the contract's limit) and
cancelled at once, so the names stay known (the shards' name sets) and no job is left for a
benchmark's worker to run. With ENDPOINTS=K, K more worker endpoints are registered, as a user
with many small services has, each serving three of those names (extra-1..3, extra-4..6, ...;
NAMES_EACH=M in the environment: M names each; SERVE_ALL=1: every name, "*", as the replicas
of one service do),
at WORKER_URL/endpoint-<k> with SPREAD=1 in the environment (the jobs are spread over the names,
so the endpoints get them); otherwise at http://127.0.0.1:9, where nothing listens: registered,
kept in view by the scheduler, and sent nothing as long as their names get no jobs.

    python3 bench/seed_names.py N http://127.0.0.1:8080 [K [WORKER_URL]]

bench/one_run.sh and bench/profile.sh run it before their workload when NAMES=N (and
ENDPOINTS=K) is set."""
import json
import os
import sys
import urllib.request

MAX_BATCH = 1000  # jobs in one POST /v1/jobs


def main():
    count, base = int(sys.argv[1]), sys.argv[2].rstrip("/")
    endpoints = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    worker = "http://127.0.0.1:9"
    if os.environ.get("SPREAD") == "1" and len(sys.argv) > 4:
        worker = sys.argv[4].rstrip("/")
    each = int(os.environ.get("NAMES_EACH", "3"))
    serve_all = os.environ.get("SERVE_ALL") == "1"
    url = base + "/v1/jobs"
    for first in range(1, count + 1, MAX_BATCH):
        names = range(first, min(count, first + MAX_BATCH - 1) + 1)
        body = json.dumps([{"name": f"extra-{i}", "argument": "x"} for i in names])
        push = urllib.request.Request(url, body.encode(), {"Content-Type": "application/json"},
                                      method="POST")
        for job_id in json.load(urllib.request.urlopen(push))["ids"]:
            urllib.request.urlopen(urllib.request.Request(f"{url}/{job_id}", method="DELETE"))
    for k in range(endpoints):
        names = ["*"] if serve_all else [f"extra-{(each * k + i) % count + 1}" for i in range(each)]
        body = json.dumps({"url": f"{worker}/endpoint-{k}", "names": names,
                           "concurrency": 8})
        urllib.request.urlopen(urllib.request.Request(
            base + "/v1/workers", body.encode(), {"Content-Type": "application/json"},
            method="POST"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
