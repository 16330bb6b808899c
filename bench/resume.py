#!/usr/bin/python3
"""Resume benchmark: what restarts cost watchers, and how long a restart
takes to be ready.

It starts `sqlkube serve` on a fresh store, creates N ConfigMaps (~1 KiB,
16 client threads, not timed), then opens W watches on their namespace,
each behaving as a client-go informer does: read events, remember the last
resourceVersion, and when the stream ends, watch again from it; on a 410
(Expired) re-list and watch from the list's revision (a re-list, counted).
Then R times: write one object elsewhere (as leases and events are written
on a cluster, so the watchers' last resourceVersion is behind the store's
revision), stop the server (SIGTERM; every other one SIGKILL), write K
more ConfigMaps through a fresh start, and measure the seconds from the
process start until /readyz answers 200. At the end every watcher must have
seen each of the R*K later creates exactly once.

Reports: re-lists (goal 0), events missing or duplicated (must be 0), time
to ready per restart (median and max), the log line of the history replay.

Usage: bench/resume.py --bin build/sqlkube [--n 100000] [--watchers 100]
                       [--restarts 10] [--backend sqlite|postgres] [--pg-url URL]
Stdlib only.
"""

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from benchlib import free_port, Client

NS = "resume"


class Server:
    def __init__(self, binary, db_url):
        self.binary, self.db_url = binary, db_url
        self.dir = tempfile.mkdtemp(prefix="sk-rbench-")
        self.proc = None
        self.port = free_port()
        self.starts = 0

    def start(self):
        cmd = [self.binary, "serve", "--plain-http", "--listen", "127.0.0.1:%d" % self.port,
               "--data-dir", self.dir, "--watch-grace", "1"]
        if self.db_url:
            cmd += ["--db", self.db_url]
        self.starts += 1
        self.log = os.path.join(self.dir, "server-%d.log" % self.starts)
        t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        while True:
            try:
                if Client(self.port).req("GET", "/readyz")[0] == 200:
                    return time.monotonic() - t0
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() - t0 > 600:
                raise SystemExit("server did not start: see %s" % self.log)
            time.sleep(0.02)

    def stop(self, kill):
        self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        self.proc.wait(60)

    def replay_line(self):
        with open(self.log) as f:
            m = re.search(r"watch cache: (?:listed|replayed) .*", f.read())
        return m.group(0) if m else "(no replay line)"


def create_many(port, names):
    payload = "x" * 900
    errors = []

    def worker(k):
        c = Client(port)
        for name in names[k::16]:
            st, body = c.req("POST", "/api/v1/namespaces/%s/configmaps" % NS,
                             {"metadata": {"name": name}, "data": {"payload": payload}})
            if st != 201:
                errors.append((st, body[:200]))
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise SystemExit("creates failed: %r" % errors[:3])


class Informer(threading.Thread):
    """A watch that resumes from its last resourceVersion, as client-go's
    reflector does; a 410 makes it re-list (counted)."""

    def __init__(self, srv, rv):
        super().__init__(daemon=True)
        self.srv, self.rv = srv, rv
        self.seen = []
        self.relists = 0
        self.stop = False

    def relist(self):
        st, body = Client(self.srv.port).req(
            "GET", "/api/v1/namespaces/%s/configmaps?limit=1" % NS)
        self.rv = json.loads(body)["metadata"]["resourceVersion"]
        self.relists += 1

    def run(self):
        while not self.stop:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=5)
                conn.request("GET", "/api/v1/namespaces/%s/configmaps?watch=true&"
                             "allowWatchBookmarks=true&resourceVersion=%s" % (NS, self.rv))
                r = conn.getresponse()
                while not self.stop:
                    line = r.readline()
                    if not line:
                        break
                    ev = json.loads(line)
                    if ev["type"] == "ERROR":
                        if ev["object"].get("code") == 410:
                            self.relist()
                        break
                    self.rv = ev["object"]["metadata"]["resourceVersion"]
                    if ev["type"] == "ADDED":
                        self.seen.append(ev["object"]["metadata"]["name"])
            except (OSError, ValueError, http.client.HTTPException):
                time.sleep(0.05)  # the server is restarting


def run(args, db_url):
    srv = Server(args.bin, db_url)
    try:
        srv.start()
        c = Client(srv.port)
        c.req("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
        create_many(srv.port, ["base-%07d" % i for i in range(args.n)])
        st, body = Client(srv.port).req("GET", "/api/v1/namespaces/%s/configmaps?limit=1" % NS)
        rv = json.loads(body)["metadata"]["resourceVersion"]
        informers = [Informer(srv, rv) for _ in range(args.watchers)]
        for i in informers:
            i.start()
        ready, want, replays = [], [], []
        for k in range(args.restarts):
            # Writes elsewhere (on a cluster: leases, events) leave the
            # watchers' last resourceVersion behind the store's revision.
            Client(srv.port).req("POST", "/api/v1/namespaces/default/configmaps",
                                 {"metadata": {"name": "elsewhere-%d" % k}})
            time.sleep(0.5)
            srv.stop(kill=k % 2 == 1)
            ready.append(srv.start())
            replays.append(srv.replay_line())
            names = ["r%02d-%03d" % (k, i) for i in range(args.per_restart)]
            create_many(srv.port, names)
            want += names
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and any(len(i.seen) < len(want) for i in informers):
            time.sleep(0.1)
        for i in informers:
            i.stop = True
        relists = sum(i.relists for i in informers)
        wrong = sum(sorted(i.seen) != sorted(want) for i in informers)
        dups = sum(len(i.seen) - len(set(i.seen)) for i in informers)
    finally:
        if srv.proc and srv.proc.poll() is None:
            srv.stop(kill=False)
        shutil.rmtree(srv.dir, ignore_errors=True)
    return {"ready": ready, "relists": relists, "wrong": wrong, "dups": dups,
            "replay": replays[-1]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--watchers", type=int, default=100)
    ap.add_argument("--restarts", type=int, default=10)
    ap.add_argument("--per-restart", type=int, default=20)
    ap.add_argument("--backend", default="sqlite", choices=["sqlite", "postgres"])
    ap.add_argument("--pg-url")
    args = ap.parse_args()
    if args.backend == "postgres" and not args.pg_url:
        raise SystemExit("--pg-url is needed for postgres")
    res = run(args, args.pg_url if args.backend == "postgres" else None)
    print("| backend | objects | watchers x restarts | re-lists | watchers with missing or "
          "extra events | duplicates | ready after restart: median / max (s) |")
    print("|---|---:|---|---:|---:|---:|---|")
    print("| %s | %d | %d x %d | %d | %d | %d | %.2f / %.2f |" % (
        args.backend, args.n, args.watchers, args.restarts, res["relists"], res["wrong"],
        res["dups"], statistics.median(res["ready"]), max(res["ready"])))
    print("last start: %s" % res["replay"])


if __name__ == "__main__":
    main()
