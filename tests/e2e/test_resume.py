"""RESUME: a restart costs watchers no re-list.

Every start builds the watch cache from a list at the oldest revision its
window can hold (the compact revision, or the window's length before the
current one) and replays the history after it, so a watch from a
resourceVersion issued before a restart, or by another instance sharing
PostgreSQL, is answered with exactly the events after it (no 410, no gap, no
duplicate, selector transitions included), as the same watch would have been
answered before the restart. Only a revision below the compaction floor
gets 410. Custom resources replay too: their CRDs are read before the cache
is built.

Why: kube-apiserver (and sqlkube before this) starts its cache at the
current revision, so after every upgrade or crash each informer's watch gets
410 and every client re-lists every resource at once.
"""

import json
from concurrent.futures import ThreadPoolExecutor
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from server import CONFIG, Server, ServerTestCase, wait_until  # noqa: E402

MERGE = {"Content-Type": "application/merge-patch+json"}


def cm(name, labels=None, data=None):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels or {}}, "data": data or {}}


def watch(server, path, rv, seconds=2):
    """The events a watch from rv yields within `seconds` (the server ends
    it at timeoutSeconds): a list of (type, name, resourceVersion, code)."""
    sep = "&" if "?" in path else "?"
    r = server.request("GET", "%s%swatch=true&resourceVersion=%s&timeoutSeconds=%d"
                       % (path, sep, rv, seconds), timeout=seconds + 30)
    assert r.status == 200, r
    out = []
    for line in r.body.decode().splitlines():
        if not line.strip():
            continue
        ev = json.loads(line)
        obj = ev["object"]
        if ev["type"] == "ERROR":
            out.append(("ERROR", None, None, obj.get("code")))
        elif ev["type"] != "BOOKMARK":
            out.append((ev["type"], obj["metadata"]["name"],
                        int(obj["metadata"]["resourceVersion"]), None))
    return out


