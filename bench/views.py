#!/usr/bin/env python3
"""views.py - the SQL views for people at 100,000 objects without statistics:
migration 0011's (a filter on the superseded flag) against 0010's (an
anti-join per row), side by side on the same database in one run.

    python3 bench/views.py [--objects 100000] [--timeout 60] [--bin build/sqlkube]
                           [--pg-url URL --pg-data DIR] [--no-sqlite]

For each backend (SQLite; PostgreSQL too with --pg-url, a database of a
server whose data directory is --pg-data, as tests/support/pg.sh makes
one: its log goes to server.log beside it) it migrates an empty database with
`sqlkube migrate`, then loads by SQL, with the flags the writer would have
set:
  - --objects live objects in 200 namespaces ('default' among them), five
    resources (configmaps, pods, secrets, services, events), each with a
    create and two updates (3 rows), about 1 KiB of JSON each, half of them
    labelled app=...;
  - a tenth as many objects created and deleted (a row and a tombstone);
  - as many etcd keys in sk_kv in kube-apiserver's layout (protobuf values,
    a quarter custom resources with JSON values), each put twice, and a
    tenth as many deleted; a TTL row for each event.
Then the statistics go: PostgreSQL is crash-restarted (pg_ctl restart -m
immediate: the cumulative statistics are lost, so autovacuum will not
ANALYZE), pg_stat_reset() runs too, and nothing is ever ANALYZEd (the
script checks that pg_stats holds nothing for the tables); SQLite has no
sqlite_stat1. The 0010 views are created beside the new ones under the
names old_sk_objects and old_sk_kv_latest, from the text of migrations 0008
and 0009, and every query runs against both: the README's examples,
count(*) of each view, and a lookup of one key. Each query runs 3 times in
a fresh session (psql, or a new sqlite3 connection) and the median is
printed; a query that passes --timeout seconds is cancelled and shown as
such (and not repeated).
"""
import argparse
import os
import re
import sqlite3
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RESOURCES = ("configmaps", "pods", "secrets", "services", "events")
NAMESPACES = 200


def migration(backend, name):
    with open(os.path.join(ROOT, "migrations", backend, name)) as f:
        return f.read()


