#!/usr/bin/python3
"""What `sqlkube reencrypt` (issue 47's in-place rewrite) takes: --secrets
Secrets of 1 KiB are created under aescbc key1 (8 client threads, plain HTTP
on loopback), the server restarted with key2 first and key1 second, and
`sqlkube reencrypt` run from another process beside the live server, as in
a rotation. Prints its summary line, its wall time and objects/s.

Usage: bench/reencrypt.py --bin build/sqlkube [--secrets 5000] [--db URL]
(--db: a PostgreSQL URL to run on instead of a fresh SQLite file; its
database is emptied by the server's migrations only if new.)
"""
import argparse
import base64
import concurrent.futures
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "support"))
from server import CONFIG, Server  # noqa: E402

KEY1 = bytes(range(32))
KEY2 = bytes(range(100, 132))
THREADS = 8


def config(*keys):
    lines = ["apiVersion: apiserver.config.k8s.io/v1", "kind: EncryptionConfiguration",
             "resources:", "- resources: [secrets]", "  providers:", "  - aescbc:",
             "      keys:"]
    for name, key in keys:
        lines += ["      - name: %s" % name,
                  "        secret: %s" % base64.b64encode(key).decode()]
    return "\n".join(lines) + "\n"


def create(port, names):
    c = http.client.HTTPConnection("127.0.0.1", port)
    for i in names:
        body = json.dumps({"apiVersion": "v1", "kind": "Secret",
                           "metadata": {"name": "s%06d" % i},
                           "data": {"p": base64.b64encode(os.urandom(768)).decode()}})
        c.request("POST", "/api/v1/namespaces/default/secrets", body,
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        if r.status != 201:
            raise SystemExit("create failed: %d" % r.status)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--secrets", type=int, default=5000)
    ap.add_argument("--db")
    a = ap.parse_args()
    CONFIG.binary = os.path.abspath(a.bin)
    path = os.path.join(tempfile.mkdtemp(prefix="sk-reenc-"), "encryption.yaml")
    with open(path, "w") as f:
        f.write(config(("key1", KEY1)))
    s = Server("reencrypt", db_url=a.db, extra_args=["--encryption-provider-config", path])
    s.start()
    try:
        with concurrent.futures.ThreadPoolExecutor(THREADS) as ex:
            list(ex.map(lambda k: create(s.port, range(k, a.secrets, THREADS)), range(THREADS)))
        with open(path, "w") as f:
            f.write(config(("key2", KEY2), ("key1", KEY1)))
        s.restart()
        t = time.monotonic()
        p = subprocess.run([a.bin, "reencrypt", "--db", s.store_url(),
                            "--encryption-provider-config", path],
                           capture_output=True, text=True)
        took = time.monotonic() - t
        if p.returncode != 0:
            raise SystemExit("reencrypt failed: %s" % p.stderr)
        print("%s | %.2f s, %.0f objects/s" % (p.stdout.strip().splitlines()[-1], took,
                                               a.secrets / took))
    finally:
        s.cleanup()


if __name__ == "__main__":
    main()
