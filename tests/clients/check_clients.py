#!/usr/bin/python3
"""The client examples keep working: runs them against a real jqmaster and checks what they see.

Starts a redis-server and build/cmd/jqmaster (auth on) on free loopback ports (harness.py), then
with each example worker registered in turn (examples/python/worker.py, then
examples/node/worker.mjs; the other one deleted), runs examples/python/pusher.py,
examples/node/pusher.mjs, examples/typescript/dist/pusher.js (compiled by run.sh) and
examples/curl/quickstart.sh: so Python and Node meet in both directions, and JSON pushes meet
MessagePack workers. For each run it checks the results the client printed (sum of [1, 2, 3] is 6,
echo returns its argument exactly, bytes included where the client speaks MessagePack, a failing
job's message comes from that worker, cancel, the 400s, and for the Python and Node pushers the
constraints API with an admin token) and that the worker's counters at the master moved by the
jobs the run pushed. Both workers run with JQ_WORKER_SECRET, so every job reaches them signed
and is run only because their verify() helper accepted the master's signature; the worker
object says `signed: true` and never shows the secret, and a request sent to the worker with a
tampered body, an old timestamp or no signature is refused (401). First, without a master, it
checks that examples/typescript/src/schema.d.ts is what openapi/master.yaml generates now, and
that the verify() helpers of Python and Node accept and refuse the same signatures.

Prints one line per check and a final "N passed, N failed" line; exits 1 when a check failed.
Everything started is stopped by PID at the end, also on failure or SIGTERM.
"""

import base64
import hashlib
import hmac
import http.client
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback

import msgpack

from harness import MASTER_BIN, NODE, PYTHON, ROOT, TOKENS, Cluster

EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES / "python"))
from jq_signature import verify as python_verify  # noqa: E402
TYPESCRIPT = EXAMPLES / "typescript"
WORKERS = {
    "python": [PYTHON, str(EXAMPLES / "python" / "worker.py")],
    "node": [NODE, str(EXAMPLES / "node" / "worker.mjs")],
}
PUSHERS = {
    "python": [PYTHON, str(EXAMPLES / "python" / "pusher.py")],
    "node": [NODE, str(EXAMPLES / "node" / "pusher.mjs")],
    # A JSON client generated from openapi/master.yaml (openapi-typescript + openapi-fetch).
    "typescript": [NODE, str(TYPESCRIPT / "dist" / "pusher.js")],
}
# How each worker words its failure for `sum` of a string: proves which worker ran the job.
SUM_FAILURE = {"python": "unsupported operand type", "node": "sum needs a list of numbers"}
# Each example worker's JQ_WORKER_SECRET: the master signs every job it sends them with it.
SECRETS = {worker: f"clients-{worker}-signing-secret" for worker in WORKERS}
# Node's verify() over cases given on stdin as JSON (bodies in base64): prints one boolean each.
NODE_VERIFY = """
import { verify } from "./signature.mjs";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input);
console.log(JSON.stringify(cases.map((c) => verify(c.secret, c.headers, Buffer.from(c.body, "base64")))));
"""
# The pushers that show the constraints API (with --constraints and an admin token).
SHOWS_CONSTRAINTS = ("python", "node")
# How each pusher prints the bytes 00 01 fe ff it sent and got back. The TypeScript pusher speaks
# JSON, which has no binary type (like the curl quick start): it echoes JSON values only.
BYTES_SHOWN = {"python": r"b'\x00\x01\xfe\xff'", "node": "Uint8Array(4) [ 0, 1, 254, 255 ]"}


class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, condition, text, problem=""):
        if condition:
            self.passed += 1
            print(f"ok   {text}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {text}" + (f": {problem}" if problem else ""), flush=True)
        return condition


def run(argv, env=None, timeout=40):
    """Runs an example to its end: (exit code, stdout lines, stderr)."""
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, timeout=timeout)
    return (done.returncode, done.stdout.decode(errors="replace").splitlines(),
            done.stderr.decode(errors="replace"))


def counters(cluster, worker_id):
    status, worker = cluster.call("GET", f"/v1/workers/{worker_id}")
    return (worker["succeeded"], worker["failed"]) if status == 200 else (None, None)


