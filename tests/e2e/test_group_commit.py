"""Concurrent REST writes that land in one group commit answer as serial ones.

The store's writer applies every waiting write in one transaction, and on
PostgreSQL it reads the batch's current rows in one statement before the
first write (prefetch_current), then serves later reads from what the batch
has written. So writes of one batch must see each other exactly as if they
had been serial: 16 threads start each scenario at once, so several land in
one batch. Checked: of concurrent creates of one name exactly one wins
(409 AlreadyExists for the rest); objects created in a namespace that a
write in the same batch creates succeed only after it (their
resourceVersions above the namespace's) and are there; read-modify-write
increments with resourceVersion preconditions lose none (the counter ends
at the number of writers, each successful update at its own revision, the
last one the object's); concurrent deletes and re-creates of one name leave
the object exactly when more creates than deletes succeeded, and then it is
the last create's.
"""

import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import ServerTestCase  # noqa: E402

N = 16
CM = "/api/v1/namespaces/%s/configmaps"


def cm(name, **data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {k: str(v) for k, v in data.items()}}


class GroupCommit(ServerTestCase, unittest.TestCase):

    def at_once(self, fns):
        """Runs the callables from as many threads released together; returns
        their results in order."""
        out = [None] * len(fns)
        gate = threading.Barrier(len(fns))

        def run(i):
            gate.wait()
            out[i] = fns[i]()

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(fns))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        return out

    def test_concurrent_creates_of_one_name(self):
        got = self.at_once([lambda i=i: self.server.request("POST", CM % "default",
                                                            cm("same", writer=i))
                            for i in range(N)])
        self.assertEqual(sorted(r.status for r in got), [201] + [409] * (N - 1), got)
        winner = next(r.json() for r in got if r.status == 201)
        for r in got:
            if r.status == 409:
                self.assertEqual(r.json()["reason"], "AlreadyExists")
        now = self.server.request("GET", CM % "default" + "/same").json()
        self.assertEqual(now["metadata"]["uid"], winner["metadata"]["uid"])
        self.assertEqual(now["data"], winner["data"])

    def test_objects_in_a_namespace_created_in_the_same_batch(self):
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gc-ns"}}
        fns = [lambda: self.server.request("POST", "/api/v1/namespaces", ns)]
        fns += [lambda i=i: self.server.request("POST", CM % "gc-ns", cm("c%d" % i))
                for i in range(N)]
        got = self.at_once(fns)
        self.assertEqual(got[0].status, 201, got[0])
        ns_rv = int(got[0].json()["metadata"]["resourceVersion"])
        for i, r in enumerate(got[1:]):
            self.assertIn(r.status, (201, 404), r)
            if r.status == 201:
                self.assertGreater(int(r.json()["metadata"]["resourceVersion"]), ns_rv)
                self.assertEqual(self.server.request("GET", CM % "gc-ns" + "/c%d" % i).status,
                                 200)
            else:
                self.assertEqual(r.json()["reason"], "NotFound")

    def test_increments_with_preconditions_lose_none(self):
        path = CM % "default" + "/counter"
        self.assertEqual(self.server.request("POST", CM % "default", cm("counter", n=0)).status,
                         201)

        def increment():
            while True:
                cur = self.server.request("GET", path).json()
                cur["data"]["n"] = str(int(cur["data"]["n"]) + 1)
                r = self.server.request("PUT", path, cur)
                if r.status != 409:
                    return r

        got = self.at_once([increment] * N)
        self.assertEqual([r.status for r in got], [200] * N, got)
        rvs = sorted(int(r.json()["metadata"]["resourceVersion"]) for r in got)
        self.assertEqual(len(set(rvs)), N, rvs)
        self.assertEqual(sorted(int(r.json()["data"]["n"]) for r in got), list(range(1, N + 1)))
        now = self.server.request("GET", path).json()
        self.assertEqual((now["data"]["n"], int(now["metadata"]["resourceVersion"])),
                         (str(N), rvs[-1]))

    def test_deletes_and_creates_of_one_name(self):
        path = CM % "default" + "/flip"
        fns = [(lambda: self.server.request("DELETE", path)) if i % 2 else
               (lambda i=i: self.server.request("POST", CM % "default", cm("flip", writer=i)))
               for i in range(N)]
        got = self.at_once(fns)
        creates = [r for i, r in enumerate(got) if i % 2 == 0 and r.status == 201]
        deletes = [r for i, r in enumerate(got) if i % 2 == 1 and r.status == 200]
        for i, r in enumerate(got):
            self.assertIn(r.status, (201, 409) if i % 2 == 0 else (200, 404), r)
        now = self.server.request("GET", path)
        self.assertEqual(len(creates) - len(deletes), 1 if now.status == 200 else 0,
                         (now, got))
        if now.status == 200:
            last = max(creates, key=lambda r: int(r.json()["metadata"]["resourceVersion"]))
            self.assertEqual(now.json()["metadata"]["uid"], last.json()["metadata"]["uid"])
            self.assertEqual(now.json()["metadata"]["resourceVersion"],
                             last.json()["metadata"]["resourceVersion"])


if __name__ == "__main__":
    unittest.main()
