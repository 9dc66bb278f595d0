#!/usr/bin/python3
"""An HTTPS worker for the TLS tests: answers every POST with a MessagePack success whose result
is the job's argument. It prints "listening on HOST:PORT" once it listens, then one line per TLS
connection it accepts ("connection"), per failed handshake ("handshake failed: ...") and per job
("job ID"), so that a test can count connections against jobs.

    tls_worker.py --cert server.pem --key server.key [--listen 127.0.0.1:0]
"""

import argparse
import datetime
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import msgpack

HANDSHAKE_TIMEOUT_S = 10
print_lock = threading.Lock()


def say(line):
    with print_lock:
        print(line, flush=True)


def now_iso():
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JobHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the master reuses its connections

    def do_POST(self):
        job = msgpack.unpackb(self.rfile.read(int(self.headers.get("Content-Length", 0))), raw=False)
        say(f"job {job['id']}")
        result = {"type": "success", "finished_at": now_iso(), "result": job.get("argument")}
        body = msgpack.packb(result, use_bin_type=True)
        self.send_response(200)
        self.send_header("Content-Type", "application/msgpack")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


class TlsServer(ThreadingHTTPServer):
    """The handshake runs in the connection's own thread, so a failed one stops nothing else."""

    daemon_threads = True

    def __init__(self, address, context):
        super().__init__(address, JobHandler)
        self.context = context

    def finish_request(self, request, client_address):
        request.settimeout(HANDSHAKE_TIMEOUT_S)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            say(f"handshake failed: {e}")
            return
        say("connection")
        tls.settimeout(None)
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            tls.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", default="127.0.0.1:0", help="host:port; port 0 picks one")
    parser.add_argument("--cert", required=True, help="PEM certificate (chain) to serve")
    parser.add_argument("--key", required=True, help="PEM private key")
    args = parser.parse_args()

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    host, port = args.listen.rsplit(":", 1)
    server = TlsServer((host, int(port)), context)
    say(f"listening on {host}:{server.server_address[1]}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
