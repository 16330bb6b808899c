"""Every built-in resource sqlkube serves, through the real clients.

The resource list is not written here: it comes from the server's own
discovery, so a resource added to the registry is tested the day it is
served, and one without a sample object below fails the coverage test.
For each storable resource the official Python client's dynamic client
(discovery-driven, like controllers built on it) creates a small valid
object, reads it, finds it in a list, sees it in a watch, patches it and
deletes it; kubectl applies a multi-kind manifest, lists the kinds by their
short names and explains a field.
Why: issue 12's "done when": every built-in kind is created, read, listed,
watched, patched and deleted by kubectl and the Python client, on SQLite
and PostgreSQL.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import ServerTestCase, describe, wait_until  # noqa: E402

from kubernetes import client, config, dynamic, watch  # noqa: E402

NS = "kinds"
POD_SPEC = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": POD_SPEC}
SELECTOR = {"matchLabels": {"app": "x"}}
WEBHOOK_CLIENT = {"url": "https://127.0.0.1:9443/hook"}
# CONNECT only: sqlkube serves no connect subresource, so the stored
# configurations (failurePolicy Fail, no server behind the URL) are never
# called for another test's pod on the same server.
RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CONNECT"],
        "resources": ["pods"]}

# One small object per resource, valid for kube-apiserver 1.32 (name and
# namespace are filled in by the test). Keyed "group/version/resource".
SAMPLES = {
    "v1/configmaps": {"data": {"k": "v"}},
    "v1/endpoints": {"subsets": [{"addresses": [{"ip": "10.0.0.1"}],
                                  "ports": [{"port": 80, "protocol": "TCP"}]}]},
    "v1/events": {"involvedObject": {"kind": "Pod", "name": "p", "namespace": NS},
                  "reason": "Test", "message": "hello", "type": "Normal"},
    "v1/limitranges": {"spec": {"limits": [{"type": "Container",
                                            "default": {"cpu": "100m"}}]}},
    "v1/namespaces": {},
    "v1/nodes": {"spec": {"podCIDR": "10.244.0.0/24"}},
    "v1/persistentvolumeclaims": {"spec": {"accessModes": ["ReadWriteOnce"],
                                           "resources": {"requests": {"storage": "1Gi"}}}},
    "v1/persistentvolumes": {"spec": {"capacity": {"storage": "1Gi"},
                                      "accessModes": ["ReadWriteOnce"],
                                      "hostPath": {"path": "/tmp/pv"}}},
    "v1/pods": {"spec": POD_SPEC},
    "v1/podtemplates": {"template": TEMPLATE},
    "v1/replicationcontrollers": {"spec": {"replicas": 1, "selector": {"app": "x"},
                                           "template": TEMPLATE}},
    "v1/resourcequotas": {"spec": {"hard": {"pods": "10"}}},
    "v1/secrets": {"type": "Opaque", "data": {"k": "dg=="}},
    "v1/serviceaccounts": {},
    "v1/services": {"spec": {"selector": {"app": "x"},
                             "ports": [{"port": 80, "protocol": "TCP"}]}},
    "apiregistration.k8s.io/v1/apiservices": None,  # named <version>.<group>: see sample()
    "apiextensions.k8s.io/v1/customresourcedefinitions": None,  # <plural>.<group>: sample()
    "apps/v1/controllerrevisions": {"revision": 1, "data": {"spec": {}}},
    "apps/v1/daemonsets": {"spec": {"selector": SELECTOR, "template": TEMPLATE}},
    "apps/v1/deployments": {"spec": {"replicas": 1, "selector": SELECTOR, "template": TEMPLATE}},
    "apps/v1/replicasets": {"spec": {"replicas": 1, "selector": SELECTOR, "template": TEMPLATE}},
    "apps/v1/statefulsets": {"spec": {"serviceName": "s", "selector": SELECTOR,
                                      "template": TEMPLATE}},
    "events.k8s.io/v1/events": {"eventTime": "2026-01-01T00:00:00.000000Z",
                                "reportingController": "sqlkube.test/ctl",
                                "reportingInstance": "i", "action": "Test",
                                "reason": "Test", "type": "Normal",
                                "regarding": {"kind": "Pod", "name": "p", "namespace": NS}},
    "autoscaling/v2/horizontalpodautoscalers": {
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                 "minReplicas": 1, "maxReplicas": 3}},
    "autoscaling/v1/horizontalpodautoscalers": {
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                 "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}},
    "batch/v1/cronjobs": {"spec": {"schedule": "*/5 * * * *",
                                   "jobTemplate": {"spec": {"template": {
                                       "spec": dict(POD_SPEC, restartPolicy="OnFailure")}}}}},
    "batch/v1/jobs": {"spec": {"template": {"spec": dict(POD_SPEC, restartPolicy="Never")}}},
    "certificates.k8s.io/v1/certificatesigningrequests": {
        "spec": {"request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
                 "signerName": "example.com/signer", "usages": ["client auth"]}},
    "networking.k8s.io/v1/ingressclasses": {"spec": {"controller": "example.com/ingress"}},
    "networking.k8s.io/v1/ingresses": {"spec": {"defaultBackend": {
        "service": {"name": "s", "port": {"number": 80}}}}},
    "networking.k8s.io/v1/networkpolicies": {"spec": {"podSelector": {}}},
    "policy/v1/poddisruptionbudgets": {"spec": {"minAvailable": 1, "selector": SELECTOR}},
    "rbac.authorization.k8s.io/v1/clusterrolebindings": {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]},
    "rbac.authorization.k8s.io/v1/clusterroles": {
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
    "rbac.authorization.k8s.io/v1/rolebindings": {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": NS}]},
    "rbac.authorization.k8s.io/v1/roles": {
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]},
    "storage.k8s.io/v1/csidrivers": {"spec": {"attachRequired": False}},
    "storage.k8s.io/v1/csinodes": {"spec": {"drivers": []}},
    "storage.k8s.io/v1/csistoragecapacities": {"storageClassName": "standard",
                                                "capacity": "1Gi"},
    "storage.k8s.io/v1/storageclasses": {"provisioner": "example.com/csi"},
    "storage.k8s.io/v1/volumeattachments": {"spec": {"attacher": "example.com/csi",
                                                     "nodeName": "n",
                                                     "source": {"persistentVolumeName": "pv"}}},
    "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations": {
        "webhooks": [{"name": "m.example.com", "clientConfig": WEBHOOK_CLIENT, "rules": [RULE],
                      "sideEffects": "None", "admissionReviewVersions": ["v1"]}]},
    "admissionregistration.k8s.io/v1/validatingadmissionpolicies": {
        "spec": {"matchConstraints": {"resourceRules": [RULE]},
                 "validations": [{"expression": "true"}]}},
    "admissionregistration.k8s.io/v1/validatingadmissionpolicybindings": {
        "spec": {"policyName": "p", "validationActions": ["Deny"]}},
    "admissionregistration.k8s.io/v1/validatingwebhookconfigurations": {
        "webhooks": [{"name": "v.example.com", "clientConfig": WEBHOOK_CLIENT, "rules": [RULE],
                      "sideEffects": "None", "admissionReviewVersions": ["v1"]}]},
    "scheduling.k8s.io/v1/priorityclasses": {"value": 1000},
    "coordination.k8s.io/v1/leases": {"spec": {"holderIdentity": "h",
                                              "leaseDurationSeconds": 15}},
    "node.k8s.io/v1/runtimeclasses": {"handler": "runc"},
    "discovery.k8s.io/v1/endpointslices": {"addressType": "IPv4",
                                           "endpoints": [{"addresses": ["10.0.0.1"]}],
                                           "ports": [{"port": 80, "protocol": "TCP"}]},
    "flowcontrol.apiserver.k8s.io/v1/flowschemas": {
        "spec": {"priorityLevelConfiguration": {"name": "global-default"},
                 "matchingPrecedence": 5000}},
    "flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations": {
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                                                "limitResponse": {"type": "Reject"}}}},
}

MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apply, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27", ports: [{containerPort: 80}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: apply}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: 80}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: apply}
spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: apply}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: apply}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: default, namespace: apply}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: apply}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: a, image: busybox}]}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.example.com}
spec:
  group: metrics.example.com
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  service: {name: metrics, namespace: apply, port: 443}
"""


