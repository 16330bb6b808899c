#!/usr/bin/env python3
"""superseded_cost.py - what keeping the superseded flag (migration 0011),
and an index for the views on top of it (migration 0012's flags in the key
index, or a partial index of current rows, the design 0012 did not take),
cost a write, against the writer of migration 0010, outside sqlkube and in
one run.

    python3 bench/superseded_cost.py [--commits 2000] [--per-commit 31] [--pg-url URL]

Each design gets its own database with sk_history and sk_history_key as
the migrations define them (0010: no flag; 0011: the flag column; 0012:
the flag, and deleted and superseded appended to sk_history_key; "partial
index": 0011's, plus sk_history_live (resource, namespace, name, rev) WHERE
the row is current), loaded
with 100,000 rows of the write benchmark's key pattern (32 clients'
sequential names in one namespace, 1.2 KiB values), then --commits commits
of --per-commit writes each, three times: creates of new keys ("creates");
updates of keys drawn at random from those created in the last 100
commits ("recent": the row the flag goes on is young, as a Lease's or a
status's previous version); updates of keys drawn at random from the 100,000
loaded ones ("updates": the worst case for the flag, the row it flags sits
on a page nothing else touched since the last checkpoint).

SQLite (Python's sqlite3, synchronous=OFF, autocheckpoint off, as
current_index_cost.py): the writer's statements per write, 0010 an INSERT,
the others the UPDATE of the newest row's flag and the INSERT; WAL pages per
commit from the WAL's size, and process CPU.

PostgreSQL (--pg-url: a server where databases may be created; four are
created and dropped): the writer's own batch statement, append_held, as
0010 and as 0011 (read from src/store/postgres.c at --old and --new, git
revisions of this repository; the other two run 0011's), prepared, one
execution per commit with --per-commit rows, in a psql session with
synchronous_commit off; WAL bytes per commit (pg_current_wal_lsn, after a
CHECKPOINT), wall time of the session, and how many of the flag's UPDATEs
were HOT. The designs alternate in 3 rounds, each round on fresh keys;
the table shows each round.
"""
import argparse
import os
import random
import re
import sqlite3
import subprocess
import tempfile
import time

LOADED = 100000
VALUE = "x" * 1200
# "recent": updates of keys written in the last this many commits of creates
RECENT_COMMITS = 100
KINDS = ("creates", "recent", "updates")
# the writers compared: 0010's, 0011's, 0011's with a partial index of
# current rows (its WHERE is the backend's), and 0012's (0011's writer, the
# flags appended to the key index)
DESIGNS = ("0010: history row", "0011: flag + history row", "partial index (not taken)",
           "0012: flags in key index")
LIVE_INDEX = ("CREATE INDEX sk_history_live ON sk_history (resource, namespace, name, rev)"
              " WHERE %s")


def key_index(flag):
    return ("CREATE INDEX sk_history_key ON sk_history (resource, namespace, name, rev%s)"
            % (", deleted, superseded" if flag == 3 else ""))



def writer_statement(commit, name):
    """The SQL of the PostgreSQL writer's prepared statement name as
    src/store/postgres.c had it at commit: its string literals joined."""
    src = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "show",
                          "%s:src/store/postgres.c" % commit], capture_output=True, text=True,
                         check=True).stdout
    body = src[src.index('{"%s",' % name) + len(name) + 4:]
    body = body[:body.index("},")]
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', body))


