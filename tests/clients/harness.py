"""Processes for the client example checks: a redis-server and a jqmaster on free loopback ports,
and the example workers, each a child process stopped by its PID.

The processes themselves are tests/support/procs.py's, shared with tests/contract. Environment: JQ_BUILD_DIR (default build/), REDIS_SERVER (default redis-server on PATH),
NODE (default node on PATH).
"""

import json
import os
import pathlib
import shutil
import sys
import urllib.error
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from procs import ROOT, Proc, free_port, listening_address, start_redis, wait_until  # noqa: E402

BUILD = pathlib.Path(os.environ.get("JQ_BUILD_DIR", ROOT / "build"))
MASTER_BIN = BUILD / "cmd" / "jqmaster"
NODE = os.environ.get("NODE") or shutil.which("node") or "node"
PYTHON = "/usr/bin/python3"  # Debian's, with python3-msgpack

TOKENS = {"admin": "clients-admin-0123456789abcdef", "push": "clients-push-0123456789abcdef",
          "worker": "clients-worker-0123456789abcdef"}


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

    def start(self, name, argv, pipe_stdout=False, env=None):
        proc = Proc(name, argv, self.tmp / f"{name}.log", pipe_stdout, env)
        self.procs.append(proc)
        return proc

    def stop(self, proc):
        proc.stop()
        self.procs.remove(proc)

    def start_redis(self):
        proc, port = start_redis(self.tmp)
        self.procs.append(proc)
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

    def start_worker(self, name, argv, env=None):
        """Starts an example worker that prints 'listening on HOST:PORT' first and registers itself;
        returns (proc, its URL, its worker id) once the master lists it. `env`: added to ours."""
        proc = self.start(name, argv, pipe_stdout=True, env=env)
        url = f"http://{listening_address(proc)}/"

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
