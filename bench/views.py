#!/usr/bin/env python3
"""views.py - the README's SQL examples, and the whole-table queries it warns
about, at 100,000 objects with no statistics, with migration 0012's key
index (the flags in sk_history_key) and with 0011's, on the same data in one
run.

    python3 bench/views.py [--objects 100000] [--timeout 60] [--bin build/sqlkube]
                           [--pg-url URL --pg-data DIR] [--no-sqlite]

The queries are read from README.md ("Inspecting state with SQL", through
tests/support/readme_sql.py), each on its own backend, so the table is of
exactly what the README tells people to run; after them come queries the
README does not offer, whole-table aggregates and decoded filters, to show
what they cost.

For each backend (SQLite; PostgreSQL too with --pg-url, a database of a
server whose data directory is --pg-data, as tests/support/pg.sh makes
one: its log goes to server.log beside it) it migrates an empty database with
`sqlkube migrate`, then loads by SQL, with the flags the writer would have
set:
  - --objects live objects in 200 namespaces ('default' among them, each
    with every resource), five resources (configmaps, pods, secrets,
    services, events), each with a create and two updates (3 rows), about
    1 KiB of JSON each, half of them labelled app=...; the first is the
    configmap default/kube-root-ca.crt;
  - a tenth as many objects created and deleted (a row and a tombstone);
  - as many etcd keys in sk_kv in kube-apiserver's layout (protobuf values,
    a quarter custom resources example.com/widgets with JSON values; among
    them /registry/pods/default/web), each put twice, and a tenth as many
    deleted; a TTL row for each event.
Then the statistics go: PostgreSQL is crash-restarted (pg_ctl restart -m
immediate: the cumulative statistics are lost, so autovacuum will not
ANALYZE; it is kept off the tables from the load to the crash, which the
load and the copy below can outlast its naptime by), pg_stat_reset() runs
too, and nothing is ever ANALYZEd (the script checks that pg_stats holds
nothing for the tables); SQLite has no sqlite_stat1.

The data is loaded once and copied (a copy of the SQLite file; on
PostgreSQL a database made from the loaded one as its template, before the
crash); the copy gets 0011's sk_history_key back. Each query runs 5 times in
a fresh session (psql, or a new sqlite3 connection) on each, the two
alternating, and each median is printed; the session
reads the schema (an EXPLAIN of the query) before the clock starts. A query
that passes --timeout seconds is cancelled and shown as such (and not
repeated). The plan column is the
access path to sk_history / sk_kv / sk_ttl with the indexes (EXPLAIN QUERY
PLAN, EXPLAIN). PostgreSQL runs twice: as loaded, never vacuumed (an
index-only scan still reads the heap for visibility), then after a VACUUM
(not ANALYZE: pg_stats stays empty) and another crash restart, as a table
autovacuum has been through.
"""
import argparse
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from readme_sql import examples  # noqa: E402

RESOURCES = ("configmaps", "pods", "secrets", "services", "events")
NAMESPACES = 200
# the copy's key index, as migration 0011 left it
INDEX_0011 = ("DROP INDEX sk_history_key",
              "CREATE INDEX sk_history_key ON sk_history (resource, namespace, name, rev)")
RUNS = 5


