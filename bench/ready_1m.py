#!/usr/bin/python3
"""Time to ready after a restart with N objects (issue 16, Measure), on
SQLite or PostgreSQL.

Loading a million objects through the API would take longer than the run
should (about 4,000 creates/s on this machine), so the objects are written
the way a restored backup would arrive: straight into the schema the server
created (schema/sqlite.sql), by SQL inserts in one transaction. Each row is
a real ConfigMap the server wrote (one created through the API is the
template), with its name, uid and resourceVersion replaced: sk_history
(one create per revision) and sk_revision (the counter) stay as the
server's writer would leave them. On SQLite the rows go in through Python's
sqlite3 module; on PostgreSQL one INSERT ... SELECT over generate_series, run
by psql, makes them in the server. The server is then started K times on
that store (SIGTERM between starts), and each start is timed from the
process start to /readyz answering 200; its RSS (VmRSS,
and the peak VmHWM) is read from /proc once it is ready, and the watch
cache's replay line is taken from the log.

Usage: bench/ready_1m.py --bin build/sqlkube [--n 1000000] [--starts 2]
                         [--payload 100] [--backend sqlite|postgres --pg-url URL]
Stdlib only (the sqlite3 module), and psql for PostgreSQL. On PostgreSQL
--pg-url names a database the script may fill (a fresh one).
"""

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import time
from benchlib import Client
from resume import Server

NS = "bulk"


def rss_kib(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                k, v = line.split(":")
                out[k] = int(v.split()[0])
    return out


def template(srv, payload):
    """A ConfigMap as the server stores it, created through the API."""
    c = Client(srv.port)
    st, body = c.req("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    assert st == 201, body
    st, body = c.req("POST", "/api/v1/namespaces/%s/configmaps" % NS,
                     {"metadata": {"name": "tmpl"}, "data": {"payload": "x" * payload}})
    assert st == 201, body
    return json.loads(body)


def bulk_load(db, tmpl, n):
    """n ConfigMaps after the store's last revision, in one transaction."""
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA synchronous=OFF")
    con.execute("BEGIN IMMEDIATE")
    (rev,) = con.execute("SELECT rev FROM sk_revision WHERE id = 1").fetchone()
    meta = tmpl["metadata"]

    def rows():
        for i in range(n):
            r = rev + 1 + i
            name = "cm-%07d" % i
            uid = "00000000-0000-4000-8000-%012d" % i
            meta["name"], meta["uid"], meta["resourceVersion"] = name, uid, str(r)
            yield (r, "configmaps", NS, name, uid, r, 0, 0,
                   json.dumps(tmpl, separators=(",", ":")))

    con.executemany("INSERT INTO sk_history (rev, resource, namespace, name, uid, create_rev, "
                    "prev_rev, deleted, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows())
    con.execute("UPDATE sk_revision SET rev = ? WHERE id = 1", (rev + n,))
    con.execute("COMMIT")
    con.close()
    return rev + n


def bulk_load_pg(url, tmpl, n):
    """The same rows as bulk_load, made by PostgreSQL itself."""
    meta = tmpl["metadata"]
    meta["name"], meta["uid"], meta["resourceVersion"] = "@NAME@", "@UID@", "@RV@"
    text = json.dumps(tmpl, separators=(",", ":"))
    assert "$t$" not in text
    q = """
BEGIN;
CREATE TEMP TABLE base AS SELECT rev FROM sk_revision WHERE id = 1;
INSERT INTO sk_history (rev, resource, namespace, name, uid, create_rev, prev_rev, deleted, value)
SELECT b.rev + i, 'configmaps', '%(ns)s', 'cm-' || lpad((i - 1)::text, 7, '0'),
       '00000000-0000-4000-8000-' || lpad((i - 1)::text, 12, '0'), b.rev + i, 0, false,
       replace(replace(replace($t$%(tmpl)s$t$, '@NAME@', 'cm-' || lpad((i - 1)::text, 7, '0')),
               '@UID@', '00000000-0000-4000-8000-' || lpad((i - 1)::text, 12, '0')),
               '@RV@', (b.rev + i)::text)
FROM base b, generate_series(1, %(n)d) AS i;
UPDATE sk_revision SET rev = (SELECT rev FROM base) + %(n)d WHERE id = 1;
SELECT rev FROM sk_revision WHERE id = 1;
COMMIT;
ANALYZE;
""" % {"ns": NS, "tmpl": text, "n": n}
    p = subprocess.run(["psql", url, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"],
                       input=q, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        raise SystemExit("psql failed: %s" % p.stderr)
    return int(p.stdout.split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--starts", type=int, default=2)
    ap.add_argument("--payload", type=int, default=100, help="bytes of data per object")
    ap.add_argument("--backend", default="sqlite", choices=["sqlite", "postgres"])
    ap.add_argument("--pg-url")
    args = ap.parse_args()
    if args.backend == "postgres" and not args.pg_url:
        raise SystemExit("--pg-url is needed for postgres")
    srv = Server(args.bin, args.pg_url if args.backend == "postgres" else None)
    try:
        srv.start()
        tmpl = template(srv, args.payload)
        srv.stop(kill=False)
        size = len(json.dumps(tmpl))
        t0 = time.monotonic()
        if args.backend == "postgres":
            top = bulk_load_pg(args.pg_url, tmpl, args.n)
            size_mib = float(subprocess.run(
                ["psql", args.pg_url, "-X", "-A", "-t", "-c", "SELECT pg_database_size("
                 "current_database())"], capture_output=True, text=True).stdout) / 2**20
        else:
            db = os.path.join(srv.dir, "sqlkube.db")
            top = bulk_load(db, tmpl, args.n)
            size_mib = os.path.getsize(db) / 2**20
        load_s = time.monotonic() - t0
        ready, rss = [], []
        for _ in range(args.starts):
            ready.append(srv.start())
            st, body = Client(srv.port).req("GET", "/api/v1/namespaces/%s/configmaps?limit=1"
                                            % NS)
            assert st == 200 and int(json.loads(body)["metadata"]["resourceVersion"]) >= top
            rss.append(rss_kib(srv.proc.pid))
            srv.stop(kill=False)
        print("| backend | objects | object bytes | load (s) | db (MiB) | start to /readyz: each (s) | "
              "RSS when ready (MiB) | peak RSS (MiB) |")
        print("|---|---:|---:|---:|---:|---|---:|---:|")
        print("| %s | %d | %d | %.1f | %.0f | %s | %.0f | %.0f |" % (
            args.backend, args.n, size, load_s, size_mib,
            " / ".join("%.2f" % r for r in ready),
            statistics.median(r["VmRSS"] for r in rss) / 1024,
            max(r["VmHWM"] for r in rss) / 1024))
        print("last start: %s" % srv.replay_line())
    finally:
        if srv.proc and srv.proc.poll() is None:
            srv.stop(kill=True)
        shutil.rmtree(srv.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
