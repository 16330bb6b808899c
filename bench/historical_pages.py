#!/usr/bin/python3
"""Historical pages over HTTP: a continue-token chain at a past revision,
served from the watch cache's snapshot vs from SQL.

For each size N it loads N ConfigMaps (~300 bytes, the loader of
bench/paging.py), starts `sqlkube serve`, reads the first page (limit=500)
of a consistent list -- its continue token names revision R -- then moves
the store on with --updates PATCHes of random objects, so R is in the past.
It then follows the token chain to the end twice, timing every page:
  1. on the running server: R is held by a B-tree snapshot (the server's
     sqlkube_list_chunks_total{source="sql"} must not move);
  2. after a restart: the cache now starts at the current revision, so R
     has no snapshot and every page is read from SQL.
The two chains must return identical bytes (items and tokens). Prints a
markdown table: median and p90 page latency of each, and their ratio.

Usage: bench/historical_pages.py --bin build/sqlkube [--sizes 10000,100000]
           [--updates 300] [--backend sqlite|postgres --pg-url URL]
"""

import argparse
import hashlib
import http.client
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paging import NS, Server, database, parse_common_args, prepare, psql  # noqa: E402

PATH = "/api/v1/namespaces/%s/configmaps" % NS


def get(conn, path):
    t0 = time.perf_counter()
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    return r.status, body, (time.perf_counter() - t0) * 1000


def chunks(conn, source):
    _, body, _ = get(conn, "/metrics")
    key = 'sqlkube_list_chunks_total{source="%s"} ' % source
    for line in body.decode().splitlines():
        if line.startswith(key):
            return int(float(line.split()[-1]))
    raise RuntimeError("no %s in /metrics" % key)


def follow(conn, token):
    """Follows a token chain: (latencies ms, digest of every body)."""
    lat, digest = [], hashlib.sha256()
    while token:
        status, body, ms = get(conn, PATH + "?" + urllib.parse.urlencode(
            {"limit": 500, "continue": token}))
        assert status == 200, body[:300]
        lat.append(ms)
        digest.update(body)
        token = json.loads(body)["metadata"].get("continue")
    return lat, digest.hexdigest()


def p90(xs):
    return sorted(xs)[int(len(xs) * 0.9)]


def run(binary, backend, pg_url, n, updates):
    work = tempfile.mkdtemp(prefix="sk-bench-hist-")
    db, pg_db = database(backend, pg_url, work, "hist_%d" % n)
    try:
        prepare(binary, db, n, False)
        srv = Server(binary, work, db)
        srv.start()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
            status, body, _ = get(conn, PATH + "?limit=500")
            assert status == 200, body[:300]
            token = json.loads(body)["metadata"]["continue"]
            rnd = random.Random(1)
            for _ in range(updates):
                name = "cm-%07d" % rnd.randrange(n)
                conn.request("PATCH", PATH + "/" + name, body=json.dumps({"data": {"u": "1"}}),
                             headers={"Content-Type": "application/merge-patch+json"})
                r = conn.getresponse()
                r.read()
                assert r.status == 200, r.status
            sql0 = chunks(conn, "sql")
            mem_lat, mem_digest = follow(conn, token)
            sql_chunks_during = chunks(conn, "sql") - sql0
        finally:
            srv.stop()
        srv.start()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
            sql_lat, sql_digest = follow(conn, token)
        finally:
            srv.stop()
        assert mem_digest == sql_digest, "snapshot and SQL pages differ"
        return mem_lat, sql_lat, sql_chunks_during
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if pg_db:
            psql(pg_url, "DROP DATABASE IF EXISTS %s" % pg_db)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--updates", type=int, default=300)
    args, binary = parse_common_args(ap, "10000,100000")
    print("| backend | objects | pages | snapshot median ms | snapshot p90 ms | SQL median ms | "
          "SQL p90 ms | SQL / snapshot | SQL chunks during the snapshot chain |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in [int(s) for s in args.sizes.split(",")]:
        mem, sql, during = run(binary, args.backend, args.pg_url, n, args.updates)
        print("| %s | %d | %d | %.2f | %.2f | %.2f | %.2f | %.1f | %d |"
              % (args.backend, n, len(mem), statistics.median(mem), p90(mem),
                 statistics.median(sql), p90(sql), statistics.median(sql) / statistics.median(mem),
                 during), flush=True)


if __name__ == "__main__":
    main()
