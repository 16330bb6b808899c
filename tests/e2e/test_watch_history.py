"""HISTORY: watches, continue tokens and exact reads from a resourceVersion
older than the watch cache's window, but not compacted, are served from the
store's history instead of 410.

The server runs with a window of 50 events (--watch-cache-events 50), so a
few hundred writes put a resourceVersion out of the window. A watch from it
gets exactly the stored history after it (compared with the sk_history
rows), paged from SQL, then the live events, with no gap and no duplicate,
also when writes land while it catches up, and for a watcher whose client
stopped reading until the window had moved past it; with a label selector, an object
that leaves the selection is DELETED and one that enters it is ADDED, as
from the cache. Only a revision below the compaction floor gets 410 (kube's
"too old resource version", reason Expired).
"""

import http.client
import json
import os
import socket
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from server import ServerTestCase, sql  # noqa: E402

MERGE = {"Content-Type": "application/merge-patch+json"}
WINDOW = 50


def cm(name, labels=None, data=None):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels or {}}, "data": data or {}}


def parse_watch(body):
    out = []
    for line in body.decode().splitlines():
        if not line.strip():
            continue
        ev = json.loads(line)
        obj = ev["object"]
        if ev["type"] == "ERROR":
            out.append(("ERROR", obj.get("reason"), obj.get("message"), obj.get("code")))
        elif ev["type"] != "BOOKMARK":
            out.append((ev["type"], obj["metadata"]["name"],
                        int(obj["metadata"]["resourceVersion"])))
    return out


