"""Subresources and kube 1.32 create semantics, through kubectl, the Python
client and raw HTTP.

Covers: /status (GET/PUT/PATCH in the three patch types) changing only the
status, while PUT/PATCH of the object keep the stored status;
metadata.generation (1 on create, +1 on spec changes only, for kinds that
keep one); the autoscaling/v1 Scale of deployments (`kubectl scale`, the
Python client's read/patch/replace_namespaced_deployment_scale);
pods/binding (nodeName set, 409 when bound) and pods/eviction; graceful
deletion of bound pods vs. immediate deletion of unscheduled ones; the
status kube's strategies give on create (Pod Pending + QoS class, Deployment
empty); namespaces/finalize; a clear 503 for what needs a kubelet
(pods/log, exec); the 415 of an unsupported patch type before the 404 of a
missing object; generateName creates from 32 concurrent clients never
answering 409.
Why: controllers, kubectl scale/rollout and the Python client's typed
status calls all go through these paths; before them every subresource URL
answered 404.
"""

import json
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import ServerTestCase  # noqa: E402
from test_kubectl import KubectlMixin  # noqa: E402

from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402


def deployment(name, replicas=1, status=None):
    d = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
    }
    if status is not None:
        d["status"] = status
    return d


def pod(name, node=None, limits=None):
    c = {"name": "c", "image": "nginx"}
    if limits:
        c["resources"] = {"limits": limits}
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
         "spec": {"containers": [c]}}
    if node:
        p["spec"]["nodeName"] = node
    return p


DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
PODS = "/api/v1/namespaces/default/pods"


