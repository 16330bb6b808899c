#!/usr/bin/env python3
"""The import rate of `sqlkube import --etcd-snapshot` (issue 38, item 2).

Starts an etcd 3.4 in a temp dir, writes N keys (default 100,000) of about
500 bytes as kube-style paths, 125 puts per transaction (etcdctl txn), takes
`etcdctl snapshot save`, and imports the file into a new SQLite store, and
into a new PostgreSQL database when SK_PG_URL names a server (it creates
and drops database sk_import_bench there). Prints sqlkube's own summary
line per backend, whose rate counts the whole command: the file's check,
the rows, the commit.

usage: bench/etcd_import.py [N]   (SQLKUBE_BIN: default build/sqlkube)
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from test_etcd import ctl, healthy_reference  # noqa: E402

BIN = os.environ.get("SQLKUBE_BIN", os.path.join(ROOT, "build", "sqlkube"))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    tmp = tempfile.mkdtemp(prefix="sk-import-bench.")
    ref = healthy_reference()
    try:
        pad = "v" * 500
        start = time.monotonic()
        for b in range(0, n, 125):
            body = "\n" + "".join("put /registry/configmaps/ns%d/cm%07d %s\n" % (i % 50, i, pad)
                                  for i in range(b, min(n, b + 125))) + "\n\n"
            rc, _, err = ctl(ref.port, "txn", input=body)
            assert rc == 0, err
        print("etcd: %d keys written in %.0f s" % (n, time.monotonic() - start))
        snap = os.path.join(tmp, "snap.db")
        rc, _, err = ctl(ref.port, "snapshot", "save", snap)
        assert rc == 0, err
        print("snapshot: %d bytes" % os.path.getsize(snap))
        targets = [("sqlite", "sqlite:" + os.path.join(tmp, "sqlkube.db"))]
        pg = os.environ.get("SK_PG_URL")
        if pg:
            subprocess.run(["psql", pg, "-XAqc", "DROP DATABASE IF EXISTS sk_import_bench"],
                           check=True)
            subprocess.run(["psql", pg, "-XAqc", "CREATE DATABASE sk_import_bench"], check=True)
            targets.append(("postgres", pg.rsplit("/", 1)[0] + "/sk_import_bench"))
        for name, url in targets:
            p = subprocess.run(["/usr/bin/time", "-f", "%M KiB max RSS", BIN, "import",
                                "--etcd-snapshot", snap, "--db", url],
                               capture_output=True, text=True)
            assert p.returncode == 0, p.stderr
            print("%s: %s (%s)" % (name, p.stdout.strip(), p.stderr.strip().splitlines()[-1]))
        if pg:
            subprocess.run(["psql", pg, "-XAqc", "DROP DATABASE sk_import_bench"], check=True)
    finally:
        ref.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
