#!/usr/bin/python3
"""Response schema check: a real jqmaster answers as openapi/master.yaml says, and sends workers
what openapi/worker.yaml says.

Starts a redis-server on a free port, build/cmd/jqmaster against it (a temporary config and data
directory), build/cmd/jqworker (`--listen 127.0.0.1:0`) and a small worker endpoint inside this
script, both registered through POST /v1/workers. Then it calls every implemented operation, for
success and error cases, in MessagePack and in JSON, and for each answer checks:

- the status is the one expected, and master.yaml documents it for that operation;
- the body is in the encoding the request asked for (a media type the spec lists), decodes, and
  validates (JSON Schema 2020-12, `$ref`s resolved in both spec files) against the schema the
  spec gives for that operation, status and media type; a 204 has no body;
- a request body the server accepted validates against the spec's request schema, and one it
  refused with 400 does not (so the spec's validation rules and the server's agree);
- the response's links (`$response.body#/...`) resolve in the answer to a value the linked
  operation's parameter accepts.

Patterns are matched as ECMA-262 (JSON Schema's dialect) would: `$` is the end of the string.

The worker endpoint in this script captures the master's dispatches; their bodies and headers
are validated against worker.yaml, and its answers (MessagePack, JSON, failure, 429, too slow)
come back through GET /v1/jobs/{id}/result, validated again.

Prints one line per check and a final "N passed, N failed" line; exits 1 when a check failed.
Processes are stopped by PID at the end, also on failure. Environment: JQ_BUILD_DIR (default
build/), REDIS_SERVER (default redis-server on PATH), JQ_OPENAPI_DIR (default openapi/).

Known differences between the contract and the server are marked where they are checked
(`known=`): they print "known" instead of failing, so the list stays visible until the server is
fixed (then the check simply passes).
"""

import base64
import datetime
import hashlib
import hmac
import http.client
import http.server
import json
import os
import pathlib
import re
import socket
import sys
import tempfile
import threading
import time
import traceback
import warnings

import jsonschema
import msgpack
import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from procs import Proc, free_port, listening_address, start_redis, wait_until  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OPENAPI = pathlib.Path(os.environ.get("JQ_OPENAPI_DIR", ROOT / "openapi"))
BUILD = pathlib.Path(os.environ.get("JQ_BUILD_DIR", ROOT / "build"))
MASTER_BIN = BUILD / "cmd" / "jqmaster"
WORKER_BIN = BUILD / "cmd" / "jqworker"

ENCODINGS = ("msgpack", "json")
MEDIA = {"msgpack": "application/msgpack", "json": "application/json"}
TOKENS = {
    "admin": "contract-admin-0123456789abcdef",
    "push": "contract-push-0123456789abcdef",
    "worker": "contract-worker-0123456789abcdef",
}
MAX_BODY = 65536
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
# A PEM file of CAs on every Debian machine (ca-certificates): a ca_file the master can read.
SYSTEM_CA_FILE = "/etc/ssl/certs/ca-certificates.crt"
CAPTURE_SECRET = "contract-capture-secret-0123"  # the script's worker is signed
UNKNOWN_JOB = "0-zzzzzzzzz"  # the shape of a job id, never issued
NOTHING = object()

# jsonschema's RefResolver is what Debian 12's python3-jsonschema (4.10) has; newer versions
# still accept it with a DeprecationWarning.
warnings.filterwarnings("ignore", category=DeprecationWarning)


# --- results ---------------------------------------------------------------------------------

class Tally:
    def __init__(self):
        self.passed = self.failed = self.skipped = self.known = 0

    def ok(self, text):
        self.passed += 1
        print(f"ok   {text}", flush=True)

    def fail(self, text):
        self.failed += 1
        print(f"FAIL {text}", flush=True)

    def skip(self, text):
        self.skipped += 1
        print(f"skip {text}", flush=True)

    def known_difference(self, text, why):
        self.known += 1
        print(f"known {text} -- a known difference from the contract: {why}", flush=True)

    def check(self, condition, text, problem=""):
        if condition:
            self.ok(text)
        else:
            self.fail(f"{text}: {problem}" if problem else text)

    def summary(self):
        line = f"{self.passed} passed, {self.failed} failed"
        if self.known:
            line += f", {self.known} known differences"
        if self.skipped:
            line += f", {self.skipped} skipped"
        return line


# --- the spec ---------------------------------------------------------------------------------

FORMATS = jsonschema.FormatChecker(formats=())
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


@FORMATS.checks("date-time")
def _is_date_time(value):
    return not isinstance(value, str) or bool(RFC3339.match(value))


def ecma_to_python(pattern):
    """A JSON Schema pattern (ECMA-262) for Python's re: `$` outside a character class becomes
    `\\Z`, since Python's `$` also matches before a final newline ("http://h/x\\n" would pass
    '^...[^\\n]*$'). The spec's patterns use nothing else whose meaning differs."""
    out, in_class, i = [], False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "$":
            c = r"\Z"
        out.append(c)
        i += 1
    return "".join(out)


def _pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not re.search(ecma_to_python(pattern), instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


# Draft 2020-12 with ECMA-262 anchors in `pattern` (also inside propertyNames).
Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern})


class Spec:
    """One OpenAPI file; `$ref`s into the other file resolve through the shared store."""

    store = {}

    def __init__(self, name):
        path = OPENAPI / name
        self.name = name
        self.uri = path.resolve().as_uri()
        self.doc = yaml.safe_load(path.read_text())
        Spec.store[self.uri] = self.doc

    def errors(self, schema, value):
        """The first problem of `value` against `schema` (a part of this file), or None."""
        resolver = jsonschema.RefResolver(self.uri, self.doc, store=Spec.store)
        validator = Validator(schema, resolver=resolver, format_checker=FORMATS)
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "body"
        return f"{where}: {shorten(error.message)}"

    def pointer(self, ref):
        node = self.doc
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def operation(self, pattern, method):
        return self.doc["paths"][pattern][method.lower()]

    def operation_by_id(self, operation_id):
        """(path item, operation) of the operation with this operationId, or None."""
        for item in self.doc["paths"].values():
            for op in item.values():
                if isinstance(op, dict) and op.get("operationId") == operation_id:
                    return item, op
        return None

    def parameter_schema(self, target, name):
        """The schema of parameter `name` of `target` (from operation_by_id), or None."""
        item, op = target
        for param in op.get("parameters", []) + item.get("parameters", []):
            param = self.resolve(param)
            if param.get("name") == name:
                return param.get("schema", {})
        return None

    def response(self, pattern, method, status):
        responses = self.operation(pattern, method)["responses"]
        found = responses.get(str(status), responses.get("default"))
        return None if found is None else self.resolve(found)

    def resolve(self, node):
        while isinstance(node, dict) and str(node.get("$ref", "")).startswith("#/"):
            node = self.pointer(node["$ref"])
        return node

    def request_schema(self, pattern, method, media_type):
        body = self.operation(pattern, method).get("requestBody")
        if body is None:
            return None
        content = self.resolve(body).get("content", {})
        return content.get(media_type, {}).get("schema")


def shorten(text, limit=160):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


# --- encodings --------------------------------------------------------------------------------

def encode(value, encoding):
    if encoding == "json":
        return json.dumps(value).encode()
    return msgpack.packb(value, use_bin_type=True)


def essence(content_type):
    return (content_type or "").split(";")[0].strip().lower()


def decode(body, media_type):
    if media_type == "application/json":
        return json.loads(body)
    if media_type in ("application/msgpack", "application/x-msgpack"):
        return msgpack.unpackb(body, raw=False, strict_map_key=False)
    if media_type == "text/plain":
        return body.decode("utf-8")
    raise ValueError(f"no decoder for {media_type!r}")


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"


# --- processes --------------------------------------------------------------------------------

def start_redis_for(tmp, procs):
    proc, port = start_redis(tmp)
    procs.append(proc)
    return proc, port


def start_master(tmp, redis_port, procs):
    port = free_port()
    config = tmp / "jqmaster.yaml"
    config.write_text(f"""\
listen: 127.0.0.1:{port}
data_dir: {tmp / 'data'}
shards: 4
redis:
  url: "redis://127.0.0.1:{redis_port}/0"
retry:
  base: 0.1
  max: 1
  jitter: 0
limits:
  max_body_bytes: {MAX_BODY}
shutdown_grace: 1
auth:
  tokens:
    - {{token: "{TOKENS['admin']}", role: admin}}
    - {{token: "{TOKENS['push']}", role: push}}
    - {{token: "{TOKENS['worker']}", role: worker}}
""")
    proc = Proc("jqmaster", [str(MASTER_BIN), "--config", str(config)], tmp / "jqmaster.log")
    procs.append(proc)

    def ready():
        if not proc.running():
            raise RuntimeError(f"jqmaster exited:\n{proc.log_tail()}")
        try:
            return raw_call(port, "GET", "/readyz")[0] == 200
        except OSError:
            return False

    wait_until(ready, 20, "jqmaster /readyz")
    return proc, port


def start_jqworker(tmp, procs):
    proc = Proc("jqworker", [str(WORKER_BIN), "--listen", "127.0.0.1:0"], tmp / "jqworker.log",
                pipe_stdout=True)
    procs.append(proc)
    return proc, f"http://{listening_address(proc)}/"


# --- HTTP -------------------------------------------------------------------------------------

def raw_call(port, method, target, body=None, headers=None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, target, body=body, headers=headers or {})
        res = conn.getresponse()
        return res.status, {k.lower(): v for k, v in res.getheaders()}, res.read()
    finally:
        conn.close()