def load_sql(backend, n):
    """Statements that fill the migrated schema (revisions without gaps, in
    the order the writes would have come: all creates, then each round of
    updates, then the short-lived objects and the etcd keys)."""
    pg = backend == "postgres"
    t, f = ("true", "false") if pg else ("1", "0")
    # one row per i in [lo, hi): SQL's own generator on each backend
    if pg:
        def series(lo, hi):
            return "generate_series(%d, %d) AS g(i)" % (lo, hi - 1)
    else:
        def series(lo, hi):
            return ("(WITH RECURSIVE s(i) AS (SELECT %d UNION ALL SELECT i + 1 FROM s WHERE i < %d)"
                    " SELECT i FROM s) AS g" % (lo, hi - 1))
    cat = "||"
    res = ("(ARRAY['%s'])[i %% 5 + 1]" % "','".join(RESOURCES) if pg else
           "CASE i %% 5 %s END" % " ".join("WHEN %d THEN '%s'" % (k, r)
                                           for k, r in enumerate(RESOURCES)))
    # namespaces cycle every five objects, so each holds every resource;
    # object 0 is the configmap default/kube-root-ca.crt the README reads
    def namespace(slot):
        return ("CASE WHEN %s %% %d = 0 THEN 'default' ELSE 'ns-' %s (%s %% %d) END"
                % (slot, NAMESPACES, cat, slot, NAMESPACES))
    ns = namespace("(i / 5)")
    name = "CASE WHEN i = 0 THEN 'kube-root-ca.crt' ELSE 'o-' || i END"
    pad = "repeat('x', 800)" if pg else "printf('%.800c', 'x')"

    def value(rev):
        label = ("CASE WHEN i % 2 = 0 THEN ',\"labels\":{\"app\":\"a' || (i % 10) || '\"}'"
                 " ELSE '' END")
        return ("'{\"apiVersion\":\"v1\",\"kind\":\"Object\",\"metadata\":{\"name\":\"' || %s || "
                "'\",\"namespace\":\"' || %s || '\",\"resourceVersion\":\"' || (%s) || '\"' || %s"
                " || '},\"data\":{\"k\":\"' || %s || '\"}}'" % (name, ns, rev, label, pad))
    hist = ("INSERT INTO sk_history (rev, resource, namespace, name, uid, create_rev, prev_rev,"
            " deleted, value, superseded) ")
    out = []
    for r in range(3):
        rev = "%d + i + 1" % (r * n)
        prev = "0" if r == 0 else "%d + i + 1" % ((r - 1) * n)
        out.append(hist + "SELECT %s, %s, %s, %s, 'uid-' || i, i + 1, %s, %s, %s, %s FROM %s"
                   % (rev, res, ns, name, prev, f, value(rev),
                      t if r < 2 else f, series(0, n)))
    d = n // 10
    base = 3 * n
    out.append(hist + "SELECT %d + i - %d + 1, 'configmaps', 'gone', 'g-' || i, 'uid-g' || i,"
               " %d + i - %d + 1, 0, %s, %s, %s FROM %s"
               % (base, n, base, n, f, value("%d + i - %d + 1" % (base, n)), t, series(n, n + d)))
    out.append(hist + "SELECT %d + i - %d + 1, 'configmaps', 'gone', 'g-' || i, 'uid-g' || i,"
               " %d + i - %d + 1, %d + i - %d + 1, %s, %s, %s FROM %s"
               % (base + d, n, base, n, base, n, t, value("%d + i - %d + 1" % (base + d, n)), f,
                  series(n, n + d)))
    # etcd keys: two puts each, then a tenth deleted; namespaces cycle every
    # twelve keys (each holds every resource); key 3 is /registry/pods/default/web
    kbase = base + 2 * d
    kns = namespace("(i / 12)")
    key = ("CASE WHEN i %% 4 = 0 THEN '/registry/example.com/widgets/' %s %s %s '/w-' %s i"
           " ELSE '/registry/' %s (CASE i %% 3 WHEN 0 THEN 'pods' WHEN 1 THEN 'configmaps'"
           " ELSE 'secrets' END) %s '/' %s %s %s (CASE WHEN i = 3 THEN '/web' ELSE '/k-' %s i END)"
           " END" % (cat, kns, cat, cat, cat, cat, cat, kns, cat, cat))
    if pg:
        keyx = "convert_to(%s, 'UTF8')" % key
        val = ("CASE WHEN i % 4 = 0 THEN convert_to('{\"kind\":\"Widget\",\"spec\":{\"size\":'"
               " || i || '}}', 'UTF8') ELSE '\\x6b387300'::bytea || convert_to(repeat('p', 400),"
               " 'UTF8') END")
    else:
        keyx = "CAST(%s AS BLOB)" % key
        val = ("CASE WHEN i % 4 = 0 THEN CAST('{\"kind\":\"Widget\",\"spec\":{\"size\":' || i ||"
               " '}}' AS BLOB) ELSE x'6b387300' || CAST(printf('%.400c', 'p') AS BLOB) END")
    kv = ("INSERT INTO sk_kv (rev, sub, key, create_rev, version, lease, deleted, value,"
          " superseded) ")
    for r in range(2):
        out.append(kv + "SELECT %d + i + 1, 0, %s, %d + i + 1, %d, 0, %s, %s, %s FROM %s"
                   % (kbase + r * n, keyx, kbase, r + 1, f, val,
                      "CASE WHEN i < %d THEN %s ELSE %s END" % (d, t, f) if r else t,
                      series(0, n)))
    out.append(kv + "SELECT %d + i + 1, 0, %s, %d + i + 1, 0, 0, %s, %s, %s FROM %s"
               % (kbase + 2 * n, keyx, kbase, t, "''::bytea" if pg else "x''", f, series(0, d)))
    out.append("INSERT INTO sk_ttl (resource, namespace, name, rev, expires_at_ms) SELECT"
               " resource, namespace, name, rev, 1900000000000 FROM sk_history"
               " WHERE resource = 'events' AND NOT deleted AND NOT superseded" if pg else
               "INSERT INTO sk_ttl (resource, namespace, name, rev, expires_at_ms) SELECT"
               " resource, namespace, name, rev, 1900000000000 FROM sk_history"
               " WHERE resource = 'events' AND deleted = 0 AND superseded = 0")
    out.append("UPDATE sk_revision SET rev = %d WHERE id = 1" % (kbase + 2 * n + d))
    return out


