"""Durability across a crash: acknowledged writes survive SIGKILL.

Creates 50 ConfigMaps over HTTP (each acknowledged with 201), SIGKILLs the
server (no shutdown hook runs), restarts it on the same data dir and the same
database (SQLite file or PostgreSQL database), and checks that all 50 are
there with the same resourceVersion, uid and data; that deletes and updates
are durable the same way; and that resourceVersions keep increasing after the
restart (clients compare them; a reset counter would make watches and
optimistic concurrency silently wrong).
Why: "201 means stored" is the core promise of an object store; SQLite WAL
and PostgreSQL commit handling are both on this path.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import ServerTestCase  # noqa: E402

N = 50


class Durability(ServerTestCase, unittest.TestCase):

    def cm_path(self, ns, name=""):
        return "/api/v1/namespaces/%s/configmaps%s" % (ns, "/" + name if name else "")

    def test_kill_and_restart_keeps_acknowledged_writes(self):
        srv = self.server
        ns = "durable"
        r = srv.request("POST", "/api/v1/namespaces",
                        body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        self.assertEqual(r.status, 201, r)

        before = {}
        for i in range(N):
            name = "cm-%02d" % i
            body = {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "labels": {"i": str(i)}},
                    "data": {"index": str(i), "payload": "p" * (i * 37)}}
            r = srv.request("POST", self.cm_path(ns), body=body)
            self.assertEqual(r.status, 201, "create %s: %r" % (name, r))
            md = r.json()["metadata"]
            self.assertRegex(md["resourceVersion"], r"^[0-9]+$")
            before[name] = (md["resourceVersion"], md["uid"])

        # an update and a delete, also acknowledged before the crash
        obj = srv.request("GET", self.cm_path(ns, "cm-00")).json()
        obj["data"] = {"index": "0", "updated": "yes"}
        r = srv.request("PUT", self.cm_path(ns, "cm-00"), body=obj)
        self.assertEqual(r.status, 200, r)
        before["cm-00"] = (r.json()["metadata"]["resourceVersion"], before["cm-00"][1])
        r = srv.request("DELETE", self.cm_path(ns, "cm-49"))
        self.assertEqual(r.status, 200, r)
        del before["cm-49"]

        lst = srv.request("GET", self.cm_path(ns)).json()
        list_rv_before = int(lst["metadata"]["resourceVersion"])
        max_rv_before = max(int(rv) for rv, _ in before.values())
        self.assertGreaterEqual(list_rv_before, max_rv_before)

        srv.restart(crash=True)

        lst = srv.request("GET", self.cm_path(ns))
        self.assertEqual(lst.status, 200, lst)
        items = {i["metadata"]["name"]: i for i in lst.json()["items"]}
        self.assertEqual(sorted(items), sorted(before), "set of ConfigMaps changed across the crash")
        for name, (rv, uid) in sorted(before.items()):
            with self.subTest(name=name):
                r = srv.request("GET", self.cm_path(ns, name))
                self.assertEqual(r.status, 200, r)
                md = r.json()["metadata"]
                self.assertEqual(md["resourceVersion"], rv)
                self.assertEqual(md["uid"], uid)
                self.assertEqual(items[name]["metadata"]["resourceVersion"], rv)
        self.assertEqual(items["cm-00"]["data"], {"index": "0", "updated": "yes"})
        self.assertEqual(items["cm-17"]["data"], {"index": "17", "payload": "p" * (17 * 37)})
        self.assertEqual(srv.request("GET", self.cm_path(ns, "cm-49")).status, 404)

        # the namespace itself and the defaults survived too
        for n in (ns, "default", "kube-system", "kube-public"):
            self.assertEqual(srv.request("GET", "/api/v1/namespaces/" + n).status, 200, n)

        # resourceVersions keep growing after the restart
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after"}, "data": {"a": "b"}}
        r = srv.request("POST", self.cm_path(ns), body=body)
        self.assertEqual(r.status, 201, r)
        self.assertGreater(int(r.json()["metadata"]["resourceVersion"]), list_rv_before)

        # a clean stop/start keeps everything as well
        rc = srv.stop()
        self.assertEqual(rc, 0, "sqlkube should exit 0 on SIGTERM (got %r; negative = killed)" % rc)
        srv.start()
        lst = srv.request("GET", self.cm_path(ns)).json()
        self.assertEqual(len(lst["items"]), len(before) + 1)


if __name__ == "__main__":
    unittest.main()