class Subresources(KubectlMixin, ServerTestCase, unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cfg = client.Configuration()
        config.load_kube_config(config_file=cls.server.kubeconfig, client_configuration=cfg,
                                persist_config=False)
        cls.api_client = client.ApiClient(cfg)
        cls.apps = client.AppsV1Api(cls.api_client)
        cls.core = client.CoreV1Api(cls.api_client)

    @classmethod
    def tearDownClass(cls):
        api = getattr(cls, "api_client", None)
        if api is not None:
            api.close()
        super().tearDownClass()

    def req(self, method, path, body=None, ctype=None, want=None):
        headers = {"Content-Type": ctype} if ctype else None
        r = self.server.request(method, path, body=body, headers=headers)
        if want is not None:
            self.assertEqual(r.status, want, "%s %s -> %s %r" % (method, path, r.status, r.body[:500]))
        return r

    def create(self, path, obj):
        return self.req("POST", path, obj, want=201).json()

    # --- status and generation ------------------------------------------------

    def test_status_subresource_and_generation(self):
        d = self.create(DEPLOYMENTS, deployment("st", status={"replicas": 7}))
        self.assertEqual(d["metadata"]["generation"], 1)
        self.assertEqual(d.get("status"), {}, "create drops the status the client sent")
        url = DEPLOYMENTS + "/st"

        # /status changes the status only: spec and labels stay.
        d["status"] = {"replicas": 1, "readyReplicas": 1}
        d["spec"]["replicas"] = 5
        d["metadata"]["labels"] = {"app": "other"}
        got = self.req("PUT", url + "/status", d, want=200).json()
        self.assertEqual(got["status"], {"replicas": 1, "readyReplicas": 1})
        self.assertEqual(got["spec"]["replicas"], 1)
        self.assertEqual(got["metadata"]["labels"], {"app": "st"})
        self.assertEqual(got["metadata"]["generation"], 1, "a status write is no new generation")

        # The object itself keeps the stored status; a spec change bumps generation.
        got["status"] = {"replicas": 99}
        got["spec"]["replicas"] = 2
        put = self.req("PUT", url, got, want=200).json()
        self.assertEqual(put["status"], {"replicas": 1, "readyReplicas": 1})
        self.assertEqual(put["metadata"]["generation"], 2)
        # A labels-only change is no new generation.
        p = self.req("PATCH", url, {"metadata": {"labels": {"app": "st", "x": "y"}}},
                     ctype="application/merge-patch+json", want=200).json()
        self.assertEqual(p["metadata"]["generation"], 2)
        p = self.req("PATCH", url, {"status": {"replicas": 50}},
                     ctype="application/merge-patch+json", want=200).json()
        self.assertEqual(p["status"]["replicas"], 1, "PATCH of the object keeps the status")

        # The three patch types on /status.
        for ctype, body, want in (
                ("application/merge-patch+json", {"status": {"replicas": 3}}, 3),
                ("application/strategic-merge-patch+json", {"status": {"replicas": 4}}, 4),
                ("application/json-patch+json",
                 [{"op": "replace", "path": "/status/replicas", "value": 5}], 5)):
            got = self.req("PATCH", url + "/status", body, ctype=ctype, want=200).json()
            self.assertEqual(got["status"]["replicas"], want, ctype)
            self.assertEqual(got["metadata"]["generation"], 2, ctype)
        self.assertEqual(self.req("GET", url + "/status", want=200).json()["status"]["replicas"], 5)

        # kubectl patch --subresource=status
        self.ok("patch", "deployment", "st", "--subresource=status", "--type=merge",
                "-p", json.dumps({"status": {"availableReplicas": 2}}))
        d = self.get_json("deployment", "st")
        self.assertEqual(d["status"]["availableReplicas"], 2)
        self.assertEqual(d["metadata"]["generation"], 2)

    def test_python_client_status(self):
        self.create(DEPLOYMENTS, deployment("pys"))
        d = self.apps.read_namespaced_deployment_status("pys", "default")
        d.status = client.V1DeploymentStatus(replicas=1, ready_replicas=1, observed_generation=1)
        got = self.apps.replace_namespaced_deployment_status("pys", "default", d)
        self.assertEqual(got.status.ready_replicas, 1)
        self.assertEqual(got.status.observed_generation, 1)
        got = self.apps.patch_namespaced_deployment_status(
            "pys", "default", {"status": {"updatedReplicas": 1}})
        self.assertEqual(got.status.updated_replicas, 1)
        self.assertEqual(got.status.ready_replicas, 1)

    def test_kinds_without_generation(self):
        cm = self.create("/api/v1/namespaces/default/configmaps",
                         {"metadata": {"name": "nogen"}, "data": {"a": "1"}})
        self.assertNotIn("generation", cm["metadata"])
        r = self.req("GET", "/api/v1/namespaces/default/configmaps/nogen/status")
        self.assertEqual(r.status, 404, "configmaps have no status subresource")

    # --- scale ------------------------------------------------------------------

    def test_kubectl_scale(self):
        self.create(DEPLOYMENTS, deployment("web"))
        self.ok("scale", "deployment", "web", "--replicas=3")
        d = self.get_json("deployment", "web")
        self.assertEqual(d["spec"]["replicas"], 3)
        self.assertEqual(d["metadata"]["generation"], 2)
        s = self.req("GET", DEPLOYMENTS + "/web/scale", want=200).json()
        self.assertEqual(s["kind"], "Scale")
        self.assertEqual(s["apiVersion"], "autoscaling/v1")
        self.assertEqual(s["spec"], {"replicas": 3})
        self.assertEqual(s["status"], {"replicas": 0, "selector": "app=web"})
        self.assertEqual(s["metadata"]["uid"], d["metadata"]["uid"])
        self.assertEqual(s["metadata"]["resourceVersion"], d["metadata"]["resourceVersion"])
        # --current-replicas is a precondition kubectl checks.
        self.bad("scale", "deployment", "web", "--current-replicas=7", "--replicas=1")
        self.ok("scale", "deployment", "web", "--current-replicas=3", "--replicas=0")
        self.assertEqual(self.get_json("deployment", "web")["spec"]["replicas"], 0)

    def test_scale_other_kinds(self):
        rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
              "spec": {"replicas": 1, "selector": {"b": "2", "a": "1"},
                       "template": {"metadata": {"labels": {"a": "1", "b": "2"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
        self.create("/api/v1/namespaces/default/replicationcontrollers", rc)
        self.ok("scale", "rc", "rc", "--replicas=4")
        s = self.req("GET", "/api/v1/namespaces/default/replicationcontrollers/rc/scale",
                     want=200).json()
        self.assertEqual(s["spec"]["replicas"], 4)
        self.assertEqual(s["status"]["selector"], "a=1,b=2")
        rc = self.get_json("rc", "rc")
        self.assertEqual(rc["metadata"]["generation"], 2)
        sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
               "spec": {"replicas": 1, "serviceName": "db",
                        "selector": {"matchExpressions": [
                            {"key": "app", "operator": "In", "values": ["db", "cache"]}]},
                        "template": {"metadata": {"labels": {"app": "db"}},
                                     "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
        got = self.create("/apis/apps/v1/namespaces/default/statefulsets", sts)
        self.assertEqual(got["status"], {"replicas": 0, "availableReplicas": 0})
        self.ok("scale", "statefulset", "db", "--replicas=2")
        s = self.req("GET", "/apis/apps/v1/namespaces/default/statefulsets/db/scale",
                     want=200).json()
        self.assertEqual(s["status"]["selector"], "app in (cache,db)")
        self.assertEqual(s["spec"]["replicas"], 2)
        # Services and configmaps have no scale.
        self.req("GET", "/api/v1/namespaces/default/configmaps/x/scale", want=404)

    def test_csr_approval(self):
        certs = client.CertificatesV1Api(self.api_client)
        body = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                "metadata": {"name": "csr1"},
                "spec": {"request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
                         "signerName": "example.com/signer", "usages": ["digital signature"],
                         "username": "mallory", "groups": ["system:masters"],
                         "extra": {"k": ["v"]}},
                "status": {"certificate": "QUJD"}}
        r = self.req("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", body)
        if r.status != 201:
            self.skipTest("CSR not admitted by validation here: %s" % r.body[:300])
        self.assertEqual(r.json().get("status"), {}, "create drops the status")
        # who asks is the requester, whatever the body claims (kube's CSR strategy)
        me = self.req("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                      {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                      want=201).json()["status"]["userInfo"]
        spec = r.json()["spec"]
        self.assertEqual((spec["username"], spec["groups"], spec.get("extra")),
                         (me["username"], me["groups"], me.get("extra")))
        csr = r.json()
        csr["status"] = {"conditions": [{"type": "Approved", "status": "True",
                                         "reason": "Test", "message": "ok"}],
                         "certificate": "QUJD"}
        csr["spec"]["username"] = "mallory"
        got = self.req("PUT", "/apis/certificates.k8s.io/v1/certificatesigningrequests/csr1/approval",
                       csr, want=200).json()
        self.assertEqual([c["type"] for c in got["status"]["conditions"]], ["Approved"])
        self.assertEqual(got["spec"]["username"], me["username"])
        self.assertNotIn("certificate", got["status"], "approval does not issue certificates")
        got = certs.read_certificate_signing_request_approval("csr1")
        self.assertEqual(got.status.conditions[0].type, "Approved")

    def test_python_client_scale(self):
        self.create(DEPLOYMENTS, deployment("pyscale", replicas=2))
        s = self.apps.read_namespaced_deployment_scale("pyscale", "default")
        self.assertEqual(s.spec.replicas, 2)
        self.assertEqual(s.status.selector, "app=pyscale")
        s = self.apps.patch_namespaced_deployment_scale("pyscale", "default",
                                                        {"spec": {"replicas": 4}})
        self.assertEqual(s.spec.replicas, 4)
        s.spec.replicas = 6
        s = self.apps.replace_namespaced_deployment_scale("pyscale", "default", s)
        self.assertEqual(s.spec.replicas, 6)
        d = self.apps.read_namespaced_deployment("pyscale", "default")
        self.assertEqual(d.spec.replicas, 6)
        self.assertEqual(d.metadata.generation, 3)
        # A stale resourceVersion in the Scale is a 409; a negative count a 422.
        s.metadata.resource_version = "1"
        with self.assertRaises(ApiException) as ctx:
            self.apps.replace_namespaced_deployment_scale("pyscale", "default", s)
        self.assertEqual(ctx.exception.status, 409)
        with self.assertRaises(ApiException) as ctx:
            self.apps.patch_namespaced_deployment_scale("pyscale", "default",
                                                        {"spec": {"replicas": -1}})
        self.assertEqual(ctx.exception.status, 422)
        r = self.req("GET", DEPLOYMENTS + "/missing/scale")
        self.assertEqual(r.status, 404)

    # --- pods -----------------------------------------------------------------

    def test_pod_create_status(self):
        p = self.create(PODS, dict(pod("qos-g", limits={"cpu": "1", "memory": "1Gi"}),
                                   status={"phase": "Running"}))
        self.assertEqual(p["status"], {"phase": "Pending", "qosClass": "Guaranteed"})
        p = self.create(PODS, pod("qos-be"))
        self.assertEqual(p["status"]["qosClass"], "BestEffort")
        self.assertNotIn("generation", p["metadata"])

    def test_binding(self):
        self.create(PODS, pod("tobind"))
        body = client.V1Binding(metadata=client.V1ObjectMeta(name="tobind"),
                                target=client.V1ObjectReference(kind="Node", name="node-1"))
        r = self.core.create_namespaced_pod_binding("tobind", "default", body,
                                                    _preload_content=False)
        self.assertEqual(r.status, 201)
        self.assertEqual(json.loads(r.data)["status"], "Success")
        p = self.core.read_namespaced_pod("tobind", "default")
        self.assertEqual(p.spec.node_name, "node-1")
        self.assertTrue(any(c.type == "PodScheduled" and c.status == "True"
                            for c in p.status.conditions))
        with self.assertRaises(ApiException) as ctx:
            self.core.create_namespaced_pod_binding("tobind", "default", body,
                                                    _preload_content=False)
        self.assertEqual(ctx.exception.status, 409)
        self.assertIn("already assigned", ctx.exception.body.decode()
                      if isinstance(ctx.exception.body, bytes) else ctx.exception.body)

    def test_ephemeral_containers(self):
        self.create(PODS, pod("dbg"))
        patch = {"spec": {"ephemeralContainers": [{"name": "debugger", "image": "busybox"}],
                          "containers": [{"name": "c", "image": "changed"}]}}
        got = self.req("PATCH", PODS + "/dbg/ephemeralcontainers", patch,
                       ctype="application/strategic-merge-patch+json", want=200).json()
        self.assertEqual([c["name"] for c in got["spec"]["ephemeralContainers"]], ["debugger"])
        self.assertEqual(got["spec"]["containers"][0]["image"], "nginx",
                         "only ephemeral containers change through this subresource")
        self.assertEqual(self.req("GET", PODS + "/dbg/ephemeralcontainers",
                                  want=200).json()["metadata"]["name"], "dbg")

    def test_graceful_delete(self):
        # Unscheduled: gone at once.
        self.create(PODS, pod("unbound"))
        self.ok("delete", "pod", "unbound", "--wait=false")
        self.req("GET", PODS + "/unbound", want=404)
        # On a node: marked with its grace period, still there.
        self.create(PODS, pod("bound", node="node-1"))
        self.ok("delete", "pod", "bound", "--wait=false")
        p = self.req("GET", PODS + "/bound", want=200).json()
        self.assertEqual(p["metadata"]["deletionGracePeriodSeconds"], 30)
        self.assertIn("deletionTimestamp", p["metadata"])
        # A longer grace period does not extend it; 0 removes it.
        r = self.req("DELETE", PODS + "/bound", {"gracePeriodSeconds": 60}, want=200).json()
        self.assertEqual(r["metadata"]["deletionGracePeriodSeconds"], 30)
        r = self.req("DELETE", PODS + "/bound", {"gracePeriodSeconds": 5}, want=200).json()
        self.assertEqual(r["metadata"]["deletionGracePeriodSeconds"], 5)
        self.ok("delete", "pod", "bound", "--grace-period=0", "--force")
        self.req("GET", PODS + "/bound", want=404)

    def test_eviction(self):
        self.create(PODS, pod("evicted"))
        body = client.V1Eviction(metadata=client.V1ObjectMeta(name="evicted"))
        r = self.core.create_namespaced_pod_eviction("evicted", "default", body,
                                                     _preload_content=False)
        self.assertEqual(r.status, 201)
        self.req("GET", PODS + "/evicted", want=404)
        # A bound pod is evicted with its grace period; a stale uid precondition is a 409.
        self.create(PODS, pod("evicted2", node="n"))
        r = self.req("POST", PODS + "/evicted2/eviction",
                     {"apiVersion": "policy/v1", "kind": "Eviction",
                      "metadata": {"name": "evicted2"},
                      "deleteOptions": {"preconditions": {"uid": "nope"}}})
        self.assertEqual(r.status, 409, r.body)
        self.req("POST", PODS + "/evicted2/eviction",
                 {"apiVersion": "policy/v1", "kind": "Eviction",
                  "metadata": {"name": "evicted2"}, "deleteOptions": {"gracePeriodSeconds": 0}},
                 want=201)
        self.req("GET", PODS + "/evicted2", want=404)
        r = self.req("POST", PODS + "/evicted2/eviction",
                     {"apiVersion": "policy/v1", "kind": "Eviction",
                      "metadata": {"name": "other"}})
        self.assertEqual(r.status, 400)

    def test_kubelet_subresources(self):
        self.create(PODS, pod("nolog"))
        for method, sub in (("GET", "log"), ("POST", "exec"), ("GET", "exec"),
                            ("POST", "portforward"), ("GET", "proxy")):
            r = self.req(method, PODS + "/nolog/" + sub)
            self.assertEqual(r.status, 503, (sub, r.body))
            self.assertIn("no kubelet", r.json()["message"])
        p = self.bad("logs", "nolog")
        self.assertIn("no kubelet", p.stderr)
        # A missing pod is still a 404.
        self.req("GET", PODS + "/missing/log", want=404)
        self.create("/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "sa"}})
        r = self.req("POST", "/api/v1/namespaces/default/serviceaccounts/sa/token",
                     {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                      "spec": {}})
        # ServiceAccount tokens are issued (tests/e2e/test_sa_tokens.py)
        self.assertEqual(r.status, 201, r.body)
        self.assertEqual(r.json()["status"]["token"].count("."), 2)

    # --- namespaces/finalize ----------------------------------------------------

    def test_namespace_finalize(self):
        ns = self.create("/api/v1/namespaces", {"metadata": {"name": "fin"}})
        self.assertEqual(ns["status"], {"phase": "Active"})
        # The object itself cannot drop the finalizers ...
        ns["spec"] = {"finalizers": []}
        got = self.req("PUT", "/api/v1/namespaces/fin", ns, want=200).json()
        self.assertEqual(got["spec"], {"finalizers": ["kubernetes"]})
        # ... /finalize can, and leaves the status alone.
        got["spec"] = {"finalizers": []}
        got["status"] = {"phase": "Terminating"}
        got = self.req("PUT", "/api/v1/namespaces/fin/finalize", got, want=200).json()
        self.assertEqual(got["spec"].get("finalizers", []), [])
        self.assertEqual(got["status"], {"phase": "Active"})
        self.req("GET", "/api/v1/namespaces/fin/status", want=200)

    # --- create semantics -------------------------------------------------------

    def test_unsupported_patch_type_before_not_found(self):
        r = self.req("PATCH", "/api/v1/namespaces/default/configmaps/missing", "{}",
                     ctype="text/plain")
        self.assertEqual(r.status, 415, r.body)
        r = self.req("PATCH", DEPLOYMENTS + "/missing/scale", "{}", ctype="text/plain")
        self.assertEqual(r.status, 415, r.body)
        r = self.req("PATCH", "/api/v1/namespaces/default/configmaps/missing", "{}",
                     ctype="application/merge-patch+json")
        self.assertEqual(r.status, 404, r.body)

    def test_remaining_item_count(self):
        self.create("/api/v1/namespaces", {"metadata": {"name": "paged"}})
        for i in range(7):
            self.create("/api/v1/namespaces/paged/configmaps",
                        {"metadata": {"name": "cm-%d" % i, "labels": {"i": str(i % 2)}}})
        page = self.core.list_namespaced_config_map("paged", limit=3)
        self.assertEqual(page.metadata.remaining_item_count, 4)
        page = self.core.list_namespaced_config_map("paged", limit=3,
                                                    _continue=page.metadata._continue)
        self.assertEqual(page.metadata.remaining_item_count, 1)
        page = self.core.list_namespaced_config_map("paged", limit=3,
                                                    _continue=page.metadata._continue)
        self.assertEqual(len(page.items), 1)
        self.assertIsNone(page.metadata.remaining_item_count)
        self.assertFalse(page.metadata._continue)
        # Not with a selector (kube only counts unfiltered lists).
        page = self.core.list_namespaced_config_map("paged", limit=1, label_selector="i=0")
        self.assertTrue(page.metadata._continue)
        self.assertIsNone(page.metadata.remaining_item_count)
        # Every namespace, and as kubectl asks (chunked).
        r = self.req("GET", "/api/v1/configmaps?limit=2", want=200).json()
        self.assertGreaterEqual(r["metadata"]["remainingItemCount"], 5)

    def test_generate_name_concurrent(self):
        clients, per_client = 32, 8
        statuses, lock = [], threading.Lock()

        def run():
            for _ in range(per_client):
                r = self.server.request("POST", "/api/v1/namespaces/default/configmaps",
                                        body={"metadata": {"generateName": "gen-"}})
                with lock:
                    statuses.append((r.status, r.body[:200]))

        threads = [threading.Thread(target=run) for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        bad = [s for s in statuses if s[0] != 201]
        self.assertEqual(bad, [], "generateName creates that failed")
        self.assertEqual(len(statuses), clients * per_client)
        items = self.req("GET", "/api/v1/namespaces/default/configmaps", want=200).json()["items"]
        names = [i["metadata"]["name"] for i in items if i["metadata"]["name"].startswith("gen-")]
        self.assertEqual(len(set(names)), clients * per_client)


if __name__ == "__main__":
    unittest.main()
