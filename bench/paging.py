#!/usr/bin/python3
"""Paging benchmark: per-page latency at growing table sizes, and server
memory for unpaged lists.

For each size N it builds a fresh database holding N ConfigMaps (~300 bytes
each) in namespace "bench" -- written straight into the schema (sk_history,
sk_revision) because loading a million objects over HTTP would measure the
write path instead. The history is not trivially one row per
key: every 10th object has a superseded version, and N/20 more objects
(named gone-*, so they sort after every live cm-* key) were created and
deleted, leaving 2 rows each. --compact then runs `sqlkube compact
--retain 0`, leaving only the live versions. The load ends with ANALYZE
(VACUUM ANALYZE on PostgreSQL, so autovacuum does not start in the middle of
a measurement); its time, compaction included, is reported. On PostgreSQL
each size gets its own database next to --pg-url's, dropped afterwards.

It then starts `sqlkube serve` on it and:
  * pages through the whole list with limit=500 over one keep-alive
    connection and reports the latency of the first, middle and last pages
    and the median (flat = cost independent of N and of the position);
  * restarts the server, does ONE unpaged list of everything, and reports
    the server's peak RSS (VmHWM) before and after (flat = streamed).

Usage: bench/paging.py --bin build/sqlkube [--sizes 10000,100000,1000000]
                       [--backend sqlite|postgres] [--pg-url URL] [--compact]
Prints a markdown table. Needs /usr/bin/python3 (stdlib only) and, for
PostgreSQL, psql.
"""

import argparse
import http.client
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import tempfile
import time
import urllib.parse
import uuid
from benchlib import create_database, drop_database, free_port, psql

RESOURCE = "configmaps"
NS = "bench"


def obj_json(name, rev, uid, extra=""):
    return json.dumps({
        "kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": NS, "uid": uid, "resourceVersion": str(rev),
                     "creationTimestamp": "2026-01-01T00:00:00Z", "generation": 1,
                     "labels": {"app": "bench", "shard": str(rev % 16)}},
        "data": {"payload": "x" * 160 + extra}}, separators=(",", ":"))


def rows(n):
    """Yields history rows (rev, resource, ns, name, uid, create_rev, prev_rev, deleted, value):
    n live objects, every 10th updated once, and 1 in 20 extra objects deleted."""
    rev = 0
    live = {}
    for i in range(n):
        name = "cm-%07d" % i
        rev += 1
        uid = str(uuid.UUID(int=i + 1))
        live[name] = (rev, uid, rev)
        yield (rev, RESOURCE, NS, name, uid, rev, 0, 0, obj_json(name, rev, uid))
        if i % 20 == 0:
            gone = "gone-%07d" % i
            rev += 1
            guid = str(uuid.UUID(int=10 ** 9 + i))
            yield (rev, RESOURCE, NS, gone, guid, rev, 0, 0, obj_json(gone, rev, guid))
            rev += 1
            yield (rev, RESOURCE, NS, gone, guid, rev - 1, rev - 1, 1, obj_json(gone, rev, guid))
    for i in range(0, n, 10):
        name = "cm-%07d" % i
        prev, uid, created = live[name]
        rev += 1
        live[name] = (rev, uid, created)
        yield (rev, RESOURCE, NS, name, uid, created, prev, 0, obj_json(name, rev, uid, "u"))


COLUMNS = "rev, resource, namespace, name, uid, create_rev, prev_rev, deleted, value"
# Migration 0011's flag, as the writer leaves it: every version but its key's
# newest is superseded (lists at a past revision rely on it).
SUPERSEDE = ("UPDATE sk_history SET superseded = %s WHERE EXISTS (SELECT 1 FROM sk_history n "
             "WHERE n.resource = sk_history.resource AND n.namespace = sk_history.namespace "
             "AND n.name = sk_history.name AND n.rev > sk_history.rev)")


def load_sqlite(path, n):
    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous=OFF")
    db.executemany("INSERT INTO sk_history (%s) VALUES (?,?,?,?,?,?,?,?,?)" % COLUMNS, rows(n))
    db.execute(SUPERSEDE % "1")
    maxrev = db.execute("SELECT max(rev) FROM sk_history").fetchone()[0]
    db.execute("UPDATE sk_revision SET rev = ?", (maxrev,))
    db.commit()
    db.close()


def load_postgres(url, n):
    tmp = tempfile.NamedTemporaryFile("w", delete=False, suffix=".tsv")
    for r in rows(n):
        tmp.write("\t".join([str(r[0]), r[1], r[2], r[3], r[4], str(r[5]), str(r[6]),
                             "t" if r[7] else "f", r[8].replace("\\", "\\\\")]) + "\n")
    tmp.close()
    sql = ("\\copy sk_history (%s) FROM '%s'\n%s;\n"
           "UPDATE sk_revision SET rev = (SELECT max(rev) FROM sk_history);\n"
           % (COLUMNS, tmp.name, SUPERSEDE % "true"))
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", url], input=sql, text=True, check=True)
    os.unlink(tmp.name)


