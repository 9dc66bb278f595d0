#!/usr/bin/env bash
# The JSON quick start with curl: push a job, read it, wait for its result, cancel one, push a
# batch, and see how a bad job is refused. Each answer is printed with its HTTP status.
#
#   examples/curl/quickstart.sh [MASTER_URL]     # default $JQ_URL, else http://127.0.0.1:8080
#
# With auth configured, set JQ_TOKEN to a token with the push role. The results need a worker
# serving `sum` and `echo`, e.g.
#   /usr/bin/python3 examples/python/worker.py --master http://127.0.0.1:8080 --names sum,echo
# (without one, the waits end with 202: the job is still queued).
set -euo pipefail
url=${1:-${JQ_URL:-http://127.0.0.1:8080}}
url=${url%/}

# Every request: the bearer token when there is one, the status after the body. No Accept: a
# request without one gets JSON (unless its body was MessagePack). `post` sends a JSON body.
opts=(-sS -w '  [%{http_code}]\n')
if [[ -n ${JQ_TOKEN:-} ]]; then opts+=(-H "Authorization: Bearer $JQ_TOKEN"); fi
post() { curl "${opts[@]}" -X POST -H 'Content-Type: application/json' "$@"; }

step() { printf '\n== %s\n' "$*"; }
id_of() { sed -nE 's/.*"id":"([^"]+)".*/\1/p' <<<"$1"; }  # {"id":"..."} -> ...

step "push a job: 201 {id}"
reply=$(post "$url/v1/jobs" \
             -d '{"name": "sum", "argument": [1, 2, 3], "priority": 5, "keep_result": true}')
echo "$reply"
id=$(id_of "$reply")

step "read it: its state is queued, running or succeeded"
curl "${opts[@]}" "$url/v1/jobs/$id"

step "wait up to 10 s for its result (202 {id, state, attempts} if it is not done by then)"
curl "${opts[@]}" "$url/v1/jobs/$id/result?wait=10"

step "a kept result is fetched once: asking again answers null"
curl "${opts[@]}" "$url/v1/jobs/$id/result"

step "cancel a job that is still queued (nobody serves report.monthly here): 204"
reply=$(post "$url/v1/jobs" -d '{"name": "report.monthly", "argument": {"month": "2024-05"}}')
echo "$reply"
curl "${opts[@]}" -X DELETE "$url/v1/jobs/$(id_of "$reply")"      # 409 if it is already running

step "a batch of up to 1000 jobs, all or nothing: 201 {ids} in the same order"
reply=$(post "$url/v1/jobs" -d '[
  {"name": "sum", "argument": [10, 20, 12.5], "keep_result": true},
  {"name": "echo", "argument": {"to": "a@example.com", "tags": ["x", null, true]}, "priority": -1, "keep_result": true}
]')
echo "$reply"
ids=$(sed -nE 's/.*"ids":\["([^]]*)"\].*/\1/p' <<<"$reply")    # a","b
for job in ${ids//\",\"/ }; do
  curl "${opts[@]}" "$url/v1/jobs/$job/result?wait=10"
done

step "a bad job in a batch: 400 naming its index and field, and none of the batch is stored"
post "$url/v1/jobs" -d '[{"name": "sum"}, {"name": "sum", "max_retries": 2}]'

step "a body that is not JSON: 400 bad_request"
post "$url/v1/jobs" -d '{"name": "sum",'