def check_pusher(t, cluster, pusher, worker, worker_id):
    tag = f"{pusher} pusher -> {worker} worker"
    before = counters(cluster, worker_id)
    argv = PUSHERS[pusher] + ["--master", cluster.url, "--token", TOKENS["push"]]
    if pusher in SHOWS_CONSTRAINTS:
        argv += ["--constraints", "--admin-token", TOKENS["admin"]]
    code, out, err = run(argv)
    if not t.check(code == 0, f"{tag}: exits 0", f"exit {code}\n" + "\n".join(out) + "\n" + err):
        return
    text = "\n".join(out)

    def line(pattern, what):
        found = next((m for m in map(re.compile(pattern).fullmatch, out) if m), None)
        t.check(found, f"{tag}: {what}", f"no line matching {pattern!r} in:\n{text}")
        return found

    line(r"sum \[1, 2, 3\] = 6", "sum [1, 2, 3] = 6")
    echoes = [m.groups() for m in map(re.compile(r"echo (.*) -> (.*)").fullmatch, out) if m]
    t.check(len(echoes) == 3 and all(sent == got for sent, got in echoes),
            f"{tag}: echo returns each of 3 arguments exactly", f"got {echoes!r}")
    if pusher in BYTES_SHOWN:
        t.check(any(sent == BYTES_SHOWN[pusher] for sent, _ in echoes),
                f"{tag}: echo returns binary as binary ({BYTES_SHOWN[pusher]})", f"got {echoes!r}")
    failed = line(r"sum 'not a list' -> failure \(other\): sum failed on attempt 1: (.*)",
                  "a failing job's result is a failure object")
    if failed:
        t.check(SUM_FAILURE[worker] in failed.group(1), f"{tag}: the failure comes from the {worker} worker",
                f"message {failed.group(1)!r}")
    cancelled = line(r"cancelled (\S+)", "cancel answers 204")
    if cancelled:
        line(rf"job {re.escape(cancelled.group(1))}: 404 not_found: .*", "a cancelled job is 404 not_found")
    line(r"refused: 400 invalid_job index=1 field=max_retries: job 1: unknown field .*",
         "a bad batch is refused: 400 invalid_job, index 1, field max_retries")
    line(r"refused: 400 invalid_job index=0 field=name: .*", "a bad name is refused: 400 invalid_job, field name")
    if pusher in SHOWS_CONSTRAINTS:
        check_constraint_lines(line)
    after = counters(cluster, worker_id)
    t.check(before[0] is not None and after == (before[0] + 4, before[1] + 1),
            f"{tag}: the {worker} worker verified and ran the 5 signed jobs (4 succeeded, 1 failed)",
            f"succeeded/failed went from {before} to {after}")


def check_constraint_lines(line):
    """What a pusher prints of the constraints API (Python and JavaScript spell booleans and
    null differently)."""
    line(r"constraint created: demo-\w+-\d+ concurrency=5 rate=100/60s", "a constraint is created")
    line(r"constraint created again: 409 conflict", "a taken constraint name is 409 conflict")
    line(r"constraint demo-\w+-\d+: waiting=0 running=0 keys=0",
         "a constraint is read with its live state")
    line(r"constraint patched: paused=(True|true) rate=(None|null) concurrency=5",
         "a patch changes only what it gives, null removes the rate")
    line(r"constraint replaced: match=echo key=(None|null) concurrency=1",
         "a put replaces the whole constraint")
    line(r"constraints listed: (True|true)", "the constraint is listed")
    line(r"constraint deleted: 404 not_found", "a deleted constraint is 404 not_found")
    line(r"schedule preview: 2026-03-29T03:00:00\+02:00",
         "a preview runs 02:30 Berlin right after the spring-forward gap")
    line(r"schedule created: demo-\w+-\d+ cron=30 2 \* \* \* next_runs=5", "a schedule is created")
    line(r"schedule paused: next_run_at=(None|null)", "a paused schedule has no next run")
    line(r"schedule ran now: schedule=demo-\w+-\d+", "run now makes a job carrying the schedule")
    line(r"schedule resumed: runs=1 next_run_at set=(True|true)",
         "a resumed schedule ticks again, and counts the run now")
    line(r"schedules listed: (True|true)", "the schedule is listed")
    line(r"schedule deleted: 404 not_found", "a deleted schedule is 404 not_found")
    line(r"jobs browsed: scheduled=(True|true) next_cursor=(None|null)",
         "the job browser lists a delayed job as scheduled, on one page")


def signed_headers(secret, body, timestamp=None):
    """The two headers of a signed dispatch, computed here with hmac, not with the helpers."""
    timestamp = str(int(time.time()) if timestamp is None else timestamp)
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return {"x-jq-timestamp": timestamp, "x-jq-signature": f"v1={mac}"}


