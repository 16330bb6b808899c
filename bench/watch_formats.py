#!/usr/bin/python3
"""Issue 44: the server's CPU to fan watch events out, JSON against protobuf.

For each binary (--bin NAME=PATH) and each format (JSON, protobuf, and a
baseline with no watchers), a fresh `sqlkube serve` (SQLite, HTTPS as served
by default) gets --watchers watches of namespace `bench`'s ConfigMaps (each
on its own connection, from the current revision), then one writer creates
--events ConfigMaps of ~--size bytes. The run ends when every watcher has
received every event (JSON: lines; protobuf: length-prefixed frames). The
figure is the server's CPU (user + system, every thread, /proc) from the
first create to the last delivery; the baseline's is what the creates cost
alone, so (format - baseline) / (watchers x events) is the CPU per delivered
event.

Usage: bench/watch_formats.py --bin before=/tmp/sqlkube-main --bin after=build/sqlkube
                              [--watchers 100] [--events 300] [--size 1024]
Prints a markdown table. Needs python3-cryptography (the client certificate).
"""

import argparse
import http.client
import json
import os
import shutil
import struct
import threading
import time

from authz import Server
from benchlib import cpu_seconds

NS = "bench"
CMS = "/api/v1/namespaces/%s/configmaps" % NS
ACCEPT = {"json": "application/json", "protobuf": "application/vnd.kubernetes.protobuf"}


def post(conn, path, body):
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    r.read()
    if r.status not in (201, 409):
        raise SystemExit("POST %s: HTTP %d" % (path, r.status))


def watcher(srv, rv, fmt, events, ready, done):
    conn = http.client.HTTPSConnection("127.0.0.1", srv.port, timeout=300, context=srv.admin)
    conn.request("GET", CMS + "?watch=1&resourceVersion=%s" % rv,
                 headers={"Accept": ACCEPT[fmt]})
    r = conn.getresponse()
    ready.release()
    seen, buf = 0, b""
    while seen < events:
        data = r.read1(65536)
        if not data:
            raise SystemExit("a watch ended early")
        if fmt == "json":
            seen += data.count(b"\n")
            continue
        buf += data
        while len(buf) >= 4 and len(buf) >= 4 + struct.unpack(">I", buf[:4])[0]:
            buf = buf[4 + struct.unpack(">I", buf[:4])[0]:]
            seen += 1
    done.release()
    conn.close()


def run(binary, fmt, watchers, events, size):
    srv = Server(binary, "AlwaysAllow")
    try:
        conn = http.client.HTTPSConnection("127.0.0.1", srv.port, timeout=120, context=srv.admin)
        post(conn, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                          "metadata": {"name": NS}})
        conn.request("GET", CMS)
        r = conn.getresponse()
        rv = json.loads(r.read())["metadata"]["resourceVersion"]
        n = watchers if fmt else 0
        ready, done = threading.Semaphore(0), threading.Semaphore(0)
        threads = [threading.Thread(target=watcher, args=(srv, rv, fmt, events, ready, done),
                                    daemon=True) for _ in range(n)]
        for t in threads:
            t.start()
        for _ in range(n):
            ready.acquire()
        time.sleep(0.5)  # every watch parked
        value = "x" * size
        cpu0 = cpu_seconds(srv.proc.pid)
        t0 = time.perf_counter()
        for i in range(events):
            post(conn, CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "cm-%05d" % i}, "data": {"value": value}})
        for _ in range(n):
            done.acquire()
        return cpu_seconds(srv.proc.pid) - cpu0, time.perf_counter() - t0
    finally:
        srv.stop()
        shutil.rmtree(srv.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", action="append", required=True, help="NAME=PATH, repeatable")
    ap.add_argument("--watchers", type=int, default=100)
    ap.add_argument("--events", type=int, default=300)
    ap.add_argument("--size", type=int, default=1024)
    a = ap.parse_args()
    print("| binary | watchers | format | server CPU s | of which fan-out s | us per delivery |"
          " wall s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for spec in a.bin:
        label, path = spec.split("=", 1)
        base, wall = run(os.path.abspath(path), None, a.watchers, a.events, a.size)
        print("| %s | 0 | (creates alone) | %.2f | | | %.1f |" % (label, base, wall))
        for fmt in ("json", "protobuf"):
            cpu, wall = run(os.path.abspath(path), fmt, a.watchers, a.events, a.size)
            print("| %s | %d | %s | %.2f | %.2f | %.1f | %.1f |" % (
                label, a.watchers, fmt, cpu, cpu - base,
                (cpu - base) / (a.watchers * a.events) * 1e6, wall))


if __name__ == "__main__":
    main()
