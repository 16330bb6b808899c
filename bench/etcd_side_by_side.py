#!/usr/bin/python3
"""etcd 3.4 and sqlkube's etcd face, side by side in one run, through the
real Go clientv3 (bench/etcdload, built here in GOPATH mode against Debian's
golang-etcd-server-dev).

The targets are a fresh etcd from Debian's etcd-server, a fresh `sqlkube
serve --etcd-listen` on SQLite and, with --pg-url, one on PostgreSQL.
  * put: all targets up at once; at each of --clients (default 1 8 32 64)
    concurrent writers, --rounds rounds (default 3), each running every
    target's 1 KiB puts for --seconds over 8 gRPC connections (and, with
    --writebench, each sqlkube target's REST creates) once, in an order
    rotated by the round. This shared machine's speed drifts by half within
    minutes, so a ratio is only fair between runs close in time: each
    round's ratio is a rate over etcd's puts/s in that round, and the table
    gives every round's ratio and their median, with the median rate and
    p50/p99 ms, and the median CPU each write cost the server (with
    PostgreSQL's processes for that target: every child of its postmaster,
    found through `SHOW data_directory`, so --pg-url must name a local
    cluster this user may read, as tests/support/pg.sh starts; PostgreSQL's
    background work, such as the checkpointer writing out earlier rounds,
    falls on whichever run it happens in) and the load generator (/proc's
    CPU times, in 10 ms ticks: at 1 client, a few thousand writes a round,
    good to some tens of µs), and for sqlkube, from its /metrics, the writes
    per group commit and the writer's round trips to PostgreSQL per commit
    (issue 39: constant in the batch's size; 0 on SQLite). On this 2-core
    machine the load generator's
    CPU competes with the server's, so the rates compare whole systems,
    clients included;
  * watch (one target at a time, fresh): 1,000 watches on one prefix over 1
    stream and over 100 streams, 200 puts one every 10 ms: write-to-event
    latency p50/p99 over all 200,000 deliveries (every watch must get every
    event once, in order),
    and the server's RSS growth from before the watches to when they are all
    created, per watch.
With --writebench BIN (build/writebench), each sqlkube target also takes
durable creates of 1 KiB ConfigMaps over its Kubernetes API (keep-alive, one
connection per client) at the same client counts: issue 16's comparison of
the REST write path with etcd's puts, in the same rounds. The API is served
as users get it, HTTPS with its own CA, and writebench verifies the server's
certificate and sends a bearer token (a --token-auth-file user in
system:masters), as kubectl and controllers do (issue 39); --plain-http
serves and drives plain HTTP instead, the old shortcut.
  * fanout (only when --sections names it): issue 16's fan-out load, 1,000
    watches and 1,000 writes offered at 500 a second by 16 writers, on each
    target: through clientv3 with the watches on 1,000 connections (one
    watch each, as 1,000 separate clients would), on one connection in one
    stream, and on 100 connections with one stream each; on each sqlkube
    target also over its Kubernetes API (`watchbench latency`: 1,000 watch
    connections, ConfigMap creates). Write-to-event latency over every
    delivery, the writes' own latency, the rate reached, and the CPU seconds
    of the server and of the load generator.
Prints markdown tables.

Usage: bench/etcd_side_by_side.py --bin build/sqlkube [--pg-url URL]
       [--seconds 10] [--clients 1,8,32,64] [--rounds 3] [--writebench build/writebench]
       [--sections put,watch,fanout] [--watchbench build/watchbench]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))

from gobuild import go_build  # noqa: E402
from benchlib import (cpu_seconds, free_port, make_namespace, postgres_cpu_seconds, store_counters,  # noqa: E402
                      postmaster_pid)


def build_etcdload(out_dir):
    return go_build(os.path.join(HERE, "etcdload"), out_dir, "etcdload")


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Target:
    def __init__(self, name, cmd, port, workdir, rest_port=None, postmaster=None):
        self.name, self.port, self.dir, self.rest_port = name, port, workdir, rest_port
        self.postmaster = postmaster
        self.log = open(os.path.join(workdir, "server.log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def start_etcd():
    d = tempfile.mkdtemp(prefix="sk-etcdb-")
    port, peer = free_port(), free_port()
    c, p = "http://127.0.0.1:%d" % port, "http://127.0.0.1:%d" % peer
    return Target("etcd 3.4", ["etcd", "--name", "b", "--data-dir", os.path.join(d, "data"),
                               "--listen-client-urls", c, "--advertise-client-urls", c,
                               "--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
                               "--initial-cluster", "b=" + p,
                               # rounds of puts outgrow the 2 GiB default quota
                               "--quota-backend-bytes", str(8 << 30)], port, d)


# The bearer token writebench sends over HTTPS (--token-auth-file's user).
TOKEN = "sqlkube-bench-token"


def start_sqlkube(binary, db_url, name=None, plain_http=False):
    """db_url None: SQLite in a fresh data dir. name: the target's label,
    by default its backend's. HTTPS unless plain_http."""
    d = tempfile.mkdtemp(prefix="sk-etcdb-")
    port, rest = free_port(), free_port()
    cmd = [binary, "serve", "--listen", "127.0.0.1:%d" % rest, "--data-dir", d,
           "--etcd-listen", "127.0.0.1:%d" % port]
    if plain_http:
        cmd.append("--plain-http")
    else:
        tokens = os.path.join(d, "tokens.csv")
        with open(tokens, "w") as f:
            f.write('%s,bench,bench-uid,"system:masters"\n' % TOKEN)
        cmd += ["--token-auth-file", tokens]
    if db_url:
        cmd += ["--db", db_url]
    postgres = bool(db_url) and db_url.startswith(("postgres://", "postgresql://"))
    t = Target(name or "sqlkube (%s)" % ("PostgreSQL" if postgres else "SQLite"), cmd, port, d,
               rest, postmaster_pid(db_url) if postgres else None)
    t.tls = None if plain_http else (os.path.join(d, "ca.crt"), TOKEN)
    return t


