#!/usr/bin/env python3
"""The import rate of `sqlkube import --etcd-snapshot` (issue 38, item 2), and
the way back: `etcdctl snapshot save` against sqlkube's etcd face (item 3)
beside the same command against etcd.

Starts an etcd 3.4 in a temp dir, writes N keys (default 100,000) of about
500 bytes as kube-style paths, 125 puts per transaction (etcdctl txn), takes
`etcdctl snapshot save`, and imports the file into a new SQLite store, and
into a new PostgreSQL database when SK_PG_URL names a server (it creates
and drops database sk_import_bench there). Prints sqlkube's own summary
line per backend, whose rate counts the whole command: the file's check,
the rows, the commit. Then serves each imported store with its etcd face and
times `etcdctl snapshot save` against it (the file built, streamed and
written by etcdctl), against etcd's own in the same run, with the files'
sizes and what `etcdctl snapshot status` counts in each.

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

from server import free_port  # noqa: E402
from test_etcd import ctl, healthy_reference  # noqa: E402

BIN = os.environ.get("SQLKUBE_BIN", os.path.join(ROOT, "build", "sqlkube"))


def save(port, path):
    """Seconds `etcdctl snapshot save` takes against the etcd API at port."""
    start = time.monotonic()
    rc, _, err = ctl(port, "snapshot", "save", path)
    assert rc == 0, err
    return time.monotonic() - start


def status(path):
    rc, out, err = ctl(0, "snapshot", "status", path, "-w", "table")
    assert rc == 0, err
    return "status: " + " ".join(out.strip().splitlines()[-2].split())


def saved_back(name, url, tmp):
    """Serves the store at url and times a snapshot of it."""
    port, etcd_port = free_port(), free_port()
    data = os.path.join(tmp, "serve-" + name)
    log = open(os.path.join(tmp, name + ".log"), "wb")
    proc = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:%d" % port, "--db", url,
                             "--data-dir", data, "--plain-http",
                             "--etcd-listen", "127.0.0.1:%d" % etcd_port],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while ctl(etcd_port, "endpoint", "health")[0] != 0:
            assert time.monotonic() < deadline and proc.poll() is None, "sqlkube did not start"
            time.sleep(0.2)
        path = os.path.join(tmp, name + "-back.db")
        took = save(etcd_port, path)
        print("%s: snapshot save %.2f s, %d bytes, %s" % (name, took, os.path.getsize(path),
                                                        status(path)))
    finally:
        proc.terminate()
        proc.wait()
        log.close()


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
        took = save(ref.port, snap)
        print("etcd: snapshot save %.2f s, %d bytes, %s" % (took, os.path.getsize(snap),
                                                          status(snap)))
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
            saved_back(name, url, tmp)
        if pg:
            subprocess.run(["psql", pg, "-XAqc", "DROP DATABASE sk_import_bench"], check=True)
    finally:
        ref.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
