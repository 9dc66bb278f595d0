#!/usr/bin/env python3
"""A worker for the soaks: journals each attempt's start and end, sleeps argument.ms, succeeds.

    journal_worker.py PORT JOURNAL_FILE

One JSON line per event: {"ev": "start"|"end", "id", "name", "attempt", "t", "arg",
"scheduled_at"}. Answers JSON, keep-alive, many jobs at once (one thread each).
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import msgpack

JOURNAL = open(sys.argv[2], "a", buffering=1)
LOCK = threading.Lock()


def log(record):
    with LOCK:
        JOURNAL.write(json.dumps(record) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        job = msgpack.unpackb(body, raw=False)
        arg = job.get("argument")
        seen = {"id": job["id"], "name": job["name"], "attempt": job["attempt"], "arg": arg}
        log(dict(seen, ev="start", t=time.time(), scheduled_at=job.get("scheduled_at")))
        ms = arg.get("ms", 0) if isinstance(arg, dict) else 0
        time.sleep(ms / 1000.0)
        log(dict(seen, ev="end", t=time.time()))
        answer = json.dumps({"type": "success", "finished_at": "2026-01-01T00:00:00Z",
                             "result": None}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a master killed while its job ran: the answer has nowhere to go, as expected


Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
