"""Makes a master know N more job names, as a user with many kinds of jobs has: one job of each
of the names extra-1..extra-N is pushed (in batches of at most 1,000, the contract's limit) and
cancelled at once, so the names stay known (the shards' name sets) and no job is left for a
benchmark's worker to run.

    python3 bench/seed_names.py N http://127.0.0.1:8080

bench/one_run.sh and bench/profile.sh run it before their workload when NAMES=N is set."""
import json
import sys
import urllib.request

MAX_BATCH = 1000  # jobs in one POST /v1/jobs


def main():
    count, base = int(sys.argv[1]), sys.argv[2].rstrip("/")
    url = base + "/v1/jobs"
    for first in range(1, count + 1, MAX_BATCH):
        names = range(first, min(count, first + MAX_BATCH - 1) + 1)
        body = json.dumps([{"name": f"extra-{i}", "argument": "x"} for i in names])
        push = urllib.request.Request(url, body.encode(), {"Content-Type": "application/json"},
                                      method="POST")
        for job_id in json.load(urllib.request.urlopen(push))["ids"]:
            urllib.request.urlopen(urllib.request.Request(f"{url}/{job_id}", method="DELETE"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