def verify_cases():
    """(what, secret, headers, body, accepted?) for both verify() helpers."""
    secret = "helper-check-secret-0123"
    body = msgpack.packb({"id": "1-000000001", "name": "echo", "argument": b"\x00\xff"})
    good = signed_headers(secret, body)
    now = int(time.time())
    return [
        ("a fresh signature of the body", secret, good, body, True),
        ("a timestamp 290 s old", secret, signed_headers(secret, body, now - 290), body, True),
        ("a tampered body", secret, good, body[:-1] + b"\xfe", False),
        ("a body with one more byte", secret, good, body + b"\x00", False),
        ("a timestamp 301 s old", secret, signed_headers(secret, body, now - 301), body, False),
        # Node verifies a few seconds after `now` was read (its start-up on a loaded machine), so
        # a timestamp just past the 300 s window ahead would drift back into it: 330 s ahead is
        # refused however long that start takes.
        ("a timestamp 330 s ahead", secret, signed_headers(secret, body, now + 330), body, False),
        ("another secret", "helper-check-secret-0124", good, body, False),
        ("no signature", secret, {"x-jq-timestamp": good["x-jq-timestamp"]}, body, False),
        ("no timestamp", secret, {"x-jq-signature": good["x-jq-signature"]}, body, False),
        ("a signature in upper case", secret,
         {**good, "x-jq-signature": good["x-jq-signature"].upper()}, body, False),
        ("a timestamp that is not a number", secret,
         {**good, "x-jq-timestamp": good["x-jq-timestamp"] + ".0"}, body, False),
    ]


def check_helpers(t):
    """The Python and Node verify() helpers accept exactly the signatures they should."""
    cases = verify_cases()
    for what, secret, headers, body, accepted in cases:
        got = python_verify(secret, headers, body)
        t.check(got is accepted, f"python verify(): {what} is {'accepted' if accepted else 'refused'}",
                f"got {got!r}")
    payload = json.dumps([{"secret": secret, "headers": headers, "body": base64.b64encode(body).decode()}
                          for _, secret, headers, body, _ in cases])
    done = subprocess.run([NODE, "--input-type=module", "-e", NODE_VERIFY], cwd=EXAMPLES / "node",
                          input=payload.encode(), capture_output=True, timeout=30)
    try:
        results = json.loads(done.stdout)
    except ValueError:
        results = None
    if not t.check(isinstance(results, list) and len(results) == len(cases), "node verify() runs",
                   f"exit {done.returncode}: {done.stdout!r} {done.stderr.decode(errors='replace')}"):
        return
    for (what, _, _, _, accepted), got in zip(cases, results):
        t.check(got is accepted, f"node verify(): {what} is {'accepted' if accepted else 'refused'}",
                f"got {got!r}")


def check_signed_worker(t, cluster, worker, url, worker_id):
    """The master shows the worker as signed, never its secret; the worker runs only signed jobs."""
    status, shown = cluster.call("GET", f"/v1/workers/{worker_id}")
    t.check(status == 200 and shown.get("signed") is True and "secret" not in shown
            and SECRETS[worker] not in json.dumps(shown),
            f"{worker} worker is shown signed, without its secret", f"got {status} {shown!r}")
    host, port = url.removeprefix("http://").rstrip("/").rsplit(":", 1)
    secret = SECRETS[worker]
    body = msgpack.packb({"id": "9-000000001", "name": "echo", "argument": "direct", "attempt": 1})
    tampered = body.replace(b"direct", b"DIRECT")
    old = signed_headers(secret, body, int(time.time()) - 600)
    for what, headers, sent, expected in (
            ("a request signed now is run", signed_headers(secret, body), body, 200),
            ("a tampered body is refused", signed_headers(secret, body), tampered, 401),
            ("a timestamp 10 minutes old is refused", old, body, 401),
            ("a request without a signature is refused", {}, body, 401)):
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            conn.request("POST", "/", sent, {"Content-Type": "application/msgpack", **headers})
            got = conn.getresponse().status
        finally:
            conn.close()
        t.check(got == expected, f"{worker} worker: {what} ({expected})", f"got {got}")