class Master:
    """Calls the master and checks each answer against master.yaml."""

    def __init__(self, port, spec, tally):
        self.port = port
        self.spec = spec
        self.tally = tally

    def get_json(self, target):
        """A plain GET (not a check): (status, decoded JSON or None)."""
        status, _, body = raw_call(self.port, "GET", target, headers={
            "Accept": "application/json", "Authorization": f"Bearer {TOKENS['admin']}"})
        return status, (json.loads(body) if body else None)

    def call(self, what, method, target, pattern, expect, *, encoding="msgpack", value=NOTHING,
             raw=None, content_type=None, accept=NOTHING, token="admin", headers=None,
             check=None, agree=True, want_media=None, skip_if=None, known=None, links=True):
        """One request, one printed line. `pattern` names the operation in master.yaml (None:
        a path the master does not serve; the body is then checked against the Error schema).
        `check(value, headers)` returns a problem or None. `agree=False`: the request body's
        validity per the spec says nothing here (e.g. a 413 or 415). `skip_if`: {status: reason}
        for answers that mean "not built yet". `known`: why a failure here is a known difference
        from the contract. `links=False`: the response's links need not resolve in this answer
        (a batch push answers `ids`, not the `id` its links name). Returns the decoded body (None
        when empty)."""
        label = f"{method} {target} [{encoding}] {what}"
        send_headers = {}
        if accept is NOTHING:
            accept = MEDIA[encoding]
        if accept:
            send_headers["Accept"] = accept
        if token:
            send_headers["Authorization"] = f"Bearer {TOKENS.get(token, token)}"
        body = raw
        if value is not NOTHING:
            body = encode(value, encoding)
            content_type = content_type or MEDIA[encoding]
        if body is not None:
            send_headers["Content-Type"] = content_type or MEDIA[encoding]
        send_headers.update(headers or {})
        try:
            status, res_headers, res_body = raw_call(self.port, method, target, body, send_headers)
        except OSError as e:
            self.tally.fail(f"{label}: request failed: {e}")
            return None
        if skip_if and status in skip_if:
            self.tally.skip(f"{label}: got {status}: {skip_if[status]}")
            return None

        problems = []
        expected = expect if isinstance(expect, tuple) else (expect,)
        if status not in expected:
            problems.append(f"status {status}, expected {' or '.join(map(str, expected))} "
                            f"(body {shorten(res_body, 120)!r})")
        decoded = None
        media = essence(res_headers.get("content-type"))
        if res_body:
            try:
                decoded = decode(res_body, media)
            except Exception as e:  # noqa: BLE001 - any decode failure is the finding
                problems.append(f"body does not decode as {media or 'no Content-Type'}: {e}")
                media = None

        if pattern is None:
            schema = {"$ref": "#/components/schemas/Error"}
            if media and media != (want_media or MEDIA[encoding]):
                problems.append(f"answered {media}, expected {want_media or MEDIA[encoding]}")
            if media and (problem := self.spec.errors(schema, decoded)):
                problems.append(f"not an Error: {problem}")
        else:
            problems += self.check_response(pattern, method, status, media, res_body, decoded,
                                            want_media or MEDIA[encoding], res_headers)
            if links and not problems:
                problems += self.check_links(pattern, method, status, decoded)
            if agree and value is not NOTHING:
                problems += self.check_request(pattern, method, content_type, value, status)
        if check and not problems:
            try:
                problem = check(decoded, res_headers)
            except Exception as e:  # noqa: BLE001 - a check that cannot run is a failure
                problem = f"{type(e).__name__}: {e}"
            if problem:
                problems.append(problem)
        if problems and known:
            self.tally.known_difference(f"{label}: " + "; ".join(problems), known)
        elif problems:
            self.tally.fail(f"{label}: " + "; ".join(problems))
        else:
            self.tally.ok(f"{label}: {status}")
        return decoded

    def check_response(self, pattern, method, status, media, body, decoded, want_media, headers):
        response = self.spec.response(pattern, method, status)
        if response is None:
            return [f"status {status} is not documented for {method} {pattern} in master.yaml"]
        for name, header in response.get("headers", {}).items():
            header = self.spec.resolve(header)
            value = headers.get(name.lower())
            if value is None:
                if header.get("required"):
                    return [f"no {name} header, which master.yaml requires for {status}"]
                continue
            schema = header.get("schema", {})
            if schema.get("type") == "integer" and value.isdigit():
                value = int(value)
            if problem := self.spec.errors(schema, value):
                return [f"{name} header does not match master.yaml: {problem}"]
        content = response.get("content")
        if not content:
            return [f"master.yaml documents no body for {status}, got {len(body)} bytes"] if body else []
        if not body:
            return [f"empty body; master.yaml documents {', '.join(content)}"]
        if media is None:
            return []  # already reported as undecodable
        if media not in content:
            return [f"answered {media}, which master.yaml does not list for {status}"]
        if media != want_media:
            return [f"answered {media}, expected {want_media}"]
        problem = self.spec.errors(content[media]["schema"], decoded)
        return [f"body does not match master.yaml: {problem}"] if problem else []

    def check_links(self, pattern, method, status, decoded):
        """Each link of the response resolves in this answer (`$response.body#/pointer`) to a
        value the linked operation's parameter accepts."""
        response = self.spec.response(pattern, method, status)
        problems = []
        for name, link in (response or {}).get("links", {}).items():
            link = self.spec.resolve(link)
            target = self.spec.operation_by_id(link.get("operationId"))
            if target is None:
                problems.append(f"link {name}: no operation {link.get('operationId')!r}")
                continue
            for param, expression in link.get("parameters", {}).items():
                value = resolve_body_expression(expression, decoded)
                if value is NOTHING:
                    problems.append(f"link {name}: {expression} does not resolve in the answer")
                    continue
                schema = self.spec.parameter_schema(target, param)
                if schema is None:
                    problems.append(f"link {name}: {link['operationId']} has no parameter {param}")
                elif problem := self.spec.errors(schema, value):
                    problems.append(f"link {name}: {expression} = {value!r} does not fit "
                                    f"{link['operationId']}'s {param}: {problem}")
        return problems

    def check_request(self, pattern, method, content_type, value, status):
        schema = self.spec.request_schema(pattern, method, essence(content_type))
        if schema is None:
            return []
        problem = self.spec.errors(schema, value)
        if 200 <= status < 300 and problem:
            return [f"the server accepted a body master.yaml rejects ({problem})"]
        if status == 400 and not problem:
            return ["the server refused a body master.yaml's request schema accepts"]
        return []


def resolve_body_expression(expression, body):
    """`$response.body#/0/id` against a decoded body: the value, or NOTHING."""
    prefix = "$response.body#"
    if not expression.startswith(prefix):
        return NOTHING
    node = body
    for part in expression[len(prefix):].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return NOTHING
    return node


def error_is(code, field=None, index=None):
    """A check: the error body has this code (and field, and index)."""
    def check(value, _headers):
        want = {"error": code}
        if field is not None:
            want["field"] = field
        if index is not None:
            want["index"] = index
        wrong = {k: value.get(k) for k, v in want.items() if value.get(k) != v}
        return f"expected {want}, got {wrong}" if wrong else None
    return check


# --- a worker endpoint inside this script ---------------------------------------------------

class CaptureWorker:
    """Records every request the master sends and answers as the job's argument asks:
    mode success (MessagePack), json (a JSON answer), fail (should_retry false), busy_once (429,
    or `status`, the first time), status (always that status), garbage (200 with a map that is
    not a result object), slow (answers after 1.5 s)."""

    def __init__(self):
        self.lock = threading.Condition()
        self.requests = {}  # job id -> [(headers, body bytes)]
        worker = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, content_type, payload, extra = worker.answer(dict(self.headers), body)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in extra:
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the master gave up on this attempt (the slow mode)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/run?from=contract"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def success(result):
        return {"type": "success", "finished_at": now_iso(), "result": result}

    @staticmethod
    def failure():
        return {"type": "failure", "reason": "other", "finished_at": now_iso(),
                "should_retry": False, "error": {"code": 7}, "message": "failed on purpose"}

    def answer(self, headers, body):
        try:
            job = msgpack.unpackb(body, raw=False)
        except Exception:  # noqa: BLE001 - the master sent something that is not MessagePack
            job = {}
        job_id = str(headers.get("X-Jq-Job-Id", job.get("id") if isinstance(job, dict) else ""))
        with self.lock:
            seen = self.requests.setdefault(job_id, [])
            seen.append((headers, body))
            first = len(seen) == 1
            self.lock.notify_all()
        argument = job.get("argument") if isinstance(job, dict) else None
        mode = argument.get("mode") if isinstance(argument, dict) else None
        if mode == "json":
            return 200, "application/json", json.dumps(self.success({"answered": "json"})).encode(), []
        if mode == "fail":
            return 200, "application/msgpack", msgpack.packb(self.failure()), []
        if mode == "busy_once" and first:
            return argument.get("status", 429), "text/plain", b"busy", [("Retry-After", "0")]
        if mode == "status":
            return argument["status"], "text/plain", b"out of memory", []
        if mode == "garbage":
            return 200, "application/msgpack", msgpack.packb({"type": "done"}), []
        if mode == "slow":
            time.sleep(1.5)
        return 200, "application/msgpack", msgpack.packb(self.success(argument), use_bin_type=True), []

    def wait_requests(self, job_id, count, timeout=15):
        with self.lock:
            if not self.lock.wait_for(lambda: len(self.requests.get(job_id, [])) >= count, timeout):
                raise TimeoutError(f"the worker endpoint got {len(self.requests.get(job_id, []))} "
                                   f"requests for job {job_id}, expected {count}")
            return list(self.requests[job_id])

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


# --- the checks -------------------------------------------------------------------------------

def wait_state(m, job_id, states, timeout=15):
    def reached():
        status, view = m.get_json(f"/v1/jobs/{job_id}")
        return status == 200 and view["state"] in states
    wait_until(reached, timeout, f"job {job_id} to be {' or '.join(states)}")


def push_one(m, job, encoding="json", headers=None):
    status, _, body = raw_call(m.port, "POST", "/v1/jobs", encode(job, encoding), {
        "Content-Type": MEDIA[encoding], "Accept": "application/json",
        "Authorization": f"Bearer {TOKENS['admin']}", **(headers or {})})
    if status != 201:
        raise RuntimeError(f"push of {job} answered {status}: {body[:200]!r}")
    return json.loads(body)


def is_exposition(text, headers):
    """A check: the Prometheus text format, version 0.0.4, with this master's metrics."""
    if not headers.get("content-type", "").startswith("text/plain; version=0.0.4"):
        return f"Content-Type {headers.get('content-type')!r} is not the text format 0.0.4"
    for line in ("# TYPE jq_jobs_pushed_total counter", "# TYPE jq_queue_ready gauge",
                 "# TYPE jq_push_duration_seconds histogram"):
        if line not in text.splitlines():
            return f"no line {line!r}"
    return None


def check_operations(m):
    for enc in ENCODINGS:
        m.call("liveness", "GET", "/healthz", "/healthz", 200, encoding=enc, token=None)
        m.call("readiness", "GET", "/readyz", "/readyz", 200, encoding=enc, token=None)
    m.call("metrics", "GET", "/metrics", "/metrics", 200, accept=None, token=None,
           want_media="text/plain", check=is_exposition)
    for enc in ENCODINGS:
        m.call("unknown path", "GET", "/v1/nope", None, 404, encoding=enc,
               check=error_is("not_found"))
        m.call("method not allowed", "DELETE", "/v1/stats", None, 405, encoding=enc,
               check=lambda v, h: None if "allow" in h else "no Allow header")
    # Which encoding answers (master.yaml, "Encoding"): what Accept names, by q-value, else the
    # body's, else JSON.
    m.call("no Accept, no body: JSON", "GET", "/v1/stats", "/v1/stats", 200, accept="",
           want_media="application/json")
    m.call("Accept */*: JSON", "GET", "/v1/stats", "/v1/stats", 200, accept="*/*",
           want_media="application/json")
    m.call("Accept application/x-msgpack: MessagePack", "GET", "/v1/stats", "/v1/stats", 200,
           accept="application/x-msgpack", want_media="application/msgpack")
    m.call("Accept JSON q=0.5, MessagePack: MessagePack", "GET", "/v1/stats", "/v1/stats", 200,
           accept="application/json;q=0.5, application/msgpack",
           want_media="application/msgpack")
    m.call("Accept MessagePack q=0.2, JSON: JSON", "GET", "/v1/stats", "/v1/stats", 200,
           accept="application/msgpack;q=0.2, application/json", want_media="application/json")


