#!/usr/bin/python3
"""A jqmaster worker in plain Python: the whole worker API in one small file.

The master POSTs one job per request, as a MessagePack map:

    {id, name, argument, priority, attempt, max_retry, timeout, deadline}

and reads the result from the response, a MessagePack map too:

    success: {type: "success", finished_at, result}
    failure: {type: "failure", reason: "other", finished_at, should_retry, error, message}

Answering 429 or 503 instead means "busy, try another worker": the attempt does not count.

With JQ_WORKER_SECRET set (16-256 bytes), the worker registers with that secret and refuses (401)
any request whose X-Jq-Signature does not verify (jq_signature.py, next to this file).

Needs only the standard library and msgpack (Debian: python3-msgpack). Run it with

    /usr/bin/python3 examples/python/worker.py --listen 127.0.0.1:9001 \
        --master http://127.0.0.1:8080 --names sum,echo
"""

import argparse
import datetime
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import msgpack

from jq_signature import verify

MSGPACK = "application/msgpack"
MAX_BODY_BYTES = 16 * 1024 * 1024  # refuse anything bigger than this


def run_job(name, argument):
    """The work itself: `sum` adds up a list of numbers, any other name echoes its argument.

    Raising an exception here turns into a failure result that asks the master to retry.
    """
    if name == "sum":
        return sum(argument)
    return argument


def now_iso():
    """ISO 8601 UTC, as the master expects in finished_at."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def success(result):
    return {"type": "success", "finished_at": now_iso(), "result": result}


def failure(error, message, should_retry=True):
    return {
        "type": "failure",
        "reason": "other",
        "finished_at": now_iso(),
        "should_retry": should_retry,  # the master retries while the job has retries left
        "error": error,  # any value: kept in the result for the pusher
        "message": message,  # for people: shown as the job's last_error
    }


class JobHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the master reuses its connections
    secret = None  # JQ_WORKER_SECRET: when set, only requests the master signed with it are run

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        if length > MAX_BODY_BYTES:
            self.send_text(413, "body too large\n")
            return
        body = self.rfile.read(length)
        if self.secret and not verify(self.secret, self.headers, body):
            self.send_text(401, "X-Jq-Signature does not verify\n")
            return
        try:
            job = msgpack.unpackb(body, raw=False)
            name, argument = job["name"], job.get("argument")
        except Exception as e:  # not our kind of request: say so, there is no job to fail
            self.send_text(400, f"expected a MessagePack job map: {e}\n")
            return
        try:
            result = success(run_job(name, argument))
        except Exception as e:
            result = failure(type(e).__name__, f"{name} failed on attempt {job.get('attempt')}: {e}")
        self.send_body(200, MSGPACK, msgpack.packb(result, use_bin_type=True))

    def send_text(self, status, text):
        self.send_body(status, "text/plain", text.encode())

    def send_body(self, status, content_type, body):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # one short line per request, on stderr
        sys.stderr.write("%s %s\n" % (self.address_string(), format % args))


def register(master, own_url, names, concurrency, token=None, secret=None):
    """POST /v1/workers: tells the master where we are and which job names we run."""
    registration = {"url": own_url, "names": names, "concurrency": concurrency}
    if secret:  # the master signs every job it sends us with it (never shown back)
        registration["secret"] = secret
    body = msgpack.packb(registration)
    headers = {"Content-Type": MSGPACK, "Accept": MSGPACK}
    if token:  # with auth configured: a token with the worker role
        headers["Authorization"] = "Bearer " + token
    request = urllib.request.Request(master.rstrip("/") + "/v1/workers", data=body, headers=headers)
    with urllib.request.urlopen(request, timeout=5) as response:
        return msgpack.unpackb(response.read(), raw=False)["id"]


def register_until_done(master, own_url, names, concurrency, token=None, secret=None):
    """The master may not be up yet: keep trying every second."""
    while True:
        try:
            worker_id = register(master, own_url, names, concurrency, token, secret)
            print(f"registered with {master} as worker {worker_id}", file=sys.stderr, flush=True)
            return
        except (OSError, urllib.error.URLError, KeyError, ValueError) as e:
            print(f"registering with {master} failed: {e}; retrying", file=sys.stderr, flush=True)
            time.sleep(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", default="127.0.0.1:9001", help="host:port; port 0 picks one")
    parser.add_argument("--master", default=os.environ.get("JQ_URL"),
                        help="master URL to register with, e.g. http://127.0.0.1:8080; env JQ_URL")
    parser.add_argument("--names", default="*", help="job names served, comma-separated")
    parser.add_argument("--concurrency", type=int, default=4, help="jobs at once")
    parser.add_argument("--token", default=os.environ.get("JQ_TOKEN"),
                        help="bearer token (worker role) when the master has auth; env JQ_TOKEN")
    args = parser.parse_args()

    # From the environment only: a command-line argument would show in `ps`.
    JobHandler.secret = os.environ.get("JQ_WORKER_SECRET") or None

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop cleanly, as on Ctrl-C
    host, port = args.listen.rsplit(":", 1)
    server = ThreadingHTTPServer((host, int(port)), JobHandler)  # one thread per connection
    server.daemon_threads = True
    own = f"{host}:{server.server_address[1]}"
    print(f"listening on {own}", flush=True)
    if args.master:
        # In the background: the server must already answer when the master sends the first job.
        names = args.names.split(",")
        threading.Thread(
            target=register_until_done,
            args=(args.master, f"http://{own}/", names, args.concurrency, args.token,
                  JobHandler.secret),
            daemon=True,
        ).start()
    else:
        print("not registering (no --master, no JQ_URL): register this worker's URL yourself "
              "(jqctl workers register, or POST /v1/workers)", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
