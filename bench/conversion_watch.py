#!/usr/bin/python3
"""Conversion webhooks (issue 40, item 4): how many ConversionReviews a
watched custom resource costs, and what a read in a converted version costs.

Starts `sqlkube serve` over HTTPS (SQLite on tmpfs) and a local HTTPS
conversion webhook (tests/e2e/test_webhooks.py's server and CRD: v1 stores
spec.size, v2 says spec.replicas), then:
  * opens --watchers watches of v2 and writes --events updates in v1, and
    counts the reviews the webhook received until every watcher saw every
    event converted (kube would convert per event and version as well: its
    watch cache serializes an event once per encoder);
  * times 200 GETs of one object in v1 (as stored) and in v2 (its converted
    form kept with the cached object), then 100 GETs in v2 each right after
    an update in v1 (one webhook call each).

Usage: SQLKUBE_BIN=build/sqlkube bench/conversion_watch.py [--watchers 50] [--events 100]
Prints one line per measurement. Needs the e2e test dependencies
(scripts/deps.sh test).
"""

import argparse
import base64
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from server import Server  # noqa: E402
import test_webhooks  # noqa: E402
from test_watch import WatchStream  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--watchers", type=int, default=50)
    ap.add_argument("--events", type=int, default=100)
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    ca, cert, key = test_webhooks.make_pki(tmp.name)
    hooks = test_webhooks.WebhookServer(cert, key)
    hooks.behaviours["/convert"] = test_webhooks.Webhooks.convert_widgets
    srv = Server("conversion-watch", tls=True, flush_to_disk=False)
    srv.start()
    try:
        # the e2e test case's helpers, on this server and webhook
        t = test_webhooks.Webhooks("test_conversion_on_write_and_read")
        t.server, t.hooks, t.ca_bundle = srv, hooks, base64.b64encode(ca).decode()
        t.conversion_crd("widgets", "Widget", "/convert")
        ns = t.namespace("bench")
        merge = {"Content-Type": "application/merge-patch+json"}
        r = srv.request("POST", t.widgets("v1", ns), t.widget("v1", "w", 0))
        rv = r.json()["metadata"]["resourceVersion"]
        watchers = [WatchStream(srv, t.widgets("v2", ns) + "?watch=true&resourceVersion=" + rv)
                    for _ in range(args.watchers)]
        before = len(hooks.reviews("/convert"))
        t0 = time.monotonic()
        for i in range(args.events):
            srv.request("PATCH", t.widgets("v1", ns, "w"), {"spec": {"size": i + 1}},
                        headers=merge)
        for w in watchers:
            w.wait_for(lambda e: len(e) >= args.events, timeout=300)
        took = time.monotonic() - t0
        calls = len(hooks.reviews("/convert")) - before
        right = all(w.events[-1]["object"]["spec"] == {"replicas": args.events}
                    for w in watchers)
        print("%d v2 watchers, %d events written in v1: %d ConversionReviews (one per watcher "
              "and event would be %d), every event converted: %s, all delivered in %.2f s"
              % (args.watchers, args.events, calls, args.watchers * args.events, right, took))
        for w in watchers:
            w.close()

        def median_ms(fn, n):
            xs = []
            for _ in range(n):
                a = time.monotonic()
                fn()
                xs.append((time.monotonic() - a) * 1e3)
            return statistics.median(xs)
        v1 = median_ms(lambda: srv.request("GET", t.widgets("v1", ns, "w")), 200)
        v2 = median_ms(lambda: srv.request("GET", t.widgets("v2", ns, "w")), 200)
        print("GET median: v1 (as stored) %.2f ms, v2 (kept converted form) %.2f ms" % (v1, v2))
        xs = []
        for i in range(100):
            srv.request("PATCH", t.widgets("v1", ns, "w"), {"spec": {"size": 1000 + i}},
                        headers=merge)
            a = time.monotonic()
            srv.request("GET", t.widgets("v2", ns, "w"))
            xs.append((time.monotonic() - a) * 1e3)
        print("GET median of a new version in v2 (one webhook call): %.2f ms"
              % statistics.median(xs))
    finally:
        srv.cleanup()
        hooks.stop()
        tmp.cleanup()


if __name__ == "__main__":
    main()
