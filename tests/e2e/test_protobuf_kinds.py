"""Kubernetes protobuf for every kind, in requests and in responses.

kubectl's typed `create` commands (deployment, service, job, cronjob, role,
rolebinding, clusterrole, clusterrolebinding, priorityclass, quota,
poddisruptionbudget, ingress) POST protobuf and accept protobuf replies
("application/vnd.kubernetes.protobuf, application/json"): each must succeed
and read back as the same object the JSON path stores for what
`--dry-run=client -o json` prints (compared structurally: values the server
makes unique per object, uids and allocated IPs, are left out, so defaults
added elsewhere apply to both sides alike).

Raw HTTP with `Accept: application/vnd.kubernetes.protobuf` checks the
reply encodings themselves with a small independent decoder: an object, a
list (items at field 2, ListMeta at 1), a watch stream (4-byte big-endian
length frames of a bare WatchEvent whose object.raw is the object's full
envelope) and an error Status; JSON stays the default, and Table requests
stay JSON.
"""

import json
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pbcodec import fields  # noqa: E402
from server import ServerTestCase  # noqa: E402
from test_kubectl import KubectlMixin  # noqa: E402

PROTOBUF = "application/vnd.kubernetes.protobuf"
VOLATILE = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields",
            "clusterIP", "clusterIPs", "nodePort")


def unwrap(body):
    """The envelope: (apiVersion, kind, raw fields)."""
    assert body[:4] == b"k8s\x00", body[:16]
    unknown = fields(body[4:])
    tm = fields(unknown[1][0])
    return tm[1][0].decode(), tm[2][0].decode(), fields(unknown.get(2, [b""])[0])


def scrub(obj, rename=None):
    """obj without volatile values, with rename=(from, to) applied to strings."""
    if isinstance(obj, dict):
        return {k: scrub(v, rename) for k, v in obj.items()
                if k not in VOLATILE and "controller-uid" not in k}
    if isinstance(obj, list):
        return [scrub(v, rename) for v in obj]
    if isinstance(obj, str) and rename:
        return obj.replace(rename[0], rename[1])
    return obj


