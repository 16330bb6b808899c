"""`kubectl get` tables and shared-storage conversion against sqlkube.

Tables: kubectl prints what the server's Table holds, so its column headers
for the common kinds (`-o wide` included) must be those a real
kube-apiserver 1.32 sends: pods, deployments, services, nodes, jobs, and
the default NAME / CREATED AT table for kinds without a printer (roles).

Shared storage: events.k8s.io/v1 Events are stored as core v1 Events and
autoscaling/v1 HPAs as autoscaling/v2. An object written through one
version must read back in every other one, converted field by field
(message/note, involvedObject/regarding, ...; targetCPUUtilizationPercentage
/ a cpu Resource metric), in gets, lists, watches and patches.
Metadata only: with client-go's metadata client's Accept headers
(as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1, its protobuf clause
first), GET, LIST and WATCH answer meta.k8s.io PartialObjectMetadata(List)
in JSON: each object's whole metadata and nothing else, the list's
resourceVersion and continue token, v1beta1 too; a form that does not fit
the verb, or a conversion the server does not make, is kube's 406.
Why: before, an events.k8s.io client read core-shaped objects, and kubectl's
tables had only NAME and AGE for most kinds; metadata-only clients got whole
objects.
"""

import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import ServerTestCase  # noqa: E402
from test_kubectl import KubectlMixin  # noqa: E402

MANIFEST = {
    "apiVersion": "v1",
    "kind": "List",
    "items": [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "web", "labels": {"app": "web"}},
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}},
                               "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"},
                                                       {"name": "side", "image": "busybox"}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
         "spec": {"type": "NodePort", "selector": {"app": "web"},
                  "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30080,
                             "protocol": "TCP"}]}},
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
         "status": {"conditions": [{"type": "Ready", "status": "True"}],
                    "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}],
                    "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Debian",
                                 "kernelVersion": "6.1", "containerRuntimeVersion": "containerd",
                                 "machineID": "", "systemUUID": "", "bootID": "",
                                 "kubeProxyVersion": "", "operatingSystem": "linux",
                                 "architecture": "amd64"}}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j1"},
         "spec": {"template": {"spec": {"restartPolicy": "Never",
                                        "containers": [{"name": "c", "image": "busybox"}]}}}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r1"},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
         "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    ],
}

WIDE_HEADERS = [
    ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE",
     "READINESS GATES"],
    ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
    ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"],
    ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
     "KERNEL-VERSION", "CONTAINER-RUNTIME"],
    ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
    ["NAME", "CREATED AT"],
]


def blocks(text):
    """kubectl's multi-kind output: a list of (header cells, rows) per kind."""
    out = []
    for chunk in text.strip().split("\n\n"):
        lines = chunk.strip().splitlines()
        out.append(([c for c in re.split(r"\s{2,}", lines[0].strip())], lines[1:]))
    return out


class TablesTest(KubectlMixin, ServerTestCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for obj in MANIFEST["items"]:
            p = cls.server.kubectl("apply", "-f", "-", input=json.dumps(obj))
            if p.returncode != 0:
                raise AssertionError("apply failed: %s %s" % (p.stdout, p.stderr))

    def test_wide_headers(self):
        out = self.ok("get", "pods,deploy,svc,nodes,jobs,roles", "-o", "wide")
        got = blocks(out)
        self.assertEqual([h for h, _ in got], WIDE_HEADERS, out)
        rows = [r for _, rs in got for r in rs]
        svc = next(r for r in rows if r.startswith("service/web"))
        self.assertEqual(re.split(r"\s{2,}", svc)[4:], ["80:30080/TCP", re.split(r"\s{2,}", svc)[5],
                                                      "app=web"])
        dep = next(r for r in rows if r.startswith("deployment.apps/web"))
        self.assertEqual(re.split(r"\s{2,}", dep)[5:], ["nginx,side", "nginx:1.27,busybox",
                                                      "app=web"])
        node_row = next(r for r in rows if r.startswith("node/n1"))
        self.assertEqual(re.split(r"\s{2,}", node_row)[1:3], ["Ready", "control-plane"])
        self.assertIn("10.0.0.5", node_row)

    def test_default_headers(self):
        got = blocks(self.ok("get", "pods,deploy,svc,jobs"))
        self.assertEqual([h for h, _ in got], [
            ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
            ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
            ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"],
            ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"],
        ])
        dep = next(r for _, rs in got for r in rs if r.startswith("deployment.apps/web"))
        self.assertEqual(re.split(r"\s{2,}", dep)[1:4], ["0/2", "0", "0"])

    def test_table_cells_raw(self):
        r = self.server.request(
            "GET", "/api/v1/namespaces/default/services/web",
            headers={"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"})
        self.assertEqual(r.status, 200, r.body)
        t = r.json()
        self.assertEqual([c["name"] for c in t["columnDefinitions"]],
                         ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age",
                          "Selector"])
        self.assertEqual([c["priority"] for c in t["columnDefinitions"]], [0, 0, 0, 0, 0, 0, 1])
        cells = t["rows"][0]["cells"]
        self.assertEqual(cells[1], "NodePort")
        self.assertEqual(cells[3], "<none>")
        self.assertEqual(cells[4], "80:30080/TCP")
        self.assertEqual(cells[6], "app=web")


