#!/usr/bin/env python3
"""current_index_cost.py - WAL pages a SQLite commit of creates writes with
and without the sk_current index table, outside sqlkube.

    python3 bench/current_index_cost.py [--commits 2000] [--per-commit 31]

Builds sk_history (with sk_history_key) and sk_current as migrations 0001
to 0008 defined them (0009 dropped sk_current after this measurement),
loads 100,000 rows with the write benchmark's key pattern (32 clients'
sequential names in one namespace, 1.2 KiB values), then makes --commits
commits of --per-commit creates each, writing sk_current too or
not, and prints the WAL frames per commit (the WAL's size, autocheckpoint
off) and the process CPU they took. synchronous=OFF: this counts pages, not
fsyncs.
"""
import argparse
import os
import sqlite3
import tempfile
import time


def run(path, with_current, commits, per_commit):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE sk_history (rev INTEGER PRIMARY KEY, resource TEXT NOT NULL,"
               " namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL,"
               " create_rev INTEGER NOT NULL, prev_rev INTEGER NOT NULL,"
               " deleted INTEGER NOT NULL, value TEXT NOT NULL)")
    db.execute("CREATE INDEX sk_history_key ON sk_history (resource, namespace, name, rev)")
    db.execute("CREATE TABLE sk_current (resource TEXT NOT NULL, namespace TEXT NOT NULL,"
               " name TEXT NOT NULL, rev INTEGER NOT NULL,"
               " PRIMARY KEY (resource, namespace, name)) WITHOUT ROWID")
    value = "x" * 1200
    rev = 0

    def create(name):
        nonlocal rev
        rev += 1
        db.execute("INSERT INTO sk_history VALUES (?, 'configmaps', 'bench', ?, 'u', ?, 0, 0, ?)",
                   (rev, name, rev, value))
        if with_current:
            db.execute("INSERT INTO sk_current VALUES ('configmaps', 'bench', ?, ?)", (name, rev))

    db.execute("BEGIN")
    for i in range(100000):
        create("w-%d-%d" % (i % 32, i // 32))
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cpu = time.process_time()
    for b in range(commits):
        db.execute("BEGIN")
        for k in range(per_commit):
            i = b * per_commit + k
            create("a-%d-%d" % (i % 32, i // 32))
        db.execute("COMMIT")
    cpu = time.process_time() - cpu
    page = db.execute("PRAGMA page_size").fetchone()[0]
    frames = (os.path.getsize(path + "-wal") - 32) // (page + 24)
    db.close()
    return frames / commits, frames * (page + 24) / commits / 1024, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--per-commit", type=int, default=31)
    args = ap.parse_args()
    print("| tables written | WAL pages per commit | KiB per commit | CPU s |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="sk-curidx.") as d:
        for with_current in (1, 0):
            pages, kib, cpu = run(os.path.join(d, "db%d" % with_current), with_current,
                                  args.commits, args.per_commit)
            print("| %s | %.1f | %.0f | %.2f |" % (
                "history + sk_history_key + sk_current" if with_current else
                "history + sk_history_key", pages, kib, cpu))


if __name__ == "__main__":
    main()