def http_creates(writebench, target, clients, seconds, prefix):
    """writebench's JSON line for durable ConfigMap creates over the
    target's REST API (namespace "bench", made first). Each run names its
    ConfigMaps with its own prefix: an earlier run's names are taken, and
    re-creating them would measure 409s."""
    url = "%s://127.0.0.1:%d" % ("https" if target.tls else "http", target.rest_port)
    # or made by an earlier client count
    make_namespace(target.rest_port, "bench", target.tls)
    tls = ["--cacert", target.tls[0], "--token", target.tls[1]] if target.tls else []
    out = subprocess.run([writebench, "--url", url, "--namespace", "bench", "--clients",
                          str(clients), "--seconds", str(seconds), "--size", "1024",
                          "--prefix", prefix] + tls,
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit("writebench failed: %s" % out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def load(binary, target, *args):
    out = subprocess.run([binary, "-endpoint", "127.0.0.1:%d" % target.port] + list(args),
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit("etcdload failed: %s" % out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def watch_with_memory(binary, target, streams):
    before = rss_kb(target.proc.pid)
    p = subprocess.Popen([binary, "-endpoint", "127.0.0.1:%d" % target.port, "-mode", "watch",
                          "-watchers", "1000", "-streams", str(streams), "-events", "200",
                          "-interval", "10", "-settle", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if line.strip() == "ready":
            break
    time.sleep(1)
    during = rss_kb(target.proc.pid)
    out, _ = p.communicate(timeout=600)
    r = json.loads(out.strip().splitlines()[-1])
    r["kib_per_watch"] = (during - before) / 1000.0
    return r


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def server_cpu_s(target):
    """CPU seconds so far of target's server, PostgreSQL's included."""
    s = cpu_seconds(target.proc.pid)
    return s + postgres_cpu_seconds(target.postmaster) if target.postmaster else s


def measured(target, cmd):
    """Runs cmd (a load generator printing one JSON line) and adds the CPU
    seconds the target's server (PostgreSQL's included) and the generator
    used meanwhile."""
    s0, c0 = server_cpu_s(target), children_cpu_s()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit("%s failed: %s" % (cmd[0], out.stderr[-2000:]))
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["server_cpu_s"] = server_cpu_s(target) - s0
    r["client_cpu_s"] = children_cpu_s() - c0
    return r


FANOUT_WATCHERS, FANOUT_EVENTS, FANOUT_RATE, FANOUT_WRITERS = 1000, 1000, 500, 16
# (label, gRPC connections, watch streams) of the etcd API runs
FANOUT_SHAPES = [("1,000 connections", 1000, 1000), ("1 connection, 1 stream", 1, 1),
                 ("100 connections", 100, 100)]


def fanout(etcdload, watchbench, target):
    """Issue 16's fan-out load on target: [(api, shape, result)], results
    in one form (p50_ms, p99_ms, max_ms, write_p50_ms, rate, complete,
    server_cpu_s, client_cpu_s)."""
    rows = []
    for label, conns, streams in FANOUT_SHAPES:
        r = measured(target, [etcdload, "-endpoint", "127.0.0.1:%d" % target.port, "-mode",
                              "watch", "-watchers", str(FANOUT_WATCHERS), "-streams",
                              str(streams), "-watch-conns", str(conns), "-events",
                              str(FANOUT_EVENTS), "-interval", str(1000 // FANOUT_RATE),
                              "-writers", str(FANOUT_WRITERS), "-settle", "1"])
        r.update(write_p50_ms=r["put_p50_ms"], rate=r["puts_per_s"],
                 complete=r["complete_watchers"] == FANOUT_WATCHERS)
        rows.append(("etcd", label, r))
    if target.rest_port:
        if target.tls:
            raise SystemExit("the fanout section's REST watchers (watchbench) speak plain HTTP: "
                             "run it with --plain-http")
        r = measured(target, [watchbench, "latency", "--url",
                              "http://127.0.0.1:%d" % target.rest_port, "--namespace", "lat",
                              "--clients", str(FANOUT_WATCHERS), "--events", str(FANOUT_EVENTS),
                              "--rate", str(FANOUT_RATE), "--writers", str(FANOUT_WRITERS)])
        r.update(write_p50_ms=r["create_p50_ms"], rate=FANOUT_EVENTS / r["write_s"],
                 complete=r["all_in_order"] and r["bad_watchers"] == 0
                 and r["deliveries"] == r["expected"])
        rows.append(("Kubernetes", "1,000 connections", r))
    return rows


def paired_puts(etcdload, writebench, starters, clients, seconds, rounds):
    """The put section: every target up at once, then for each client count
    `rounds` rounds, each measuring every (target, API) pair once in an
    order rotated by the round, so that a change in the shared machine's
    speed during the run falls on etcd and sqlkube alike. Each round's
    ratio is a pair's rate over etcd's in that same round. Returns
    {(target, api, clients): [(result, ratio) per round]}."""
    targets = []
    try:
        for start in starters:
            targets.append(start())
        for t in targets:
            wait_up(etcdload, t)
        pairs = [(t, "etcd put") for t in targets]
        if writebench:
            pairs += [(t, "REST create") for t in targets if t.rest_port]
        out = {}
        for at, n in enumerate(clients):
            for r in range(rounds):
                k = r % len(pairs)
                got = {}
                for t, api in pairs[k:] + pairs[:k]:
                    if t.rest_port:
                        make_namespace(t.rest_port, "bench", t.tls)  # its commit before k0
                        k0 = store_counters(t.rest_port, t.tls)
                    s0, c0 = server_cpu_s(t), children_cpu_s()
                    if api == "etcd put":
                        res = load(etcdload, t, "-mode", "put", "-clients", str(n), "-seconds",
                                   str(seconds))
                        rate = res["puts_per_s"]
                    else:
                        res = http_creates(writebench, t, n, seconds, "c%d-%d-r%d" % (at, n, r))
                        rate = res["creates_per_s"]
                    ok = max(res["ok"], 1)
                    res["server_us"] = (server_cpu_s(t) - s0) * 1e6 / ok
                    res["client_us"] = (children_cpu_s() - c0) * 1e6 / ok
                    if t.rest_port:
                        k1 = store_counters(t.rest_port, t.tls)
                        commits = max(k1[0] - k0[0], 1)
                        res["per_commit"] = res["ok"] / commits
                        res["trips_per_commit"] = (k1[1] - k0[1]) / commits
                    got[(t.name, api)] = (res, rate)
                etcd = got[(targets[0].name, "etcd put")][1]
                for (name, api), (res, rate) in got.items():
                    out.setdefault((name, api, n), []).append(
                        (res, rate / etcd if etcd else float("nan")))
                print("done: %d clients, round %d" % (n, r + 1), file=sys.stderr)
        return out
    finally:
        for t in targets:
            t.stop()


def wait_up(binary, target):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        p = subprocess.run([binary, "-endpoint", "127.0.0.1:%d" % target.port, "-mode", "put",
                            "-clients", "1", "-conns", "1", "-seconds", "1"],
                           capture_output=True, text=True, timeout=60)
        if p.returncode == 0:
            return
        time.sleep(0.5)
    raise SystemExit("%s did not come up" % target.name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--pg-url")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--clients", default="1,8,32,64")
    ap.add_argument("--writebench", help="also REST creates through this build/writebench")
    ap.add_argument("--plain-http", action="store_true",
                    help="serve and drive the REST API over plain HTTP (default: HTTPS)")
    ap.add_argument("--sections", default="put,watch", help="of put, watch, fanout")
    ap.add_argument("--rounds", type=int, default=3, help="of the put section, each pairing")
    ap.add_argument("--watchbench", default="build/watchbench", help="for the fanout section")
    args = ap.parse_args()
    sections = set(args.sections.split(","))
    # 1,000 watch connections and the server's side of them
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    out_dir = os.path.dirname(os.path.abspath(args.bin))
    etcdload = build_etcdload(out_dir)
    starters = [start_etcd, lambda: start_sqlkube(args.bin, None, plain_http=args.plain_http)]
    if args.pg_url:
        starters.append(lambda: start_sqlkube(args.bin, args.pg_url,
                                              plain_http=args.plain_http))
    puts = {}
    if "put" in sections:
        puts = paired_puts(etcdload, args.writebench, starters,
                           [int(c) for c in args.clients.split(",")], args.seconds, args.rounds)
    watch_rows, fanout_rows = [], []
    for start in starters if sections & {"watch", "fanout"} else ():
        t = start()
        try:
            wait_up(etcdload, t)
            for streams in (1, 100) if "watch" in sections else ():
                watch_rows.append((t.name, streams, watch_with_memory(etcdload, t, streams)))
            if "fanout" in sections:
                fanout_rows += [(t.name,) + row for row in fanout(etcdload, args.watchbench, t)]
        finally:
            t.stop()
        print("done: %s" % t.name, file=sys.stderr)
    if puts:
        print("| target | API (1 KiB writes) | clients | writes/s, median | vs etcd puts, median "
              "| each round | p50 ms | p99 ms | failed | server CPU µs/write "
              "| load generator CPU µs/write | writes per commit | round trips per commit |")
        print("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for (name, api, n), runs in puts.items():
        def med(key):
            return statistics.median(res[key] for res, _ in runs)
        rate = "puts_per_s" if api == "etcd put" else "creates_per_s"
        kept = "per_commit" in runs[0][0]  # sqlkube's /metrics; etcd has none
        print("| %s | %s | %d | %.0f | %.2fx | %s | %.1f | %.1f | %d | %.0f | %.0f | %s | %s |" % (
            name, api, n, med(rate), statistics.median(ratio for _, ratio in runs),
            " ".join("%.2f" % ratio for _, ratio in runs), med("p50_ms"), med("p99_ms"),
            sum(res["failed"] for res, _ in runs), med("server_us"), med("client_us"),
            "%.1f" % med("per_commit") if kept else "", "%.2f" % med("trips_per_commit") if kept else ""))
    if watch_rows:
        print()
        print("| target | 1,000 watches over | deliveries | complete watches | out of order "
              "| latency p50 ms | p99 ms | max ms | RSS per watch KiB |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, streams, r in watch_rows:
        print("| %s | %d stream%s | %d | %d | %d | %.1f | %.1f | %.1f | %.1f |" % (
            name, streams, "s" if streams > 1 else "", r["deliveries"], r["complete_watchers"],
            r["out_of_order"], r["p50_ms"], r["p99_ms"], r["max_ms"], r["kib_per_watch"]))
    if fanout_rows:
        print()
        print("| target | API | 1,000 watches over | writes/s reached | every event once, in order "
              "| latency p50 ms | p99 ms | max ms | write p50 ms | server CPU s "
              "| load generator CPU s |")
        print("|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for name, api, shape, r in fanout_rows:
        print("| %s | %s | %s | %.0f | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            name, api, shape, r["rate"], "yes" if r["complete"] else "NO", r["p50_ms"],
            r["p99_ms"], r["max_ms"], r["write_p50_ms"], r["server_cpu_s"], r["client_cpu_s"]))


if __name__ == "__main__":
    main()