def core_event(name, **extra):
    ev = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
          "involvedObject": {"kind": "Pod", "name": "p1", "namespace": "default"},
          "reason": "Started", "message": "started container", "type": "Normal",
          "source": {"component": "kubelet", "host": "n1"}, "count": 3,
          "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:05:00Z"}
    ev.update(extra)
    return ev


def events_event(name):
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "eventTime": "2026-01-01T00:06:00.000000Z",
            "regarding": {"kind": "Pod", "name": "p1", "namespace": "default"},
            "reason": "Pulled", "note": "pulled image", "type": "Normal", "action": "Pull",
            "reportingController": "kubelet", "reportingInstance": "n1", "deprecatedCount": 2}


CORE = "/api/v1/namespaces/default/events"
EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"
HPA_V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
HPA_V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"


# the JSON clause of client-go's metadata client (its protobuf answers:
# test_protobuf_wire)
PARTIAL = "application/json;as=%s;g=meta.k8s.io;v=%s"
CMS = "/api/v1/namespaces/default/configmaps"


class PartialMetadataTest(ServerTestCase, unittest.TestCase):
    def meta_get(self, path, kind, want=200, version="v1"):
        r = self.server.request("GET", path, headers={"Accept": PARTIAL % (kind, version)})
        self.assertEqual(r.status, want, r.body)
        return r

    def test_get_list_watch(self):
        full = {}
        for i in range(3):
            r = self.server.request("POST", CMS, {
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "pm-%d" % i, "labels": {"i": str(i)},
                             "annotations": {"a": "b"}},
                "data": {"big": "x" * 2000}})
            self.assertEqual(r.status, 201, r.body)
            full[r.json()["metadata"]["name"]] = r.json()
        # GET: the object's whole metadata, nothing else
        r = self.meta_get(CMS + "/pm-1", "PartialObjectMetadata")
        self.assertEqual(r.headers.get("content-type"), "application/json")
        self.assertEqual(r.json(), {"kind": "PartialObjectMetadata",
                                    "apiVersion": "meta.k8s.io/v1",
                                    "metadata": full["pm-1"]["metadata"]})
        # LIST, paged: items are PartialObjectMetadata, the list keeps its token
        r = self.meta_get(CMS + "?labelSelector=i&limit=2", "PartialObjectMetadataList")
        page = r.json()
        self.assertEqual((page["kind"], page["apiVersion"]),
                         ("PartialObjectMetadataList", "meta.k8s.io/v1"))
        self.assertEqual([it["metadata"] for it in page["items"]],
                         [full["pm-0"]["metadata"], full["pm-1"]["metadata"]])
        self.assertEqual({(it["kind"], it["apiVersion"]) for it in page["items"]},
                         {("PartialObjectMetadata", "meta.k8s.io/v1")})
        self.assertTrue(page["metadata"]["continue"])
        self.assertNotIn(b"xxxx", r.body)
        plain = self.server.request("GET", CMS + "?labelSelector=i")
        self.assertLess(len(r.body) * 3, len(plain.body))
        # v1beta1, as client-go falls back to
        r = self.meta_get(CMS + "/pm-2", "PartialObjectMetadata", version="v1beta1")
        self.assertEqual(r.json()["apiVersion"], "meta.k8s.io/v1beta1")
        # WATCH: events carry PartialObjectMetadata, bookmarks too
        rv = page["metadata"]["resourceVersion"]
        self.server.request("PATCH", CMS + "/pm-0", {"metadata": {"labels": {"j": "1"}}},
                            headers={"Content-Type": "application/merge-patch+json"})
        r = self.meta_get(CMS + "?watch=true&allowWatchBookmarks=true&timeoutSeconds=1"
                          "&resourceVersion=" + rv, "PartialObjectMetadata")
        evs = [json.loads(line) for line in r.body.decode().splitlines() if line.strip()]
        mods = [e for e in evs if e["type"] == "MODIFIED"]
        self.assertEqual(len(mods), 1, evs)
        self.assertEqual(mods[0]["object"]["kind"], "PartialObjectMetadata")
        self.assertEqual(mods[0]["object"]["metadata"]["labels"], {"i": "0", "j": "1"})
        self.assertNotIn("data", mods[0]["object"])
        for e in evs:
            self.assertEqual(e["object"]["apiVersion"], "meta.k8s.io/v1", e)

    def test_not_acceptable(self):
        self.server.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": "na"}})
        r = self.meta_get(CMS + "/na", "PartialObjectMetadataList", want=406)
        self.assertEqual(r.json()["reason"], "NotAcceptable")
        self.assertEqual(r.json()["message"], "you requested PartialObjectMetadataList, but the "
                         "requested object is not a list (*v1.ConfigMap)")
        r = self.meta_get(CMS, "PartialObjectMetadata", want=406)
        self.assertEqual(r.json()["message"], "you requested PartialObjectMetadata, but the "
                         "requested object is a list (*v1.ConfigMapList)")
        r = self.server.request("GET", CMS, headers={
            "Accept": "application/json;as=Widget;g=meta.k8s.io;v=v1"})
        self.assertEqual(r.status, 406, r.body)
        self.assertEqual(r.json()["message"], "only the following media types are accepted: "
                         "application/json, application/yaml, application/vnd.kubernetes.protobuf")
        # an unknown conversion first, a plain clause after it: the plain one
        r = self.server.request("GET", CMS + "/na", headers={
            "Accept": "application/json;as=Widget;g=meta.k8s.io;v=v1, application/json"})
        self.assertEqual((r.status, r.json()["kind"]), (200, "ConfigMap"))


