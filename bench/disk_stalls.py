#!/usr/bin/python3
"""The host disk's flush stalls, and what they do to paced puts: etcd 3.4
and sqlkube's etcd face under the load of `etcdctl check perf` (50 clients
on 50 gRPC connections, 150 puts a second in all, 1 KiB values), one
target at a time, each fresh, through the real Go clientv3 (bench/etcdload
-rate).

check perf fails a store whose slowest put takes over 0.5 s. On this shared
machine the disk itself stalls fdatasync now and then for that long, and a
store that flushes before it answers (etcd's WAL, SQLite with
synchronous=FULL, PostgreSQL's commit) stalls with it. To tell the disk's
stalls from the store's, a probe thread writes 4 KiB and fdatasyncs a file
on the same disk every 20 ms during each run, and the table sets the
seconds in which a put began that took over 200 ms beside the seconds in
which a probe fdatasync over 100 ms began, both counted from the start of
etcdload's puts, and says when the slowest of each began. The targets:
  * etcd 3.4, data on disk;
  * sqlkube on SQLite, file on disk;
  * sqlkube on SQLite, file on tmpfs (/dev/shm): no flush waits on the disk;
  * with --pg-url (a local cluster, as tests/support/pg.sh starts; each
    target gets a database of its own, dropped after), sqlkube on
    PostgreSQL, and sqlkube on PostgreSQL with synchronous_commit off for
    its sessions (a commit does not wait for its WAL flush).
The tmpfs and synchronous_commit=off rows show sqlkube's own latency under
this load; the on-disk rows are what a user on such a disk sees.

Usage: bench/disk_stalls.py --bin build/sqlkube [--pg-url URL] [--seconds 60]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from etcd_side_by_side import (build_etcdload, load, start_etcd, start_sqlkube,  # noqa: E402
                               wait_up)
from benchlib import create_database, drop_database  # noqa: E402

PROBE_INTERVAL_S, PROBE_STALL_S = 0.02, 0.1


class FlushProbe(threading.Thread):
    """Writes 4 KiB and fdatasyncs a file of its own in directory every
    20 ms until stopped; keeps every fdatasync's duration, and the
    wall-clock start of each one over 100 ms and of the slowest."""

    def __init__(self, directory):
        super().__init__(daemon=True)
        self.directory = directory
        self.durations, self.stall_starts = [], []
        self.slowest, self.slowest_start = 0.0, None
        self.done = threading.Event()

    def run(self):
        fd, path = tempfile.mkstemp(prefix="flush-probe-", dir=self.directory)
        try:
            while not self.done.wait(PROBE_INTERVAL_S):
                os.write(fd, b"p" * 4096)
                wall, t0 = time.time(), time.monotonic()
                os.fdatasync(fd)
                d = time.monotonic() - t0
                if d > PROBE_STALL_S:
                    self.stall_starts.append(wall)
                if d > self.slowest:
                    self.slowest, self.slowest_start = d, wall
                self.durations.append(d)
        finally:
            os.close(fd)
            os.unlink(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--pg-url")
    ap.add_argument("--seconds", type=int, default=60)
    args = ap.parse_args()
    tools = tempfile.mkdtemp(prefix="sk-stalls-tools-")
    shm = tempfile.mkdtemp(prefix="sk-stalls-", dir="/dev/shm")
    databases = []

    def pg_database(query=""):
        name = "stalls_%d_%d" % (os.getpid(), len(databases))
        url = create_database(args.pg_url, name, query)
        databases.append(name)
        return url

    starters = [
        start_etcd,
        lambda: start_sqlkube(args.bin, None, "sqlkube, SQLite on disk"),
        lambda: start_sqlkube(args.bin, "sqlite:" + os.path.join(shm, "sqlkube.db"),
                              "sqlkube, SQLite on tmpfs"),
    ]
    if args.pg_url:
        starters += [
            lambda: start_sqlkube(args.bin, pg_database(), "sqlkube, PostgreSQL"),
            lambda: start_sqlkube(args.bin, pg_database("options=-c%20synchronous_commit%3Doff"),
                                  "sqlkube, PostgreSQL, synchronous_commit off"),
        ]
    rows = []
    try:
        etcdload = build_etcdload(tools)
        for start in starters:
            target = start()
            probe = FlushProbe(tempfile.gettempdir())
            try:
                wait_up(etcdload, target)
                probe.start()
                r = load(etcdload, target, "-mode", "put", "-clients", "50", "-conns", "50",
                         "-rate", "150", "-seconds", str(args.seconds), "-size", "1024")
            finally:
                probe.done.set()
                if probe.ident is not None:
                    probe.join()
                target.stop()
            rows.append((target.name, r, probe))
    finally:
        for name in databases:
            try:
                drop_database(args.pg_url, name)
            except subprocess.CalledProcessError as e:
                print("could not drop database %s: %s" % (name, e.stderr), file=sys.stderr)
        shutil.rmtree(tools, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)

    # Seconds on etcdload's clock: from its start, after its connections.
    print("| target | puts/s | failed | p50 ms | p99 ms | max ms | seconds with a put over 200 ms "
          "(slowest began at) | probe fdatasync p99 / max ms (max began at) "
          "| seconds with a probe fdatasync over 100 ms |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---|")
    for name, r, probe in rows:
        start = r["start_unix_ms"] / 1000.0
        ds = sorted(probe.durations) or [0.0]
        stalls = sorted({int(t - start) for t in probe.stall_starts if t >= start})
        puts = " ".join(map(str, r["stall_seconds"]))
        if "slowest_stall_start_s" in r:
            puts += " (%.1f)" % r["slowest_stall_start_s"]
        print("| %s | %.0f | %d | %.1f | %.1f | %.1f | %s | %.1f / %.1f (%s) | %s |" % (
            name, r["puts_per_s"], r["failed"], r["p50_ms"], r["p99_ms"], r["max_ms"],
            puts or "none", ds[len(ds) * 99 // 100] * 1000, ds[-1] * 1000,
            "%.1f" % (probe.slowest_start - start) if probe.slowest_start else "-",
            " ".join(map(str, stalls)) or "none"))


if __name__ == "__main__":
    main()
