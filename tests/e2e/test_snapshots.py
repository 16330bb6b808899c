"""The watch cache's snapshots (KEP-4988): lists at past revisions from memory.

Continue-token pages, resourceVersionMatch=Exact lists and consistent lists
are served from the B-tree snapshot at their revision, also while writes go
on; the chunk counter sqlkube_list_chunks_total{source} shows where each
chunk came from. The same pages read from SQL (after a restart with no
memory for past snapshots, so older revisions have none) must be
byte-for-byte the same items and the same continue tokens. Compaction by
another process drops the snapshots and expires old tokens; a snapshot
budget of 0 sends every past revision to SQL.
"""

import os
import re
import subprocess
import sys
import threading
import unittest
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import CONFIG, Server, ServerTestCase, wait_until  # noqa: E402
from test_watch import metric  # noqa: E402

CACHE_CHUNKS = 'sqlkube_list_chunks_total{source="cache"}'
SQL_CHUNKS = 'sqlkube_list_chunks_total{source="sql"}'


def cm(name, data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


class SnapshotCase(ServerTestCase):

    def ns(self, name):
        r = self.server.request("POST", "/api/v1/namespaces",
                                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        self.assertIn(r.status, (201, 409), r)

    def fill(self, ns, n):
        self.ns(ns)
        for i in range(n):
            r = self.server.request("POST", "/api/v1/namespaces/%s/configmaps" % ns,
                                    cm("cm-%03d" % i, {"v": "0"}))
            self.assertEqual(r.status, 201, r)
        return int(r.json()["metadata"]["resourceVersion"])

    def get(self, path, **params):
        q = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        r = self.server.request("GET", path + ("?" + q if q else ""))
        return r

    def page(self, path, **params):
        r = self.get(path, **params)
        self.assertEqual(r.status, 200, r)
        return r.json()

    def chain(self, path, limit, first_params=None, tokens=None):
        """Pages of a list: [(items, continue)], following the continue tokens."""
        out = []
        body = self.page(path, limit=limit, **(first_params or {}))
        while True:
            cont = body["metadata"].get("continue")
            out.append((body["items"], cont, body["metadata"]["resourceVersion"]))
            if not cont:
                return out
            body = self.page(path, limit=limit, **{"continue": cont})

    def writers(self, ns, n_threads=3, ops=150):
        """Starts threads that update, delete and re-create objects of ns."""
        stop = threading.Event()
        errors = []

        def run(seed):
            path = "/api/v1/namespaces/%s/configmaps/" % ns
            for i in range(ops):
                if stop.is_set():
                    return
                name = "cm-%03d" % ((seed * 89 + i * 7) % 220)
                if i % 6 == 5:
                    r = self.server.request("DELETE", path + name)
                else:
                    r = self.server.request(
                        "PATCH", path + name, {"data": {"v": "%d-%d" % (seed, i)}},
                        headers={"Content-Type": "application/merge-patch+json"})
                    if r.status == 404:
                        r = self.server.request("POST", "/api/v1/namespaces/%s/configmaps" % ns,
                                                cm(name, {"v": "new"}))
                if r.status not in (200, 201, 404, 409):
                    errors.append(r)

        threads = [threading.Thread(target=run, args=(s,)) for s in range(n_threads)]
        for t in threads:
            t.start()

        def finish():
            stop.set()
            for t in threads:
                t.join()
            self.assertEqual(errors, [])

        return finish



class Snapshots(SnapshotCase, unittest.TestCase):

    def test_past_revisions_from_memory_equal_sql(self):
        path = "/api/v1/namespaces/snap/configmaps"
        start = self.fill("snap", 200)
        cache0, sql0 = metric(self.server, CACHE_CHUNKS), metric(self.server, SQL_CHUNKS)
        finish = self.writers("snap")
        try:
            paged = self.chain(path, 23)  # a consistent list, then its continue pages
            rv = paged[0][2]
            exact = self.page(path, resourceVersion=rv, resourceVersionMatch="Exact")
            older = str((start + int(rv)) // 2)  # a revision while the writers ran, or before
            old_pages = self.chain(path, 40, {"resourceVersion": older,
                                              "resourceVersionMatch": "Exact"})
            rv0 = self.page(path, resourceVersion="0")
        finally:
            finish()
        self.assertGreater(len(paged), 5)
        self.assertTrue(all(p[2] == rv for p in paged), "every page at the first page's revision")
        self.assertEqual([i for p in paged for i in p[0]], exact["items"])
        self.assertTrue(all(p[2] == older for p in old_pages))
        self.assertGreaterEqual(int(rv0["metadata"]["resourceVersion"]), int(rv))
        # Every chunk of every list above came from a snapshot.
        self.assertEqual(metric(self.server, SQL_CHUNKS), sql0)
        self.assertGreaterEqual(metric(self.server, CACHE_CHUNKS) - cache0,
                                len(paged) + len(old_pages) + 2)

        # Restarted with no memory for past snapshots (the history replayed
        # at start keeps only the newest), the same revisions are read from
        # SQL, and must read the same.
        args = self.server.extra_args
        self.server.extra_args = args + ["--snapshot-memory", "0"]
        try:
            self.server.restart()
        finally:
            self.server.extra_args = args
        sql1 = metric(self.server, SQL_CHUNKS)
        first = self.page(path, limit=23, resourceVersion=rv, resourceVersionMatch="Exact")
        self.assertEqual((first["items"], first["metadata"].get("continue")),
                         (paged[0][0], paged[0][1]))
        for i in range(1, len(paged)):
            again = self.page(path, limit=23, **{"continue": paged[i - 1][1]})
            self.assertEqual((again["items"], again["metadata"].get("continue"),
                              again["metadata"]["resourceVersion"]), paged[i],
                             "page %d from SQL differs from the snapshot's" % i)
        self.assertEqual(self.page(path, resourceVersion=rv, resourceVersionMatch="Exact"), exact)
        again = self.chain(path, 40, {"resourceVersion": older, "resourceVersionMatch": "Exact"})
        self.assertEqual(again, old_pages)
        self.assertGreaterEqual(metric(self.server, SQL_CHUNKS) - sql1, len(paged) + len(old_pages))

    def test_get_at_past_revision_from_memory(self):
        path = "/api/v1/namespaces/snap-get/configmaps"
        self.fill("snap-get", 1)
        first = self.page(path + "/cm-000")
        r = self.server.request("PATCH", path + "/cm-000", {"data": {"v": "1"}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r)
        # resourceVersion=0 may be served before the cache has seen the patch
        # (as in kube-apiserver); a consistent GET reads its own write.
        now = self.page(path + "/cm-000")
        self.assertEqual(now["data"], {"v": "1"})
        listed = self.page(path, resourceVersion=first["metadata"]["resourceVersion"],
                           resourceVersionMatch="Exact")
        item = {k: v for k, v in first.items() if k not in ("kind", "apiVersion")}
        self.assertEqual(listed["items"], [item])  # as kube lists a built-in kind

    def test_compaction_drops_snapshots_and_expires_tokens(self):
        path = "/api/v1/namespaces/snap-compact/configmaps"
        self.fill("snap-compact", 30)
        first = self.page(path, limit=10)
        tok, rv = first["metadata"]["continue"], first["metadata"]["resourceVersion"]
        for i in range(10):
            r = self.server.request("PATCH", path + "/cm-%03d" % i, {"data": {"v": "x"}},
                                    headers={"Content-Type": "application/merge-patch+json"})
            self.assertEqual(r.status, 200, r)
        self.assertEqual(self.get(path, limit=10, **{"continue": tok}).status, 200)
        held = metric(self.server, "sqlkube_watch_cache_snapshots")
        out = self.server.compact(retain=0)  # another process, as another instance would
        upto = int(re.search(r"compacted up to revision (\d+)", out).group(1))
        self.assertGreater(upto, int(rv))
        # (not the current revision: the server's own identity lease may be
        # renewed after the compaction, and no compaction follows that)
        wait_until(lambda: metric(self.server, "sqlkube_watch_cache_list_oldest_revision")
                   >= upto, what="the cache to follow the compaction")
        self.assertLess(metric(self.server, "sqlkube_watch_cache_snapshots"), held)
        expired = self.get(path, limit=10, **{"continue": tok})
        self.assertEqual(expired.status, 410, expired)
        self.assertEqual(expired.json()["reason"], "Expired")
        exact = self.get(path, resourceVersion=rv, resourceVersionMatch="Exact")
        self.assertEqual(exact.status, 410, exact)
        # A fresh list pages from the new snapshots.
        sql0 = metric(self.server, SQL_CHUNKS)
        pages = self.chain(path, 7)
        self.assertEqual(sum(len(p[0]) for p in pages), 30)
        self.assertEqual(metric(self.server, SQL_CHUNKS), sql0)

    def test_memory_metrics(self):
        text = self.server.request("GET", "/metrics").body.decode()
        for name in ("sqlkube_watch_cache_snapshots", "sqlkube_watch_cache_snapshot_bytes",
                     "sqlkube_watch_cache_snapshot_budget_bytes", "sqlkube_watch_cache_index_bytes",
                     "sqlkube_watch_cache_object_bytes",
                     "sqlkube_watch_cache_list_oldest_revision"):
            self.assertIn("\n%s " % name, text)
        # The automatic budget is 2 % of the objects' bytes, at least 256 KiB.
        self.assertEqual(metric(self.server, "sqlkube_watch_cache_snapshot_budget_bytes"), 256 << 10)
        self.assertGreater(metric(self.server, "sqlkube_watch_cache_object_bytes"), 0)


class NoSnapshots(SnapshotCase, unittest.TestCase):
    """--snapshot-memory 0: only the newest state is kept; past revisions are SQL's."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server("NoSnapshots", extra_args=["--snapshot-memory", "0"])
        cls.server.start()

    def test_past_pages_from_sql(self):
        path = "/api/v1/namespaces/nosnap/configmaps"
        self.fill("nosnap", 40)
        first = self.page(path, limit=15)
        r = self.server.request("DELETE", path + "/cm-020")
        self.assertEqual(r.status, 200, r)
        # A consistent read waits until the cache has applied the delete (the
        # PostgreSQL feed applies it asynchronously): from then on, with no
        # memory for past snapshots, the token's revision is only in SQL.
        self.assertEqual(self.server.request("GET", path + "/cm-020").status, 404)
        sql0, cache0 = metric(self.server, SQL_CHUNKS), metric(self.server, CACHE_CHUNKS)
        second = self.page(path, limit=15, **{"continue": first["metadata"]["continue"]})
        self.assertEqual([o["metadata"]["name"] for o in second["items"]],
                         ["cm-%03d" % i for i in range(15, 30)])  # cm-020 still there at rv
        self.assertGreater(metric(self.server, SQL_CHUNKS), sql0)
        self.assertEqual(metric(self.server, "sqlkube_watch_cache_snapshot_bytes"), 0)
        # The newest state still comes from memory.
        self.page(path, resourceVersion="0")
        self.assertGreater(metric(self.server, CACHE_CHUNKS), cache0)

    def test_bad_flag_values(self):
        for bad in ("-1", "12X", "K", "2T", ""):
            p = subprocess.run([CONFIG.binary, "serve", "--snapshot-memory", bad],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 1, (bad, p.stderr))
            self.assertIn("invalid --snapshot-memory", p.stderr)


if __name__ == "__main__":
    unittest.main()