def loaded_name(i):
    return "w-%d-%d" % (i % 32, i // 32)


# ---------------------------------------------------------------- SQLite

def sqlite_run(path, flag, commits, per_commit):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE sk_history (rev INTEGER PRIMARY KEY, resource TEXT NOT NULL,"
               " namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL,"
               " create_rev INTEGER NOT NULL, prev_rev INTEGER NOT NULL,"
               " deleted INTEGER NOT NULL, value TEXT NOT NULL%s)"
               % (", superseded INTEGER NOT NULL DEFAULT 0" if flag else ""))
    db.execute(key_index(flag))
    if flag == 2:
        db.execute(LIVE_INDEX % "deleted = 0 AND superseded = 0")
    rev = 0

    def write(name):
        nonlocal rev
        rev += 1
        if flag:
            db.execute("UPDATE sk_history SET superseded = 1 WHERE rev = (SELECT n.rev FROM"
                       " sk_history n WHERE n.resource = 'configmaps' AND n.namespace = 'bench'"
                       " AND n.name = ?1 ORDER BY n.rev DESC LIMIT 1) AND superseded = 0",
                       (name,))
        db.execute("INSERT INTO sk_history (rev, resource, namespace, name, uid, create_rev,"
                   " prev_rev, deleted, value) VALUES (?, 'configmaps', 'bench', ?, 'u', ?, 0, 0,"
                   " ?)", (rev, name, rev, VALUE))

    db.execute("BEGIN")
    for i in range(LOADED):
        write(loaded_name(i))
    db.execute("COMMIT")
    out = {}
    page = db.execute("PRAGMA page_size").fetchone()[0]
    rnd = random.Random(1)
    created = ["a-%d-%d" % (i % 32, i // 32) for i in range(commits * per_commit)]
    workloads = {"creates": lambda i: created[i],
                 "recent": lambda i: rnd.choice(created[-RECENT_COMMITS * per_commit:]),
                 "updates": lambda i: loaded_name(rnd.randrange(LOADED))}
    for kind in KINDS:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        cpu = time.process_time()
        for b in range(commits):
            db.execute("BEGIN")
            for k in range(per_commit):
                write(workloads[kind](b * per_commit + k))
            db.execute("COMMIT")
        cpu = time.process_time() - cpu
        frames = (os.path.getsize(path + "-wal") - 32) // (page + 24)
        out[kind] = (frames / commits, cpu)
    db.close()
    return out


def sqlite_section(args):
    print("SQLite, %d commits of %d writes after %d rows:" % (args.commits, args.per_commit,
                                                                LOADED))
    print("| writer | writes | WAL pages per commit | CPU s |")
    print("|---|---|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="sk-flagcost.") as d:
        for flag in range(len(DESIGNS)):
            r = sqlite_run(os.path.join(d, "db%d" % flag), flag, args.commits, args.per_commit)
            for kind in KINDS:
                print("| %s | %s | %.1f | %.2f |" % (DESIGNS[flag], kind, r[kind][0],
                                                      r[kind][1]), flush=True)


# ---------------------------------------------------------------- PostgreSQL

def psql(url, script):
    p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", url],
                       input=script, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    return p.stdout


def db_url(base, name):
    return re.sub(r"/[^/?]*(\?|$)", "/" + name + r"\1", base, count=1)


def arr(items):
    return "'{%s}'" % ",".join('"%s"' % x for x in items)


def pg_batches(names, first_rev, per_commit):
    """EXECUTE lines, one transaction per batch of per_commit names."""
    lines = []
    rev = first_rev
    for b in range(0, len(names), per_commit):
        chunk = names[b:b + per_commit]
        revs = list(range(rev, rev + len(chunk)))
        rev += len(chunk)
        n = len(chunk)
        lines.append("BEGIN; EXECUTE ah(%s, %s, %s, %s, %s, %s, %s, %s, %s); COMMIT;" % (
            arr(revs), arr(["configmaps"] * n), arr(["bench"] * n), arr(chunk), arr(["u"] * n),
            arr(revs), arr([0] * n), arr(["f"] * n), arr([VALUE] * n)))
    return "\n".join(lines) + "\n", rev


def pg_setup(url, flag):
    psql(url, """
CREATE TABLE sk_history (rev bigint PRIMARY KEY, resource text COLLATE "C" NOT NULL,
    namespace text COLLATE "C" NOT NULL, name text COLLATE "C" NOT NULL, uid text NOT NULL,
    create_rev bigint NOT NULL, prev_rev bigint NOT NULL, deleted boolean NOT NULL,
    value text NOT NULL%s);
%s;
%s
INSERT INTO sk_history (rev, resource, namespace, name, uid, create_rev, prev_rev, deleted, value)
    SELECT i + 1, 'configmaps', 'bench', 'w-' || (i %% 32) || '-' || (i / 32), 'u', i + 1, 0,
           false, repeat('x', 1200) FROM generate_series(0, %d) AS g(i);
VACUUM ANALYZE sk_history;
""" % (", superseded boolean NOT NULL DEFAULT false" if flag else "", key_index(flag),
       LIVE_INDEX % "NOT deleted AND NOT superseded" + ";" if flag == 2 else "", LOADED - 1))


def pg_measure(args, url, flag, script):
    prep = ("SET synchronous_commit = off; SET enable_seqscan = off;\n"
            "PREPARE ah(bigint[], text[], text[], text[], text[], bigint[], bigint[], boolean[],"
            " text[]) AS %s;\n" % args.statements[flag])
    psql(url, "CHECKPOINT;")
    before = psql(url, "SELECT pg_current_wal_lsn(), n_tup_upd, n_tup_hot_upd FROM"
                       " pg_stat_user_tables WHERE relname = 'sk_history'").strip().split("|")
    t = time.perf_counter()
    psql(url, prep + script)
    wall = time.perf_counter() - t
    time.sleep(0.6)  # the statistics collector's report interval (500 ms)
    after = psql(url, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '%s'), n_tup_upd,"
                      " n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'sk_history'"
                      % before[0]).strip().split("|")
    return (float(after[0]), wall, int(after[1]) - int(before[1]),
            int(after[2]) - int(before[2]))


def pg_section(args):
    tag = "skflag%d" % os.getpid()
    dbs = {flag: "%s_%d" % (tag, flag) for flag in range(len(DESIGNS))}
    for name in dbs.values():
        psql(args.pg_url, "CREATE DATABASE %s;" % name)
    try:
        for flag, name in dbs.items():
            pg_setup(db_url(args.pg_url, name), flag)
        print("PostgreSQL, append_held with %d rows per commit, %d commits per cell, after %d"
              " rows:" % (args.per_commit, args.commits, LOADED))
        print("| round | writes | writer | WAL KiB per commit | wall s | UPDATEs (HOT) |")
        print("|---:|---|---|---:|---:|---:|")
        rnd = random.Random(2)
        rev = {flag: LOADED + 1 for flag in dbs}
        n = args.commits * args.per_commit
        for rnd_no in range(3):
            creates = ["r%d-%d-%d" % (rnd_no, i % 32, i // 32) for i in range(n)]
            recent = [rnd.choice(creates[-RECENT_COMMITS * args.per_commit:]) for _ in range(n)]
            updates = [loaded_name(rnd.randrange(LOADED)) for _ in range(n)]
            for kind, names in (("creates", creates), ("recent", recent), ("updates", updates)):
                order = sorted(dbs, reverse=rnd_no % 2 == 1)
                for flag in order:
                    script, rev[flag] = pg_batches(names, rev[flag], args.per_commit)
                    wal, wall, upd, hot = pg_measure(args, db_url(args.pg_url, dbs[flag]), flag,
                                                     script)
                    print("| %d | %s | %s | %.1f | %.2f | %d (%d) |" % (
                        rnd_no + 1, kind, DESIGNS[flag], wal / 1024 / args.commits,
                        wall, upd, hot), flush=True)
    finally:
        for name in dbs.values():
            psql(args.pg_url, "DROP DATABASE IF EXISTS %s;" % name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--per-commit", type=int, default=31)
    ap.add_argument("--pg-url")
    ap.add_argument("--old", default="c7e56d2^", help="git revision of the 0010 writer")
    ap.add_argument("--new", default="HEAD", help="git revision of the 0011 writer")
    ap.add_argument("--no-sqlite", action="store_true")
    args = ap.parse_args()
    new = writer_statement(args.new, "append_held")
    args.statements = {0: writer_statement(args.old, "append_held"), 1: new, 2: new, 3: new}
    if not args.no_sqlite:
        sqlite_section(args)
    if args.pg_url:
        pg_section(args)


if __name__ == "__main__":
    main()