def old_views(backend):
    """0010's sk_objects and sk_kv_latest, renamed old_*."""
    objects = re.search(r"CREATE (?:OR REPLACE )?VIEW sk_objects AS.*?;",
                        migration(backend, "0009_history_is_current.sql"), re.S).group(0)
    latest = re.search(r"CREATE VIEW sk_kv_latest AS.*?;",
                       migration(backend, "0008_etcd_kv_views.sql"), re.S).group(0)
    return (objects.replace("OR REPLACE ", "").replace("VIEW sk_objects", "VIEW old_sk_objects")
            + "\n" + latest.replace("VIEW sk_kv_latest", "VIEW old_sk_kv_latest"))


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
    ns = ("CASE WHEN i %% %d = 0 THEN 'default' ELSE 'ns-' %s (i %% %d) END"
          % (NAMESPACES, cat, NAMESPACES))
    pad = "repeat('x', 800)" if pg else "printf('%.800c', 'x')"

    def value(rev):
        label = ("CASE WHEN i % 2 = 0 THEN ',\"labels\":{\"app\":\"a' || (i % 10) || '\"}'"
                 " ELSE '' END")
        return ("'{\"apiVersion\":\"v1\",\"kind\":\"Object\",\"metadata\":{\"name\":\"o-' || i || "
                "'\",\"namespace\":\"' || %s || '\",\"resourceVersion\":\"' || (%s) || '\"' || %s"
                " || '},\"data\":{\"k\":\"' || %s || '\"}}'" % (ns, rev, label, pad))
    hist = ("INSERT INTO sk_history (rev, resource, namespace, name, uid, create_rev, prev_rev,"
            " deleted, value, superseded) ")
    out = []
    for r in range(3):
        rev = "%d + i + 1" % (r * n)
        prev = "0" if r == 0 else "%d + i + 1" % ((r - 1) * n)
        out.append(hist + "SELECT %s, %s, %s, 'o-' || i, 'uid-' || i, i + 1, %s, %s, %s, %s FROM %s"
                   % (rev, res, ns, prev, f, value(rev),
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
    # etcd keys: two puts each, then a tenth deleted
    kbase = base + 2 * d
    key = ("CASE WHEN i %% 4 = 0 THEN '/registry/example.com/widgets/' %s %s %s '/w-' %s i"
           " ELSE '/registry/' %s (CASE i %% 3 WHEN 0 THEN 'pods' WHEN 1 THEN 'configmaps'"
           " ELSE 'secrets' END) %s '/' %s %s %s '/k-' %s i END" % (cat, ns, cat, cat, cat, cat,
                                                                   cat, ns, cat, cat))
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
    """(label, SQL with {objects} / {latest} for the view under test)."""
    if backend == "postgres":
        readme = [
            ("README: configmaps", "SELECT namespace, name, resource_version FROM {objects}"
                                   " WHERE resource = 'configmaps'"),
            ("README: labelled configmaps' data",
             "SELECT name, object->'data' FROM {objects} WHERE resource = 'configmaps'"
             " AND object->'metadata'->'labels' ? 'app'"),
            ("README: widgets' spec", "SELECT name, value_json::jsonb->'spec' FROM {latest}"
                                      " WHERE \"group\" = 'example.com' AND resource = 'widgets'"),
        ]
    else:
        readme = [
            ("README: configmaps", "SELECT namespace, name, resource_version FROM {objects}"
                                   " WHERE resource = 'configmaps'"),
            ("README: configmaps' data in default",
             "SELECT name, json_extract(object, '$.data') FROM {objects}"
             " WHERE resource = 'configmaps' AND namespace = 'default'"),
            ("README: widgets' spec", "SELECT name, json_extract(value_json, '$.spec') FROM"
                                      " {latest} WHERE \"group\" = 'example.com'"),
        ]
    return [
        ("count(*) FROM sk_objects", "SELECT count(*) FROM {objects}"),
    ] + readme + [
        ("one object by key", "SELECT resource_version FROM {objects} WHERE resource = 'pods'"
                              " AND namespace = 'ns-1' AND name = 'o-1001'"),
        ("README: sk_kv_latest by resource",
         "SELECT resource, count(*) FROM {latest} GROUP BY resource"),
        ("README: pods in sk_kv_latest",
         "SELECT namespace, name, rev FROM {latest} WHERE resource = 'pods'"),
        ("count(*) FROM sk_kv_latest", "SELECT count(*) FROM {latest}"),
        ("README: sk_history, newest 10 (no view)",
         "SELECT rev, resource, namespace, name, deleted FROM sk_history"
         " ORDER BY rev DESC LIMIT 10"),
        ("README: sk_expiring (no anti-join)", "SELECT * FROM sk_expiring"),
        ("README: one key's sk_kv_history (no anti-join)",
         "SELECT rev, version, deleted, encoding FROM sk_kv_history"
         " WHERE key_text = '/registry/pods/ns-1/k-201' ORDER BY rev"),
    ]


def time_sqlite(path, sql, timeout):
    """Seconds, or None when cancelled at timeout."""
    db = sqlite3.connect(path)
    deadline = time.perf_counter() + timeout
    db.set_progress_handler(lambda: time.perf_counter() > deadline, 10000)
    t = time.perf_counter()
    try:
        db.execute(sql).fetchall()
    except sqlite3.OperationalError as e:
        if "interrupted" not in str(e):
            raise
        return None
    finally:
        db.close()
    return time.perf_counter() - t


def psql(url, *commands, check=True):
    args = ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", url]
    for c in commands:
        args += ["-c", c]
    return subprocess.run(args, capture_output=True, text=True, check=check)


def time_pg(url, sql, timeout):
    p = psql(url, "\\timing on", "SET statement_timeout = '%ds'" % timeout, "\\o /dev/null", sql,
             check=False)
    if "statement timeout" in p.stderr:
        return None
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    return float(re.findall(r"Time: ([0-9.]+) ms", p.stdout)[-1]) / 1000


def as_owner(cmd):
    return (["runuser", "-u", "postgres", "--"] + cmd) if os.getuid() == 0 else cmd


def measure(timer, timeout):
    """Median of 3 runs (1 if the first is cancelled), as text."""
    runs = []
    for _ in range(3):
        s = timer(timeout)
        if s is None:
            return "> %d s (cancelled)" % timeout
        runs.append(s)
    m = statistics.median(runs)
    return "%.1f ms" % (m * 1000) if m < 10 else "%.1f s" % m


def run_backend(backend, args, db):
    new_view = {"objects": "sk_objects", "latest": "sk_kv_latest"}
    old_view = {"objects": "old_sk_objects", "latest": "old_sk_kv_latest"}
    if backend == "sqlite":
        timer = time_sqlite
    else:
        timer = time_pg
    rows = []
    for label, q in queries(backend):
        new_sql, old_sql = q.format(**new_view), q.format(**old_view)
        new = measure(lambda t: timer(db, new_sql, t), args.timeout)
        old = (measure(lambda t: timer(db, old_sql, t), args.timeout)
               if old_sql != new_sql else "(same query)")
        rows.append((label, new, old))
        print("| %s | %s | %s | %s |" % (backend, label, new, old), flush=True)
    return rows


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
    db.executescript(old_views("sqlite"))
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'"
                      ).fetchone()[0] == 0
    n = db.execute("SELECT count(*) FROM sk_history").fetchone()[0]
    k = db.execute("SELECT count(*) FROM sk_kv").fetchone()[0]
    db.close()
    print("sqlite: loaded %d sk_history rows, %d sk_kv rows in %.0f s; no sqlite_stat1"
          % (n, k, time.perf_counter() - t), flush=True)
    return path


def setup_pg(args):
    subprocess.run([args.bin, "migrate", "--db", args.pg_url], check=True,
                   stdout=subprocess.DEVNULL)
    t = time.perf_counter()
    psql(args.pg_url, "BEGIN", *load_sql("postgres", args.objects), old_views("postgres"),
         "COMMIT")
    loaded = time.perf_counter() - t
    # the crash: cumulative statistics are gone, so autovacuum never ANALYZEs
    # (-l: the new postmaster must not hold this script's pipes open)
    subprocess.run(as_owner([os.path.join(args.pg_bindir, "pg_ctl"), "-D", args.pg_data, "-w",
                             "-l", os.path.join(os.path.dirname(args.pg_data), "server.log"),
                             "-m", "immediate", "restart"]), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    for _ in range(100):
        if psql(args.pg_url, "SELECT 1", check=False).returncode == 0:
            break
        time.sleep(0.2)
    psql(args.pg_url, "SELECT pg_stat_reset()")
    counts = psql(args.pg_url, "SELECT (SELECT count(*) FROM sk_history) || ' ' ||"
                  " (SELECT count(*) FROM sk_kv) || ' ' || (SELECT count(*) FROM pg_stats"
                  " WHERE tablename IN ('sk_history', 'sk_kv'))").stdout.split()
    assert counts[2] == "0", "the tables were ANALYZEd"
    print("postgres: loaded %s sk_history rows, %s sk_kv rows in %.0f s; crash-restarted,"
          " pg_stat_reset(), 0 rows in pg_stats" % (counts[0], counts[1], loaded), flush=True)


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
    with tempfile.TemporaryDirectory(prefix="sk-views.") as d:
        todo = [] if args.no_sqlite else [("sqlite", lambda: setup_sqlite(args, d))]
        if args.pg_url:
            todo.append(("postgres", lambda: (setup_pg(args), args.pg_url)[1]))
        print("| backend | query | 0011: flag | 0010: anti-join |")
        print("|---|---|---:|---:|", flush=True)
        for backend, setup in todo:
            run_backend(backend, args, setup())


if __name__ == "__main__":
    main()