def check_workers(m, ctx):
    jq = {"url": ctx["jqworker_url"], "names": ["echo", "sleepy", "doomed"], "concurrency": 4}
    created = m.call("register jqworker", "POST", "/v1/workers", "/v1/workers", 201,
                     encoding="msgpack", value=jq)
    ctx["jqworker_id"] = wid = created["id"] if created else None
    m.call("same url again keeps the id", "POST", "/v1/workers", "/v1/workers", 200,
           encoding="json", value=jq,
           check=lambda v, h: None if v["id"] == wid else f"id {v['id']} != {wid}")
    # The heartbeat repeats the secret: a registration without one would make the worker unsigned.
    capture = {"url": ctx["capture"].url, "names": ["py.capture"], "concurrency": 2,
               "headers": {"X-Test-Secret": "s3cret"}, "secret": CAPTURE_SECRET}
    m.call("register the script's worker", "POST", "/v1/workers", "/v1/workers", 201,
           encoding="json", value=capture)
    m.call("heartbeat of the script's worker", "POST", "/v1/workers", "/v1/workers", 200,
           encoding="msgpack", value=capture)
    spare = {}
    for enc in ENCODINGS:
        reg = {"url": f"http://127.0.0.1:9/spare-{enc}", "names": ["never.used"], "ttl": 600.5}
        out = m.call("register with a ttl", "POST", "/v1/workers", "/v1/workers", 201,
                     encoding=enc, value=reg)
        spare[enc] = out["id"] if out else "w0"
    # The url and headers rules of WorkerRegistration, each side of the line: the server and the
    # request schema must agree on every one (check_request).
    for enc in ENCODINGS:
        for what, url, headers in (
                ("upper-case scheme, headers near reserved names", f"HTTP://127.0.0.1:9/up-{enc}",
                 {"Hosts": "x", "X-Jq-Job": "y", "Authorization": "Bearer t", "X-Tab": "a\tb"}),
                ("IPv6 host", f"http://[::1]:9/v6-{enc}", {}),
                ("query without a path, port with leading zeros",
                 f"http://localhost:00009?from={enc}", {}),
                ("port 65535, underscore in the host", f"http://my_host.local:65535/{enc}", {})):
            m.call(what, "POST", "/v1/workers", "/v1/workers", 201, encoding=enc,
                   value={"url": url, "names": ["never.used"], "headers": headers})
        m.call("https url with a ca_file", "POST", "/v1/workers", "/v1/workers", 201,
               encoding=enc, value={"url": f"HTTPS://127.0.0.1:9/tls-{enc}",
                                    "names": ["never.used"], "ca_file": SYSTEM_CA_FILE})
        for what, secret in (("the shortest secret", "s" * 16), ("the longest secret", "L" * 256)):
            m.call(what, "POST", "/v1/workers", "/v1/workers", 201, encoding=enc,
                   value={"url": f"http://127.0.0.1:9/secret-{len(secret)}-{enc}",
                          "names": ["never.used"], "secret": secret},
                   check=lambda v, h, s=secret: None if s not in json.dumps(v) else "secret shown")
    bad = [
        ("not an http:// url", {"url": "ftp://example.org/", "names": ["a"]}, "invalid_job", "url"),
        ("url with user:password", {"url": "http://user:pw@127.0.0.1:9/", "names": ["a"]},
         "invalid_job", "url"),
        ("url without a host", {"url": "http:///run", "names": ["a"]}, "invalid_job", "url"),
        ("url with a bad host", {"url": "http://exa!mple/", "names": ["a"]}, "invalid_job", "url"),
        ("url with port 65536", {"url": "http://127.0.0.1:65536/", "names": ["a"]},
         "invalid_job", "url"),
        ("url with an empty port", {"url": "http://127.0.0.1:/", "names": ["a"]},
         "invalid_job", "url"),
        ("url with a fragment", {"url": "http://127.0.0.1:9/run#x", "names": ["a"]},
         "invalid_job", "url"),
        ("url with a space", {"url": "http://127.0.0.1:9/a b", "names": ["a"]},
         "invalid_job", "url"),
        ("url ending in a newline", {"url": "http://127.0.0.1:9/\n", "names": ["a"]},
         "invalid_job", "url"),
        ("header named host", {"url": "http://127.0.0.1:9/", "names": ["a"],
                               "headers": {"host": "evil.example"}}, "invalid_job", "headers"),
        ("header named Content-Length", {"url": "http://127.0.0.1:9/", "names": ["a"],
                                         "headers": {"Content-Length": "0"}},
         "invalid_job", "headers"),
        ("header named x-jq-attempt", {"url": "http://127.0.0.1:9/", "names": ["a"],
                                       "headers": {"x-jq-attempt": "9"}}, "invalid_job", "headers"),
        ("header name with a space", {"url": "http://127.0.0.1:9/", "names": ["a"],
                                      "headers": {"X Y": "1"}}, "invalid_job", "headers"),
        ("header value with CR LF", {"url": "http://127.0.0.1:9/", "names": ["a"],
                                     "headers": {"X-A": "1\r\nX-Evil: 1"}},
         "invalid_job", "headers"),
        ("header value ending in LF", {"url": "http://127.0.0.1:9/", "names": ["a"],
                                       "headers": {"X-A": "1\n"}}, "invalid_job", "headers"),
        ("header value with NUL", {"url": "http://127.0.0.1:9/", "names": ["a"],
                                   "headers": {"X-A": "a\u0000b"}}, "invalid_job", "headers"),
        ("header named X-Jq-Signature", {"url": "http://127.0.0.1:9/", "names": ["a"],
                                         "headers": {"X-Jq-Signature": "v1=0"}},
         "invalid_job", "headers"),
        ("secret of 15 bytes", {"url": "http://127.0.0.1:9/", "names": ["a"], "secret": "s" * 15},
         "invalid_job", "secret"),
        ("secret of 257 bytes", {"url": "http://127.0.0.1:9/", "names": ["a"], "secret": "L" * 257},
         "invalid_job", "secret"),
        ("secret not a string", {"url": "http://127.0.0.1:9/", "names": ["a"],
                                 "secret": 1234567890123456789}, "invalid_job", "secret"),
        ("unknown field", {"url": "http://127.0.0.1:9/", "names": ["a"], "concurency": 2},
         "invalid_job", "concurency"),
        ("'*' among other names", {"url": "http://127.0.0.1:9/", "names": ["*", "a"]},
         "invalid_job", "names"),
        ("no names", {"url": "http://127.0.0.1:9/"}, "invalid_job", "names"),
        ("concurrency 0", {"url": "http://127.0.0.1:9/", "names": ["a"], "concurrency": 0},
         "invalid_job", "concurrency"),
        ("empty ca_file", {"url": "https://127.0.0.1:9/", "names": ["a"], "ca_file": ""},
         "invalid_job", "ca_file"),
        ("not a map", ["http://127.0.0.1:9/"], "bad_request", None),
    ]
    for enc in ENCODINGS:
        for what, value, code, field in bad:
            m.call(what, "POST", "/v1/workers", "/v1/workers", 400, encoding=enc, value=value,
                   check=error_is(code, field))
        # Case-insensitively repeated names are refused; JSON Schema cannot say so (the
        # description of `headers` does), hence agree=False.
        m.call("header names repeated in another case", "POST", "/v1/workers", "/v1/workers",
               400, encoding=enc, agree=False,
               value={"url": "http://127.0.0.1:9/", "names": ["a"],
                      "headers": {"X-A": "1", "x-a": "2"}},
               check=error_is("invalid_job", "headers"))
        # What the master finds on its disk, and a ca_file beside an http:// url, are beyond
        # the schema (its description says so).
        for what, url, ca_file in (
                ("ca_file the master cannot read", "https://127.0.0.1:9/", "/nonexistent/ca.pem"),
                ("ca_file for an http url", "http://127.0.0.1:9/", SYSTEM_CA_FILE)):
            m.call(what, "POST", "/v1/workers", "/v1/workers", 400, encoding=enc, agree=False,
                   value={"url": url, "names": ["a"], "ca_file": ca_file},
                   check=error_is("invalid_job", "ca_file"))
        m.call("form-encoded body", "POST", "/v1/workers", "/v1/workers", 415, encoding=enc,
               raw=b"url=x", content_type="application/x-www-form-urlencoded",
               check=error_is("unsupported_media_type"))
        m.call("body over max_body_bytes", "POST", "/v1/workers", "/v1/workers", 413,
               encoding=enc, agree=False,
               value={"url": "http://127.0.0.1:9/", "names": ["a"], "headers": {"X-Big": "b" * MAX_BODY}},
               check=error_is("payload_too_large"))
    for enc in ENCODINGS:
        m.call("list", "GET", "/v1/workers", "/v1/workers", 200, encoding=enc,
               check=lambda v, h: None if any(w["id"] == wid for w in v) else f"{wid} not listed")
        m.call("one", "GET", f"/v1/workers/{wid}", "/v1/workers/{id}", 200, encoding=enc,
               check=lambda v, h: None if v["id"] == wid else f"got {v['id']}")
        m.call("unknown", "GET", "/v1/workers/w999999", "/v1/workers/{id}", 404, encoding=enc,
               check=error_is("not_found"))
        m.call("remove", "DELETE", f"/v1/workers/{spare[enc]}", "/v1/workers/{id}", 204,
               encoding=enc)
        m.call("remove again", "DELETE", f"/v1/workers/{spare[enc]}", "/v1/workers/{id}", 404,
               encoding=enc, check=error_is("not_found"))


