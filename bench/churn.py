#!/usr/bin/env python3
"""k0smotron's churn benchmark through the etcd face, side by side with etcd
3.4 in one run (issue 39, item 3).

Each target takes the same load from bench/etcdload's churn mode (the real
Go clientv3): --writers goroutines creating, updating and deleting 1 KiB
objects among their own keys at --rate operations a second in all, with
kube-apiserver's compare-and-swap shapes, while --watchers watches (over
--streams gRPC streams on as many connections) take every event from the
start. It reports write errors (must be 0), events delivered against events
written times watchers (must be all of them, each once, in revision order,
none invented), write-to-event lag p50/p99/max over every delivery, and the
server's peak RSS during the run (sampled every 100 ms; for PostgreSQL
targets sqlkube's own process, not the database's).

Targets: etcd 3.4, sqlkube on SQLite, and with --pg-url sqlkube on
PostgreSQL, then two sqlkube instances sharing that database with every
other watch connection on the second instance (writes go to the first), so
half the watches see the writes through the other instance's feed.

--rest adds the same churn through the Kubernetes REST face (etcdload's
rest-churn mode, bench/etcdload/rest.go: ConfigMaps created, updated with their
resourceVersion and deleted with preconditions over HTTPS as served, each
watch on its own HTTPS connection) on each sqlkube target, with its own
--rest-rate, --rest-watchers and --rest-size (an HTTPS watch per
connection, JSON per event: the client's cost per delivery is far above a
gRPC stream's on these two shared cores).

usage: bench/churn.py [--bin build/sqlkube] [--pg-url URL] [--seconds 30]
                      [--rate 500] [--writers 16] [--watchers 1000] [--streams 10]
                      [--rest [--rest-rate 200] [--rest-watchers 200] [--rest-size 256]]
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from etcd_side_by_side import build_etcdload, rss_kb, start_etcd, start_sqlkube, wait_up  # noqa: E402,E501


def measured(cmd, targets, args):
    """Runs a load generator's cmd against targets, sampling each target's
    RSS every 100 ms: (the generator's JSON line, each target's peak KiB)."""
    peaks, done = [0] * len(targets), threading.Event()

    def sample():
        while not done.is_set():
            for i, t in enumerate(targets):
                try:
                    peaks[i] = max(peaks[i], rss_kb(t.proc.pid))
                except OSError:
                    pass
            time.sleep(0.1)
    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.seconds + 300)
    finally:
        done.set()
        sampler.join()
    if p.returncode != 0:
        raise SystemExit("%s failed: %s" % (os.path.basename(cmd[0]), p.stderr[-2000:]))
    return json.loads(p.stdout.strip().splitlines()[-1]), peaks


def churn_cmd(etcdload, targets, args):
    """etcdload's churn mode with writes to targets[0] (and every other
    watch connection on targets[1], if given)."""
    cmd = [etcdload, "-endpoint", "127.0.0.1:%d" % targets[0].port, "-mode", "churn",
           "-writers", str(args.writers), "-rate", str(args.rate), "-seconds", str(args.seconds),
           "-keys", str(args.keys), "-watchers", str(args.watchers), "-streams",
           str(args.streams), "-watch-conns", str(args.streams)]
    if len(targets) > 1:
        cmd += ["-watch-endpoint", "127.0.0.1:%d" % targets[1].port]
    return cmd


def rest_churn_cmd(etcdload, targets, args):
    """etcdload's rest-churn mode against targets[0]'s REST face (HTTPS, its CA and the
    bench token), every other watch on targets[1]'s if given."""
    cacert, token = targets[0].tls
    cmd = [etcdload, "-mode", "rest-churn", "-url", "https://127.0.0.1:%d" % targets[0].rest_port,
           "-cacert", cacert,
           "-token", token, "-writers", str(args.writers), "-rate", str(args.rest_rate),
           "-seconds", str(args.seconds), "-keys", str(args.keys), "-size", str(args.rest_size),
           "-watchers", str(args.rest_watchers)]
    if len(targets) > 1:
        cmd += ["-watch-url", "https://127.0.0.1:%d" % targets[1].rest_port,
                "-watch-cacert", targets[1].tls[0]]
    return cmd


def run_row(label, starters, etcdload, make_cmd, watchers, args):
    """Starts the targets, runs make_cmd's load on them, stops them and
    prints the table's row."""
    targets = []
    try:
        for start in starters:
            targets.append(start())
            wait_up(etcdload, targets[-1])
        r, peaks = measured(make_cmd(targets), targets, args)
    finally:
        for t in targets:
            t.stop()
    print("| %s | %d | %d | %d / %d | %d / %d | %d | %.1f | %.1f | %.1f | %.1f | %s |" % (
        label, r["writes"], r["write_errors"] + r.get("writes_refused", 0), r["delivered"],
        r["expected"], r["complete_watchers"], watchers, r["invented"], r["lag_p50_ms"],
        r["lag_p99_ms"], r["lag_max_ms"], r["write_p99_ms"],
        " + ".join("%.0f" % (k / 1024) for k in peaks)), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--pg-url")
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--rate", type=int, default=500)
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--keys", type=int, default=100, help="keys per writer")
    ap.add_argument("--watchers", type=int, default=1000)
    ap.add_argument("--streams", type=int, default=10)
    ap.add_argument("--rest", action="store_true", help="also through the REST face")
    ap.add_argument("--rest-rate", type=int, default=200)
    ap.add_argument("--rest-watchers", type=int, default=200)
    ap.add_argument("--rest-size", type=int, default=256)
    args = ap.parse_args()
    etcdload = build_etcdload(os.path.dirname(os.path.abspath(args.bin)))
    runs = [("etcd 3.4", [start_etcd]),
            ("sqlkube (SQLite)", [lambda: start_sqlkube(args.bin, None)])]
    if args.pg_url:
        runs.append(("sqlkube (PostgreSQL)", [lambda: start_sqlkube(args.bin, args.pg_url)]))
        runs.append(("sqlkube (PostgreSQL, 2 instances)",
                     [lambda: start_sqlkube(args.bin, args.pg_url),
                      lambda: start_sqlkube(args.bin, args.pg_url)]))
    print("| target | writes | write errors | delivered / expected | complete watches "
          "| invented | lag p50 ms | lag p99 ms | lag max ms | write p99 ms | peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, starters in runs:
        run_row(name, starters, etcdload, lambda ts: churn_cmd(etcdload, ts, args),
                args.watchers, args)
        if args.rest and name.startswith("sqlkube"):
            run_row("%s, REST (%d/s offered, %d watches)" % (name, args.rest_rate,
                                                             args.rest_watchers),
                    starters, etcdload, lambda ts: rest_churn_cmd(etcdload, ts, args),
                    args.rest_watchers, args)


if __name__ == "__main__":
    main()