class WatchHistory(ServerTestCase, unittest.TestCase):
    server_args = ("--watch-cache-events", str(WINDOW))

    def watch(self, path, rv, seconds=2):
        sep = "&" if "?" in path else "?"
        r = self.server.request("GET", "%s%swatch=true&resourceVersion=%s&timeoutSeconds=%d"
                                % (path, sep, rv, seconds), timeout=seconds + 60)
        self.assertEqual(r.status, 200, r)
        return parse_watch(r.body)

    def make_ns(self, name):
        r = self.server.request("POST", "/api/v1/namespaces",
                                {"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": name}})
        self.assertEqual(r.status, 201, r)
        return "/api/v1/namespaces/%s/configmaps" % name

    def list_rv(self, base):
        r = self.server.request("GET", base + "?limit=1")
        self.assertEqual(r.status, 200, r)
        return int(r.json()["metadata"]["resourceVersion"])

    def create(self, base, name, labels=None):
        r = self.server.request("POST", base, cm(name, labels))
        self.assertEqual(r.status, 201, r)
        return int(r.json()["metadata"]["resourceVersion"])

    def patch(self, base, name, body):
        r = self.server.request("PATCH", base + "/" + name, body, headers=MERGE)
        self.assertEqual(r.status, 200, r)

    def stored(self, ns, after):
        """The events the store's history holds for ns after revision `after`."""
        rows = sql(self.server, "SELECT rev, name, deleted, prev_rev FROM sk_history WHERE "
                   "resource = 'configmaps' AND namespace = '%s' AND rev > %d ORDER BY rev"
                   % (ns, after))
        return [("DELETED" if d in ("1", "t") else "MODIFIED" if int(p) > 0 else "ADDED", n, int(r))
                for r, n, d, p in rows]

    def metric(self, name):
        r = self.server.request("GET", "/metrics")
        for line in r.body.decode().splitlines():
            if line.startswith(name + " "):
                return int(float(line.split()[1]))
        self.fail("no metric " + name)

    def assert_out_of_window(self, rv):
        self.assertLessEqual(self.metric("sqlkube_watch_cache_events"), WINDOW)
        self.assertGreater(self.metric("sqlkube_watch_cache_revision") - rv, WINDOW)

    def test_watch_older_than_window(self):
        ns = "hist-watch"
        base = self.make_ns(ns)
        rv0 = self.list_rv(base)
        for i in range(3):
            self.create(base, "h-%d" % i, {"app": "a"})
        self.patch(base, "h-0", {"metadata": {"labels": {"app": "b"}}})  # leaves
        self.patch(base, "h-1", {"data": {"k": "v"}})
        r = self.server.request("DELETE", base + "/h-2")
        self.assertEqual(r.status, 200, r)
        # More than two SQL pages (256 revisions each) of filler, with an
        # object entering the selection in the middle.
        for i in range(300):
            self.create(base, "f-%d" % i)
        self.patch(base, "f-5", {"metadata": {"labels": {"app": "a"}}})  # enters
        for i in range(300, 400):
            self.create(base, "f-%d" % i)
        self.assert_out_of_window(rv0)

        want = self.stored(ns, rv0)
        self.assertEqual(len(want), 407)
        self.assertEqual(self.watch(base, rv0), want)
        self.assertEqual([(t, n) for t, n, _ in self.watch(base + "?labelSelector=app%3Da", rv0)],
                         [("ADDED", "h-0"), ("ADDED", "h-1"), ("ADDED", "h-2"),
                          ("DELETED", "h-0"), ("MODIFIED", "h-1"), ("DELETED", "h-2"),
                          ("ADDED", "f-5")])
        # a resume from the middle of the history, out of the window too
        mid = want[200][2]
        self.assertEqual(self.watch(base, mid), self.stored(ns, mid))

        # Live writes while a watch catches up: history, then live, each once.
        got = {}

        def run():
            got["events"] = self.watch(base, rv0, seconds=6)

        t = threading.Thread(target=run)
        t.start()
        for i in range(40):
            self.create(base, "live-%d" % i, {"app": "a"})
            if i % 10 == 0:
                self.patch(base, "f-%d" % i, {"data": {"x": "y"}})
        time.sleep(0.5)
        t.join()
        all_events = self.stored(ns, rv0)
        self.assertEqual(len(all_events), 407 + 44)
        self.assertEqual(got["events"], all_events)
        revs = [rv for *_, rv in got["events"]]
        self.assertEqual(revs, sorted(set(revs)), "in order, no duplicate")

    def test_watcher_that_fell_behind_catches_up(self):
        """A watcher whose client stops reading while 100 KiB objects are
        written: its socket fills, its cursor stays behind, the window (50
        events) moves past it. Once it reads again it gets every event, from
        SQL and then the window, instead of 410."""
        ns = "hist-slow"
        base = self.make_ns(ns)
        rv0 = self.list_rv(base)
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        conn.sock = socket.socket()
        conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        conn.sock.settimeout(60)
        conn.sock.connect(("127.0.0.1", self.server.port))
        conn.request("GET", "%s?watch=true&resourceVersion=%d&timeoutSeconds=30" % (base, rv0))
        big = "x" * (100 * 1024)
        for i in range(120):
            r = self.server.request("POST", base, cm("big-%d" % i, data={"d": big}))
            self.assertEqual(r.status, 201, r)
        self.assert_out_of_window(rv0)
        want = self.stored(ns, rv0)
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        lines = []
        while len(lines) < len(want):
            line = resp.readline()
            if not line:
                break
            lines.append(line)
        conn.close()
        events = parse_watch(b"".join(lines))
        self.assertNotIn("ERROR", [e[0] for e in events])
        self.assertEqual(events, want)

    def test_other_resources_history_is_paged(self):
        """A watch on a resource with few events, from before a long history
        of another resource: the pages without its events move its cursor
        on, and its events come in order."""
        ns = "hist-other"
        base = self.make_ns(ns)
        rv0 = self.list_rv(base)
        self.create(base, "only-0")
        sbase = "/api/v1/namespaces/%s/secrets" % ns
        for i in range(600):
            r = self.server.request("POST", sbase, {"apiVersion": "v1", "kind": "Secret",
                                                    "metadata": {"name": "s-%d" % i}})
            self.assertEqual(r.status, 201, r)
        self.create(base, "only-1")
        self.assert_out_of_window(rv0)
        self.assertEqual([n for _, n, _ in self.watch(base, rv0)], ["only-0", "only-1"])

    def test_compacted_revision_is_410(self):
        ns = "hist-compact"
        base = self.make_ns(ns)
        rv0 = self.list_rv(base)
        for i in range(5):
            self.create(base, "c-%d" % i)
            self.patch(base, "c-%d" % i, {"data": {"k": "v"}})
        self.server.compact(retain=0)
        got = self.watch(base, rv0)
        self.assertEqual(len(got), 1, got)
        self.assertEqual(got[0][0], "ERROR")
        self.assertEqual(got[0][1], "Expired")
        self.assertEqual(got[0][3], 410)
        self.assertIn("too old resource version: %d" % rv0, got[0][2])

    def test_continue_token_and_exact_read_older_than_window(self):
        ns = "hist-list"
        base = self.make_ns(ns)
        for i in range(5):
            self.create(base, "l-%d" % i)
        r = self.server.request("GET", base + "?limit=2")
        self.assertEqual(r.status, 200, r)
        first = r.json()
        rv = int(first["metadata"]["resourceVersion"])
        token = first["metadata"]["continue"]
        for i in range(5, 100):
            self.create(base, "l-%d" % i)
        self.patch(base, "l-3", {"data": {"k": "changed"}})
        r = self.server.request("DELETE", base + "/l-4")
        self.assertEqual(r.status, 200, r)
        self.assert_out_of_window(rv)

        r = self.server.request("GET", base + "?limit=2&continue=" + token)
        self.assertEqual(r.status, 200, r)
        page = r.json()
        self.assertEqual(int(page["metadata"]["resourceVersion"]), rv)
        self.assertEqual([o["metadata"]["name"] for o in page["items"]], ["l-2", "l-3"])
        self.assertNotIn("k", page["items"][1].get("data", {}))
        token = page["metadata"]["continue"]
        r = self.server.request("GET", base + "?limit=2&continue=" + token)
        self.assertEqual(r.status, 200, r)
        self.assertEqual([o["metadata"]["name"] for o in r.json()["items"]], ["l-4"])

        r = self.server.request("GET", base + "?resourceVersion=%d&resourceVersionMatch=Exact"
                                % rv)
        self.assertEqual(r.status, 200, r)
        exact = r.json()
        self.assertEqual(int(exact["metadata"]["resourceVersion"]), rv)
        self.assertEqual([o["metadata"]["name"] for o in exact["items"]],
                         ["l-%d" % i for i in range(5)])

        self.server.compact(retain=0)
        r = self.server.request("GET", base + "?resourceVersion=%d&resourceVersionMatch=Exact"
                                % rv)
        self.assertEqual(r.status, 410, r)
        self.assertEqual(r.json()["reason"], "Expired")


if __name__ == "__main__":
    unittest.main()
