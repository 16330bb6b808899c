#!/usr/bin/python3
"""What encrypting Secrets at rest costs (issue 47): creates and lists of
1 KiB Secrets with aesgcm against identity, in one run.

Each round starts two fresh `sqlkube serve` (SQLite, HTTPS with the default
flags and RBAC, as users run it), one with an EncryptionConfiguration whose
first provider for secrets is identity, one whose first is aesgcm (a
32-byte key; identity second), in alternating order so a shared machine's
load falls on both alike. In each, an admin (a certificate in
system:masters):
  * creates --secrets Secrets (one 1 KiB data value each) from --threads
    threads, each on its own HTTPS keep-alive connection: creates/s and the
    server's CPU (utime + stime) per create;
  * lists them all --lists times (one response each, from the watch
    cache, which keeps objects decoded), then restarts the server and
    lists them once more (that list is served after every object was read
    back from the database and decrypted): ms per list and CPU per listed
    object.
The median of the rounds is printed for each figure, with aesgcm's cost
relative to identity's. The client runs on the same machine (Python
threads), so rates are floors; the server's CPU per operation is the
steadier measure.

Usage: bench/encryption.py --bin build/sqlkube [--rounds 5] [--secrets 2000]
                           [--threads 4] [--lists 50]
Needs /usr/bin/python3 with `cryptography` (client certificates, as
bench/authz.py makes them).
"""
import argparse
import base64
import os
import statistics
import tempfile
import threading
import time

from authz import Server, client_cert, must
from benchlib import Client, cpu_seconds

NS = "bench"
KEY = base64.b64encode(bytes(range(32))).decode()


def config_file(d, first):
    """An EncryptionConfiguration for secrets: first (identity or aesgcm) and
    the other after it, as a rotation in progress would have them."""
    aesgcm = ["  - aesgcm:", "      keys:", "      - name: k1", "        secret: " + KEY]
    identity = ["  - identity: {}"]
    lines = ["apiVersion: apiserver.config.k8s.io/v1", "kind: EncryptionConfiguration",
             "resources:", "- resources: [secrets]", "  providers:"]
    lines += aesgcm + identity if first == "aesgcm" else identity + aesgcm
    path = os.path.join(d, "encryption-%s.yaml" % first)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def one_run(binary, first, n, threads, lists):
    d = tempfile.mkdtemp(prefix="sk-enc-")
    args = ["--encryption-provider-config", config_file(d, first)]
    srv = Server(binary, "RBAC", data_dir=d, extra_args=args)
    admin = Client(srv.port, srv.admin)
    must(*admin.req("POST", "/api/v1/namespaces", {"metadata": {"name": NS}}), 201)
    value = base64.b64encode(os.urandom(768)).decode()  # 1 KiB of base64

    def worker(k):
        c = Client(srv.port, srv.admin)
        for i in range(k, n, threads):
            must(*c.req("POST", "/api/v1/namespaces/%s/secrets" % NS,
                        {"metadata": {"name": "s-%d" % i}, "data": {"v": value}}), 201)

    cpu0, t0 = cpu_seconds(srv.proc.pid), time.perf_counter()
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    create_s, create_cpu = time.perf_counter() - t0, cpu_seconds(srv.proc.pid) - cpu0

    def list_all(c):
        st, body = c.req("GET", "/api/v1/namespaces/%s/secrets" % NS)
        must(st, body, 200)
        assert body.count(b'"name":"s-') == n, "a list lost Secrets"

    cpu0, t0 = cpu_seconds(srv.proc.pid), time.perf_counter()
    for _ in range(lists):
        list_all(admin)
    list_s, list_cpu = time.perf_counter() - t0, cpu_seconds(srv.proc.pid) - cpu0
    srv.proc.terminate()
    srv.proc.wait(timeout=60)
    srv.log.close()
    # started again on the same data: the watch cache reads every Secret
    # back and decrypts it before the server is ready
    t0 = time.perf_counter()
    srv = Server(binary, "RBAC", data_dir=d, extra_args=args)
    cold_s, cold_cpu = time.perf_counter() - t0, cpu_seconds(srv.proc.pid)
    list_all(Client(srv.port, srv.admin))
    srv.stop()
    return {"creates/s": n / create_s, "CPU µs per create": create_cpu / n * 1e6,
            "ms per list": list_s / lists * 1e3,
            "CPU µs per listed Secret": list_cpu / (lists * n) * 1e6,
            "ms from a restart to ready": cold_s * 1e3,
            "CPU ms from a restart to ready": cold_cpu * 1e3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--secrets", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--lists", type=int, default=50)
    a = ap.parse_args()
    runs = {"identity": [], "aesgcm": []}
    for r in range(a.rounds):
        order = ["identity", "aesgcm"] if r % 2 == 0 else ["aesgcm", "identity"]
        for first in order:
            runs[first].append(one_run(a.bin, first, a.secrets, a.threads, a.lists))
    print("| %d Secrets of 1 KiB, %d threads, median of %d rounds | identity | aesgcm | aesgcm / identity |"
          % (a.secrets, a.threads, a.rounds))
    print("|---|---|---|---|")
    for k in runs["identity"][0]:
        i = statistics.median(x[k] for x in runs["identity"])
        g = statistics.median(x[k] for x in runs["aesgcm"])
        print("| %s | %.1f | %.1f | %s |" % (k, i, g, "%.2f" % (g / i) if i else "-"))


if __name__ == "__main__":
    main()