def key_of(group_version, resource):
    return "%s/%s" % (group_version, resource)


class BuiltinKinds(ServerTestCase, unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cfg = client.Configuration()
        config.load_kube_config(config_file=cls.server.kubeconfig, client_configuration=cfg,
                                persist_config=False)
        cls.api_client = client.ApiClient(cfg)
        cls.dyn = dynamic.DynamicClient(cls.api_client)
        for ns in (NS, "apply"):
            r = cls.server.request("POST", "/api/v1/namespaces",
                                   {"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": ns}})
            assert r.status == 201, r

    @classmethod
    def tearDownClass(cls):
        api = getattr(cls, "api_client", None)
        if api is not None:
            api.close()
        super().tearDownClass()

    def served(self):
        """(group_version, APIResource) of every served resource, from discovery."""
        out = []
        core = self.server.request("GET", "/api/v1").json()
        out += [("v1", r) for r in core["resources"]]
        for g in self.server.request("GET", "/apis").json()["groups"]:
            for v in g["versions"]:
                doc = self.server.request("GET", "/apis/" + v["groupVersion"]).json()
                out += [(v["groupVersion"], r) for r in doc["resources"]]
        return [(gv, r) for gv, r in out if "/" not in r["name"]]

    def storable(self):
        return [(gv, r) for gv, r in self.served()
                if {"create", "get", "list", "watch", "patch", "delete"} <= set(r["verbs"])]

    def sample(self, gv, r, name):
        key = key_of(gv, r["name"])
        body = SAMPLES[key]
        if key == "apiregistration.k8s.io/v1/apiservices":
            name = "v1.kindstest.example.com"  # an APIService is named <version>.<group>
            body = {"spec": {"group": "kindstest.example.com", "version": "v1",
                             "groupPriorityMinimum": 100, "versionPriority": 100}}
        if key == "apiextensions.k8s.io/v1/customresourcedefinitions":
            name = "things.kindstest.example.com"  # a CRD is named <plural>.<group>
            body = {"spec": {"group": "kindstest.example.com", "scope": "Namespaced",
                             "names": {"plural": "things", "kind": "Thing"},
                             "versions": [{"name": "v1", "served": True, "storage": True,
                                           "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
        obj = json.loads(json.dumps(body))
        obj.update({"apiVersion": gv, "kind": r["kind"], "metadata": {"name": name}})
        if r["namespaced"]:
            obj["metadata"]["namespace"] = NS
        return obj

    def test_samples_cover_every_storable_resource(self):
        have = {key_of(gv, r["name"]) for gv, r in self.storable()}
        self.assertEqual(sorted(have - set(SAMPLES)), [], "resources without a sample object")
        self.assertGreaterEqual(len(have), 50)

    def test_python_dynamic_client_crud_every_kind(self):
        failures = []
        for gv, r in self.storable():
            key = key_of(gv, r["name"])
            if key not in SAMPLES:
                continue
            try:
                self.crud_one(gv, r)
            except Exception as e:  # collect all, report together
                failures.append("%s: %s" % (key, str(e)[:600]))
        self.assertEqual(failures, [])

    def crud_one(self, gv, r):
        api = self.dyn.resources.get(api_version=gv, kind=r["kind"])
        name = "s-" + r["name"][:40].replace(".", "-")
        obj = self.sample(gv, r, name)
        name = obj["metadata"]["name"]
        ns = NS if r["namespaced"] else None
        start = api.get(namespace=ns).metadata.resourceVersion
        created = api.create(body=obj, namespace=ns)
        self.assertEqual(created.metadata.name, name)
        self.assertEqual(created.kind, r["kind"])
        self.assertEqual(created.apiVersion, gv)
        got = api.get(name=name, namespace=ns)
        self.assertEqual(got.metadata.uid, created.metadata.uid)
        listed = api.get(namespace=ns)
        self.assertIn(name, [i.metadata.name for i in listed.items])
        seen = []
        for ev in api.watch(namespace=ns, resource_version=start, timeout=5):
            seen.append((ev["type"], ev["object"].metadata.name))
            if ev["object"].metadata.name == name:
                break
        self.assertIn(("ADDED", name), seen)
        patched = api.patch(name=name, namespace=ns,
                            body={"metadata": {"labels": {"patched": "yes"}}},
                            content_type="application/merge-patch+json")
        self.assertEqual(patched.metadata.labels["patched"], "yes")
        api.delete(name=name, namespace=ns)
        if r["name"] == "customresourcedefinitions":
            # served as terminating until its finalizer ends: gone, then, as
            # kubectl delete waits for, so the other tests see no stray kind
            wait_until(lambda: self.server.request("GET", "/apis/apiextensions.k8s.io/v1/"
                                                   "customresourcedefinitions/" + name).status
                       == 404, timeout=20, interval=0.05, what="the CRD gone")
            return
        if r["name"] == "namespaces":
            return  # its deletion finalizes asynchronously
        remaining = [i.metadata.name for i in api.get(namespace=ns).items]
        if r["name"] != "pods" or not obj.get("spec", {}).get("nodeName"):
            self.assertNotIn(name, remaining)

    def test_kubectl_apply_multi_kind_manifest(self):
        p = self.server.kubectl("apply", "-f", "-", input=MANIFEST)
        self.assertEqual(p.returncode, 0, describe(p))
        for line in ("deployment.apps/web created", "service/web created", "job.batch/once created",
                     "role.rbac.authorization.k8s.io/reader created",
                     "rolebinding.rbac.authorization.k8s.io/reader created",
                     "daemonset.apps/agent created",
                     "apiservice.apiregistration.k8s.io/v1beta1.metrics.example.com created"):
            self.assertIn(line, p.stdout)
        p = self.server.kubectl("get", "-n", "apply", "deploy,svc,job,role,rolebinding,ds", "-o",
                                "name")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertEqual(sorted(p.stdout.split()), sorted([
            "deployment.apps/web", "service/web", "job.batch/once",
            "role.rbac.authorization.k8s.io/reader", "rolebinding.rbac.authorization.k8s.io/reader",
            "daemonset.apps/agent"]))
        # Applying again changes nothing.
        p = self.server.kubectl("apply", "-f", "-", input=MANIFEST)
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertIn("deployment.apps/web unchanged", p.stdout)
        p = self.server.kubectl("get", "apiservice", "v1beta1.metrics.example.com", "-o",
                                "jsonpath={.spec.group}")
        self.assertEqual((p.returncode, p.stdout), (0, "metrics.example.com"), describe(p))

    def test_kubectl_api_resources_and_explain(self):
        p = self.server.kubectl("api-resources", "-o", "name")
        self.assertEqual(p.returncode, 0, describe(p))
        names = set(p.stdout.split())
        for n in ("pods", "deployments.apps", "cronjobs.batch", "roles.rbac.authorization.k8s.io",
                  "apiservices.apiregistration.k8s.io", "flowschemas.flowcontrol.apiserver.k8s.io"):
            self.assertIn(n, names)
        p = self.server.kubectl("explain", "deployment.spec.strategy")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertIn("rollingUpdate", p.stdout)
        p = self.server.kubectl("get", "po,deploy,svc,cm,sa,rs,sts,ds,cj,ing,netpol,pdb,pc,sc,"
                                "ev,quota,limits,pv,pvc,ep,no", "-A")
        self.assertEqual(p.returncode, 0, describe(p))


if __name__ == "__main__":
    unittest.main()