class ProtobufKinds(KubectlMixin, ServerTestCase, unittest.TestCase):

    # --- kubectl typed create ----------------------------------------------------

    CASES = [
        # (resource for get, create args after the name, namespaced, checks)
        ("deployment", ["deployment", "--image=nginx:1.27", "--replicas=2", "--port=80"], True,
         lambda o: (o["spec"]["replicas"], o["spec"]["template"]["spec"]["containers"][0]["image"],
                    o["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"])
         == (2, "nginx:1.27", 80)),
        ("service", ["service", "clusterip", "--tcp=80:8080"], True,
         lambda o: (o["spec"]["ports"][0]["port"], o["spec"]["ports"][0]["targetPort"],
                    o["spec"]["type"]) == (80, 8080, "ClusterIP")),
        ("job", ["job", "--image=busybox", "--", "echo", "hi"], True,
         lambda o: o["spec"]["template"]["spec"]["containers"][0]["command"] == ["echo", "hi"]),
        ("cronjob", ["cronjob", "--image=busybox", "--schedule=*/5 * * * *"], True,
         lambda o: o["spec"]["schedule"] == "*/5 * * * *"),
        ("role", ["role", "--verb=get", "--verb=list", "--resource=pods"], True,
         lambda o: (o["rules"][0]["verbs"], o["rules"][0]["resources"])
         == (["get", "list"], ["pods"])),
        ("rolebinding", ["rolebinding", "--role=r", "--user=alice"], True,
         lambda o: (o["roleRef"]["name"], o["subjects"][0]["name"]) == ("r", "alice")),
        ("clusterrole", ["clusterrole", "--verb=get", "--resource=nodes"], False,
         lambda o: o["rules"][0]["resources"] == ["nodes"]),
        ("clusterrolebinding", ["clusterrolebinding", "--clusterrole=cr", "--group=devs"], False,
         lambda o: o["subjects"][0] == {"kind": "Group", "name": "devs",
                                        "apiGroup": "rbac.authorization.k8s.io"}),
        ("priorityclass", ["priorityclass", "--value=1000", "--description=high"], False,
         lambda o: (o["value"], o["description"]) == (1000, "high")),
        ("resourcequota", ["quota", "--hard=cpu=1,memory=1G,pods=2"], True,
         lambda o: o["spec"]["hard"] == {"cpu": "1", "memory": "1G", "pods": "2"}),
        ("poddisruptionbudget", ["poddisruptionbudget", "--selector=app=x",
                                 "--min-available=50%"], True,
         lambda o: (o["spec"]["minAvailable"], o["spec"]["selector"]["matchLabels"])
         == ("50%", {"app": "x"})),
        ("ingress", ["ingress", "--rule=foo.example/bar=svc1:8080"], True,
         lambda o: o["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
         == {"name": "svc1", "port": {"number": 8080}}),
    ]

    def test_protobuf_typed_create_every_kind(self):
        ns = self.make_ns("pb-kinds")
        for res, args, namespaced, check in self.CASES:
            with self.subTest(kind=args[0]):
                name = "pb-" + res[:12]
                scope = ["-n", ns] if namespaced else []
                create = ["create", args[0]] + args[1:2] if args[0] == "service" else ["create", args[0]]
                rest = args[2:] if args[0] == "service" else args[1:]
                extra, dash = (rest[:rest.index("--")], rest[rest.index("--"):]) \
                    if "--" in rest else (rest, [])
                out = self.ok(*create, name, *scope, *extra, *dash)
                self.assertIn("%s created" % name, out)
                dry = json.loads(self.ok(*create, name + "-json", *scope, *extra,
                                         "--dry-run=client", "-o", "json", *dash))
                self.ok("create", "-f", self.write("%s.json" % name, dry))
                got = self.get_json(res, name, *scope)
                via_json = self.get_json(res, name + "-json", *scope)
                self.assertTrue(check(got), json.dumps(got, indent=1))
                self.assertEqual(scrub(got), scrub(via_json, (name + "-json", name)),
                                 "protobuf-created %s differs from the JSON-created one" % res)

    def test_protobuf_kubectl_run_and_scale_paths(self):
        ns = self.make_ns("pb-run")
        self.assertIn("created", self.ok("run", "nginx", "--image=nginx", "-n", ns,
                                         "--labels=app=web", "--port=80"))
        pod = self.get_json("pod", "nginx", "-n", ns)
        self.assertEqual(pod["spec"]["containers"][0]["ports"][0]["containerPort"], 80)
        self.assertEqual(pod["metadata"]["labels"], {"app": "web"})

    # --- raw HTTP replies ----------------------------------------------------------

    def pod_body(self, ns, name):
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "labels": {"app": "pb"}},
                "spec": {"containers": [{
                    "name": "c", "image": "busybox",
                    "resources": {"limits": {"cpu": "500m", "memory": "64Mi"}},
                    "livenessProbe": {"httpGet": {"path": "/", "port": "http"}},
                    "env": [{"name": "A", "value": "1"}]}],
                    "volumes": [{"name": "v", "emptyDir": {}}]}}

    def test_protobuf_raw_get_list_watch(self):
        ns = self.make_ns("pb-raw")
        r = self.server.request("POST", "/api/v1/namespaces/%s/pods" % ns,
                                body=self.pod_body(ns, "p1"),
                                headers={"Accept": PROTOBUF + ", application/json"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.headers["content-type"], PROTOBUF)
        av, kind, pod = unwrap(r.body)
        self.assertEqual((av, kind), ("v1", "Pod"))
        meta = fields(pod[1][0])
        self.assertEqual(meta[1][0], b"p1")

        # GET: the same object; the embedded VolumeSource is field 2 of Volume
        # and the probe's port an IntOrString string.
        path = "/api/v1/namespaces/%s/pods/p1" % ns
        r = self.server.request("GET", path, headers={"Accept": PROTOBUF})
        self.assertEqual((r.status, r.headers["content-type"]), (200, PROTOBUF), r)
        av, kind, pod = unwrap(r.body)
        spec = fields(pod[2][0])
        volume = fields(spec[1][0])
        self.assertEqual(volume[1][0], b"v")
        self.assertIn(2, fields(volume[2][0]))  # VolumeSource.emptyDir
        container = fields(spec[2][0])
        probe = fields(container[10][0])
        port = fields(fields(fields(probe[1][0])[2][0])[2][0])  # handler.httpGet.port
        self.assertEqual((port[1][0], port[3][0]), (1, b"http"))
        limits = {fields(e)[1][0]: fields(fields(e)[2][0])[1][0]
                  for e in fields(container[8][0])[1]}
        self.assertEqual(limits, {b"cpu": b"500m", b"memory": b"64Mi"})

        # JSON stays the default, and Tables stay JSON.
        r = self.server.request("GET", path)
        self.assertEqual(r.headers["content-type"], "application/json")
        self.assertEqual(r.json()["spec"]["containers"][0]["livenessProbe"]["httpGet"]["port"],
                         "http")
        r = self.server.request("GET", path, headers={
            "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io," + PROTOBUF})
        self.assertEqual(r.headers["content-type"], "application/json")
        # q-values decide.
        r = self.server.request("GET", path, headers={
            "Accept": PROTOBUF + ";q=0.5, application/json;q=0.9"})
        self.assertEqual(r.headers["content-type"], "application/json")

        # LIST.
        self.server.request("POST", "/api/v1/namespaces/%s/pods" % ns,
                            body=self.pod_body(ns, "p2"))
        r = self.server.request("GET", "/api/v1/namespaces/%s/pods" % ns,
                                headers={"Accept": PROTOBUF})
        self.assertEqual((r.status, r.headers["content-type"]), (200, PROTOBUF), r)
        av, kind, lst = unwrap(r.body)
        self.assertEqual((av, kind), ("v1", "PodList"))
        self.assertTrue(fields(lst[1][0])[2][0])  # ListMeta.resourceVersion
        self.assertEqual(sorted(fields(fields(i)[1][0])[1][0] for i in lst[2]), [b"p1", b"p2"])

        # WATCH: length-prefixed frames of bare WatchEvents.
        r = self.server.request("GET", "/api/v1/namespaces/%s/pods?watch=1&timeoutSeconds=1"
                                % ns, headers={"Accept": PROTOBUF})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.headers["content-type"], PROTOBUF + ";stream=watch")
        events, data = [], r.body
        while data:
            n = struct.unpack(">I", data[:4])[0]
            ev = fields(data[4:4 + n])
            data = data[4 + n:]
            av, kind, obj = unwrap(fields(ev[2][0])[1][0])
            events.append((ev[1][0].decode(), kind, fields(obj[1][0])[1][0]))
        self.assertEqual(sorted(events), [("ADDED", "Pod", b"p1"), ("ADDED", "Pod", b"p2")])

        # Errors are Status in the negotiated type.
        r = self.server.request("GET", "/api/v1/namespaces/%s/pods/nope" % ns,
                                headers={"Accept": PROTOBUF})
        self.assertEqual((r.status, r.headers["content-type"]), (404, PROTOBUF), r)
        av, kind, st = unwrap(r.body)
        self.assertEqual((av, kind), ("v1", "Status"))
        self.assertEqual((st[2][0], st[4][0], st[6][0]), (b"Failure", b"NotFound", 404))

    def test_protobuf_raw_round_trip_put(self):
        # A protobuf GET reply PUT back as the body changes nothing.
        ns = self.make_ns("pb-put")
        self.ok("create", "deployment", "d", "--image=nginx", "-n", ns)
        path = "/apis/apps/v1/namespaces/%s/deployments/d" % ns
        before = self.server.request("GET", path).json()
        r = self.server.request("GET", path, headers={"Accept": PROTOBUF})
        self.assertEqual(r.status, 200, r)
        r = self.server.request("PUT", path, body=r.body,
                                headers={"Content-Type": PROTOBUF, "Accept": PROTOBUF})
        self.assertEqual(r.status, 200, r)
        after = self.server.request("GET", path).json()
        self.assertEqual(scrub(after), scrub(before))


if __name__ == "__main__":
    unittest.main()
