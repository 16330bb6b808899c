#!/usr/bin/python3
"""What admission webhook configurations cost a write no webhook covers
(issue 40): ConfigMap creates over HTTPS with 0 and with N webhook
configurations whose rules cover other resources, for one or more binaries,
in interleaved rounds.

Each round starts a fresh `sqlkube serve` (SQLite, HTTPS with the generated
CA; authenticated as an admin client certificate, see authz.py) per binary
and setting, creates namespace `bench`, then the N configurations
(--configs; alternately Mutating- and ValidatingWebhookConfigurations, one
webhook each, rules for `secrets`, a URL nothing listens on: a webhook that
were called would fail every write), warms up, and runs --threads threads,
each on one keep-alive HTTPS connection, POSTing ~1 KiB ConfigMaps back to
back for --seconds: creates/s and the server's CPU (all threads) per create.

Creates/s are bound by SQLite's fsynced commits, so the server CPU per
create is the figure the configurations move; the client runs on the same
machine.

Usage: bench/webhook_admission.py --bin NAME=build-release/sqlkube
                                  [--bin OLD=/tmp/old/sqlkube] [--configs 5]
                                  [--threads 4] [--seconds 10] [--rounds 3]
Prints a markdown table (medians over the rounds).
"""

import argparse
import statistics
import threading
import time

from authz import Server
from benchlib import Client, cpu_seconds

NS = "bench"
DATA = {"k%02d" % i: "v" * 40 for i in range(20)}


def must(st, body, want):
    if st != want:
        raise SystemExit("got %d, want %d: %s" % (st, want, body[:300]))


def configure(srv, n):
    c = Client(srv.port, srv.admin)
    must(*c.req("POST", "/api/v1/namespaces", {"metadata": {"name": NS}}), 201)
    for i in range(n):
        kind = "Mutating" if i % 2 == 0 else "Validating"
        path = "/apis/admissionregistration.k8s.io/v1/%swebhookconfigurations" % kind.lower()
        must(*c.req("POST", path, {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind + "WebhookConfiguration",
            "metadata": {"name": "bench-%d" % i},
            "webhooks": [{
                "name": "bench-%d.example.com" % i,
                "clientConfig": {"url": "https://127.0.0.1:1/hook"},
                "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""],
                           "apiVersions": ["v1"], "resources": ["secrets"]}],
                "sideEffects": "None", "admissionReviewVersions": ["v1"]}]}), 201)


def load(srv, threads, seconds, prefix):
    counts, errors = [0] * threads, []
    stop_at = time.monotonic() + seconds

    def worker(k):
        c = Client(srv.port, srv.admin)
        n = 0
        while time.monotonic() < stop_at:
            st, body = c.req("POST", "/api/v1/namespaces/%s/configmaps" % NS, {
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "%s-%d-%d" % (prefix, k, n)}, "data": DATA})
            if st != 201:
                errors.append((st, body[:200]))
                return
            n += 1
        counts[k] = n
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    t0, c0 = time.monotonic(), cpu_seconds(srv.proc.pid)
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    elapsed = time.monotonic() - t0
    cpu = cpu_seconds(srv.proc.pid) - c0
    if errors:
        raise SystemExit("creates failed: %s" % errors[:3])
    total = sum(counts)
    return total / elapsed, cpu * 1e6 / total


def measure(binary, n_configs, args):
    srv = Server(binary, "RBAC")
    try:
        configure(srv, n_configs)
        load(srv, args.threads, 2, "warm")
        return load(srv, args.threads, args.seconds, "cm")
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", action="append", required=True, help="NAME=PATH")
    ap.add_argument("--configs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    bins = [b.split("=", 1) for b in args.bin]
    settings = [(name, path, n) for name, path in bins for n in (0, args.configs)]
    results = {(name, n): [] for name, _, n in settings}
    for r in range(args.rounds):
        # rotated, so no setting always runs first or last in a round
        for name, path, n in settings[r % len(settings):] + settings[:r % len(settings)]:
            results[(name, n)].append(measure(path, n, args))
    print("| binary | configurations | creates/s | server CPU µs/create |")
    print("| --- | --- | --- | --- |")
    for name, _, n in settings:
        rates = [x[0] for x in results[(name, n)]]
        cpus = [x[1] for x in results[(name, n)]]
        print("| %s | %d | %.0f | %.0f |" % (name, n, statistics.median(rates),
                                             statistics.median(cpus)))


if __name__ == "__main__":
    main()
