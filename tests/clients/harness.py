"""Processes for the client example checks: a redis-server and a jqmaster on free loopback ports,
and the example workers, each a child process stopped by its PID.

The same approach as tests/contract/check_responses.py, kept small: check_clients.py is its only
user. Environment: JQ_BUILD_DIR (default build/), REDIS_SERVER (default redis-server on PATH),
NODE (default node on PATH).
"""

import json
import os
import pathlib
import re
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("JQ_BUILD_DIR", ROOT / "build"))
MASTER_BIN = BUILD / "cmd" / "jqmaster"
REDIS_SERVER = os.environ.get("REDIS_SERVER") or shutil.which("redis-server") or "redis-server"
NODE = os.environ.get("NODE") or shutil.which("node") or "node"
PYTHON = "/usr/bin/python3"  # Debian's, with python3-msgpack

TOKENS = {"admin": "clients-admin-0123456789abcdef", "push": "clients-push-0123456789abcdef",
          "worker": "clients-worker-0123456789abcdef"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


class Proc:
    """A child process logging to a file (stdout too unless piped), stopped by its PID."""

    def __init__(self, name, argv, log_path, pipe_stdout=False):
        self.name = name
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.popen = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stderr=self.log,
                                      stdout=subprocess.PIPE if pipe_stdout else self.log)

    def running(self):
        return self.popen.poll() is None

    def stop(self, timeout=10):
        if self.popen.poll() is None:
            os.kill(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.popen.pid, signal.SIGKILL)
                self.popen.wait()
        if self.popen.stdout:
            self.popen.stdout.close()
        self.log.close()

    def log_tail(self, lines=20):
        try:
            text = pathlib.Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


class Cluster:
    """redis-server + jqmaster (auth on: admin, push and worker tokens) in a temporary directory.
    Use as a context manager: everything it started is stopped on the way out, failure or not."""

    def __init__(self, tmp):
        self.tmp = pathlib.Path(tmp)
        self.procs = []
        self.url = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop_all()

    def stop_all(self):
        for proc in reversed(self.procs):
            proc.stop()
        self.procs.clear()

    def start(self, name, argv, pipe_stdout=False):
        proc = Proc(name, argv, self.tmp / f"{name}.log", pipe_stdout)
        self.procs.append(proc)
        return proc

    def stop(self, proc):
        proc.stop()
        self.procs.remove(proc)

    def start_redis(self):
        port = free_port()
        proc = self.start("redis-server", [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1",
                                           "--save", "", "--appendonly", "no", "--dir", str(self.tmp)])

        def pong():
            if not proc.running():
                raise RuntimeError(f"redis-server exited:\n{proc.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    return s.recv(16).startswith(b"+PONG")
            except OSError:
                return False

        wait_until(pong, 10, "redis-server")
        return port

    def start_master(self, redis_port):
        port = free_port()
        config = self.tmp / "jqmaster.yaml"
        tokens = "".join(f'    - {{token: "{t}", role: {r}}}\n' for r, t in TOKENS.items())
        config.write_text(f"""\
listen: 127.0.0.1:{port}
data_dir: {self.tmp / 'data'}
shards: 4
redis:
  url: "redis://127.0.0.1:{redis_port}/0"
retry: {{base: 0.1, max: 1, jitter: 0}}
shutdown_grace: 1
auth:
  tokens:
{tokens}""")
        proc = self.start("jqmaster", [str(MASTER_BIN), "--config", str(config)])
        self.url = f"http://127.0.0.1:{port}"

        def ready():
            if not proc.running():
                raise RuntimeError(f"jqmaster exited:\n{proc.log_tail()}")
            try:
                return self.call("GET", "/readyz")[0] == 200
            except OSError:
                return False

        wait_until(ready, 20, "jqmaster /readyz")
        return proc

    def start_worker(self, name, argv):
        """Starts an example worker that prints 'listening on HOST:PORT' first and registers itself;
        returns (proc, its URL, its worker id) once the master lists it."""
        proc = self.start(name, argv, pipe_stdout=True)
        ready, _, _ = select.select([proc.popen.stdout], [], [], 10)
        line = proc.popen.stdout.readline().decode(errors="replace").strip() if ready else ""
        match = re.match(r"listening on (\S+:\d+)$", line)
        if not match:
            raise RuntimeError(f"{name} did not print 'listening on HOST:PORT' (got {line!r}):\n"
                               f"{proc.log_tail()}")

        def drain(stream=proc.popen.stdout):  # keep the pipe from filling up
            for _ in iter(stream.readline, b""):
                pass

        threading.Thread(target=drain, daemon=True).start()
        url = f"http://{match.group(1)}/"

        def registered():
            if not proc.running():
                raise RuntimeError(f"{name} exited:\n{proc.log_tail()}")
            return next((w["id"] for w in self.call("GET", "/v1/workers")[1] if w["url"] == url), None)

        return proc, url, wait_until(registered, 10, f"{name} to register")

    def call(self, method, path, body=None, token=TOKENS["admin"]):
        """One JSON request to the master: (status, decoded body or None)."""
        headers = {"Accept": "application/json", "Authorization": f"Bearer {token}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        return status, json.loads(raw) if raw else None