def check_jobs(m, ctx):
    m.call("pause before any push", "POST", "/v1/queues/held/pause", "/v1/queues/{name}/pause",
           200, check=lambda v, h: None if v["paused"] is True else "not paused")
    one = {"name": "held", "argument": {"k": [1, 2.5, None, b"\x00\xff"]}, "priority": 3,
           "max_retry": 5, "keep_result": True, "timeout": 2.5}
    held = []
    out = m.call("one job", "POST", "/v1/jobs", "/v1/jobs", 201, encoding="msgpack", value=one)
    held.append(out["id"] if out else UNKNOWN_JOB)
    out = m.call("one job", "POST", "/v1/jobs", "/v1/jobs", 201, encoding="json",
                 value={"name": "held", "priority": -1})
    held.append(out["id"] if out else UNKNOWN_JOB)
    batch = [{"name": "held"}, {"name": "held", "max_retry": 0, "argument": "x"}]
    for enc in ENCODINGS:
        out = m.call("a batch", "POST", "/v1/jobs", "/v1/jobs", 201, encoding=enc, value=batch,
                     links=False,
                     check=lambda v, h: None if len(v["ids"]) == 2 else f"{len(v['ids'])} ids")
        held += out["ids"] if out else []
    m.call("application/x-msgpack body", "POST", "/v1/jobs", "/v1/jobs", 201, encoding="msgpack",
           value={"name": "held"}, content_type="application/x-msgpack")
    m.call("JSON body, no Accept: JSON", "POST", "/v1/jobs", "/v1/jobs", 201, encoding="json",
           value={"name": "held"}, accept="")
    m.call("MessagePack body, no Accept: MessagePack", "POST", "/v1/jobs", "/v1/jobs", 201,
           encoding="msgpack", value={"name": "held"}, accept="",
           want_media="application/msgpack")
    m.call("MessagePack body, Accept */*: MessagePack", "POST", "/v1/jobs", "/v1/jobs", 201,
           encoding="msgpack", value={"name": "held"}, accept="*/*",
           want_media="application/msgpack")
    m.call("MessagePack body, Accept JSON: JSON", "POST", "/v1/jobs", "/v1/jobs", 201,
           encoding="msgpack", value={"name": "held"}, accept="application/json",
           want_media="application/json")
    m.call("JSON body, Accept MessagePack", "POST", "/v1/jobs", "/v1/jobs", 201, encoding="json",
           value={"name": "held"}, accept="application/msgpack", want_media="application/msgpack")
    if ctx["auth"]:
        m.call("with a push token", "POST", "/v1/jobs", "/v1/jobs", 201, value={"name": "held"},
               token="push")
    check_job_options(m)

    bad = [
        ("misspelt field in a batch", [{"name": "a"}, {"name": "a", "max_retries": 2}],
         "invalid_job", "max_retries", 1),
        ("priority 3.5", {"name": "a", "priority": 3.5}, "invalid_job", "priority", None),
        ("priority above int32", {"name": "a", "priority": 2 ** 31}, "invalid_job", "priority", None),
        ("name starting with a dot", {"name": ".a"}, "invalid_job", "name", None),
        ("name of 129 bytes", {"name": "n" * 129}, "invalid_job", "name", None),
        ("max_retry 1001", {"name": "a", "max_retry": 1001}, "invalid_job", "max_retry", None),
        ("timeout 0", {"name": "a", "timeout": 0}, "invalid_job", "timeout", None),
        ("keep_result 1", {"name": "a", "keep_result": 1}, "invalid_job", "keep_result", None),
        ("no name", {"priority": 1}, "invalid_job", "name", None),
        ("delay -1", {"name": "a", "delay": -1}, "invalid_job", "delay", None),
        ("delay above a year", {"name": "a", "delay": 31536001}, "invalid_job", "delay", None),
        ("run_at without an offset", {"name": "a", "run_at": "2026-12-01T09:00:00"},
         "invalid_job", "run_at", None),
        ("run_at not a time, in a batch", [{"name": "a"}, {"name": "a", "run_at": "tomorrow"}],
         "invalid_job", "run_at", 1),
        ("delay with run_at", {"name": "a", "delay": 5, "run_at": "2026-12-01T09:00:00Z"},
         "invalid_job", "run_at", None),
        ("unique_key empty", {"name": "a", "unique_key": ""}, "invalid_job", "unique_key", None),
        ("unique_key of 257 bytes", {"name": "a", "unique_key": "k" * 257}, "invalid_job",
         "unique_key", None),
        ("unique_until soon", {"name": "a", "unique_key": "k", "unique_until": "soon"},
         "invalid_job", "unique_until", None),
        ("unique_until without unique_key", {"name": "a", "unique_until": "started"},
         "invalid_job", "unique_until", None),
        ("unique_for 0", {"name": "a", "unique_key": "k", "unique_for": 0}, "invalid_job",
         "unique_for", None),
        ("unique_for without unique_key", {"name": "a", "unique_for": 60}, "invalid_job",
         "unique_for", None),
        ("ordering_key of 257 bytes", {"name": "a", "ordering_key": "o" * 257}, "invalid_job",
         "ordering_key", None),
        ("ordering_key not a string", {"name": "a", "ordering_key": 7}, "invalid_job",
         "ordering_key", None),
        ("on_duplicate (not a field yet)", {"name": "a", "unique_key": "k", "on_duplicate": "keep"},
         "invalid_job", "on_duplicate", None),
        ("empty batch", [], "bad_request", None, None),
        ("1001 jobs", [{"name": "a"}] * 1001, "bad_request", None, None),
        ("not a map or array", 42, "bad_request", None, None),
    ]
    for enc in ENCODINGS:
        for what, value, code, field, index in bad:
            m.call(what, "POST", "/v1/jobs", "/v1/jobs", 400, encoding=enc, value=value,
                   check=error_is(code, field, index))
        m.call("not valid " + enc, "POST", "/v1/jobs", "/v1/jobs", 400, encoding=enc,
               raw=b"\xc1" if enc == "msgpack" else b"{", content_type=MEDIA[enc],
               check=error_is("bad_request"))
        m.call("empty body", "POST", "/v1/jobs", "/v1/jobs", 400, encoding=enc, raw=b"",
               content_type=MEDIA[enc], check=error_is("bad_request"))
        m.call("XML body", "POST", "/v1/jobs", "/v1/jobs", 415, encoding=enc, raw=b"<job/>",
               content_type="application/xml", check=error_is("unsupported_media_type"))
        m.call("body over max_body_bytes", "POST", "/v1/jobs", "/v1/jobs", 413, encoding=enc,
               value={"name": "big", "argument": "x" * MAX_BODY}, agree=False,
               check=error_is("payload_too_large"))

    # JSON integers beyond 64 bits are refused, never turned into floats; the limits themselves
    # are kept. JSON only (MessagePack has no such integers). agree=False: JSON Schema cannot
    # tell 2**64 from the float 1.8446744073709552e19 (both are "integers" to it), so the
    # request schema says this in words only.
    huge = 123456789012345678901234567890
    m.call("argument beyond 64 bits", "POST", "/v1/jobs", "/v1/jobs", 400, encoding="json",
           value={"name": "held", "argument": huge}, agree=False,
           check=error_is("bad_request", "argument"))
    m.call("argument 2**64 deep in a batch", "POST", "/v1/jobs", "/v1/jobs", 400,
           encoding="json",
           value=[{"name": "held"}, {"name": "held", "argument": {"n": [2 ** 64]}}],
           agree=False, check=error_is("bad_request", "argument", 1))
    m.call("argument -2**63-1", "POST", "/v1/jobs", "/v1/jobs", 400, encoding="json",
           value={"name": "held", "argument": -2 ** 63 - 1}, agree=False,
           check=error_is("bad_request", "argument"))
    edges = [2 ** 64 - 1, -2 ** 63]
    edge = m.call("argument 2**64-1 and -2**63", "POST", "/v1/jobs", "/v1/jobs", 201,
                  encoding="json", value={"name": "echo", "argument": edges, "keep_result": True})
    if edge:  # jqworker echoes the argument: the edges come back exact, not as floats
        m.call("2**64-1 and -2**63 echoed exactly", "GET", f"/v1/jobs/{edge['id']}/result?wait=10",
               "/v1/jobs/{id}/result", 200, encoding="json",
               check=lambda v, h: None if v and v.get("result") == edges else f"got {v!r}")

    job = held[0]
    for enc in ENCODINGS:
        m.call("queued job", "GET", f"/v1/jobs/{job}", "/v1/jobs/{id}", 200, encoding=enc,
               check=lambda v, h: None if (v["state"], v["priority"], v["timeout"]) ==
               ("queued", 3, 2.5) else f"got {v}")
        m.call("unknown id", "GET", f"/v1/jobs/{UNKNOWN_JOB}", "/v1/jobs/{id}", 404,
               encoding=enc, check=error_is("not_found"))
        m.call("malformed id", "GET", "/v1/jobs/not-an-id", "/v1/jobs/{id}", 404, encoding=enc,
               check=error_is("not_found"))
        m.call("not finished", "GET", f"/v1/jobs/{job}/result", "/v1/jobs/{id}/result", 202,
               encoding=enc, check=lambda v, h: None if v["state"] == "queued" else f"got {v}")
        m.call("not finished after wait", "GET", f"/v1/jobs/{job}/result?wait=0.2",
               "/v1/jobs/{id}/result", 202, encoding=enc)
        m.call("wait not a number", "GET", f"/v1/jobs/{job}/result?wait=soon",
               "/v1/jobs/{id}/result", 400, encoding=enc, check=error_is("bad_request", "wait"))
        m.call("wait above 60", "GET", f"/v1/jobs/{job}/result?wait=61", "/v1/jobs/{id}/result",
               400, encoding=enc, check=error_is("bad_request", "wait"))
        for wait in ("nan", "NaN", "-nan", "nan(1)", "inf", "-inf", "1e309", "-1", "abc"):
            m.call(f"wait {wait!r}", "GET", f"/v1/jobs/{job}/result?wait={wait}",
                   "/v1/jobs/{id}/result", 400, encoding=enc,
                   check=error_is("bad_request", "wait"))
        m.call("unknown id: nil", "GET", f"/v1/jobs/{UNKNOWN_JOB}/result",
               "/v1/jobs/{id}/result", 200, encoding=enc,
               check=lambda v, h: None if v is None else f"got {v!r}")
    for enc, victim in zip(ENCODINGS, held[2:4]):
        m.call("cancel a queued job", "DELETE", f"/v1/jobs/{victim}", "/v1/jobs/{id}", 204,
               encoding=enc)
        m.call("cancel it again", "DELETE", f"/v1/jobs/{victim}", "/v1/jobs/{id}", 404,
               encoding=enc, check=error_is("not_found"))

    # Results through jqworker: it echoes the argument.
    argument = {"hello": "world", "bin": b"\x01\x02"}
    echo = push_one(m, {"name": "echo", "argument": argument, "keep_result": True}, "msgpack")["id"]
    m.call("success kept", "GET", f"/v1/jobs/{echo}/result?wait=10", "/v1/jobs/{id}/result", 200,
           encoding="msgpack",
           check=lambda v, h: None if v and v["type"] == "success" and v["result"] == argument
           else f"got {v!r}")
    m.call("fetched already: nil", "GET", f"/v1/jobs/{echo}/result", "/v1/jobs/{id}/result", 200,
           encoding="msgpack", check=lambda v, h: None if v is None else f"got {v!r}")
    echo = push_one(m, {"name": "echo", "argument": argument, "keep_result": True}, "msgpack")["id"]
    want = {"hello": "world", "bin": {"$bin": base64.b64encode(b"\x01\x02").decode()}}
    m.call("success kept, binary as $bin", "GET", f"/v1/jobs/{echo}/result?wait=10",
           "/v1/jobs/{id}/result", 200, encoding="json",
           check=lambda v, h: None if v and v["result"] == want else f"got {v!r}")
    gone = push_one(m, {"name": "echo", "argument": 1})["id"]
    wait_until(lambda: m.get_json(f"/v1/jobs/{gone}")[0] == 404, 15, f"job {gone} to finish")
    for enc in ENCODINGS:
        m.call("succeeded without keep_result", "GET", f"/v1/jobs/{gone}", "/v1/jobs/{id}", 404,
               encoding=enc, check=error_is("not_found"))

    # A running job cannot be cancelled.
    sleepy = push_one(m, {"name": "sleepy", "argument": {"sleep_ms": 4000}})["id"]
    wait_state(m, sleepy, ["running"])
    for enc in ENCODINGS:
        m.call("running job", "GET", f"/v1/jobs/{sleepy}", "/v1/jobs/{id}", 200, encoding=enc,
               check=lambda v, h: None if v["state"] == "running" and v["attempts"] == 1
               else f"got {v}")
        m.call("cancel a running job", "DELETE", f"/v1/jobs/{sleepy}", "/v1/jobs/{id}", 409,
               encoding=enc, check=error_is("conflict"))


