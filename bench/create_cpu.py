#!/usr/bin/env python3
"""create_cpu.py - CPU per durable create of a 1 KiB ConfigMap over HTTP,
for one or more sqlkube binaries in interleaved runs.

    bench/create_cpu.py [--rounds 4] [--seconds 3] [--clients 32]
                        [--writebench build/writebench] BIN [BIN...]

Each run starts BIN on a fresh SQLite store (plain HTTP), creates namespace
"bench", warms up for one second, then runs writebench for --seconds and
reads, around it, the server's utime+stime (/proc/PID/stat), the same for
its request threads alone (MHD-worker: HTTP, JSON, admission, managedFields,
the reply) and writebench's own CPU (getrusage of the child). Each figure is
divided by the creates that run acknowledged. Rounds run the binaries in
turn (A B A B ...) so a shared machine's load falls on all of them alike;
the median of the rounds is printed. The writer and feed threads' share
depends on how many creates each commit carries, so the request threads'
figure is the steadiest measure of the request path itself.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
import urllib.request

from benchlib import cpu_seconds, free_port


def request_threads_cpu_seconds(pid):
    """CPU seconds of the server's request threads (libmicrohttpd's)."""
    total = 0.0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if not f.read().startswith("MHD"):
                    continue
            total += cpu_seconds(pid, tid)
        except FileNotFoundError:
            pass
    return total


def ready(port):
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=1).read()
        return True
    except OSError:
        return False


def one_run(binary, writebench, seconds, clients):
    d = tempfile.mkdtemp(prefix="sk-createcpu.")
    port = free_port()
    log = open(os.path.join(d, "server.log"), "w")
    srv = subprocess.Popen([binary, "serve", "--plain-http", "--listen", "127.0.0.1:%d" % port,
                            "--data-dir", d], stdout=log, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if ready(port) or srv.poll() is not None:
                break
            time.sleep(0.1)
        req = urllib.request.Request(
            "http://127.0.0.1:%d/api/v1/namespaces" % port, method="POST",
            data=b'{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}}',
            headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=10).read()
        url = "http://127.0.0.1:%d" % port
        base = [writebench, "--url", url, "--namespace", "bench", "--clients", str(clients)]
        subprocess.run(base + ["--seconds", "1", "--prefix", "warm"], check=True,
                       stdout=subprocess.DEVNULL)
        s0, m0 = cpu_seconds(srv.pid), request_threads_cpu_seconds(srv.pid)
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(base + ["--seconds", str(seconds)], check=True,
                             capture_output=True, text=True).stdout
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        s1, m1 = cpu_seconds(srv.pid), request_threads_cpu_seconds(srv.pid)
        res = json.loads(out)
        ok = res["ok"]
        client_s = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        return {"server_us": (s1 - s0) * 1e6 / ok, "request_us": (m1 - m0) * 1e6 / ok,
                "client_us": client_s * 1e6 / ok, "creates_per_s": res["creates_per_s"]}
    finally:
        srv.terminate()
        srv.wait()
        log.close()
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--writebench", default="build/writebench")
    args = ap.parse_args()
    runs = {b: [] for b in args.binaries}
    for _ in range(args.rounds):
        for b in args.binaries:
            runs[b].append(one_run(b, args.writebench, args.seconds, args.clients))
    print("| binary | server µs/create | request threads µs/create | client µs/create | creates/s |")
    print("|---|---:|---:|---:|---:|")
    for b, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        print("| %s | %.0f | %.0f | %.0f | %.0f |" % (b, med["server_us"], med["request_us"],
                                                   med["client_us"], med["creates_per_s"]))


if __name__ == "__main__":
    main()
