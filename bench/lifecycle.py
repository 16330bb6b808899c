#!/usr/bin/python3
"""Lifecycle benchmark: how long the garbage collector and the namespace
controller take to remove 10,000 objects, and what the server's memory
does meanwhile.

For each backend it starts a fresh `sqlkube serve` and:
  * owner: creates one ConfigMap "owner" and N ConfigMaps that name it in
    ownerReferences (~1 KiB each), deletes the owner (propagationPolicy
    Background) and measures the seconds until a list of the namespace is
    empty;
  * namespace: creates N ConfigMaps in a fresh namespace, deletes the
    namespace and measures the seconds until it is 404.
For each it reports the server's RSS before the delete and its peak
(VmHWM, reset before the delete through /proc/PID/clear_refs) while the
controllers work. Objects are created over HTTP by 16 threads on keep-alive
connections (not timed).

Before each delete it also measures what holding the N objects costs while
the store is written: the server's CPU (utime+stime from /proc/PID/stat)
over --steady seconds of 10 small creates a second in another namespace,
as a share of one core. Every write starts a controller pass, so this is
where a controller that re-reads every object per pass shows.

Usage: bench/lifecycle.py --bin build/sqlkube [--n 10000] [--steady 10]
                          [--backend sqlite|postgres] [--pg-url URL]
Prints a markdown table. Stdlib only.
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from benchlib import cpu_seconds, free_port, Client


def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak(pid):
    # "5" resets the peak RSS (VmHWM) to the current RSS (Linux >= 4.0)
    with open("/proc/%d/clear_refs" % pid, "w") as f:
        f.write("5")


def create_many(port, ns, n, owner_ref):
    payload = "x" * 900
    errors = []

    def worker(k):
        c = Client(port)
        for i in range(k, n, 16):
            meta = {"name": "cm-%06d" % i}
            if owner_ref:
                meta["ownerReferences"] = [owner_ref]
            st, body = c.req("POST", "/api/v1/namespaces/%s/configmaps" % ns,
                             {"metadata": meta, "data": {"payload": payload}})
            if st != 201:
                errors.append((st, body[:200]))
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise SystemExit("creates failed: %r" % errors[:3])


def steady_cpu(pid, c, seconds):
    """Share of a core the server used while 10 creates a second went on."""
    c0, t0, i = cpu_seconds(pid), time.monotonic(), 0
    while time.monotonic() - t0 < seconds:
        st, body = c.req("POST", "/api/v1/namespaces/steady/configmaps",
                         {"metadata": {"generateName": "w-"}, "data": {"a": "b"}})
        if st != 201:
            raise SystemExit("steady create failed: %d %r" % (st, body[:200]))
        i += 1
        time.sleep(max(0.0, t0 + i / 10.0 - time.monotonic()))
    return (cpu_seconds(pid) - c0) / (time.monotonic() - t0)


def wait_for(fn, timeout=600):
    start = time.monotonic()
    while not fn():
        if time.monotonic() - start > timeout:
            raise SystemExit("timed out")
        time.sleep(0.05)
    return time.monotonic() - start


def run(args, backend, db_url):
    work = tempfile.mkdtemp(prefix="sk-lbench-")
    port = free_port()
    cmd = [args.bin, "serve", "--plain-http", "--listen", "127.0.0.1:%d" % port, "--data-dir", work]
    if db_url:
        cmd += ["--db", db_url]
    log = open(os.path.join(work, "server.log"), "w")
    srv = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    rows = []
    try:
        c = None
        for _ in range(100):
            try:
                c = Client(port)
                if c.req("GET", "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        for ns in ("gc", "nsdel", "steady"):
            c.req("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        # owner with N dependents
        st, body = c.req("POST", "/api/v1/namespaces/gc/configmaps",
                         {"metadata": {"name": "owner"}})
        uid = json.loads(body)["metadata"]["uid"]
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}
        create_many(port, "gc", args.n, ref)
        time.sleep(2)  # let the collector settle on the loaded store
        held = steady_cpu(srv.pid, c, args.steady)
        rss = status_kb(srv.pid, "VmRSS")
        reset_peak(srv.pid)
        c.req("DELETE", "/api/v1/namespaces/gc/configmaps/owner",
              {"propagationPolicy": "Background"})

        def gc_done():
            st, body = c.req("GET", "/api/v1/namespaces/gc/configmaps?limit=1")
            return st == 200 and json.loads(body)["items"] == []
        secs = wait_for(gc_done)
        rows.append((backend, "owner + %d dependents (Background)" % args.n, secs, rss,
                     status_kb(srv.pid, "VmHWM"), held))
        # namespace with N objects
        create_many(port, "nsdel", args.n, None)
        time.sleep(2)
        held = steady_cpu(srv.pid, c, args.steady)
        rss = status_kb(srv.pid, "VmRSS")
        reset_peak(srv.pid)
        c.req("DELETE", "/api/v1/namespaces/nsdel")
        secs = wait_for(lambda: c.req("GET", "/api/v1/namespaces/nsdel")[0] == 404)
        rows.append((backend, "namespace with %d objects" % args.n, secs, rss,
                     status_kb(srv.pid, "VmHWM"), held))
    finally:
        srv.terminate()
        srv.wait(30)
        log.close()
        shutil.rmtree(work, ignore_errors=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--backend", default="sqlite", choices=["sqlite", "postgres"])
    ap.add_argument("--pg-url")
    ap.add_argument("--steady", type=float, default=10.0,
                    help="seconds of 10 creates/s measured with the objects held")
    args = ap.parse_args()
    if args.backend == "postgres" and not args.pg_url:
        raise SystemExit("--pg-url is needed for postgres")
    rows = run(args, args.backend, args.pg_url if args.backend == "postgres" else None)
    print("| backend | deletion | seconds until the last object is gone | RSS before (MiB) "
          "| peak RSS meanwhile (MiB) | server CPU before, at 10 creates/s (% of a core) |")
    print("|---|---|---:|---:|---:|---:|")
    for b, what, secs, rss, peak, held in rows:
        print("| %s | %s | %.2f | %.1f | %.1f | %.1f |" % (b, what, secs, rss / 1024, peak / 1024,
                                                          100 * held))


if __name__ == "__main__":
    main()