def check_job_options(m):
    """delay, run_at, unique_key/until/for and ordering_key: accepted, shown by GET /v1/jobs/{id},
    and a unique job's duplicates answered 200 with the existing id (contract: "Unique jobs").
    The jobs are `held` (a paused queue), so the unique one keeps its claim throughout."""
    delayed = m.call("delay", "POST", "/v1/jobs", "/v1/jobs", 201, encoding="json",
                     value={"name": "held", "delay": 3600})
    at = m.call("run_at", "POST", "/v1/jobs", "/v1/jobs", 201, encoding="msgpack",
                value={"name": "held", "run_at": "2099-12-01T09:00:00.250+01:00"})
    m.call("ordering_key", "POST", "/v1/jobs", "/v1/jobs", 201, encoding="msgpack",
           value={"name": "held", "ordering_key": "contract-order"})
    unique = {"name": "held", "argument": 1, "unique_key": "contract-unique",
              "unique_until": "finished", "unique_for": 600, "ordering_key": "contract-order"}
    first = m.call("unique job", "POST", "/v1/jobs", "/v1/jobs", 201, encoding="json",
                   value=unique)
    first_id = first["id"] if first else UNKNOWN_JOB
    for enc in ENCODINGS:
        if delayed:
            m.call("a delayed job", "GET", f"/v1/jobs/{delayed['id']}", "/v1/jobs/{id}", 200,
                   encoding=enc, check=lambda v, h: None if v["state"] == "scheduled" and
                   v.get("ready_at", "") > v["enqueued_at"] else f"got {v}")
        if at:
            m.call("a job with run_at", "GET", f"/v1/jobs/{at['id']}", "/v1/jobs/{id}", 200,
                   encoding=enc, check=lambda v, h: None if v["state"] == "scheduled" and
                   v.get("ready_at", "").startswith("2099-12-01T08:00:00.25") else f"got {v}")
        m.call("a unique, ordered job", "GET", f"/v1/jobs/{first_id}", "/v1/jobs/{id}", 200,
               encoding=enc, check=lambda v, h: None if v.get("unique_key") == "contract-unique"
               and v.get("ordering_key") == "contract-order" else f"got {v}")
        m.call("its duplicate", "POST", "/v1/jobs", "/v1/jobs", 200, encoding=enc,
               value=dict(unique, argument=2),
               check=lambda v, h: None if v == {"id": first_id, "duplicate": True}
               else f"got {v}")
    # A batch: a duplicate of the stored job, a new unique job, and a repeat of that one. A
    # unique key is unique among the jobs of one ordering key (README), so the duplicate has it.
    batch = [{"name": "held", "unique_key": "contract-unique", "ordering_key": "contract-order"},
             {"name": "held", "unique_key": "contract-unique-2"},
             {"name": "held", "unique_key": "contract-unique-2"}]
    mixed = m.call("a batch with duplicates", "POST", "/v1/jobs", "/v1/jobs", 201,
                   encoding="msgpack", value=batch, links=False,
                   check=lambda v, h: None if v.get("duplicates") == [0, 2] and
                   v["ids"][0] == first_id and v["ids"][1] == v["ids"][2] != first_id
                   else f"got {v}")
    second_id = mixed["ids"][1] if mixed else UNKNOWN_JOB
    for enc in ENCODINGS:
        m.call("a batch of only duplicates", "POST", "/v1/jobs", "/v1/jobs", 200, encoding=enc,
               value=batch[:2], links=False,
               check=lambda v, h: None if v == {"ids": [first_id, second_id],
                                                "duplicates": [0, 1]} else f"got {v}")


def check_dead(m, ctx):
    doomed = {"name": "doomed", "argument": {"fail": True, "should_retry": False},
              "keep_result": True, "max_retry": 0}
    ids = m.call("four jobs that fail", "POST", "/v1/jobs", "/v1/jobs", 201, value=[doomed] * 4,
                 links=False)
    ids = ids["ids"] if ids else []
    if len(ids) != 4:
        raise RuntimeError("could not push the jobs for the dead-job checks")
    for job in ids:
        wait_state(m, job, ["dead"])
    for enc in ENCODINGS:
        m.call("dead job", "GET", f"/v1/jobs/{ids[0]}", "/v1/jobs/{id}", 200, encoding=enc,
               check=lambda v, h: None if v["state"] == "dead" and v.get("last_error")
               else f"got {v}")
        m.call("cancel a dead job", "DELETE", f"/v1/jobs/{ids[0]}", "/v1/jobs/{id}", 409,
               encoding=enc, check=error_is("conflict"))
        m.call("list", "GET", "/v1/dead", "/v1/dead", 200, encoding=enc,
               check=lambda v, h: None if set(ids) <= {d["id"] for d in v} else "not all listed")
        m.call("list by name, limit 2", "GET", "/v1/dead?name=doomed&limit=2", "/v1/dead", 200,
               encoding=enc, check=lambda v, h: None if len(v) == 2 else f"{len(v)} jobs")
        m.call("limit 0", "GET", "/v1/dead?limit=0", "/v1/dead", 400, encoding=enc,
               check=error_is("bad_request", "limit"))
        m.call("limit 1001", "GET", "/v1/dead?limit=1001", "/v1/dead", 400, encoding=enc,
               check=error_is("bad_request", "limit"))
        for limit in ("2.5", "nan", "inf", "abc", "-1", "99999999999999999999", "%zz"):
            m.call(f"limit {limit!r}", "GET", f"/v1/dead?limit={limit}", "/v1/dead", 400,
                   encoding=enc, check=error_is("bad_request", "limit"))
        # The same jobs through the job browser: dead, newest first, page by page.
        first = m.call("browse dead", "GET", "/v1/jobs?state=dead&name=doomed&limit=3",
                       "/v1/jobs", 200, encoding=enc,
                       check=lambda v, h: None if len(v["jobs"]) == 3 and v["next_cursor"]
                       and all(j["state"] == "dead" and "argument" in j for j in v["jobs"])
                       else f"got {v}")
        if first and first.get("next_cursor"):
            m.call("browse dead, next page", "GET",
                   "/v1/jobs?state=dead&name=doomed&limit=3&cursor=" + first["next_cursor"],
                   "/v1/jobs", 200, encoding=enc,
                   check=lambda v, h: None if len(v["jobs"]) == 1 and v["next_cursor"] is None
                   else f"got {v}")
        m.call("browse queued", "GET", "/v1/jobs", "/v1/jobs", 200, encoding=enc)
        for query, field in (("state=done", "state"), ("limit=0", "limit"), ("name=-x", "name"),
                             ("cursor=nope", "cursor"),
                             ("state=queued&cursor=d.1.0.000000001", "cursor")):
            m.call(f"browse {query}", "GET", f"/v1/jobs?{query}", "/v1/jobs", 400, encoding=enc,
                   check=error_is("bad_request", field))
    for enc, job in zip(ENCODINGS, ids[2:4]):
        m.call("kept failure", "GET", f"/v1/jobs/{job}/result", "/v1/jobs/{id}/result", 200,
               encoding=enc, check=lambda v, h: None if v and v["type"] == "failure" and
               v["should_retry"] is False else f"got {v!r}")
    retry = ids[0]
    for enc in ENCODINGS:
        wait_state(m, retry, ["dead"])
        m.call("retry", "POST", f"/v1/dead/{retry}/retry", "/v1/dead/{id}/retry", 200,
               encoding=enc, check=lambda v, h: None if v == {"id": retry, "state": "queued"}
               else f"got {v}")
        m.call("retry unknown", "POST", f"/v1/dead/{UNKNOWN_JOB}/retry", "/v1/dead/{id}/retry",
               404, encoding=enc, check=error_is("not_found"))
        m.call("retry malformed id", "POST", "/v1/dead/nope/retry", "/v1/dead/{id}/retry", 404,
               encoding=enc, check=error_is("not_found"))
    for enc, job in zip(ENCODINGS, ids[1:3]):
        m.call("delete", "DELETE", f"/v1/dead/{job}", "/v1/dead/{id}", 204, encoding=enc)
        m.call("delete again", "DELETE", f"/v1/dead/{job}", "/v1/dead/{id}", 404, encoding=enc,
               check=error_is("not_found"))


def check_queues(m, ctx):
    for enc in ENCODINGS:
        m.call("list", "GET", "/v1/queues", "/v1/queues", 200, encoding=enc,
               check=lambda v, h: None if {"echo", "held"} <= {q["name"] for q in v}
               else "echo or held missing")
        m.call("one", "GET", "/v1/queues/held", "/v1/queues/{name}", 200, encoding=enc,
               check=lambda v, h: None if v["paused"] and v["ready"] >= 1 else f"got {v}")
        m.call("never seen", "GET", "/v1/queues/never.seen", "/v1/queues/{name}", 404,
               encoding=enc, check=error_is("not_found"))
        m.call("pause a new name", "POST", f"/v1/queues/fresh.{enc}/pause",
               "/v1/queues/{name}/pause", 200, encoding=enc,
               check=lambda v, h: None if v["paused"] is True and v["ready"] == 0 else f"got {v}")
        m.call("resume it", "POST", f"/v1/queues/fresh.{enc}/resume", "/v1/queues/{name}/resume",
               200, encoding=enc, check=lambda v, h: None if v["paused"] is False else f"got {v}")
        m.call("pause a bad name", "POST", "/v1/queues/.dot/pause", "/v1/queues/{name}/pause",
               400, encoding=enc, check=error_is("invalid_job", "name"))
        m.call("resume a bad name", "POST", "/v1/queues/-dash/resume",
               "/v1/queues/{name}/resume", 400, encoding=enc,
               check=error_is("invalid_job", "name"))
        m.call("counters", "GET", "/v1/stats", "/v1/stats", 200, encoding=enc,
               check=lambda v, h: None if v["pushed"] >= 1 and v["workers"] >= 2 else f"got {v}")