def check_generated(t):
    """examples/typescript/src/schema.d.ts is what `npm run generate` makes of openapi/master.yaml
    now: the generator's --check regenerates it with the same settings and compares, writing
    nothing."""
    what = "examples/typescript/src/schema.d.ts is up to date with openapi/master.yaml"
    try:
        done = subprocess.run(["npm", "run", "--silent", "generate", "--", "--check"],
                              cwd=TYPESCRIPT, capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return t.check(False, what, f"{type(e).__name__}: {e}")
    out = (done.stdout + done.stderr).decode(errors="replace").strip()
    if "not up-to-date" in out:
        problem = ("it is not what the generator makes of openapi/master.yaml now: run "
                   "`npm run generate` in examples/typescript and commit src/schema.d.ts")
    else:
        problem = f"`npm run generate -- --check` in examples/typescript failed (exit {done.returncode})"
    return t.check(done.returncode == 0, what, f"{problem}\n{out}")


def check_curl(t, cluster, worker, worker_id):
    tag = f"curl quickstart -> {worker} worker"
    before = counters(cluster, worker_id)
    env = dict(os.environ, JQ_TOKEN=TOKENS["push"])
    code, out, err = run(["bash", str(EXAMPLES / "curl" / "quickstart.sh"), cluster.url], env=env)
    text = "\n".join(out)
    if not t.check(code == 0, f"{tag}: exits 0", f"exit {code}\n{text}\n{err}"):
        return
    # Every answer is printed as "BODY  [STATUS]".
    answers = []
    for raw in out:
        m = re.fullmatch(r"(.*?)\s*\[(\d{3})\]", raw)
        if m:
            answers.append((int(m.group(2)), json.loads(m.group(1)) if m.group(1) else None))
    result = lambda value: {"type": "success", "result": value}  # noqa: E731
    expected = [
        ("push a job: 201 {id}", 201, lambda b: isinstance(b.get("id"), str)),
        ("read it: 200 with its state", 200, lambda b: b["name"] == "sum" and b["priority"] == 5),
        ("its result, waited for: sum = 6", 200, lambda b: result(6).items() <= b.items()),
        ("a result is fetched once: then null", 200, lambda b: b is None),
        ("push the job to cancel: 201", 201, lambda b: "id" in b),
        ("cancel it: 204", 204, lambda b: b is None),
        ("a batch: 201 with 2 ids", 201, lambda b: len(b["ids"]) == 2),
        ("the batch's sum = 42.5", 200, lambda b: result(42.5).items() <= b.items()),
        ("the batch's echo returns the argument", 200, lambda b: result(
            {"to": "a@example.com", "tags": ["x", None, True]}).items() <= b.items()),
        ("a bad batch: 400 invalid_job, index 1, field max_retries", 400,
         lambda b: (b["error"], b["index"], b["field"]) == ("invalid_job", 1, "max_retries")),
        ("not JSON: 400 bad_request", 400, lambda b: b["error"] == "bad_request"),
    ]
    t.check(len(answers) == len(expected), f"{tag}: {len(expected)} answers",
            f"got {len(answers)}:\n{text}")
    for (what, status, ok), (got_status, body) in zip(expected, answers):
        try:
            good = got_status == status and ok(body)
        except (KeyError, TypeError, AttributeError):
            good = False
        t.check(good, f"{tag}: {what}", f"got {got_status} {body!r}")
    after = counters(cluster, worker_id)
    t.check(before[0] is not None and after == (before[0] + 3, before[1]),
            f"{tag}: the {worker} worker ran the 3 jobs", f"succeeded/failed went from {before} to {after}")


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up as on Ctrl-C
    t = Tally()
    check_generated(t)
    check_helpers(t)
    if not MASTER_BIN.exists():
        t.check(False, f"{MASTER_BIN} exists", "build first (scripts/build.sh)")
    else:
        with tempfile.TemporaryDirectory(prefix="jq-clients-") as tmp, Cluster(tmp) as cluster:
            master = None
            try:
                master = cluster.start_master(cluster.start_redis())
                for worker, argv in WORKERS.items():
                    proc, url, worker_id = cluster.start_worker(f"{worker}-worker", argv + [
                        "--listen", "127.0.0.1:0", "--master", cluster.url, "--names", "sum,echo",
                        "--token", TOKENS["worker"]], env={"JQ_WORKER_SECRET": SECRETS[worker]})
                    t.check(True, f"{worker} worker registers itself ({url} is {worker_id})")
                    check_signed_worker(t, cluster, worker, url, worker_id)
                    for pusher in PUSHERS:
                        check_pusher(t, cluster, pusher, worker, worker_id)
                    check_curl(t, cluster, worker, worker_id)
                    cluster.stop(proc)
                    status, _ = cluster.call("DELETE", f"/v1/workers/{worker_id}")
                    t.check(status == 204, f"{worker} worker stopped and deleted", f"DELETE answered {status}")
            except Exception as e:  # noqa: BLE001 - report, then clean up
                t.check(False, f"setup: {type(e).__name__}: {e}")
                traceback.print_exc()
            if t.failed and master:
                for log in sorted(pathlib.Path(tmp).glob("*.log")):
                    tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
                    print(f"--- last lines of {log.name} ---\n{tail}")
    print(f"{t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