class SharedStorageTest(KubectlMixin, ServerTestCase, unittest.TestCase):
    def req(self, method, path, body=None, status=200, headers=None):
        r = self.server.request(method, path, body=body, headers=headers)
        self.assertEqual(r.status, status, "%s %s: %s" % (method, path, r.body[:2000]))
        return r.json() if r.body else None

    def test_core_event_read_as_events_k8s_io(self):
        self.req("POST", CORE, core_event("c1"), 201)
        ev = self.req("GET", EVENTS + "/c1")
        self.assertEqual(ev["apiVersion"], "events.k8s.io/v1")
        self.assertEqual(ev["note"], "started container")
        self.assertEqual(ev["regarding"], {"kind": "Pod", "name": "p1", "namespace": "default"})
        self.assertEqual(ev["deprecatedSource"], {"component": "kubelet", "host": "n1"})
        self.assertEqual(ev["deprecatedCount"], 3)
        self.assertEqual(ev["deprecatedFirstTimestamp"], "2026-01-01T00:00:00Z")
        self.assertEqual(ev["deprecatedLastTimestamp"], "2026-01-01T00:05:00Z")
        for core_only in ("message", "involvedObject", "source", "count", "firstTimestamp"):
            self.assertNotIn(core_only, ev)
        listed = self.req("GET", EVENTS)
        self.assertEqual((listed["kind"], listed["apiVersion"]), ("EventList", "events.k8s.io/v1"))
        mine = [i for i in listed["items"] if i["metadata"]["name"] == "c1"]
        self.assertNotIn("apiVersion", mine[0])  # the list names it, as kube's items leave it out
        self.assertEqual(mine[0]["note"], "started container")

    def test_events_k8s_io_event_read_as_core(self):
        created = self.req("POST", EVENTS, events_event("n1"), 201)
        self.assertEqual(created["apiVersion"], "events.k8s.io/v1")
        self.assertEqual(created["note"], "pulled image")
        ev = self.req("GET", CORE + "/n1")
        self.assertEqual(ev["apiVersion"], "v1")
        self.assertEqual(ev["message"], "pulled image")
        self.assertEqual(ev["involvedObject"]["name"], "p1")
        self.assertEqual(ev["reportingComponent"], "kubelet")
        self.assertEqual(ev["count"], 2)
        self.assertEqual(ev["eventTime"], "2026-01-01T00:06:00.000000Z")
        self.assertNotIn("note", ev)
        # a patch applies to the served version's form
        patched = self.req("PATCH", EVENTS + "/n1", {"note": "patched"},
                           headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(patched["note"], "patched")
        self.assertEqual(self.req("GET", CORE + "/n1")["message"], "patched")
        # and a PUT of what was read
        patched["note"] = "replaced"
        self.req("PUT", EVENTS + "/n1", patched)
        self.assertEqual(self.req("GET", CORE + "/n1")["message"], "replaced")
        # kubectl's table for events.k8s.io is the core Event printer's
        out = self.ok("get", "events.events.k8s.io")
        self.assertEqual(re.split(r"\s{2,}", out.splitlines()[0].strip()),
                         ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"])
        # DELETE of one Event answers a Status naming it in the URL's group; of
        # a collection, the deleted objects in the URL's version
        gone = self.req("DELETE", EVENTS + "/n1")
        self.assertEqual((gone["kind"], gone["status"]), ("Status", "Success"))
        self.assertEqual({k: gone["details"][k] for k in ("name", "group", "kind")},
                         {"name": "n1", "group": "events.k8s.io", "kind": "events"})
        self.req("POST", CORE, core_event("c9"), 201)
        listed = self.req("DELETE", EVENTS + "?fieldSelector=metadata.name%3Dc9")
        self.assertEqual([(i["apiVersion"], i["note"]) for i in listed["items"]],
                         [("events.k8s.io/v1", "started container")])

    def test_watch_across_versions(self):
        rv = self.req("GET", CORE)["metadata"]["resourceVersion"]
        self.req("POST", CORE, core_event("w1"), 201)
        self.req("POST", EVENTS, events_event("w2"), 201)
        for path, want in ((EVENTS, "events.k8s.io/v1"), (CORE, "v1")):
            r = self.server.request(
                "GET", path + "?watch=true&resourceVersion=%s&timeoutSeconds=1" % rv)
            self.assertEqual(r.status, 200)
            evs = [json.loads(line) for line in r.body.decode().splitlines() if line.strip()]
            objs = {e["object"]["metadata"]["name"]: e["object"] for e in evs}
            self.assertEqual(set(objs), {"w1", "w2"}, evs)
            for o in objs.values():
                self.assertEqual(o["apiVersion"], want)
                if want == "v1":
                    self.assertIn("message", o)
                    self.assertNotIn("note", o)
                else:
                    self.assertIn("note", o)
                    self.assertNotIn("message", o)

    def test_hpa_v1_read_as_v2_and_back(self):
        v1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
              "metadata": {"name": "h1"},
              "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                          "name": "web"},
                       "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 70}}
        self.req("POST", HPA_V1, v1, 201)
        v2 = self.req("GET", HPA_V2 + "/h1")
        self.assertEqual(v2["apiVersion"], "autoscaling/v2")
        self.assertEqual(v2["spec"]["metrics"], [
            {"type": "Resource",
             "resource": {"name": "cpu",
                          "target": {"type": "Utilization", "averageUtilization": 70}}}])
        self.assertNotIn("targetCPUUtilizationPercentage", v2["spec"])
        back = self.req("GET", HPA_V1 + "/h1")
        self.assertEqual(back["apiVersion"], "autoscaling/v1")
        self.assertEqual(back["spec"]["targetCPUUtilizationPercentage"], 70)
        self.assertNotIn("metrics", back["spec"])

    def test_hpa_v2_metrics_survive_v1_round_trip(self):
        metrics = [
            {"type": "Resource", "resource": {"name": "memory", "target": {
                "type": "AverageValue", "averageValue": "100Mi"}}},
            {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {
                "type": "AverageValue", "averageValue": "10"}}},
            {"type": "Resource", "resource": {"name": "cpu", "target": {
                "type": "Utilization", "averageUtilization": 60}}},
        ]
        v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
              "metadata": {"name": "h2"},
              "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                          "name": "web"},
                       "maxReplicas": 4, "metrics": metrics}}
        self.req("POST", HPA_V2, v2, 201)
        v1 = self.req("GET", HPA_V1 + "/h2")
        self.assertEqual(v1["spec"]["targetCPUUtilizationPercentage"], 60)
        ann = v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]
        self.assertEqual(json.loads(ann), [
            {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "100Mi"}},
            {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}}])
        v1["spec"]["maxReplicas"] = 6
        self.req("PUT", HPA_V1 + "/h2", v1)
        got = self.req("GET", HPA_V2 + "/h2")
        self.assertEqual(got["spec"]["maxReplicas"], 6)
        self.assertEqual(got["spec"]["metrics"], metrics)
        self.assertNotIn("annotations", got["metadata"])
        out = self.ok("get", "hpa", "h2")
        # kube shows the first two metrics and counts the rest
        self.assertIn("memory: <unknown>/100Mi, <unknown>/10 + 1 more...", out)


if __name__ == "__main__":
    unittest.main()
