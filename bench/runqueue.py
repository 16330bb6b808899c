#!/usr/bin/python3
"""Where a REST create's time goes between running and waiting for a CPU.

usage: bench/runqueue.py --bin build/sqlkube [--pg-url URL] [--clients 32]
                         [--seconds 5] [--writebench build/writebench]

Starts `sqlkube serve` (on PostgreSQL with --pg-url, else SQLite), makes
namespace "bench", runs writebench's 1 KiB ConfigMap creates, and prints per
thread of the server, and per process of PostgreSQL (every child of the
postmaster of --pg-url, found through `SHOW data_directory`), the time it ran
and the time it waited runnable for a CPU, both in µs per create, from the
kernel's /proc/.../schedstat (run ns, run-queue wait ns, time slices). Also
the writes per commit (sqlkube_store_commits_total): the group commit's batch
size. Threads and processes that end during the run are left out (a
PostgreSQL autovacuum worker, say); ones that start during it count whole.

A write's serial path is the store's writer thread and PostgreSQL's backend
for it; their run-queue wait is time the whole pipeline waits on this 2-core
machine's other runnable threads (the request threads, the load generator).
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import free_port, make_namespace, postmaster_children, postmaster_pid  # noqa: E402


def schedstat(path):
    with open(path + "/schedstat") as f:
        run, wait, slices = f.read().split()
    return int(run), int(wait), int(slices)


def snapshot(server, postmaster):
    """{(tid or pid): (label, run ns, wait ns, slices)} of the server's
    threads and the postmaster's children alive now. Keyed by id, not by
    label: PostgreSQL rewrites a backend's title as it works."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % server):
        p = "/proc/%d/task/%s" % (server, tid)
        try:
            with open(p + "/comm") as f:
                out[int(tid)] = ("sqlkube %s (tid %s)" % (f.read().strip(), tid),) + schedstat(p)
        except OSError:
            pass  # the thread ended
    for pid in postmaster_children(postmaster) if postmaster else ():
        try:
            with open("/proc/%d/cmdline" % pid) as f:
                what = f.read().replace("\0", " ").strip()[:48]
            out[pid] = ("%s (pid %d)" % (what, pid),) + schedstat("/proc/%d" % pid)
        except OSError:
            pass  # the process ended
    return out


def commits(rest):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % rest, timeout=30) as r:
        found = [int(line.split()[1]) for line in r.read().decode().splitlines()
                 if line.startswith("sqlkube_store_commits_total ")]
    if not found:
        raise SystemExit("no sqlkube_store_commits_total in /metrics")
    return found[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--pg-url")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--writebench", default="build/writebench")
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="sk-runq-")
    rest = free_port()
    cmd = [args.bin, "serve", "--plain-http", "--listen", "127.0.0.1:%d" % rest, "--data-dir", d]
    if args.pg_url:
        cmd += ["--db", args.pg_url]
    srv = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        make_namespace(rest, "bench")
        postmaster = postmaster_pid(args.pg_url) if args.pg_url else None
        before, c0 = snapshot(srv.pid, postmaster), commits(rest)
        out = subprocess.run([args.writebench, "--url", "http://127.0.0.1:%d" % rest,
                              "--namespace", "bench", "--clients", str(args.clients),
                              "--seconds", str(args.seconds), "--size", "1024"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit("writebench failed: %s" % out.stderr[-2000:])
        after, c1 = snapshot(srv.pid, postmaster), commits(rest)
        res = json.loads(out.stdout.strip().splitlines()[-1])
        n = res["ok"]
        print("%d creates/s, p50 %.1f ms, p99 %.1f ms, %.1f writes per commit" % (
            res["creates_per_s"], res["p50_ms"], res["p99_ms"], n / max(c1 - c0, 1)))
        print("| thread or process | ran µs/create | waited for a CPU µs/create | slices/create |")
        print("|---|---:|---:|---:|")
        rows = []
        for k, (label, run, wait, slices) in after.items():
            _, r0, w0, s0 = before.get(k, (None, 0, 0, 0))  # new since: all of it
            rows.append((label, (run - r0) / 1e3 / n, (wait - w0) / 1e3 / n, (slices - s0) / n))
        for k, run, wait, slices in sorted(rows, key=lambda r: -r[1]):
            if run >= 0.5:
                print("| %s | %.1f | %.1f | %.2f |" % (k, run, wait, slices))
    finally:
        srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(30)
        except subprocess.TimeoutExpired:
            srv.kill()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