def queries(backend):
    """[(label, SQL)]: the README's examples for backend, then the queries it
    does not offer."""
    readme = [("README", q) for b, q in examples() if b == backend]
    spec = ("value_json::jsonb->'spec'" if backend == "postgres" else
            "json_extract(value_json, '$.spec')")
    return readme + [
        ("not in README", "SELECT count(*) FROM sk_objects"),
        ("not in README", "SELECT resource, count(*) FROM sk_objects GROUP BY resource"),
        ("not in README", "SELECT namespace, name, resource_version FROM sk_objects"
                          " WHERE resource = 'configmaps'"),
        ("not in README", "SELECT count(*) FROM sk_kv_latest"),
        ("not in README", "SELECT namespace, name, rev FROM sk_kv_latest WHERE resource = 'pods'"
                          " AND namespace = 'default'"),
        ("not in README", "SELECT name, %s FROM sk_kv_latest WHERE \"group\" = 'example.com'"
                          " AND resource = 'widgets'" % spec),
    ]


def sqlite_plan(paths, sql):
    db = sqlite3.connect(paths[0])
    try:
        steps = [r[3] for r in db.execute("EXPLAIN QUERY PLAN " + sql)]
    finally:
        db.close()
    return "; ".join(s for s in steps if re.match(r"(SCAN|SEARCH) (h|k|sk_\w+)\b", s))


def time_sqlite(paths, sql, timeout, old):
    """(seconds or None when cancelled at timeout, rows); old: on the copy
    with 0011's index."""
    db = sqlite3.connect(paths[old], isolation_level=None)
    deadline = time.perf_counter() + timeout
    db.set_progress_handler(lambda: time.perf_counter() > deadline, 10000)
    try:
        db.execute("EXPLAIN " + sql).fetchall()  # the schema read, outside the timing
        t = time.perf_counter()
        n = len(db.execute(sql).fetchall())
        return time.perf_counter() - t, n
    except sqlite3.OperationalError as e:
        if "interrupted" not in str(e):
            raise
        return None, None
    finally:
        db.close()