def check_constraints(m, ctx):
    """Every documented status of /v1/constraints but 500, a PATCH's 409 (five lost
    compare-and-sets in a row) and the 409s of a master on a Redis Cluster (tests/cluster/), and
    the request schemas agreeing with the server's rules."""
    full = {"name": "c-full", "match": {"name": "mail.*", "argument": [
        {"path": "/kind", "equals": "newsletter"}, {"path": "/tenant", "exists": True},
        {"path": "/region", "in": ["eu", "us"]}, {"path": "/a~1b/0", "equals": {"k": [1, 2.5]}}]},
        "key": "/tenant", "concurrency": 5, "rate": {"limit": 100, "period": 0.5, "burst": 10},
        "paused": False}
    same = lambda want: lambda v, h: None if v == want else f"got {v!r}"  # noqa: E731
    for enc in ENCODINGS:
        body = dict(full, name=f"c-{enc}")
        m.call("create", "POST", "/v1/constraints", "/v1/constraints", 201, encoding=enc,
               value=body, check=same(body))
        minimal = {"name": f"c-min-{enc}", "match": {"name": "*"}}
        m.call("create with the defaults", "POST", "/v1/constraints", "/v1/constraints", 201,
               encoding=enc, value=minimal,
               check=same({"name": f"c-min-{enc}", "match": {"name": "*", "argument": []},
                           "key": None, "concurrency": None, "rate": None, "paused": False}))
        m.call("a taken name", "POST", "/v1/constraints", "/v1/constraints", 409, encoding=enc,
               value=body, agree=False, check=error_is("conflict"))
    bad = [
        ("no name", {"match": {"name": "*"}}, "invalid_job", "name"),
        ("a name with a space", {"name": "a b", "match": {"name": "*"}}, "invalid_job", "name"),
        ("a glob with a slash", {"name": "c", "match": {"name": "a/*"}}, "invalid_job",
         "match.name"),
        ("a path that is not a JSON Pointer",
         {"name": "c", "match": {"name": "*", "argument": [
             {"path": "/a", "exists": True}, {"path": "tenant", "exists": True}]}},
         "invalid_job", "match.argument[1].path"),
        ("a path with ~2", {"name": "c", "match": {"name": "*", "argument": [
            {"path": "/a~2", "exists": True}]}}, "invalid_job", "match.argument[0].path"),
        ("equals and in together", {"name": "c", "match": {"name": "*", "argument": [
            {"path": "/a", "equals": 1, "in": [1]}]}}, "invalid_job", "match.argument[0].in"),
        ("a condition without a test", {"name": "c", "match": {"name": "*", "argument": [
            {"path": "/a"}]}}, "invalid_job", "match.argument[0]"),
        ("an empty in", {"name": "c", "match": {"name": "*", "argument": [
            {"path": "/a", "in": []}]}}, "invalid_job", "match.argument[0].in"),
        ("a key that is not a JSON Pointer", {"name": "c", "match": {"name": "*"}, "key": "t"},
         "invalid_job", "key"),
        ("concurrency 0", {"name": "c", "match": {"name": "*"}, "concurrency": 0},
         "invalid_job", "concurrency"),
        ("period 0", {"name": "c", "match": {"name": "*"}, "rate": {"limit": 1, "period": 0}},
         "invalid_job", "rate.period"),
        ("burst -1", {"name": "c", "match": {"name": "*"},
                      "rate": {"limit": 1, "period": 1, "burst": -1}}, "invalid_job", "rate.burst"),
        ("an unknown field in rate", {"name": "c", "match": {"name": "*"},
                                      "rate": {"limit": 1, "period": 1, "bursts": 1}},
         "invalid_job", "rate.bursts"),
        ("paused null", {"name": "c", "match": {"name": "*"}, "paused": None}, "invalid_job",
         "paused"),
        ("not a map", ["c"], "bad_request", None),
    ]
    for enc in ENCODINGS:
        for what, value, code, field in bad:
            m.call(what, "POST", "/v1/constraints", "/v1/constraints", 400, encoding=enc,
                   value=value, check=error_is(code, field))
        m.call("form-encoded body", "POST", "/v1/constraints", "/v1/constraints", 415,
               encoding=enc, raw=b"name=c", content_type="application/x-www-form-urlencoded",
               check=error_is("unsupported_media_type"))
        m.call("body over max_body_bytes", "POST", "/v1/constraints", "/v1/constraints", 413,
               encoding=enc, agree=False,
               value={"name": "c", "match": {"name": "*", "argument": [
                   {"path": "/a", "equals": "b" * MAX_BODY}]}},
               check=error_is("payload_too_large"))
        m.call("no token", "POST", "/v1/constraints", "/v1/constraints", 401, encoding=enc,
               token=None, value=full, agree=False, check=error_is("unauthorized"),
               skip_if={201: "auth is not enforced by this build"})
        m.call("push token", "GET", "/v1/constraints", "/v1/constraints", 403, encoding=enc,
               token="push", check=error_is("forbidden"))
    for enc in ENCODINGS:
        m.call("list", "GET", "/v1/constraints", "/v1/constraints", 200, encoding=enc,
               check=lambda v, h: None if {"c-json", "c-msgpack"} <= {c["name"] for c in v}
               else f"got {[c['name'] for c in v]}")
    for enc in ENCODINGS:
        name = f"c-{enc}"
        m.call("one with its live state", "GET", f"/v1/constraints/{name}",
               "/v1/constraints/{name}", 200, encoding=enc,
               check=lambda v, h: None if v["waiting"] == 0 and v["top_keys"] == [] else f"got {v}")
        m.call("unknown", "GET", "/v1/constraints/nope", "/v1/constraints/{name}", 404,
               encoding=enc, check=error_is("not_found"))
        replacement = {"name": name, "match": {"name": "report.*"}, "concurrency": 2}
        m.call("replace", "PUT", f"/v1/constraints/{name}", "/v1/constraints/{name}", 200,
               encoding=enc, value=replacement,
               check=lambda v, h: None if v["match"]["name"] == "report.*" and v["rate"] is None
               else f"got {v}")
        m.call("replace without the name", "PUT", f"/v1/constraints/{name}",
               "/v1/constraints/{name}", 200, encoding=enc, value={"match": {"name": "*"}})
        m.call("replace under another name", "PUT", f"/v1/constraints/{name}",
               "/v1/constraints/{name}", 400, encoding=enc, agree=False,
               value=dict(replacement, name="other"), check=error_is("invalid_job", "name"))
        m.call("replace with a bad rate", "PUT", f"/v1/constraints/{name}",
               "/v1/constraints/{name}", 400, encoding=enc,
               value={"match": {"name": "*"}, "rate": {"limit": 0, "period": 1}},
               check=error_is("invalid_job", "rate.limit"))
        m.call("replace an unknown name", "PUT", "/v1/constraints/nope", "/v1/constraints/{name}",
               404, encoding=enc, value={"match": {"name": "*"}}, check=error_is("not_found"))
        m.call("replace with a text body", "PUT", f"/v1/constraints/{name}",
               "/v1/constraints/{name}", 415, encoding=enc, raw=b"x", content_type="text/plain",
               check=error_is("unsupported_media_type"))
        m.call("patch", "PATCH", f"/v1/constraints/{name}", "/v1/constraints/{name}", 200,
               encoding=enc, value={"paused": True, "rate": {"limit": 5, "period": 1}},
               check=lambda v, h: None if v["paused"] is True and v["rate"]["burst"] == 0
               else f"got {v}")
        m.call("patch removing the rate", "PATCH", f"/v1/constraints/{name}",
               "/v1/constraints/{name}", 200, encoding=enc, value={"rate": None, "key": None},
               check=lambda v, h: None if v["rate"] is None and v["key"] is None else f"got {v}")
        m.call("patch with match null", "PATCH", f"/v1/constraints/{name}",
               "/v1/constraints/{name}", 400, encoding=enc, value={"match": None},
               check=error_is("invalid_job", "match"))
        m.call("patch an unknown name", "PATCH", "/v1/constraints/nope", "/v1/constraints/{name}",
               404, encoding=enc, value={"paused": True}, check=error_is("not_found"))
        m.call("patch with a text body", "PATCH", f"/v1/constraints/{name}",
               "/v1/constraints/{name}", 415, encoding=enc, raw=b"x", content_type="text/plain",
               check=error_is("unsupported_media_type"))
        m.call("delete", "DELETE", f"/v1/constraints/{name}", "/v1/constraints/{name}", 204,
               encoding=enc)
        m.call("delete again", "DELETE", f"/v1/constraints/{name}", "/v1/constraints/{name}",
               404, encoding=enc, check=error_is("not_found"))


def check_schedules(m, ctx):
    """Every documented status of /v1/schedules but 500 and the 409s of changes that keep losing
    to other masters' changes, and the request schemas agreeing with the server's rules."""
    full = {"name": "s-full", "cron": "30 2 * * *", "every": None, "timezone": "Europe/Berlin",
            "job": {"name": "report.build", "argument": {"kind": "nightly"}, "priority": 5,
                    "timeout": 600},
            "overlap": "skip", "missed": "skip", "start_at": "2026-12-01T00:00:00Z",
            "end_at": None, "paused": False}
    definition = lambda v: {k: v[k] for k in full}  # noqa: E731
    for enc in ENCODINGS:
        body = dict(full, name=f"s-{enc}")
        m.call("create", "POST", "/v1/schedules", "/v1/schedules", 201, encoding=enc, value=body,
               check=lambda v, h, body=body: None if definition(v) == body
               and len(v["next_runs"]) == 5 and v["runs"] == 0 else f"got {v}")
        m.call("create every N seconds", "POST", "/v1/schedules", "/v1/schedules", 201,
               encoding=enc, value={"name": f"s-every-{enc}", "every": 3600,
                                    "job": {"name": "report.build"}},
               check=lambda v, h: None if v["cron"] is None and v["timezone"] == "UTC"
               and v["missed"] == "run_once" else f"got {v}")
        m.call("a taken name", "POST", "/v1/schedules", "/v1/schedules", 409, encoding=enc,
               value=body, agree=False, check=error_is("conflict"))
    job = {"name": "x"}
    bad = [
        ("no name", {"cron": "* * * * *", "job": job}, "invalid_job", "name"),
        # The server reads a cron's fields and the zone database, and wants one of cron and
        # every: the schema says string, and a lint refuses anyOf over required.
        ("neither cron nor every", {"name": "b", "job": job}, "invalid_job", "cron", False),
        ("a cron hour 25", {"name": "b", "cron": "30 25 * * *", "job": job}, "invalid_job", "cron",
         False),
        ("every 0", {"name": "b", "every": 0, "job": job}, "invalid_job", "every"),
        ("an unknown zone", {"name": "b", "every": 5, "timezone": "Mars/Base", "job": job},
         "invalid_job", "timezone", False),
        ("a template with a bad priority",
         {"name": "b", "every": 5, "job": {"name": "x", "priority": "high"}}, "invalid_job",
         "job.priority"),
        ("a template with a delay", {"name": "b", "every": 5, "job": {"name": "x", "delay": 5}},
         "invalid_job", "job.delay"),
        ("overlap queue", {"name": "b", "every": 5, "job": job, "overlap": "queue"},
         "invalid_job", "overlap"),
        ("start_at without an offset",
         {"name": "b", "every": 5, "job": job, "start_at": "2026-12-01T00:00:00"},
         "invalid_job", "start_at"),
        ("not a map", ["b"], "bad_request", None),
    ]
    for enc in ENCODINGS:
        for what, value, code, field, *agree in bad:
            m.call(what, "POST", "/v1/schedules", "/v1/schedules", 400, encoding=enc, value=value,
                   agree=agree[0] if agree else True, check=error_is(code, field))
        m.call("both cron and every", "POST", "/v1/schedules", "/v1/schedules", 400, encoding=enc,
               value={"name": "b", "cron": "* * * * *", "every": 5, "job": job}, agree=False,
               check=error_is("invalid_job", "cron"))
        m.call("form-encoded body", "POST", "/v1/schedules", "/v1/schedules", 415, encoding=enc,
               raw=b"name=b", content_type="application/x-www-form-urlencoded",
               check=error_is("unsupported_media_type"))
        m.call("body over max_body_bytes", "POST", "/v1/schedules", "/v1/schedules", 413,
               encoding=enc, agree=False,
               value={"name": "b", "every": 5, "job": {"name": "x", "argument": "b" * MAX_BODY}},
               check=error_is("payload_too_large"))
        m.call("push token", "GET", "/v1/schedules", "/v1/schedules", 403, encoding=enc,
               token="push", check=error_is("forbidden"))
        m.call("list", "GET", "/v1/schedules", "/v1/schedules", 200, encoding=enc,
               check=lambda v, h: None if {"s-json", "s-msgpack"} <= {x["name"] for x in v}
               else f"got {[x['name'] for x in v]}")
        m.call("preview across the spring-forward night", "POST", "/v1/schedules/preview",
               "/v1/schedules/preview", 200, encoding=enc,
               value={"cron": "30 2 * * *", "timezone": "Europe/Berlin",
                      "from": "2026-03-28T00:00:00Z", "count": 3},
               check=lambda v, h: None if v["runs"][1] == "2026-03-29T03:00:00+02:00"
               else f"got {v}")
        m.call("preview with count 101", "POST", "/v1/schedules/preview", "/v1/schedules/preview",
               400, encoding=enc, value={"every": 5, "count": 101},
               check=error_is("invalid_job", "count"))
        m.call("preview with a text body", "POST", "/v1/schedules/preview",
               "/v1/schedules/preview", 415, encoding=enc, raw=b"x", content_type="text/plain",
               check=error_is("unsupported_media_type"))
        m.call("preview over max_body_bytes", "POST", "/v1/schedules/preview",
               "/v1/schedules/preview", 413, encoding=enc, agree=False,
               value={"every": 5, "cron": "b" * MAX_BODY}, check=error_is("payload_too_large"))
    for enc in ENCODINGS:
        name = f"s-{enc}"
        got = m.call("one", "GET", f"/v1/schedules/{name}", "/v1/schedules/{name}", 200,
                     encoding=enc)
        m.call("unknown", "GET", "/v1/schedules/nope", "/v1/schedules/{name}", 404, encoding=enc,
               check=error_is("not_found"))
        m.call("replace with what GET answered", "PUT", f"/v1/schedules/{name}",
               "/v1/schedules/{name}", 200, encoding=enc, value=got,
               check=lambda v, h, got=got: None if definition(v) == definition(got)
               else f"got {v}")
        m.call("replace without the name", "PUT", f"/v1/schedules/{name}", "/v1/schedules/{name}",
               200, encoding=enc, value={"every": 60, "job": job},
               check=lambda v, h: None if v["every"] == 60 and v["cron"] is None
               and v["overlap"] == "allow" else f"got {v}")
        m.call("replace under another name", "PUT", f"/v1/schedules/{name}",
               "/v1/schedules/{name}", 400, encoding=enc, agree=False,
               value={"name": "other", "every": 60, "job": job},
               check=error_is("invalid_job", "name"))
        m.call("replace an unknown name", "PUT", "/v1/schedules/nope", "/v1/schedules/{name}",
               404, encoding=enc, value={"every": 60, "job": job}, check=error_is("not_found"))
        m.call("replace with a text body", "PUT", f"/v1/schedules/{name}", "/v1/schedules/{name}",
               415, encoding=enc, raw=b"x", content_type="text/plain",
               check=error_is("unsupported_media_type"))
        m.call("patch: pause", "PATCH", f"/v1/schedules/{name}", "/v1/schedules/{name}", 200,
               encoding=enc, value={"paused": True},
               check=lambda v, h: None if v["paused"] is True and v["next_run_at"] is None
               and v["next_runs"] == [] else f"got {v}")
        m.call("run now while paused", "POST", f"/v1/schedules/{name}/run",
               "/v1/schedules/{name}/run", 201, encoding=enc)
        m.call("patch a cron in place of every", "PATCH", f"/v1/schedules/{name}",
               "/v1/schedules/{name}", 200, encoding=enc,
               value={"cron": "0 9 * * mon-fri", "timezone": "America/New_York", "paused": False},
               check=lambda v, h: None if v["every"] is None and v["next_run_at"] is not None
               and v["runs"] == 1 else f"got {v}")
        m.call("patch with end_at before start_at", "PATCH", f"/v1/schedules/{name}",
               "/v1/schedules/{name}", 400, encoding=enc, agree=False,
               value={"start_at": "2026-12-02T00:00:00Z", "end_at": "2026-12-01T00:00:00Z"},
               check=error_is("invalid_job", "end_at"))
        m.call("patch with a bad cron", "PATCH", f"/v1/schedules/{name}", "/v1/schedules/{name}",
               400, encoding=enc, value={"cron": "* * * * * * *"}, agree=False,
               check=error_is("invalid_job", "cron"))
        m.call("patch an unknown name", "PATCH", "/v1/schedules/nope", "/v1/schedules/{name}",
               404, encoding=enc, value={"paused": True}, check=error_is("not_found"))
        m.call("patch with a text body", "PATCH", f"/v1/schedules/{name}", "/v1/schedules/{name}",
               415, encoding=enc, raw=b"x", content_type="text/plain",
               check=error_is("unsupported_media_type"))
        m.call("run now an unknown name", "POST", "/v1/schedules/nope/run",
               "/v1/schedules/{name}/run", 404, encoding=enc, check=error_is("not_found"))
        unique = f"s-unique-{enc}"
        m.call("create with a unique template", "POST", "/v1/schedules", "/v1/schedules", 201,
               encoding=enc, value={"name": unique, "every": 3600,
                                    "job": {"name": "nobody.serves",
                                            "unique_key": f"one-{enc}"}})
        m.call("run now", "POST", f"/v1/schedules/{unique}/run", "/v1/schedules/{name}/run", 201,
               encoding=enc)
        m.call("run now while its unique job waits", "POST", f"/v1/schedules/{unique}/run",
               "/v1/schedules/{name}/run", 409, encoding=enc, check=error_is("conflict"))
        m.call("delete", "DELETE", f"/v1/schedules/{name}", "/v1/schedules/{name}", 204,
               encoding=enc)
        m.call("delete again", "DELETE", f"/v1/schedules/{name}", "/v1/schedules/{name}", 404,
               encoding=enc, check=error_is("not_found"))


