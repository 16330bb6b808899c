"""Table and PartialObjectMetadata answers made from what each object version keeps.

The first Table or metadata-only read of an object version parses it and
keeps its metadata text and its row (the cells, ages left as holes filled at
each request's time) with the cached version; later reads copy those bytes.
So a cold and a cached answer must be the same bytes (ages aside: a second
may pass between them), both equal to what is built from the object itself
(each PartialObjectMetadata is the object's metadata, byte for byte as the
JSON list carries it; cells as kube's printers compute them), on a page of
mixed kinds: configmaps, pods, deployments, services, events (ages from
fixed old times) and a CRD's custom resources.

An updated object's new version must serve its own cells and metadata, in
lists and watches; and a custom resource's row follows its CRD's columns
when they change (its rows are never kept, the CRD being the columns').
"""

import json
import os
import re
import sys
import time
import unittest
from calendar import timegm

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import ServerTestCase, wait_until  # noqa: E402

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
POM = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=%s"
POM_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
NS = "/api/v1/namespaces/default/"
GROUP = "kept.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/%s/v1/namespaces/default/widgets" % GROUP
OLD_START = "2024-01-01T00:00:00Z"
EV_FIRST, EV_LAST = "2020-01-01T00:00:00Z", "2021-06-01T12:00:00Z"


def human(secs):
    """kube's duration.HumanDuration, as the server prints ages."""
    m, h = secs // 60, secs // 3600
    d = h // 24
    y = d // 365
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return "%ds" % secs
    if m < 10 and secs % 60:
        return "%dm%ds" % (m, secs % 60)
    if m < 180:
        return "%dm" % m
    if h < 8 and m % 60:
        return "%dh%dm" % (h, m % 60)
    if h < 48:
        return "%dh" % h
    if h < 192 and h % 24:
        return "%dd%dh" % (d, h % 24)
    if d < 730:
        return "%dd" % d
    if y < 8 and d % 365:
        return "%dy%dd" % (y, d % 365)
    return "%dy" % y


def ago(ts):
    return human(int(time.time()) - timegm(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ")))


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()


def pom_text(meta, version="v1"):
    """A PartialObjectMetadata as the server writes it: its metadata's bytes."""
    return (b'{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/' + version.encode() +
            b'","metadata":' + compact(meta) + b"}")


def no_fresh_ages(body):
    """The body with the ages of just-created objects (seconds) blanked."""
    return re.sub(rb'"\d{1,3}s"', b'"AGE"', body)


def widget_crd(columns):
    schema = {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"size": {"type": "integer"},
                                         "color": {"type": "string"},
                                         "since": {"type": "string"}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets." + GROUP},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema},
                                   "additionalPrinterColumns": columns}]}}


COLUMNS = [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
           {"name": "Since", "type": "date", "jsonPath": ".spec.since"}]


