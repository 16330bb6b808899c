"""Chunked LIST, continue tokens, resourceVersion rules and compaction.

What Kubernetes clients rely on when they page (API chunking design doc):
all pages of one list come from one snapshot even while writes go on; tokens
are opaque, signed, bound to their list, survive a restart; a compacted
token gets 410 Expired with a token that continues the same key range at the
current revision; resourceVersion/resourceVersionMatch combinations are
validated like kube-apiserver does. Exercised with raw HTTP, kubectl
--chunk-size and the Python client's limit/_continue.
"""

import base64
import json
import os
import sys
import threading
import unittest
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import ServerTestCase, describe  # noqa: E402
from test_watch import WatchStream  # noqa: E402


def cm(name, data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


class Paging(ServerTestCase, unittest.TestCase):

    def ns(self, name):
        r = self.server.request("POST", "/api/v1/namespaces",
                                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        self.assertIn(r.status, (201, 409), r)

    def create(self, ns, name, data):
        r = self.server.request("POST", "/api/v1/namespaces/%s/configmaps" % ns, cm(name, data))
        self.assertEqual(r.status, 201, r)
        return r.json()

    def list_page(self, path, **params):
        q = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        return self.server.request("GET", path + ("?" + q if q else ""))

    def all_pages(self, path, limit, **params):
        """Returns (items, first page resourceVersion, page count)."""
        items, cont, rv, pages = [], None, None, 0
        while True:
            r = self.list_page(path, limit=limit, **{"continue": cont}, **params)
            self.assertEqual(r.status, 200, r)
            body = r.json()
            pages += 1
            self.assertLessEqual(len(body["items"]), limit)
            if rv is None:
                rv = body["metadata"]["resourceVersion"]
            else:
                self.assertEqual(body["metadata"]["resourceVersion"], rv,
                                 "every page must report the first page's resourceVersion")
            items += body["items"]
            cont = body["metadata"].get("continue")
            if not cont:
                return items, int(rv), pages

        return p.stdout

    def test_pages_consistent_under_concurrent_writes(self):
        self.ns("paging")
        log = []  # (rv, name, data or None for delete)
        for i in range(240):
            o = self.create("paging", "cm-%03d" % i, {"v": "0"})
            log.append((int(o["metadata"]["resourceVersion"]), o["metadata"]["name"], o["data"]))
        # A ConfigMap's DELETE answers a Status, without the deletion's
        # revision: the deletions' revisions come from a watch of the namespace.
        deletions = WatchStream(self.server, "/api/v1/namespaces/paging/configmaps?watch=true"
                                "&resourceVersion=%d" % log[-1][0])
        deleted = [0]
        stop = threading.Event()
        errors = []
        lock = threading.Lock()

        def writer(seed):
            i = 0
            path = "/api/v1/namespaces/paging/configmaps/"
            while not stop.is_set() and i < 400:
                i += 1
                name = "cm-%03d" % ((seed * 97 + i * 13) % 260)
                if i % 5 == 0:
                    r = self.server.request("DELETE", path + name)
                    if r.status == 200:
                        self.assertEqual(r.json()["details"]["name"], name)
                        with lock:
                            deleted[0] += 1
                    elif r.status != 404:
                        errors.append(r)
                    continue
                data = {"v": "%d-%d" % (seed, i)}
                r = self.server.request(
                    "PATCH", path + name, {"data": data},
                    headers={"Content-Type": "application/merge-patch+json"})
                if r.status == 404:
                    r = self.server.request("POST", "/api/v1/namespaces/paging/configmaps",
                                            cm(name, data))
                if r.status in (200, 201):
                    o = r.json()
                    with lock:
                        log.append((int(o["metadata"]["resourceVersion"]), name, o["data"]))
                elif r.status not in (404, 409):
                    errors.append(r)

        threads = [threading.Thread(target=writer, args=(s,)) for s in range(3)]
        for t in threads:
            t.start()
        try:
            items, rv, pages = self.all_pages("/api/v1/namespaces/paging/configmaps", 17)
        finally:
            stop.set()
            for t in threads:
                t.join()
        self.assertEqual(errors, [])
        self.assertGreater(pages, 5)
        marker = self.create("paging", "zz-end", {"v": "end"})
        events = deletions.wait_for(lambda ev: any(e["object"]["metadata"]["name"] == "zz-end"
                                                   for e in ev), what="the marker")
        deletions.close()
        gone = [(int(e["object"]["metadata"]["resourceVersion"]), e["object"]["metadata"]["name"],
                 None) for e in events if e["type"] == "DELETED"]
        self.assertEqual(len(gone), deleted[0])
        log.extend(gone)
        self.assertLess(rv, int(marker["metadata"]["resourceVersion"]))
        # The state at rv, computed from the writes' own responses.
        expected = {}
        for wrv, name, data in sorted(log):
            if wrv > rv:
                break
            if data is None:
                expected.pop(name, None)
            else:
                expected[name] = (wrv, data)
        got = {o["metadata"]["name"]: (int(o["metadata"]["resourceVersion"]), o["data"])
               for o in items}
        self.assertEqual(len(got), len(items), "an object appeared on two pages")
        self.assertEqual(got, expected)
        names = [o["metadata"]["name"] for o in items]
        self.assertEqual(names, sorted(names))

    def test_tokens_are_checked(self):
        self.ns("tok-a")
        self.ns("tok-b")
        for i in range(6):
            self.create("tok-a", "c%d" % i, {"k": "v"})
            self.create("tok-b", "c%d" % i, {"k": "v"})
        r = self.list_page("/api/v1/namespaces/tok-a/configmaps", limit=2)
        tok = r.json()["metadata"]["continue"]
        # opaque: the last key is not in clear (a two-letter name may turn
        # up by chance in the base64 of the signature, so ask for the key)
        for clear in ("tok-a", "configmaps", "tok-a/c1"):
            self.assertNotIn(clear, tok, "the token should be opaque")
        ok = self.list_page("/api/v1/namespaces/tok-a/configmaps", limit=2, **{"continue": tok})
        self.assertEqual(ok.status, 200, ok)
        self.assertEqual([o["metadata"]["name"] for o in ok.json()["items"]], ["c2", "c3"])
        raw = bytearray(base64.urlsafe_b64decode(tok + "=" * (-len(tok) % 4)))
        for pos in (0, len(raw) // 2, len(raw) - 1):
            forged = bytearray(raw)
            forged[pos] ^= 0x01
            ftok = base64.urlsafe_b64encode(bytes(forged)).decode().rstrip("=")
            bad = self.list_page("/api/v1/namespaces/tok-a/configmaps", limit=2,
                                 **{"continue": ftok})
            self.assertEqual(bad.status, 400, "forged token at byte %d: %r" % (pos, bad))
            self.assertEqual(bad.json()["reason"], "BadRequest")
        for path in ("/api/v1/namespaces/tok-b/configmaps", "/api/v1/configmaps",
                     "/api/v1/namespaces/tok-a/secrets"):
            bad = self.list_page(path, limit=2, **{"continue": tok})
            self.assertEqual(bad.status, 400, "token used on %s: %r" % (path, bad))
        for garbage in ("x", "!!!", "AAAA"):
            bad = self.list_page("/api/v1/namespaces/tok-a/configmaps", limit=2,
                                 **{"continue": garbage})
            self.assertEqual(bad.status, 400, bad)
        mixed = self.list_page("/api/v1/namespaces/tok-a/configmaps", limit=2,
                               resourceVersion="1", **{"continue": tok})
        self.assertEqual(mixed.status, 400, mixed)

    def test_token_outlives_restart_and_compaction_gives_410(self):
        self.ns("restart")
        for i in range(9):
            self.create("restart", "r%d" % i, {"k": "v"})
        path = "/api/v1/namespaces/restart/configmaps"
        first = self.list_page(path, limit=3).json()
        tok = first["metadata"]["continue"]
        self.server.restart()
        second = self.list_page(path, limit=3, **{"continue": tok})
        self.assertEqual(second.status, 200, second)
        self.assertEqual([o["metadata"]["name"] for o in second.json()["items"]],
                         ["r3", "r4", "r5"])
        self.assertEqual(second.json()["metadata"]["resourceVersion"],
                         first["metadata"]["resourceVersion"])
        # Move past the snapshot, compact everything, and the old token expires.
        r = self.server.request("PATCH", path + "/r8", {"data": {"k": "w"}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r)
        self.server.request("DELETE", path + "/r7")
        self.server.compact(retain=0)
        expired = self.list_page(path, limit=3, **{"continue": tok})
        self.assertEqual(expired.status, 410, expired)
        st = expired.json()
        self.assertEqual(st["reason"], "Expired")
        self.assertIn("too old to display a consistent list result", st["message"])
        newtok = st["metadata"]["continue"]
        rest = self.list_page(path, limit=10, **{"continue": newtok})
        self.assertEqual(rest.status, 200, rest)
        self.assertEqual([o["metadata"]["name"] for o in rest.json()["items"]],
                         ["r3", "r4", "r5", "r6", "r8"])
        self.assertEqual(rest.json()["items"][-1]["data"], {"k": "w"})
        exact = self.list_page(path, resourceVersion=first["metadata"]["resourceVersion"],
                               resourceVersionMatch="Exact")
        self.assertEqual(exact.status, 410, exact)
        get_old = self.server.request("GET", path + "/r0")
        self.assertEqual(get_old.status, 200, get_old)

    def test_resource_version_rules(self):
        path = "/api/v1/namespaces/default/configmaps"
        o = self.create("default", "rv-x", {"a": "1"})
        rv = int(o["metadata"]["resourceVersion"])
        r = self.list_page(path, resourceVersionMatch="NotOlderThan")
        self.assertEqual(r.status, 422, r)
        r = self.list_page(path, resourceVersion="0", resourceVersionMatch="Exact")
        self.assertEqual(r.status, 422, r)
        r = self.list_page(path, resourceVersion="abc")
        self.assertEqual(r.status, 400, r)
        r = self.list_page(path, resourceVersion=str(rv), resourceVersionMatch="Exact")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["metadata"]["resourceVersion"], str(rv))
        self.assertIn("rv-x", [i["metadata"]["name"] for i in r.json()["items"]])
        r = self.list_page(path, resourceVersion=str(rv), resourceVersionMatch="NotOlderThan")
        self.assertEqual(r.status, 200, r)
        self.assertGreaterEqual(int(r.json()["metadata"]["resourceVersion"]), rv)
        r = self.list_page(path, resourceVersion="0")
        self.assertEqual(r.status, 200, r)
        future = str(rv + 100000)
        for req in (lambda: self.list_page(path, resourceVersion=future),
                    lambda: self.server.request("GET", path + "/rv-x?resourceVersion=" + future)):
            r = req()
            self.assertEqual(r.status, 504, r)
            st = r.json()
            self.assertEqual(st["reason"], "Timeout")
            self.assertEqual(st["details"]["causes"][0]["reason"], "ResourceVersionTooLarge")

    def test_filtered_list_that_matches_little_streams_valid_json(self):
        # 1,200 objects, a selector matching only the last: the chunks before
        # it yield nothing, and the server hands the connection back between
        # them (a space inside the items array) instead of scanning all in
        # one go. Clients must still get exactly the matching items.
        self.ns("sparse")
        base = "/api/v1/namespaces/sparse/configmaps"
        for i in range(1200):
            obj = cm("s%04d" % i, {"i": str(i)})
            if i == 1199:
                obj["metadata"]["labels"] = {"pick": "me"}
            r = self.server.request("POST", base, obj)
            self.assertEqual(r.status, 201, r)
        for rv in (None, "0"):
            r = self.list_page(base, labelSelector="pick=me", resourceVersion=rv)
            self.assertEqual(r.status, 200, r)
            self.assertEqual([i["metadata"]["name"] for i in r.json()["items"]], ["s1199"])
            r = self.list_page(base, labelSelector="pick=nobody", resourceVersion=rv)
            self.assertEqual(r.json()["items"], [])
        p = self.server.kubectl("get", "cm", "-n", "sparse", "-l", "pick=me", "-o", "name")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertEqual(p.stdout.split(), ["configmap/s1199"])

    def test_list_laid_out_as_kube(self):
        # kube-apiserver writes kind, apiVersion, metadata, then the items (a
        # reader that streams sees the continue token first), and leaves the
        # items' kind and apiVersion out for built-in kinds; a Table's
        # metadata comes before its columns and rows
        self.ns("layout")
        base = "/api/v1/namespaces/layout/configmaps"
        for name in ("a", "b", "c"):
            self.create("layout", name, {"k": name})
        table = "application/json;as=Table;v=v1;g=meta.k8s.io"
        partial = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
        for limit in (None, 2):
            path = base + ("?limit=%d" % limit if limit else "")
            r = self.server.request("GET", path)
            self.assertEqual(r.status, 200, r)
            self.assertTrue(r.body.startswith(b'{"kind":"ConfigMapList","apiVersion":"v1",'
                                              b'"metadata":{"resourceVersion":"'), r.body[:120])
            body = r.json()
            self.assertEqual(list(body), ["kind", "apiVersion", "metadata", "items"])
            meta = ["resourceVersion"] + (["continue", "remainingItemCount"] if limit else [])
            self.assertEqual(list(body["metadata"]), meta)
            if limit:  # counted from the cache's key counts: the one item after the page
                self.assertEqual(body["metadata"]["remainingItemCount"], 1)
            self.assertEqual([i["metadata"]["name"] for i in body["items"]], ["a", "b", "c"][:limit])
            for item in body["items"]:
                self.assertEqual(list(item)[:2], ["metadata", "data"], item)
            r = self.server.request("GET", path, headers={"Accept": table})
            self.assertEqual(list(r.json()), ["kind", "apiVersion", "metadata", "columnDefinitions",
                                              "rows"])
            self.assertEqual(list(r.json()["metadata"]), meta)
            r = self.server.request("GET", path, headers={"Accept": partial})
            body = r.json()
            self.assertEqual(list(body), ["kind", "apiVersion", "metadata", "items"])
            self.assertEqual([(i["kind"], i["apiVersion"]) for i in body["items"]],
                             [("PartialObjectMetadata", "meta.k8s.io/v1")] * (limit or 3))
        # the next page continues where the first ended
        first = self.list_page(base, limit=2).json()
        rest = self.list_page(base, limit=2, **{"continue": first["metadata"]["continue"]}).json()
        self.assertEqual([i["metadata"]["name"] for i in rest["items"]], ["c"])
        self.assertEqual(list(rest["metadata"]), ["resourceVersion"])

    def test_kubectl_chunk_size_all_namespaces(self):
        want = set()
        for ns in ("chunk-a", "chunk-b", "chunk-c"):
            self.ns(ns)
            for i in range(11):
                self.create(ns, "k%02d" % i, {"x": "y"})
                want.add("%s/k%02d" % (ns, i))
        p = self.server.kubectl("get", "configmaps", "-A", "--chunk-size=4", "-o",
                                "custom-columns=NS:.metadata.namespace,N:.metadata.name",
                                "--no-headers", "-v=6")
        self.assertEqual(p.returncode, 0, describe(p))
        got = {"/".join(line.split()) for line in p.stdout.splitlines() if line.startswith("chunk-")}
        self.assertEqual(got, want)
        self.assertGreaterEqual(p.stderr.count("limit=4"), 8, "kubectl should have paged")
        p = self.server.kubectl("get", "cm", "-A", "--chunk-size=5")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertIn("NAMESPACE", p.stdout)
        self.assertEqual(sum(1 for l in p.stdout.splitlines() if l.startswith("chunk-")), 33)

    def test_python_client_pages(self):
        from kubernetes import client, config
        self.ns("py-page")
        for i in range(23):
            self.create("py-page", "p%02d" % i, {"i": str(i)})
        api = client.CoreV1Api(config.new_client_from_config(config_file=self.server.kubeconfig))
        names, cont, rvs = [], None, set()
        while True:
            ret = api.list_namespaced_config_map("py-page", limit=5, _continue=cont)
            self.assertLessEqual(len(ret.items), 5)
            names += [i.metadata.name for i in ret.items]
            rvs.add(ret.metadata.resource_version)
            cont = ret.metadata._continue
            if not cont:
                break
        self.assertEqual(names, ["p%02d" % i for i in range(23)])
        self.assertEqual(len(rvs), 1)


if __name__ == "__main__":
    unittest.main()
