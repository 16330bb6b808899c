"""An operator's full cycle, as issue 13 states it: install a CRD, create
custom resources with status and finalizers, delete with each propagation
policy, delete the namespace, and see every dependent and finalizer
honoured, including across a restart in the middle of a deletion; with
kubectl and the Python client, on both backends.

Why: an operator's first act is to install its CRDs, and everything it does
afterwards leans on finalizers, owner references and namespace deletion
working on its own kinds as on built-in ones.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import ServerTestCase, describe, wait_until  # noqa: E402
from test_kubectl import KubectlMixin  # noqa: E402

from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

GROUP, VERSION, PLURAL = "ops.example.com", "v1", "widgets"
HOLD = "ops.example.com/cleanup"

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "%s.%s" % (PLURAL, GROUP)},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": PLURAL, "singular": "widget", "kind": "Widget",
                  "shortNames": ["wd"]},
        "versions": [{
            "name": VERSION, "served": True, "storage": True,
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer", "minimum": 1, "default": 1}}},
                    "status": {"type": "object", "properties": {
                        "phase": {"type": "string"}}},
                }}},
        }],
    },
}


class OperatorCycle(KubectlMixin, ServerTestCase, unittest.TestCase):
    def setUp(self):
        super().setUp()
        config.load_kube_config(config_file=self.server.kubeconfig)
        self.api = client.ApiClient()
        self.core = client.CoreV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)

    def tearDown(self):
        self.api.close()
        super().tearDown()

    def install(self):
        p = self.k("apply", "-f", self.write("crd.json", CRD))
        self.assertEqual(p.returncode, 0, describe(p))
        p = self.k("wait", "--for", "condition=established", "--timeout=30s",
                   "crd/%s.%s" % (PLURAL, GROUP))
        self.assertEqual(p.returncode, 0, describe(p))

    def widget(self, ns, name, **meta):
        m = {"name": name}
        m.update(meta)
        return self.custom.create_namespaced_custom_object(
            GROUP, VERSION, ns, PLURAL, {"apiVersion": GROUP + "/" + VERSION, "kind": "Widget",
                                         "metadata": m, "spec": {}})

    def widgets(self, ns):
        items = self.custom.list_namespaced_custom_object(GROUP, VERSION, ns, PLURAL)["items"]
        return sorted(i["metadata"]["name"] for i in items)

    def cms(self, ns):
        return sorted(c.metadata.name for c in self.core.list_namespaced_config_map(ns).items)

    def ref(self, obj, block=False):
        r = {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
             "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"]}
        if block:
            r["blockOwnerDeletion"] = True
        return r

    def cm(self, ns, name, owner, block=False):
        return self.core.create_namespaced_config_map(ns, {
            "metadata": {"name": name, "ownerReferences": [self.ref(owner, block)]}})

    def test_operator_cycle(self):
        self.install()
        ns = "ops"
        self.core.create_namespace({"metadata": {"name": ns}})

        # a custom resource with a finalizer and a status, defaulted by its schema
        w = self.widget(ns, "held", finalizers=[HOLD])
        self.assertEqual(w["spec"], {"size": 1})
        w["status"] = {"phase": "Ready"}
        got = self.custom.replace_namespaced_custom_object_status(GROUP, VERSION, ns, PLURAL,
                                                                  "held", w)
        self.assertEqual(got["status"], {"phase": "Ready"})
        self.custom.delete_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "held")
        held = self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "held")
        self.assertIn("deletionTimestamp", held["metadata"])
        # the operator finishes its cleanup and lets go
        self.custom.patch_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "held",
                                                   {"metadata": {"finalizers": None}})
        with self.assertRaises(ApiException) as e:
            self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "held")
        self.assertEqual(e.exception.status, 404)

        # each propagation policy, a custom resource owning ConfigMaps
        for policy in ("Background", "Foreground", "Orphan"):
            owner = self.widget(ns, "w-" + policy.lower())
            self.cm(ns, "cm-" + policy.lower(), owner, block=True)
            self.custom.delete_namespaced_custom_object(
                GROUP, VERSION, ns, PLURAL, "w-" + policy.lower(),
                body=client.V1DeleteOptions(propagation_policy=policy))
        wait_until(lambda: self.widgets(ns) == [] and self.cms(ns) == ["cm-orphan"],
                   timeout=30, what="owners and their dependents per policy")
        orphan = self.core.read_namespaced_config_map("cm-orphan", ns)
        self.assertIsNone(orphan.metadata.owner_references)

        # a ConfigMap owning a custom resource (kubectl's cascade)
        owner_cm = self.core.create_namespaced_config_map(ns, {"metadata": {"name": "root"}})
        self.widget(ns, "child", ownerReferences=[{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "root",
            "uid": owner_cm.metadata.uid}])
        p = self.k("delete", "cm", "root", "-n", ns, "--cascade=foreground")
        self.assertEqual(p.returncode, 0, describe(p))
        wait_until(lambda: "child" not in self.widgets(ns), timeout=30, what="owned widget")

        # deleting the namespace waits for a custom resource's finalizer, across a restart
        self.widget(ns, "last", finalizers=[HOLD])
        self.core.delete_namespace(ns)
        wait_until(lambda: self.cms(ns) == [], timeout=30, what="namespace content")
        self.server.restart()
        config.load_kube_config(config_file=self.server.kubeconfig)
        self.api.close()
        self.api = client.ApiClient()
        self.core = client.CoreV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)
        nsobj = self.core.read_namespace(ns)
        self.assertEqual(nsobj.status.phase, "Terminating")
        def finalizers_reported():
            for c in self.core.read_namespace(ns).status.conditions or []:
                if c.type == "NamespaceFinalizersRemaining" and HOLD in c.message:
                    return True
            return False
        wait_until(finalizers_reported, timeout=30, what="conditions after restart")
        conds = {c.type: c for c in self.core.read_namespace(ns).status.conditions}
        self.assertIn(HOLD, conds["NamespaceFinalizersRemaining"].message)
        self.assertIn("widgets.ops.example.com has 1 resource instances",
                      conds["NamespaceContentRemaining"].message)
        self.custom.patch_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "last",
                                                   {"metadata": {"finalizers": None}})

        def ns_gone():
            try:
                self.core.read_namespace(ns)
                return False
            except ApiException as e:
                return e.status == 404
        wait_until(ns_gone, timeout=30, what="namespace gone")

    def test_deleting_the_crd_deletes_its_resources(self):
        self.install()
        ns = "ops-crd"
        self.core.create_namespace({"metadata": {"name": ns}})
        for i in range(3):
            self.widget(ns, "w%d" % i)
        p = self.k("delete", "crd", "%s.%s" % (PLURAL, GROUP), "--timeout=60s")
        self.assertEqual(p.returncode, 0, describe(p))
        path = "/apis/%s/%s/namespaces/%s/%s" % (GROUP, VERSION, ns, PLURAL)
        wait_until(lambda: self.server.request("GET", path).status == 404, timeout=10,
                   what="the resource no longer served")
        # installed again, it starts empty
        self.install()
        self.assertEqual(self.widgets(ns), [])

    def test_schema_prunes_defaults_and_validates(self):
        self.install()
        ns = "ops-schema"
        self.core.create_namespace({"metadata": {"name": ns}})
        path = "/apis/%s/%s/namespaces/%s/%s" % (GROUP, VERSION, ns, PLURAL)
        body = {"apiVersion": GROUP + "/" + VERSION, "kind": "Widget",
                "metadata": {"name": "p"}, "spec": {"colour": "red"}}
        r = self.server.request("POST", path, body)
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["spec"], {"size": 1})  # pruned, then defaulted
        self.assertEqual(r.headers.get("warning"), '299 - "unknown field \\"spec.colour\\""')
        body["metadata"]["name"] = "q"
        r = self.server.request("POST", path + "?fieldValidation=Strict", body)
        self.assertEqual(r.status, 400, r)
        self.assertIn('unknown field "spec.colour"', r.json()["message"])
        body = {"apiVersion": GROUP + "/" + VERSION, "kind": "Widget",
                "metadata": {"name": "bad"}, "spec": {"size": 0}}
        r = self.server.request("POST", path, body)
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json()["message"],
                         'Widget.ops.example.com "bad" is invalid: spec.size: Invalid value: 0: '
                         'spec.size in body should be greater than or equal to 1')
        self.assertEqual(r.json()["details"]["causes"][0]["field"], "spec.size")
        # CEL rules are accepted and enforced (tests/e2e/test_crd_rules.py has the rest)
        crd = json.loads(json.dumps(CRD))
        crd["metadata"]["name"] = "rules.ops.example.com"
        crd["spec"]["names"] = {"plural": "rules", "kind": "Rule"}
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "x-kubernetes-validations"] = [{"rule": "self.size < 10"}]
        r = self.server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                crd)
        self.assertEqual(r.status, 201, r)
        self.assertNotIn("not enforced", r.headers.get("warning", ""))
        # a CRD whose schema is not structural
        crd = json.loads(json.dumps(CRD))
        crd["metadata"]["name"] = "gadgets.ops.example.com"
        crd["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = {
            "properties": {"size": {"type": "integer"}}}
        r = self.server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                crd)
        self.assertEqual(r.status, 422, r)
        self.assertIn("spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required "
                      "value: must not be empty for specified object fields",
                      r.json()["message"])


if __name__ == "__main__":
    unittest.main()
