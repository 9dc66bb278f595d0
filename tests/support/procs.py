"""Child processes for the Python-driven checks (tests/contract, tests/clients): free loopback
ports, waiting on a condition, a process that logs to a file and is stopped by its PID, a
redis-server, and the "listening on HOST:PORT" line that jqworker and the example workers print.
"""

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

ROOT = pathlib.Path(__file__).resolve().parents[2]
REDIS_SERVER = os.environ.get("REDIS_SERVER") or shutil.which("redis-server") or "redis-server"


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

    def __init__(self, name, argv, log_path, pipe_stdout=False, env=None):
        self.name = name
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.popen = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stderr=self.log,
                                      stdout=subprocess.PIPE if pipe_stdout else self.log,
                                      env=None if env is None else {**os.environ, **env})

    def running(self):
        return self.popen.poll() is None

    def stop(self, timeout=15):
        if self.popen.poll() is None:
            os.kill(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.popen.pid, signal.SIGKILL)
                self.popen.wait()
        if self.popen.stdout:
            self.popen.stdout.close()
        if not self.log.closed:
            self.log.close()

    def log_tail(self, lines=30):
        try:
            text = pathlib.Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def listening_address(proc, timeout=10):
    """"HOST:PORT" from the first line a piped-stdout process prints; keeps draining the pipe."""
    ready, _, _ = select.select([proc.popen.stdout], [], [], timeout)
    line = proc.popen.stdout.readline().decode(errors="replace").strip() if ready else ""
    match = re.match(r"listening on (\S+:\d+)$", line)
    if not match:
        raise RuntimeError(f"{proc.name} did not print 'listening on HOST:PORT' (got {line!r}):\n"
                           f"{proc.log_tail()}")

    def drain(stream=proc.popen.stdout):  # keep the pipe from filling up
        for _ in iter(stream.readline, b""):
            pass

    threading.Thread(target=drain, daemon=True).start()
    return match.group(1)


def start_redis(tmp, log_name="redis.log"):
    """A redis-server without persistence on a free port; returns (proc, port) once it answers."""
    port = free_port()
    proc = Proc("redis-server", [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1",
                                 "--save", "", "--appendonly", "no", "--dir", str(tmp)],
                pathlib.Path(tmp) / log_name)

    def pong():
        if not proc.running():
            raise RuntimeError(f"redis-server exited:\n{proc.log_tail()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    try:
        wait_until(pong, 10, "redis-server")
    except Exception:
        proc.stop()
        raise
    return proc, port