def check_auth(m, ctx):
    not_built = {200: "auth is not enforced by this build"}
    for enc in ENCODINGS:
        m.call("no token", "GET", "/v1/stats", "/v1/stats", 401, encoding=enc, token=None,
               check=error_is("unauthorized"), skip_if=not_built)
        m.call("unknown token", "GET", "/v1/stats", "/v1/stats", 401, encoding=enc,
               token="not-a-configured-token", check=error_is("unauthorized"), skip_if=not_built)
        m.call("push token on an admin operation", "GET", "/v1/stats", "/v1/stats", 403,
               encoding=enc, token="push", check=error_is("forbidden"), skip_if=not_built)
        m.call("worker token on a push operation", "POST", "/v1/jobs", "/v1/jobs", 403,
               encoding=enc, token="worker", value={"name": "held"}, agree=False,
               check=error_is("forbidden"), skip_if={201: not_built[200]})
        m.call("worker token registers", "POST", "/v1/workers", "/v1/workers", 200, encoding=enc,
               token="worker", value={"url": ctx["jqworker_url"],
                                      "names": ["echo", "sleepy", "doomed"], "concurrency": 4})
        m.call("health needs no token", "GET", "/healthz", "/healthz", 200, encoding=enc,
               token=None)


def check_roles(m, ctx, tally):
    """Every implemented operation admits exactly the roles its `bearerAuth` requirement in
    master.yaml lists (admin everywhere), and the open ones (no `bearerAuth` alternative) need no
    token. The empty alternative `{}` of the secured operations stands for a master without
    `auth`, which this one is not, so it admits nothing here. Each request is one the handler
    refuses or answers harmlessly (unknown ids, bad bodies), so admitted means "any status but
    401 and 403"."""
    if not ctx["auth"]:
        tally.skip("roles: auth is not enforced by this build")
        return
    doc = m.spec.doc
    default_security = doc.get("security", [])
    bodies = {("POST", "/v1/jobs"): [], ("POST", "/v1/workers"): {}}
    for pattern, item in doc["paths"].items():
        for method, op in item.items():
            if method not in ("get", "post", "put", "delete", "patch") or \
                    op.get("x-jq-status") == "planned":
                continue
            method = method.upper()
            target = pattern.replace("{name}", ".bad").replace(
                "{id}", "w999999" if pattern.startswith("/v1/workers") else UNKNOWN_JOB)
            body = bodies.get((method, pattern), NOTHING)
            raw = None if body is NOTHING else encode(body, "json")
            security = op.get("security", default_security)
            allowed = {role for req in security for role in req.get("bearerAuth", [])}
            label = f"roles {method} {pattern}"
            if not any("bearerAuth" in req for req in security):
                status = raw_call(m.port, method, target, raw, {"Content-Type": "application/json"})[0]
                tally.check(status not in (401, 403), f"{label}: open, as master.yaml says",
                            f"answered {status} without a token")
                continue
            wrong = []
            for role in ("push", "worker", "admin"):
                status = raw_call(m.port, method, target, raw, {
                    "Content-Type": "application/json",
                    "Authorization": f"Bearer {TOKENS[role]}"})[0]
                if status == 401 or (status == 403) == (role in allowed):
                    wrong.append(f"{role} got {status}")
            tally.check(not wrong, f"{label}: admits {', '.join(sorted(allowed))} only, as "
                        "master.yaml says", "; ".join(wrong))