def make_ns(server, name):
    r = server.request("POST", "/api/v1/namespaces",
                       {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert r.status == 201, r


def list_rv(server, path):
    r = server.request("GET", path + "?limit=1")
    assert r.status == 200, r
    return int(r.json()["metadata"]["resourceVersion"])


class Resume(ServerTestCase, unittest.TestCase):

    def writes(self, ns, tag):
        """Creates, relabels (a selector transition), updates and deletes."""
        base = "/api/v1/namespaces/%s/configmaps" % ns
        for i in range(3):
            r = self.server.request("POST", base, cm("%s-%d" % (tag, i), {"app": "a"}))
            self.assertEqual(r.status, 201, r)
        r = self.server.request("PATCH", base + "/%s-0" % tag,
                                {"metadata": {"labels": {"app": "b"}}}, headers=MERGE)
        self.assertEqual(r.status, 200, r)
        r = self.server.request("PATCH", base + "/%s-1" % tag, {"data": {"k": "v"}},
                                headers=MERGE)
        self.assertEqual(r.status, 200, r)
        r = self.server.request("DELETE", base + "/%s-2" % tag)
        self.assertEqual(r.status, 200, r)

    def test_watch_from_before_restart_resumes(self):
        ns = "resume-watch"
        make_ns(self.server, ns)
        base = "/api/v1/namespaces/%s/configmaps" % ns
        rv0 = list_rv(self.server, base)
        self.writes(ns, "before")
        plain = watch(self.server, base, rv0)
        selected = watch(self.server, base + "?labelSelector=app%3Da", rv0)
        self.assertEqual([t for t, *_ in plain], ["ADDED"] * 3 + ["MODIFIED"] * 2 + ["DELETED"])
        # the relabel leaves the selection: a DELETED, as kube sends it
        self.assertEqual([(t, n) for t, n, *_ in selected],
                         [("ADDED", "before-0"), ("ADDED", "before-1"), ("ADDED", "before-2"),
                          ("DELETED", "before-0"), ("MODIFIED", "before-1"),
                          ("DELETED", "before-2")])
        for crash in (True, False):
            self.server.restart(crash=crash)
            self.assertEqual(watch(self.server, base, rv0), plain, "crash=%s" % crash)
            self.assertEqual(watch(self.server, base + "?labelSelector=app%3Da", rv0), selected)
        # ... and the watch goes on with what comes after the restart
        self.writes(ns, "after")
        got = watch(self.server, base, rv0)
        self.assertEqual(got[:len(plain)], plain)
        self.assertEqual([(t, n) for t, n, *_ in got[len(plain):]],
                         [("ADDED", "after-0"), ("ADDED", "after-1"), ("ADDED", "after-2"),
                          ("MODIFIED", "after-0"), ("MODIFIED", "after-1"),
                          ("DELETED", "after-2")])
        revs = [rv for _, _, rv, _ in got]
        self.assertEqual(revs, sorted(set(revs)), "in order, no duplicate")

    def test_compaction_floor_still_410(self):
        ns = "resume-compact"
        make_ns(self.server, ns)
        base = "/api/v1/namespaces/%s/configmaps" % ns
        rv0 = list_rv(self.server, base)
        self.writes(ns, "c")
        self.server.compact(retain=0)
        self.server.restart(crash=True)
        self.assertEqual(watch(self.server, base, rv0), [("ERROR", None, None, 410)])
        # from the compact revision on, the watch is served
        rv1 = list_rv(self.server, base)
        self.assertEqual(watch(self.server, base, rv1), [])

    def test_informers_see_no_relist_across_restarts(self):
        """Ten watchers, each resuming from the last resourceVersion it saw,
        through three restarts with writes in between: never a 410, and
        each ends with every event exactly once."""
        ns = "resume-informers"
        make_ns(self.server, ns)
        base = "/api/v1/namespaces/%s/configmaps" % ns
        start = list_rv(self.server, base)
        seen = [[] for _ in range(10)]
        last = [start] * 10
        for round_ in range(3):
            for i in range(4):
                r = self.server.request("POST", base, cm("r%d-%d" % (round_, i)))
                self.assertEqual(r.status, 201, r)
            with ThreadPoolExecutor(10) as pool:
                answers = list(pool.map(lambda w: watch(self.server, base, last[w], seconds=1),
                                        range(10)))
            for w, got in enumerate(answers):
                self.assertNotIn("ERROR", [t for t, *_ in got])
                seen[w] += [n for _, n, _, _ in got]
                if got:
                    last[w] = got[-1][2]
            self.server.restart(crash=round_ % 2 == 0)
        want = ["r%d-%d" % (k, i) for k in range(3) for i in range(4)]
        for w in range(10):
            self.assertEqual(seen[w], want)

    def test_custom_resources_replay(self):
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "gadgets.resume.example.com"},
               "spec": {"group": "resume.example.com", "scope": "Namespaced",
                        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                        "versions": [{"name": "v1", "served": True, "storage": True,
                                      "schema": {"openAPIV3Schema": {
                                          "type": "object",
                                          "x-kubernetes-preserve-unknown-fields": True}}}]}}
        r = self.server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                crd)
        self.assertEqual(r.status, 201, r)
        base = "/apis/resume.example.com/v1/namespaces/default/gadgets"
        wait_until(lambda: self.server.request("GET", base).status == 200, timeout=30,
                   what="the CRD to be served")
        rv0 = list_rv(self.server, base)
        for i in range(3):
            r = self.server.request("POST", base, {"apiVersion": "resume.example.com/v1",
                                                   "kind": "Gadget",
                                                   "metadata": {"name": "g%d" % i}})
            self.assertEqual(r.status, 201, r)
        before = watch(self.server, base, rv0)
        self.assertEqual([(t, n) for t, n, *_ in before],
                         [("ADDED", "g0"), ("ADDED", "g1"), ("ADDED", "g2")])
        self.server.restart(crash=True)
        wait_until(lambda: self.server.request("GET", base).status == 200, timeout=30,
                   what="the CRD to be served again")
        self.assertEqual(watch(self.server, base, rv0), before)

    def test_another_instance_resumes(self):
        """On PostgreSQL, a watch from a resourceVersion instance A issued
        is resumed on instance B started after it was issued."""
        if CONFIG.backend != "postgres":
            self.skipTest("needs a shared PostgreSQL")
        a = Server("resume-a")
        b = Server("resume-b", db_url=a.db_url)
        try:
            a.start()
            base = "/api/v1/namespaces/default/configmaps"
            rv0 = list_rv(a, base)
            for i in range(3):
                self.assertEqual(a.request("POST", base, cm("x%d" % i)).status, 201)
            on_a = watch(a, base, rv0)
            b.start()
            self.assertEqual(watch(b, base, rv0), on_a)
            self.assertEqual(len(on_a), 3)
        finally:
            b.cleanup()
            a.cleanup()


if __name__ == "__main__":
    unittest.main()
