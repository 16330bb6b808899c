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

Then `import --from-etcd` into another new store per backend: the time to
the "caught up" line (the etcd's own snapshot streamed, checked and
imported), then, while it follows, --follow-keys more keys (default
20,000, 125 per transaction) written to etcd; the lag is from etcd's answer
to the last write until the store's revision equals etcd's.

usage: bench/etcd_import.py [N [FOLLOW_KEYS]]   (SQLKUBE_BIN: default build/sqlkube)
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


def write_keys(port, first, n, pad):
    for b in range(first, first + n, 125):
        body = "\n" + "".join("put /registry/configmaps/ns%d/cm%07d %s\n" % (i % 50, i, pad)
                              for i in range(b, min(first + n, b + 125))) + "\n\n"
        rc, _, err = ctl(port, "txn", input=body)
        assert rc == 0, err


def store_rev(url):
    if url.startswith("sqlite:"):
        cmd = ["sqlite3", "-cmd", ".timeout 5000", url[len("sqlite:"):]]
    else:
        cmd = ["psql", url, "-XAtqc"]
    p = subprocess.run(cmd + ["SELECT rev FROM sk_revision"], capture_output=True, text=True)
    return int(p.stdout.strip() or 0) if p.returncode == 0 else 0


def followed(name, url, ref, first, n, pad):
    """import --from-etcd into url: seconds to catch up, then the lag after
    n more keys written while it follows."""
    start = time.monotonic()
    proc = subprocess.Popen([BIN, "import", "--from-etcd", "127.0.0.1:%d" % ref.port, "--db",
                             url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()
        caught = proc.stdout.readline()
        assert caught.startswith("caught up"), caught + proc.stderr.read()
        copy = time.monotonic() - start
        write_keys(ref.port, first, n, pad)
        wrote = time.monotonic()
        rc, out, err = ctl(ref.port, "get", "sk-no-such-key", "-w", "json")
        target = int(out.split('"revision":')[1].split(",")[0])
        while store_rev(url) < target:
            assert time.monotonic() - wrote < 120, "the follow did not catch up"
            time.sleep(0.01)
        lag = time.monotonic() - wrote
        proc.terminate()
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        print("%s: from-etcd caught up in %.2f s; %d keys written while following, in the "
              "store %.0f ms after etcd's last answer; %s" % (name, copy, n, lag * 1000,
                                                              out.strip()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    follow_n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    tmp = tempfile.mkdtemp(prefix="sk-import-bench.")
    ref = healthy_reference()
    try:
        pad = "v" * 500
        start = time.monotonic()
        write_keys(ref.port, 0, n, pad)
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
        follows = [("sqlite", "sqlite:" + os.path.join(tmp, "followed.db"))]
        if pg:
            subprocess.run(["psql", pg, "-XAqc", "DROP DATABASE sk_import_bench"], check=True)
            subprocess.run(["psql", pg, "-XAqc", "CREATE DATABASE sk_import_bench"], check=True)
            follows.append(("postgres", pg.rsplit("/", 1)[0] + "/sk_import_bench"))
        first = n
        for name, url in follows:
            followed(name, url, ref, first, follow_n, pad)
            first += follow_n
        if pg:
            subprocess.run(["psql", pg, "-XAqc", "DROP DATABASE sk_import_bench"], check=True)
    finally:
        ref.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