class Server:
    def __init__(self, binary, data_dir, db, extra=()):
        self.binary, self.data_dir, self.db, self.extra = binary, data_dir, db, list(extra)
        self.proc = None

    def start(self):
        log = os.path.join(self.data_dir, "log")
        self.port = free_port()
        with open(log, "a") as err:
            self.proc = subprocess.Popen(
                [self.binary, "serve", "--plain-http", "--listen", "127.0.0.1:%d" % self.port, "--data-dir",
                 self.data_dir, "--db", self.db, "--compact-interval", "0"] + self.extra,
                stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.time() + 30
        while time.time() < deadline and self.proc.poll() is None:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            try:
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            finally:
                c.close()
            time.sleep(0.05)
        self.stop()
        with open(log) as f:
            raise RuntimeError("server did not become ready:\n" + f.read()[-2000:])

    def hwm_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        if self.proc:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(10)
            self.proc = None


def page_latencies(port, limit=500):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    path = "/api/v1/namespaces/%s/configmaps" % NS
    cont, lat, total = None, [], 0
    while True:
        q = {"limit": limit}
        if cont:
            q["continue"] = cont
        t0 = time.perf_counter()
        conn.request("GET", path + "?" + urllib.parse.urlencode(q))
        r = conn.getresponse()
        body = r.read()
        lat.append((time.perf_counter() - t0) * 1000)
        assert r.status == 200, body[:300]
        doc = json.loads(body)
        total += len(doc["items"])
        cont = doc["metadata"].get("continue")
        if not cont:
            return lat, total


def unpaged(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t0 = time.perf_counter()
    conn.request("GET", "/api/v1/namespaces/%s/configmaps" % NS)
    r = conn.getresponse()
    if r.status != 200:
        raise RuntimeError("unpaged list: %d %r" % (r.status, r.read(300)))
    n = 0
    while True:
        chunk = r.read(1 << 20)
        if not chunk:
            break
        n += len(chunk)
    return n, (time.perf_counter() - t0)


def database(backend, pg_url, work, label):
    """A fresh database for one run: (URL, PostgreSQL database name to drop or None)."""
    if backend == "sqlite":
        return "sqlite:" + os.path.join(work, "sqlkube.db"), None
    pg_db = "%s_%d" % (label, os.getpid())
    return create_database(pg_url, pg_db), pg_db


def prepare(binary, db, n, compact):
    """Migrates and loads db, optionally compacts it, and updates planner statistics."""
    subprocess.run([binary, "migrate", "--db", db], check=True, stdout=subprocess.DEVNULL)
    sqlite_path = db[len("sqlite:"):] if db.startswith("sqlite:") else None
    if sqlite_path:
        load_sqlite(sqlite_path, n)
    else:
        load_postgres(db, n)
    if compact:
        subprocess.run([binary, "compact", "--db", db, "--retain", "0"], check=True,
                       stdout=subprocess.DEVNULL)
    if sqlite_path:
        conn = sqlite3.connect(sqlite_path)
        conn.execute("ANALYZE")
        conn.close()
    else:
        psql(db, "VACUUM ANALYZE")


def measure(binary, work, db):
    """Pages through the list, then does one unpaged list on a fresh server."""
    srv = Server(binary, work, db)
    srv.start()
    try:
        lat, total = page_latencies(srv.port)
    finally:
        srv.stop()
    srv.start()
    try:
        before = srv.hwm_kib()
        size, secs = unpaged(srv.port)
        after = srv.hwm_kib()
    finally:
        srv.stop()
    return lat, total, size, secs, before, after


def parse_common_args(ap, sizes):
    """Adds the flags every loader-based benchmark takes, parses: (args, absolute binary)."""
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--sizes", default=sizes)
    ap.add_argument("--backend", default="sqlite", choices=["sqlite", "postgres"])
    ap.add_argument("--pg-url", help="an existing database; one more is created per size")
    args = ap.parse_args()
    if args.backend == "postgres" and not args.pg_url:
        ap.error("--backend postgres needs --pg-url")
    return args, os.path.abspath(args.bin)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compact", action="store_true",
                    help="run `sqlkube compact --retain 0` after loading: no tombstones or "
                    "superseded versions left")
    args, binary = parse_common_args(ap, "10000,100000,1000000")
    print("| backend | objects | load s | pages | first page ms | middle page ms | last page ms | "
          "median ms | unpaged list MB | unpaged s | RSS before MB | peak RSS after MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in [int(s) for s in args.sizes.split(",")]:
        work = tempfile.mkdtemp(prefix="sk-bench-page-")
        pg_db = None
        try:
            t0 = time.perf_counter()
            db, pg_db = database(args.backend, args.pg_url, work, "page_%d" % n)
            prepare(binary, db, n, args.compact)
            load_s = time.perf_counter() - t0
            lat, total, size, secs, before, after = measure(binary, work, db)
            assert total == n, (total, n)
            print("| %s | %d | %.0f | %d | %.1f | %.1f | %.1f | %.1f | %.0f | %.2f | %.1f | %.1f |"
                  % (args.backend, n, load_s, len(lat), lat[0], lat[len(lat) // 2], lat[-1],
                     statistics.median(lat), size / 1e6, secs, before / 1024, after / 1024),
                  flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
            if pg_db:
                drop_database(args.pg_url, pg_db)


if __name__ == "__main__":
    main()