class KeptTablesTest(ServerTestCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        req = cls.server.request

        def post(path, obj):
            r = req("POST", path, obj)
            assert r.status == 201, (path, r.status, r.body)
            return r.json()

        for i in range(4):
            post(NS + "configmaps", {"metadata": {"name": "cm-%d" % i, "labels": {"i": str(i)},
                                                  "annotations": {"note": "ü/\"q\""}},
                                     "data": {"k%d" % j: "v" * 300 for j in range(i + 1)}})
        for i in range(2):
            pod = post(NS + "pods", {"metadata": {"name": "pod-%d" % i},
                                     "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
            pod["status"] = {"phase": "Running", "containerStatuses": [{
                "name": "c", "image": "busybox", "imageID": "", "ready": True,
                "restartCount": 3 + i, "state": {"running": {"startedAt": OLD_START}},
                "lastState": {"terminated": {"exitCode": 1, "startedAt": OLD_START,
                                             "finishedAt": OLD_START}}}]}
            r = req("PUT", NS + "pods/pod-%d/status" % i, pod)
            assert r.status == 200, r.body
        post("/apis/apps/v1/namespaces/default/deployments", {
            "metadata": {"name": "web"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "n", "image": "nginx"}]}}}})
        post(NS + "services", {"metadata": {"name": "web"},
                               "spec": {"selector": {"app": "web"},
                                        "ports": [{"port": 80, "protocol": "TCP"}]}})
        post(NS + "events", {"metadata": {"name": "ev-1"}, "type": "Normal", "reason": "Pulled",
                             "message": "pulled", "count": 2,
                             "involvedObject": {"kind": "Pod", "name": "pod-0"},
                             "firstTimestamp": EV_FIRST, "lastTimestamp": EV_LAST})
        post(CRDS, widget_crd(COLUMNS))
        wait_until(lambda: req("GET", WIDGETS).status == 200, what="widgets served")
        for i in range(2):
            post(WIDGETS, {"apiVersion": GROUP + "/v1", "kind": "Widget",
                           "metadata": {"name": "w-%d" % i},
                           "spec": {"size": 10 + i, "color": "red", "since": EV_FIRST}})

    def get(self, path, accept, want=200):
        r = self.server.request("GET", path, headers={"Accept": accept})
        self.assertEqual(r.status, want, r.body)
        return r.body.rstrip(b"\n")

    def objects(self, path):
        return self.server.request("GET", path).json()["items"]

    def test_partial_lists_cold_cached_and_exact(self):
        paths = [NS + "configmaps", NS + "pods", "/apis/apps/v1/namespaces/default/deployments",
                 NS + "services", NS + "events", WIDGETS]
        for path in paths:
            for version in ("v1", "v1beta1"):
                cold = self.get(path, POM % version)
                cached = self.get(path, POM % version)
                self.assertEqual(cold, cached, path)
                items = b",".join(pom_text(o["metadata"], version) for o in self.objects(path))
                tail = b'"items":[' + items + b"]}"
                self.assertEqual(cold[-len(tail):], tail, path)
        # paged: the same bytes per item across pages
        first = json.loads(self.get(NS + "configmaps?limit=2", POM % "v1"))
        rest = self.get(NS + "configmaps?limit=2&continue=" + first["metadata"]["continue"],
                        POM % "v1")
        objs = self.objects(NS + "configmaps")
        self.assertTrue(rest.endswith(b'"items":[' + b",".join(
            pom_text(o["metadata"]) for o in objs[2:4]) + b"]}"), rest[:300])

    def test_tables_cold_cached_and_cells(self):
        for include in ("", "?includeObject=None", "?includeObject=Object"):
            for path in (NS + "configmaps", NS + "pods", NS + "services", NS + "events",
                         "/apis/apps/v1/namespaces/default/deployments", WIDGETS):
                cold = self.get(path + include, TABLE)
                cached = self.get(path + include, TABLE)
                self.assertEqual(no_fresh_ages(cold), no_fresh_ages(cached), path + include)
                rows = json.loads(cached)["rows"]
                objs = self.objects(path)
                self.assertEqual(len(rows), len(objs))
                if include == "":  # includeObject=Metadata: the same bytes as a POM item
                    for o in objs:
                        self.assertIn(b'"object":' + pom_text(o["metadata"]) + b"}", cold, path)
                elif include.endswith("None"):
                    self.assertNotIn(b'"object"', cold)
                else:
                    def bare(o):  # list items may leave kind and apiVersion out
                        return {k: v for k, v in o.items() if k not in ("kind", "apiVersion")}
                    self.assertEqual([bare(r["object"]) for r in rows], [bare(o) for o in objs])
                    self.assertTrue(all(r["object"]["kind"] for r in rows), path)
        cms = json.loads(self.get(NS + "configmaps", TABLE))["rows"]
        self.assertEqual([r["cells"][:2] for r in cms if r["cells"][0].startswith("cm-")],
                         [["cm-%d" % i, i + 1] for i in range(4)])
        pods = json.loads(self.get(NS + "pods", TABLE))["rows"]
        self.assertEqual([r["cells"][:4] for r in pods],
                         [["pod-%d" % i, "1/1", "Running", "%d (%s ago)" % (3 + i, ago(OLD_START))]
                          for i in range(2)])
        ev = json.loads(self.get(NS + "events", TABLE))["rows"][0]["cells"]
        self.assertEqual((ev[0], ev[7], ev[8]), (ago(EV_LAST), ago(EV_FIRST), 2))
        w = json.loads(self.get(WIDGETS, TABLE))["rows"]
        self.assertEqual([r["cells"][:3] for r in w], [["w-0", 10, ago(EV_FIRST)],
                                                       ["w-1", 11, ago(EV_FIRST)]])

    def test_new_version_serves_its_own(self):
        path = NS + "configmaps"
        self.server.request("POST", path, {"metadata": {"name": "upd"}, "data": {"a": "1"}})
        t0 = json.loads(self.get(path + "?labelSelector=!i", TABLE))
        p0 = self.get(path + "/upd", POM_ONE)
        self.assertEqual(t0["rows"][0]["cells"][:2], ["upd", 1])
        rv = t0["metadata"]["resourceVersion"]
        r = self.server.request("PATCH", path + "/upd",
                                {"metadata": {"labels": {"v": "2"}}, "data": {"b": "2", "c": "3"}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r.body)
        new = r.json()
        t1 = json.loads(self.get(path + "?fieldSelector=metadata.name=upd", TABLE))
        self.assertEqual(t1["rows"][0]["cells"][:2], ["upd", 3])
        self.assertEqual(t1["rows"][0]["object"]["metadata"], new["metadata"])
        p1 = self.get(path + "?fieldSelector=metadata.name=upd", POM % "v1")
        self.assertTrue(p1.endswith(b'"items":[' + pom_text(new["metadata"]) + b"]}"))
        self.assertNotEqual(p0, pom_text(new["metadata"]))
        # watches from before the update: each event carries its version's cells
        body = self.get(path + "?watch=true&timeoutSeconds=1&fieldSelector=metadata.name=upd"
                        "&resourceVersion=" + rv, TABLE)
        evs = [json.loads(line) for line in body.splitlines() if line.strip()]
        self.assertEqual([(e["type"], e["object"]["rows"][0]["cells"][1]) for e in evs],
                         [("MODIFIED", 3)])
        body = self.get(path + "?watch=true&timeoutSeconds=1&resourceVersion=" + rv,
                        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
        lines = [line for line in body.splitlines() if line.strip()]
        self.assertEqual(lines, [b'{"type":"MODIFIED","object":' + pom_text(new["metadata"]) +
                                 b"}"])

    def test_crd_columns_change(self):
        before = json.loads(self.get(WIDGETS, TABLE))
        self.assertEqual([c["name"] for c in before["columnDefinitions"]],
                         ["Name", "Size", "Since"])
        crd = self.server.request("GET", CRDS + "/widgets." + GROUP).json()
        crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
            {"name": "Color", "type": "string", "jsonPath": ".spec.color"}] + COLUMNS
        r = self.server.request("PUT", CRDS + "/widgets." + GROUP, crd)
        self.assertEqual(r.status, 200, r.body)

        def columns_changed():
            t = json.loads(self.get(WIDGETS, TABLE))
            return t if len(t["columnDefinitions"]) == 4 else None
        after = wait_until(columns_changed, what="the CRD's new columns served")
        self.assertEqual([r["cells"][:3] for r in after["rows"]],
                         [["w-0", "red", 10], ["w-1", "red", 11]])
        # back as they were, for the other tests
        crd = self.server.request("GET", CRDS + "/widgets." + GROUP).json()
        crd["spec"]["versions"][0]["additionalPrinterColumns"] = COLUMNS
        self.assertEqual(self.server.request("PUT", CRDS + "/widgets." + GROUP, crd).status, 200)
        wait_until(lambda: len(json.loads(self.get(WIDGETS, TABLE))["columnDefinitions"]) == 3,
                   what="the CRD's columns restored")


if __name__ == "__main__":
    unittest.main()
