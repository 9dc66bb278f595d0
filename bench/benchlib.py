"""What the Python benchmark scripts share: free loopback ports, JSON calls to a master, waiting
for a condition, percentiles. The scripts run as `python3 bench/<script>.py`, so this directory
is on their import path."""
import json, os, socket, time, urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(port, method, path, body=None, timeout=10):
    """One JSON request to the master on `port`: (status, decoded body or None)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json",
                                          "Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, json.loads(r.read() or b"null")


def wait_for(cond, timeout=20, interval=0.05):
    """True once cond() is; False after `timeout` s. A refused connect counts as not yet."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            if cond():
                return True
        except OSError:  # not listening yet
            pass
        time.sleep(interval)
    return False


def ready(port):
    """The master on `port` answers /readyz with 200."""
    try:
        return call(port, "GET", "/readyz")[0] == 200
    except Exception:
        return False


def cpu_times(pid):
    """(user, system) CPU seconds of process `pid`, all its threads, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def cpu_seconds(pid):
    """utime + stime of a process, in seconds."""
    return sum(cpu_times(pid))


def pct(values, p, digits=1):
    values = sorted(values)
    return round(values[min(len(values) - 1, int(p / 100 * len(values)))], digits) if values else None


def redis_command(port, *args):
    """One command to the Redis on loopback `port`, its reply decoded from RESP2 (bulk strings as
    bytes, arrays as lists): for replies redis-cli cannot render as JSON (binary arguments in
    SLOWLOG GET)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        frame = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            frame += b"$%d\r\n%s\r\n" % (len(a), a)
        s.sendall(frame)
        f = s.makefile("rb")

        def read():
            line = f.readline()
            kind, rest = line[:1], line[1:-2]
            if kind in (b"+", b":"):
                return int(rest) if kind == b":" else rest
            if kind == b"-":
                raise RuntimeError(rest.decode(errors="replace"))
            if kind == b"$":
                n = int(rest)
                return None if n < 0 else f.read(n + 2)[:-2]
            if kind == b"*":
                return [read() for _ in range(int(rest))]
            raise RuntimeError("unexpected RESP reply: %r" % line)

        return read()