def psql(url, *commands, check=True):
    args = ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", url]
    for c in commands:
        args += ["-c", c]
    return subprocess.run(args, capture_output=True, text=True, check=check)


def pg_plan(urls, sql):
    lines = psql(urls[0], "EXPLAIN " + sql).stdout.splitlines()
    return "; ".join(re.sub(r"\s+\(cost=.*", "", re.sub(r"^[\s>-]+", "", line)) for line in lines
                     if re.search(r"Scan.* on (sk_\w+)", line))


def time_pg(urls, sql, timeout, old):
    # the EXPLAIN loads the catalog caches outside the timing
    p = psql(urls[old], "SET statement_timeout = '%ds'" % timeout, "EXPLAIN " + sql,
             "\\timing on", "\\o /dev/null", sql, check=False)
    if "statement timeout" in p.stderr:
        return None, None
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    return float(re.findall(r"Time: ([0-9.]+) ms", p.stdout)[-1]) / 1000, None


def as_owner(cmd):
    return (["runuser", "-u", "postgres", "--"] + cmd) if os.getuid() == 0 else cmd


def measure(timer, timeout):
    """Medians of RUNS runs on the database and RUNS on its copy with
    0011's index, alternating (so both see the same load from the rest of the
    machine), as text; a side cancelled at timeout is not run again."""
    runs = {False: [], True: []}
    for _ in range(RUNS):
        for old in (False, True):
            if runs[old] is not None:
                s, _ = timer(timeout, old)
                runs[old] = None if s is None else runs[old] + [s]

    def text(r):
        if r is None:
            return "> %d s (cancelled)" % timeout
        m = statistics.median(r)
        return "%.1f ms" % (m * 1000) if m < 10 else "%.1f s" % m
    return text(runs[False]), text(runs[True])


def run_backend(backend, args, db, state):
    if backend == "sqlite":
        timer, plan = time_sqlite, sqlite_plan
    else:
        timer, plan = time_pg, pg_plan
    for label, q in queries(backend):
        new, old = measure(lambda t, on_old: timer(db, q, t, on_old), args.timeout)
        if backend == "sqlite":
            rows = timer(db, q, args.timeout, False)[1]
        else:
            rows = psql(db[0], "SET statement_timeout = '%ds'" % args.timeout,
                        "SELECT count(*) FROM (%s) q" % q).stdout.strip()
        print("| %s | %s | `%s` | %s | %s | %s | %s |" % (
            state, label, q.replace("|", "\\|"), rows, new, old, plan(db, q)), flush=True)


def setup_sqlite(args, workdir):
    path = os.path.join(workdir, "views.db")
    subprocess.run([args.bin, "migrate", "--db", "sqlite:" + path], check=True,
                   stdout=subprocess.DEVNULL)
    db = sqlite3.connect(path, isolation_level=None)
    t = time.perf_counter()
    db.execute("BEGIN")
    for stmt in load_sql("sqlite", args.objects):
        db.execute(stmt)
    db.execute("COMMIT")
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'"
                      ).fetchone()[0] == 0
    n = db.execute("SELECT count(*) FROM sk_history").fetchone()[0]
    k = db.execute("SELECT count(*) FROM sk_kv").fetchone()[0]
    db.close()
    old = os.path.join(workdir, "views-0011.db")
    shutil.copyfile(path, old)
    db = sqlite3.connect(old, isolation_level=None)
    for stmt in INDEX_0011:
        db.execute(stmt)
    db.close()
    print("sqlite: loaded %d sk_history rows, %d sk_kv rows in %.0f s; no sqlite_stat1; a copy"
          " with 0011's key index" % (n, k, time.perf_counter() - t), flush=True)
    return path, old