def check_dispatch(m, ctx, worker_spec, tally):
    """What the master sends a worker, and what comes back of the worker's answers."""
    capture = ctx["capture"]
    op = worker_spec.operation("/", "post")
    body_schema = worker_spec.request_schema("/", "post", "application/msgpack")
    params = {p["name"].lower(): p for p in (worker_spec.resolve(p) for p in op["parameters"])}

    for what, answer in (("success", CaptureWorker.success({"a": [1, b"\x00"]})),
                         ("failure", CaptureWorker.failure())):
        problem = worker_spec.errors(
            worker_spec.response("/", "post", 200)["content"]["application/msgpack"]["schema"], answer)
        tally.check(problem is None, f"worker.yaml 200 schema: the test worker's {what} answer "
                    "conforms", problem)

    argument = {"mode": "success", "blob": b"\x00\x01\xfe", "n": [1, 2.5, None, True]}
    pushed = {"name": "py.capture", "argument": argument, "priority": 7, "max_retry": 2,
              "timeout": 5.5, "keep_result": True}
    before = time.time()
    job = push_one(m, pushed, "msgpack", headers={"traceparent": TRACEPARENT})["id"]
    headers, body = capture.wait_requests(job, 1)[0]
    lower = {k.lower(): v for k, v in headers.items()}
    label = f"dispatch of {job}"
    try:
        request = msgpack.unpackb(body, raw=False)
    except Exception as e:  # noqa: BLE001
        tally.fail(f"{label}: the body is not MessagePack: {e}")
        return
    tally.check(essence(lower.get("content-type")) == "application/msgpack",
                f"{label}: Content-Type application/msgpack", f"got {lower.get('content-type')!r}")
    tally.check(essence(lower.get("accept")) == "application/msgpack",
                f"{label}: Accept application/msgpack", f"got {lower.get('accept')!r}")
    problem = worker_spec.errors(body_schema, request)
    tally.check(problem is None, f"{label}: body matches worker.yaml WorkerRequest", problem)
    problem = worker_spec.errors(params["x-jq-job-id"]["schema"], lower.get("x-jq-job-id"))
    tally.check(problem is None and lower.get("x-jq-job-id") == request.get("id") == job,
                f"{label}: X-Jq-Job-Id matches worker.yaml and the body's id",
                problem or f"header {lower.get('x-jq-job-id')!r}, body {request.get('id')!r}")
    attempt = lower.get("x-jq-attempt", "")
    problem = (worker_spec.errors(params["x-jq-attempt"]["schema"], int(attempt))
               if attempt.isdigit() else f"not an integer: {attempt!r}")
    tally.check(problem is None and int(attempt) == request.get("attempt") == 1,
                f"{label}: X-Jq-Attempt matches worker.yaml and the body's attempt (1)",
                problem or f"header {attempt!r}, body {request.get('attempt')!r}")
    tally.check(lower.get("x-test-secret") == "s3cret", f"{label}: the registered header is sent",
                f"got {lower.get('x-test-secret')!r}")
    timestamp, signature = lower.get("x-jq-timestamp", ""), lower.get("x-jq-signature", "")
    problem = (worker_spec.errors(params["x-jq-timestamp"]["schema"], timestamp)
               or worker_spec.errors(params["x-jq-signature"]["schema"], signature))
    mac = hmac.new(CAPTURE_SECRET.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    tally.check(problem is None and signature == f"v1={mac.hexdigest()}"
                and abs(time.time() - int(timestamp)) <= 30,
                f"{label}: X-Jq-Timestamp and X-Jq-Signature match worker.yaml and the HMAC of "
                "the body with the registered secret",
                problem or f"timestamp {timestamp!r}, signature {signature!r}")
    same = {k: request.get(k) for k in ("name", "argument", "priority", "max_retry", "timeout")}
    want = {k: pushed[k] for k in same}
    tally.check(same == want, f"{label}: name, argument (byte for byte), priority, max_retry, "
                "timeout as pushed", f"got {same}")
    try:
        deadline = datetime.datetime.fromisoformat(request["deadline"].replace("Z", "+00:00"))
        late = deadline.timestamp() - before
        tally.check(0 < late <= 5.5 + 5, f"{label}: deadline about timeout after the dispatch",
                    f"{late:.1f}s after the push")
    except (KeyError, ValueError, AttributeError) as e:
        tally.fail(f"{label}: deadline unreadable: {e}")
    if "traceparent" in lower:
        problem = worker_spec.errors(params["traceparent"]["schema"], lower["traceparent"])
        tally.check(problem is None and lower["traceparent"] == TRACEPARENT,
                    f"{label}: traceparent matches worker.yaml and is the pusher's, unchanged",
                    problem or f"got {lower['traceparent']!r}")
        bogus = push_one(m, {"name": "py.capture", "argument": {"mode": "success"}}, "json",
                         headers={"traceparent": "00-bogus"})["id"]
        sent = {k.lower() for k in capture.wait_requests(bogus, 1)[0][0]}
        tally.check("traceparent" not in sent, f"dispatch of {bogus}: an invalid traceparent "
                    "is dropped, not sent", "it was sent")
    else:
        tally.skip(f"{label}: no traceparent header: trace propagation is not in this build")
    m.call("the worker's success", "GET", f"/v1/jobs/{job}/result?wait=10", "/v1/jobs/{id}/result",
           200, encoding="msgpack",
           check=lambda v, h: None if v and v["result"] == argument else f"got {v!r}")

    m.call("a schedule of capture jobs", "POST", "/v1/schedules", "/v1/schedules", 201,
           encoding="json", value={"name": "capture-schedule", "every": 3600,
                                   "timezone": "Asia/Kolkata",
                                   "job": {"name": "py.capture", "argument": {"mode": "success"},
                                           "keep_result": True}})
    job = m.call("run it now", "POST", "/v1/schedules/capture-schedule/run",
                 "/v1/schedules/{name}/run", 201, encoding="json")["id"]
    request = msgpack.unpackb(capture.wait_requests(job, 1)[0][1], raw=False)
    problem = worker_spec.errors(body_schema, request)
    tally.check(problem is None and request.get("schedule") == "capture-schedule"
                and request.get("scheduled_at", "").endswith("+05:30"),
                f"dispatch of {job}: a scheduled job's body matches worker.yaml WorkerRequest, "
                "with schedule and scheduled_at in the schedule's zone", problem or f"got {request}")
    m.call("a scheduled job carries its schedule", "GET", f"/v1/jobs/{job}", "/v1/jobs/{id}", 200,
           encoding="json", check=lambda v, h: None if v.get("schedule") == "capture-schedule"
           and v.get("scheduled_at") == request.get("scheduled_at") else f"got {v}")

    job = push_one(m, {"name": "py.capture", "argument": {"mode": "json"}, "keep_result": True})["id"]
    capture.wait_requests(job, 1)
    m.call("the worker's JSON success", "GET", f"/v1/jobs/{job}/result?wait=10",
           "/v1/jobs/{id}/result", 200, encoding="json",
           check=lambda v, h: None if v and v["result"] == {"answered": "json"} else f"got {v!r}")

    job = push_one(m, {"name": "py.capture", "argument": {"mode": "fail"}, "keep_result": True,
                       "max_retry": 3})["id"]
    m.call("the worker's failure, should_retry false", "GET", f"/v1/jobs/{job}/result?wait=10",
           "/v1/jobs/{id}/result", 200, encoding="json",
           check=lambda v, h: None if v and v["type"] == "failure" and v["error"] == {"code": 7}
           else f"got {v!r}")
    tally.check(len(capture.requests.get(job, [])) == 1, f"dispatch of {job}: should_retry false "
                "is not retried", f"{len(capture.requests.get(job, []))} attempts")

    for busy in (429, 503):
        job = push_one(m, {"name": "py.capture", "argument": {"mode": "busy_once", "status": busy},
                           "keep_result": True})["id"]
        m.call(f"success after a {busy}", "GET", f"/v1/jobs/{job}/result?wait=10",
               "/v1/jobs/{id}/result", 200, encoding="msgpack",
               check=lambda v, h: None if v and v["type"] == "success" else f"got {v!r}")
        seen = capture.wait_requests(job, 2)
        attempts = [h.get("X-Jq-Attempt") for h, _ in seen]
        problem = None
        for h, b in seen:
            problem = problem or worker_spec.errors(body_schema, msgpack.unpackb(b, raw=False))
        tally.check(attempts == ["1", "1"] and problem is None,
                    f"dispatch of {job}: a {busy} does not count the attempt",
                    problem or f"attempts {attempts}")

    for what, argument, words in (("a 500", {"mode": "status", "status": 500}, "500"),
                                  ("a 200 that is no result", {"mode": "garbage"}, "invalid")):
        job = push_one(m, {"name": "py.capture", "argument": argument, "keep_result": True,
                           "max_retry": 0})["id"]
        m.call(f"the master's failure for {what}", "GET", f"/v1/jobs/{job}/result?wait=10",
               "/v1/jobs/{id}/result", 200, encoding="json",
               check=lambda v, h, words=words: None if v and v["type"] == "failure" and
               v["reason"] == "other" and v["should_retry"] is True and words in v["message"]
               else f"got {v!r}")

    job = push_one(m, {"name": "py.capture", "argument": {"mode": "slow"}, "keep_result": True,
                       "timeout": 0.5, "max_retry": 0})["id"]
    m.call("the master's timeout failure", "GET", f"/v1/jobs/{job}/result?wait=10",
           "/v1/jobs/{id}/result", 200, encoding="json",
           check=lambda v, h: None if v and v["type"] == "failure" and v["reason"] == "timeout"
           and v["error"] is None else f"got {v!r}")


def redis_command(port, *args):
    """One command to Redis; its reply's first line (enough for +OK and -errors)."""
    frame = f"*{len(args)}\r\n" + "".join(f"${len(a)}\r\n{a}\r\n" for a in args)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(frame.encode())
        return s.recv(4096).split(b"\r\n")[0].decode()


def out_of_memory(value, headers):
    """A check: 503 unavailable saying Redis is out of memory, with Retry-After: 5."""
    if value.get("error") != "unavailable" or "out of memory" not in value.get("message", ""):
        return f"got {value!r}"
    return None if headers.get("retry-after") == "5" else f"Retry-After {headers.get('retry-after')!r}"


def check_out_of_memory(m, ctx):
    port = ctx["redis_port"]
    assert redis_command(port, "CONFIG", "SET", "maxmemory", "1") == "+OK"
    try:
        for enc in ENCODINGS:
            m.call("Redis out of memory", "GET", "/readyz", "/readyz", 503, encoding=enc,
                   token=None, check=out_of_memory)
            m.call("Redis out of memory", "POST", "/v1/jobs", "/v1/jobs", 503, encoding=enc,
                   value={"name": "held"}, agree=False, check=out_of_memory)
            m.call("Redis out of memory", "POST", "/v1/constraints", "/v1/constraints", 503,
                   encoding=enc, value={"name": "oom", "match": {"name": "*"}}, agree=False,
                   check=out_of_memory)
            m.call("Redis out of memory: reads still work", "GET", "/v1/stats", "/v1/stats", 200,
                   encoding=enc)
    finally:
        assert redis_command(port, "CONFIG", "SET", "maxmemory", "0") == "+OK"


def check_unavailable(m, ctx):
    ctx["redis"].stop()
    wait_until(lambda: raw_call(m.port, "GET", "/readyz")[0] == 503, 15, "/readyz to say 503")
    for enc in ENCODINGS:
        m.call("Redis is down", "GET", "/readyz", "/readyz", 503, encoding=enc, token=None,
               check=error_is("unavailable"))
        m.call("Redis is down", "GET", "/v1/stats", "/v1/stats", 503, encoding=enc,
               check=error_is("unavailable"))
        m.call("Redis is down", "GET", f"/v1/jobs/{UNKNOWN_JOB}", "/v1/jobs/{id}", 503,
               encoding=enc, check=error_is("unavailable"))
        m.call("Redis is down", "POST", "/v1/jobs", "/v1/jobs", 503, encoding=enc,
               value={"name": "held"}, agree=False, check=error_is("unavailable"))
        m.call("Redis is down", "GET", "/v1/constraints", "/v1/constraints", 503, encoding=enc,
               check=error_is("unavailable"))
        m.call("Redis is down", "POST", "/v1/constraints", "/v1/constraints", 503, encoding=enc,
               value={"name": "held", "match": {"name": "*"}}, agree=False,
               check=error_is("unavailable"))
        for method, value in (("GET", NOTHING), ("PUT", {"match": {"name": "*"}}),
                              ("PATCH", {"paused": True}), ("DELETE", NOTHING)):
            m.call("Redis is down", method, "/v1/constraints/held", "/v1/constraints/{name}", 503,
                   encoding=enc, value=value, agree=False, check=error_is("unavailable"))


def main():
    tally = Tally()
    for binary in (MASTER_BIN, WORKER_BIN):
        if not binary.exists():
            tally.fail(f"{binary} is missing: build first (scripts/build.sh)")
            print(tally.summary())
            return 1
    master_spec, worker_spec = Spec("master.yaml"), Spec("worker.yaml")
    procs = []
    capture = None
    with tempfile.TemporaryDirectory(prefix="jq-contract-") as tmp_name:
        tmp = pathlib.Path(tmp_name)
        try:
            redis, redis_port = start_redis_for(tmp, procs)
            _, jqworker_url = start_jqworker(tmp, procs)
            _, port = start_master(tmp, redis_port, procs)
            capture = CaptureWorker()
            m = Master(port, master_spec, tally)
            auth = raw_call(port, "GET", "/v1/stats")[0] == 401
            ctx = {"redis": redis, "redis_port": redis_port, "jqworker_url": jqworker_url,
                   "capture": capture, "auth": auth}
            sections = [
                ("operations", lambda: check_operations(m)),
                ("workers", lambda: check_workers(m, ctx)),
                ("jobs", lambda: check_jobs(m, ctx)),
                ("dead jobs", lambda: check_dead(m, ctx)),
                ("queues", lambda: check_queues(m, ctx)),
                ("constraints", lambda: check_constraints(m, ctx)),
                ("schedules", lambda: check_schedules(m, ctx)),
                ("auth", lambda: check_auth(m, ctx)),
                ("roles", lambda: check_roles(m, ctx, tally)),
                ("dispatch", lambda: check_dispatch(m, ctx, worker_spec, tally)),
                ("out of memory", lambda: check_out_of_memory(m, ctx)),
                ("unavailable", lambda: check_unavailable(m, ctx)),
            ]
            for name, run in sections:
                try:
                    run()
                except Exception as e:  # noqa: BLE001 - report and go on with the next section
                    tally.fail(f"{name}: {type(e).__name__}: {e}")
                    traceback.print_exc()
        except Exception as e:  # noqa: BLE001 - setup failed
            tally.fail(f"setup: {type(e).__name__}: {e}")
        finally:
            if capture:
                capture.stop()
            for proc in reversed(procs):
                proc.stop()
            if tally.failed:
                for proc in procs:
                    if proc.name == "jqmaster":
                        print(f"--- last lines of {proc.name}'s log ---\n{proc.log_tail()}")
    print(tally.summary())
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
