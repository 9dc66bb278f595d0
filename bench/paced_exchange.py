"""The floor of one exchange at a steady moderate rate, on this machine: a server that sleeps in
epoll_wait between requests (as jqmaster, jqworker and nginx do) is woken by 64 bytes on a
loopback TCP connection, reads them and writes them back, which wakes the client. The client
sends at a fixed pace, one exchange at a time, so the server sleeps before every one.

  python3 bench/paced_exchange.py --rate 2000 --seconds 3

Prints one JSON line: exchanges, the server's CPU per exchange in µs (getrusage, user and
system together: the kernel charges the wake-up and the TCP work to it, and on a kernel that
samples the split at ticks only the sum is exact), and its context switches per exchange. The
server is Python: its CPU is an upper bound of what any server pays for the same three syscalls
(epoll_wait, recv, send) and the wake-ups. Row d of the issue 14
workloads (docs/BENCHMARKS.md) compares each of its processes' CPU per exchange with it."""
import argparse, json, os, resource, selectors, socket, time


def serve(listener, report_fd):
    conn, _ = listener.accept()
    conn.setblocking(False)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sel = selectors.EpollSelector()
    sel.register(conn, selectors.EVENT_READ)
    exchanges, start = 0, None
    while True:
        sel.select()
        try:
            data = conn.recv(4096)
        except BlockingIOError:
            continue
        if not data:
            break
        if start is None:  # from the first exchange: the accept and set-up are not counted
            start = resource.getrusage(resource.RUSAGE_SELF)
        conn.send(data)
        exchanges += 1
    end = resource.getrusage(resource.RUSAGE_SELF)
    os.write(report_fd, json.dumps({
        "exchanges": exchanges,
        "user_s": end.ru_utime - start.ru_utime, "sys_s": end.ru_stime - start.ru_stime,
        "voluntary": end.ru_nvcsw - start.ru_nvcsw,
        "involuntary": end.ru_nivcsw - start.ru_nivcsw}).encode())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rate", type=float, default=2000, help="exchanges per second")
    p.add_argument("--seconds", type=float, default=3)
    o = p.parse_args()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        serve(listener, report_w)
        os._exit(0)
    client = socket.create_connection(listener.getsockname())
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    gap = 1.0 / o.rate
    at = time.perf_counter()
    end = at + o.seconds
    while at < end:
        client.send(b"x" * 64)
        client.recv(4096)
        at += gap
        wait = at - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
    client.close()
    os.waitpid(pid, 0)
    r = json.loads(os.read(report_r, 4096))
    n = r["exchanges"]
    print(json.dumps({
        "rate_per_s": o.rate, "exchanges": n,
        "server_cpu_us_per_exchange": round((r["user_s"] + r["sys_s"]) * 1e6 / n, 2),
        "voluntary_switches_per_exchange": round(r["voluntary"] / n, 2),
        "involuntary_switches_per_exchange": round(r["involuntary"] / n, 2)}))


if __name__ == "__main__":
    main()