def pg_crash(args):
    """Crash-restart the server: the cumulative statistics are gone, so
    autovacuum never ANALYZEs; then check pg_stats is empty for the tables."""
    # (-l: the new postmaster must not hold this script's pipes open)
    subprocess.run(as_owner([os.path.join(args.pg_bindir, "pg_ctl"), "-D", args.pg_data, "-w",
                             "-l", os.path.join(os.path.dirname(args.pg_data), "server.log"),
                             "-m", "immediate", "restart"]), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    for _ in range(100):
        if psql(args.pg_url, "SELECT 1", check=False).returncode == 0:
            break
        time.sleep(0.2)
    for url in pg_urls(args):
        psql(url, "SELECT pg_stat_reset()")
        counts = psql(url, "SELECT (SELECT count(*) FROM sk_history) || ' ' ||"
                      " (SELECT count(*) FROM sk_kv) || ' ' || (SELECT count(*) FROM pg_stats"
                      " WHERE tablename IN ('sk_history', 'sk_kv', 'sk_ttl'))").stdout.split()
        assert counts[2] == "0", "the tables were ANALYZEd"
    return counts


def dbname(url):
    return urllib.parse.urlparse(url).path.lstrip("/")


def pg_urls(args):
    """The loaded database and its copy with 0011's key index."""
    return args.pg_url, re.sub(r"/([^/?]*)(\?|$)", r"/\1_0011\2", args.pg_url, count=1)


def autovacuum(setting):
    return ["ALTER TABLE %s %s" % (t, setting) for t in ("sk_history", "sk_kv", "sk_ttl")]


def setup_pg(args):
    subprocess.run([args.bin, "migrate", "--db", args.pg_url], check=True,
                   stdout=subprocess.DEVNULL)
    t = time.perf_counter()
    # autovacuum kept off the tables until the crash, which forgets why it
    # would have come (the load and the copy can outlast its naptime)
    psql(args.pg_url, "BEGIN", *autovacuum("SET (autovacuum_enabled = false)"),
         *load_sql("postgres", args.objects), "COMMIT")
    loaded = time.perf_counter() - t
    new, old = pg_urls(args)
    psql(new, "CREATE DATABASE %s TEMPLATE %s" % (dbname(old), dbname(new)))
    psql(old, "BEGIN", *INDEX_0011, "COMMIT")
    counts = pg_crash(args)
    for url in pg_urls(args):
        psql(url, *autovacuum("RESET (autovacuum_enabled)"))
    print("postgres: loaded %s sk_history rows, %s sk_kv rows in %.0f s; crash-restarted,"
          " pg_stat_reset(), 0 rows in pg_stats" % (counts[0], counts[1], loaded), flush=True)


def vacuum_pg(args):
    for url in pg_urls(args):
        psql(url, "VACUUM sk_history", "VACUUM sk_kv", "VACUUM sk_ttl")
    pg_crash(args)
    print("postgres: VACUUMed (no ANALYZE), crash-restarted, pg_stat_reset(), 0 rows in pg_stats",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--objects", type=int, default=100000)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sqlkube"))
    ap.add_argument("--pg-url")
    ap.add_argument("--pg-data")
    ap.add_argument("--pg-bindir", default="/usr/lib/postgresql/15/bin")
    ap.add_argument("--no-sqlite", action="store_true")
    args = ap.parse_args()
    if bool(args.pg_url) != bool(args.pg_data):
        ap.error("--pg-url and --pg-data go together")
    print("| backend | query | SQL | rows | 0012 | 0011 | plan (0012) |")
    print("|---|---|---|---:|---:|---:|---|", flush=True)
    with tempfile.TemporaryDirectory(prefix="sk-views.") as d:
        if not args.no_sqlite:
            run_backend("sqlite", args, setup_sqlite(args, d), "SQLite")
        if args.pg_url:
            setup_pg(args)
            run_backend("postgres", args, pg_urls(args), "PostgreSQL, never vacuumed")
            vacuum_pg(args)
            run_backend("postgres", args, pg_urls(args), "PostgreSQL, vacuumed")


if __name__ == "__main__":
    main()
