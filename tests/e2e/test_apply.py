"""Server-side apply and metadata.managedFields, through the real kubectl,
the Python client and raw HTTP.

Covers: Update entries on create/update/patch (manager from fieldManager,
else kubectl's own names); `kubectl apply --server-side` creating (201) and
then merging, removing what the applier stopped applying, 409 Conflict
naming field and manager (kube's Status: reason Conflict, causes
FieldManagerConflict) and --force-conflicts taking the field over; shared
ownership of an equal value; list-maps merged by key (containers) for a
built-in kind and a CRD's x-kubernetes-list-type: map; apply to /status
recorded with its subresource; an update that omits managedFields keeps
them, [{}] resets them; kubectl's client-side to server-side apply upgrade
(its managed-fields JSON patch accepted, no warning, the last-applied
annotation kept current by kubectl's server-side applies, later applies of
either kind without conflict; a stale resourceVersion in that patch 409);
bad input: apply without fieldManager (422, as kube answers it: an invalid
PatchOptions), another apiVersion, kind or name than the URL (400), malformed YAML (400 with the line), a list-map entry
missing its key (422); a key a list-map item omits takes its schema
default (a port's protocol); apply through /scale (kube's ScaleHandler:
the Scale's replicas are the parent's replicas field, owned with
subresource "scale") and /status, on a built-in kind and a CRD;
fieldValidation of an apply body (a repeated key: 400 Strict, Warning
Warn); the Python client's server_side_apply; a repeated apply or patch a
second later that changes nothing but its manager's time writes nothing.
Why: before this, `kubectl apply --server-side` answered 404 for a new
object and 415 on an existing one, and no object carried managedFields.
"""

import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import ServerTestCase, describe, wait_until  # noqa: E402
import test_builtin_kinds as kinds  # noqa: E402  (a module: its tests do not run here)
from test_kubectl import KubectlMixin  # noqa: E402

CMS = "/api/v1/namespaces/default/configmaps"
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def sets_something(v):
    """Whether an apply of v owns any field: an empty list sets nothing."""
    if isinstance(v, dict):
        return not v or any(sets_something(x) for x in v.values())
    if isinstance(v, list):
        return bool(v)
    return True


def entries(obj):
    return {(e["manager"], e["operation"], e.get("subresource", "")): e
            for e in obj["metadata"].get("managedFields", [])}


class Apply(KubectlMixin, ServerTestCase, unittest.TestCase):

    # discovery and the sample objects of every kind, from test_builtin_kinds
    served = kinds.BuiltinKinds.served
    storable = kinds.BuiltinKinds.storable
    sample = kinds.BuiltinKinds.sample

    def get(self, path):
        r = self.server.request("GET", path)
        self.assertEqual(r.status, 200, r.body)
        return r.json()

    def apply(self, path, body, manager="test", force=False):
        q = "?fieldManager=" + manager + ("&force=true" if force else "")
        return self.server.request("PATCH", path + q, body=body, headers=APPLY)

    def test_create_records_update_entry(self):
        self.ok("create", "configmap", "made", "--from-literal=a=1")
        obj = self.get(CMS + "/made")
        e = entries(obj)[("kubectl-create", "Update", "")]
        self.assertEqual(e["apiVersion"], "v1")
        self.assertEqual(e["fieldsType"], "FieldsV1")
        self.assertEqual(e["fieldsV1"], {"f:data": {".": {}, "f:a": {}}})
        self.assertTrue(e["time"].endswith("Z"))
        # a raw client without fieldManager: the User-Agent's product
        r = self.server.request("POST", CMS, body={"metadata": {"name": "ua"}, "data": {"x": "1"}},
                                headers={"User-Agent": "my-tool/1.2 (linux)"})
        self.assertEqual(r.status, 201, r.body)
        self.assertIn(("my-tool", "Update", ""), entries(r.json()))

    def test_server_side_apply_create_merge_remove(self):
        cm = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  labels:\n    team: a\n"
              "data:\n  key: one\n  other: two\n")
        path = self.write("ssa.yaml", cm)
        out = self.ok("apply", "--server-side", "--dry-run=server", "-f", path)
        self.assertIn("configmap/ssa serverside-applied (server dry run)", out)
        self.assertEqual(self.server.request("GET", CMS + "/ssa").status, 404)
        out = self.ok("apply", "--server-side", "-f", path)
        self.assertIn("configmap/ssa serverside-applied", out)
        # kubectl diff --server-side: a dry-run apply, compared
        p = self.k("diff", "--server-side", "-f", self.write("ssa2.yaml", cm.replace("one", "uno")))
        self.assertEqual(p.returncode, 1, p.stderr)  # 1: differences found
        self.assertIn("+  key: uno", p.stdout)
        obj = self.get(CMS + "/ssa")
        e = entries(obj)[("kubectl", "Apply", "")]
        self.assertEqual(e["fieldsV1"], {"f:data": {"f:key": {}, "f:other": {}},
                                         "f:metadata": {"f:labels": {"f:team": {}}}})
        # someone else adds a key: the applier's removal must leave it alone
        self.ok("patch", "configmap", "ssa", "-p", '{"data":{"theirs":"x"}}')
        cm2 = cm.replace("  other: two\n", "")
        self.ok("apply", "--server-side", "-f", self.write("ssa.yaml", cm2))
        obj = self.get(CMS + "/ssa")
        self.assertEqual(obj["data"], {"key": "one", "theirs": "x"})
        self.assertEqual(entries(obj)[("kubectl", "Apply", "")]["fieldsV1"],
                         {"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:team": {}}}})
        self.assertEqual(entries(obj)[("kubectl-patch", "Update", "")]["fieldsV1"],
                         {"f:data": {"f:theirs": {}}})
        # the same apply again writes nothing
        rv = obj["metadata"]["resourceVersion"]
        self.ok("apply", "--server-side", "-f", self.write("ssa.yaml", cm2))
        self.assertEqual(self.get(CMS + "/ssa")["metadata"]["resourceVersion"], rv)

    def test_conflict_and_force(self):
        cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fight\ndata:\n  key: mine\n"
        path = self.write("fight.yaml", cm)
        self.ok("apply", "--server-side", "-f", path)
        self.ok("patch", "configmap", "fight", "-p", '{"data":{"key":"yours"}}')
        p = self.bad("apply", "--server-side", "-f", path)
        self.assertIn('Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: '
                      '.data.key', p.stderr)
        r = self.apply(CMS + "/fight", cm, manager="kubectl")
        self.assertEqual(r.status, 409, r.body)
        st = r.json()
        self.assertEqual(st["reason"], "Conflict")
        self.assertEqual(st["message"],
                         'Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: '
                         '.data.key')
        self.assertEqual(st["details"]["causes"],
                         [{"reason": "FieldManagerConflict",
                           "message": 'conflict with "kubectl-patch" using v1',
                           "field": ".data.key"}])
        self.ok("apply", "--server-side", "--force-conflicts", "-f", path)
        obj = self.get(CMS + "/fight")
        self.assertEqual(obj["data"]["key"], "mine")
        # kubectl-patch owned nothing else: its entry is gone
        self.assertEqual(set(entries(obj)), {("kubectl", "Apply", "")})

    def test_two_appliers_share_and_conflict(self):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"},
                "data": {"a": "1"}}
        self.assertEqual(self.apply(CMS + "/shared", json.dumps(body), "alpha").status, 201)
        # the same value: co-owned, no conflict
        r = self.apply(CMS + "/shared", json.dumps(body), "beta")
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(set(entries(r.json())), {("alpha", "Apply", ""), ("beta", "Apply", "")})
        # two fields of two managers: both listed
        self.apply(CMS + "/shared", json.dumps(dict(body, data={"a": "1", "b": "2"})), "alpha")
        r = self.apply(CMS + "/shared", json.dumps(dict(body, data={"a": "9", "b": "9"})), "gamma")
        self.assertEqual(r.status, 409, r.body)
        self.assertEqual(r.json()["message"],
                         'Apply failed with 3 conflicts: conflicts with "alpha":\n- .data.a\n'
                         '- .data.b\nconflicts with "beta":\n- .data.a')

    def test_list_map_merge_deployment(self):
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}},
                                     "spec": {"containers": [{"name": "main",
                                                              "image": "nginx"}]}}}}
        path = "/apis/apps/v1/namespaces/default/deployments/web"
        self.assertEqual(self.apply(path, json.dumps(dep), "owner").status, 201)
        side = json.loads(json.dumps(dep))
        side["spec"]["template"]["spec"]["containers"] = [{"name": "side", "image": "busybox"}]
        del side["spec"]["selector"]
        r = self.apply(path, json.dumps(side), "sidecar")
        self.assertEqual(r.status, 200, r.body)
        names = [c["name"] for c in r.json()["spec"]["template"]["spec"]["containers"]]
        self.assertEqual(names, ["main", "side"])
        fs = entries(r.json())[("sidecar", "Apply", "")]["fieldsV1"]
        self.assertIn('k:{"name":"side"}',
                      fs["f:spec"]["f:template"]["f:spec"]["f:containers"])
        # the conflict path is printed as kube prints list-map keys
        side["spec"]["template"]["spec"]["containers"] = [{"name": "main", "image": "httpd"}]
        r = self.apply(path, json.dumps(side), "sidecar")
        self.assertEqual(r.status, 409, r.body)
        self.assertIn('.spec.template.spec.containers[name="main"].image', r.json()["message"])

    def test_status_subresource_apply(self):
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "st"},
               "spec": {"selector": {"matchLabels": {"app": "st"}},
                        "template": {"metadata": {"labels": {"app": "st"}},
                                     "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
        base = "/apis/apps/v1/namespaces/default/deployments/st"
        self.assertEqual(self.apply(base, json.dumps(dep), "owner").status, 201)
        st = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "st"},
              "status": {"observedGeneration": 1}}
        r = self.apply(base + "/status", json.dumps(st), "ctrl")
        self.assertEqual(r.status, 200, r.body)
        obj = self.get(base)
        self.assertEqual(obj["status"].get("observedGeneration"), 1)
        e = entries(obj)[("ctrl", "Apply", "status")]
        self.assertEqual(e["fieldsV1"], {"f:status": {"f:observedGeneration": {}}})
        # a /scale write is an Update entry of the scale subresource
        self.ok("scale", "deployment", "st", "--replicas=3")
        obj = self.get(base)
        scaled = [e for k, e in entries(obj).items() if k[2] == "scale"]
        self.assertEqual(len(scaled), 1, obj["metadata"]["managedFields"])
        self.assertEqual(scaled[0]["fieldsV1"], {"f:spec": {"f:replicas": {}}})
        self.assertEqual(scaled[0]["operation"], "Update")

    def test_scale_subresource_apply(self):
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "sc"},
               "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "sc"}},
                        "template": {"metadata": {"labels": {"app": "sc"}},
                                     "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
        base = "/apis/apps/v1/namespaces/default/deployments/sc"
        self.assertEqual(self.apply(base, json.dumps(dep), "owner").status, 201)
        scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "sc"},
                 "spec": {"replicas": 5}}
        # the Scale's replicas are the Deployment's, owned by "owner"
        r = self.apply(base + "/scale", json.dumps(scale), "hpa")
        self.assertEqual(r.status, 409, r.body)
        self.assertEqual(r.json()["message"], 'Apply failed with 1 conflict: conflict with '
                                              '"owner": .spec.replicas')
        r = self.apply(base + "/scale", json.dumps(scale), "hpa", force=True)
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json()["kind"], "Scale")
        self.assertEqual(r.json()["spec"]["replicas"], 5)
        obj = self.get(base)
        self.assertEqual(obj["spec"]["replicas"], 5)
        e = entries(obj)[("hpa", "Apply", "scale")]
        self.assertEqual((e["apiVersion"], e["fieldsV1"]), ("apps/v1", {"f:spec": {"f:replicas": {}}}))
        self.assertNotIn("f:replicas", entries(obj)[("owner", "Apply", "")]["fieldsV1"]["f:spec"])
        # the scale applier now owns replicas: the owner's re-apply conflicts with it
        r = self.apply(base, json.dumps(dep), "owner")
        self.assertEqual(r.status, 409, r.body)
        self.assertIn('conflict with "hpa" with subresource "scale": .spec.replicas',
                      r.json()["message"])
        # a body of another kind, an invalid count
        r = self.apply(base + "/scale", json.dumps(dep), "hpa")
        self.assertEqual(r.status, 400, r.body)
        self.assertEqual(r.json()["message"], "Incorrect version specified in apply patch. "
                                              "Specified patch version: apps/v1, expected: "
                                              "autoscaling/v1")
        scale["spec"]["replicas"] = -1
        r = self.apply(base + "/scale", json.dumps(scale), "hpa")
        self.assertEqual(r.status, 422, r.body)
        self.assertEqual(self.get(base)["spec"]["replicas"], 5)
        r = self.apply(base.replace("/sc", "/none") + "/scale",
                       json.dumps(dict(scale, metadata={"name": "none"})), "hpa")
        self.assertEqual(r.status, 404, r.body)

    def test_crd_status_and_scale_apply(self):
        crd = {
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "pools.ssa.example.com"},
            "spec": {"group": "ssa.example.com", "scope": "Namespaced",
                     "names": {"plural": "pools", "singular": "pool", "kind": "Pool"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "subresources": {"status": {}, "scale": {
                                       "specReplicasPath": ".spec.size",
                                       "statusReplicasPath": ".status.size"}},
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                       "spec": {"type": "object", "properties": {
                                           "size": {"type": "integer"},
                                           "color": {"type": "string"}}},
                                       "status": {"type": "object", "properties": {
                                           "size": {"type": "integer"},
                                           "phase": {"type": "string"}}}}}}}]}}
        self.ok("apply", "-f", self.write("pools.json", crd))
        # As test_crd waits: the condition, then kubectl's own discovery listing
        # the kind (its cached discovery from earlier tests must not hide it).
        self.ok("wait", "--for", "condition=established", "crd/pools.ssa.example.com",
                "--timeout=20s")
        wait_until(lambda: "pools" in self.server.kubectl(
            "api-resources", "--api-group", "ssa.example.com", "-o", "name").stdout,
                   what="kubectl's discovery listing pools")
        pool = {"apiVersion": "ssa.example.com/v1", "kind": "Pool", "metadata": {"name": "p"},
                "spec": {"size": 1, "color": "blue"}}
        self.ok("apply", "--server-side", "-f", self.write("pool.json", pool))
        # kubectl apply --server-side --subresource=status: only the status is taken
        st = dict(pool, spec={"size": 9}, status={"phase": "Ready"})
        out = self.ok("apply", "--server-side", "--subresource=status", "--field-manager=ctrl",
                      "-f", self.write("pool-st.json", st))
        self.assertIn("pool.ssa.example.com/p serverside-applied", out)
        base = "/apis/ssa.example.com/v1/namespaces/default/pools/p"
        obj = self.get(base)
        self.assertEqual((obj["spec"]["size"], obj["status"]["phase"]), (1, "Ready"))
        self.assertEqual(entries(obj)[("ctrl", "Apply", "status")]["fieldsV1"],
                         {"f:status": {"f:phase": {}}})
        # the scale subresource maps the Scale's replicas to .spec.size
        scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "p"},
                 "spec": {"replicas": 4}}
        r = self.apply(base + "/scale", json.dumps(scale), "hpa")
        self.assertEqual(r.status, 409, r.body)
        # named as kube names it on the Scale it computes the apply on
        self.assertEqual(r.json()["message"],
                         'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas')
        self.assertEqual(r.json()["details"]["causes"][0]["field"], ".spec.replicas")
        r = self.apply(base + "/scale", json.dumps(scale), "hpa", force=True)
        self.assertEqual(r.status, 200, r.body)
        obj = self.get(base)
        self.assertEqual(obj["spec"], {"size": 4, "color": "blue"})
        self.assertEqual(entries(obj)[("hpa", "Apply", "scale")]["fieldsV1"],
                         {"f:spec": {"f:size": {}}})
        # the same on a built-in kind through kubectl
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "kst"},
               "spec": {"selector": {"matchLabels": {"app": "kst"}},
                        "template": {"metadata": {"labels": {"app": "kst"}},
                                     "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
        self.ok("apply", "--server-side", "-f", self.write("kst.json", dep))
        dep["status"] = {"observedGeneration": 7}
        self.ok("apply", "--server-side", "--subresource=status", "--field-manager=ctrl",
                "-f", self.write("kst-st.json", dep))
        obj = self.get("/apis/apps/v1/namespaces/default/deployments/kst")
        self.assertEqual(obj["status"]["observedGeneration"], 7)
        self.assertIn(("ctrl", "Apply", "status"), entries(obj))

    def test_field_validation(self):
        # a key twice: strict YAML decoding's finding, checked after the apply
        cm = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  a: one\n"
              "  b: x\n  a: two\n")
        path = CMS + "/dup?fieldManager=fv&fieldValidation="
        r = self.server.request("PATCH", path + "Strict", body=cm, headers=APPLY)
        self.assertEqual(r.status, 400, r.body)
        self.assertEqual(r.json()["message"],
                         'error strict decoding YAML: error converting YAML to JSON: yaml: '
                         'unmarshal errors:\n  line 8: key "a" already set in map')
        self.assertEqual(self.server.request("GET", CMS + "/dup").status, 404)
        # Warn (also the default): written, the last value kept, a Warning header
        for mode in ("Warn", ""):
            r = self.server.request("PATCH", path + mode, body=cm, headers=APPLY)
            self.assertIn(r.status, (200, 201), r.body)
            self.assertEqual(r.json()["data"], {"a": "two", "b": "x"})
            self.assertEqual(r.headers.get("warning"),
                             '299 - "line 8: key \\"a\\" already set in map"')
        r = self.server.request("PATCH", path + "Ignore", body=cm, headers=APPLY)
        self.assertEqual(r.status, 200, r.body)
        self.assertIsNone(r.headers.get("warning"))
        # a conflict is answered before the strict finding
        self.ok("patch", "configmap", "dup", "-p", '{"data":{"a":"three"}}')
        r = self.server.request("PATCH", path + "Strict", body=cm, headers=APPLY)
        self.assertEqual(r.status, 409, r.body)
        # an unknown field fails the apply's typing in every mode
        r = self.server.request("PATCH", path + "Ignore", body=cm + "spec: {}\n", headers=APPLY)
        self.assertEqual(r.status, 422, r.body)
        self.assertIn(".spec: field not declared in schema", r.json()["message"])

    def test_update_keeps_and_reset_clears(self):
        self.ok("create", "configmap", "keep", "--from-literal=a=1")
        obj = self.get(CMS + "/keep")
        del obj["metadata"]["managedFields"]
        obj["data"]["b"] = "2"
        r = self.server.request("PUT", CMS + "/keep?fieldManager=putter", body=obj)
        self.assertEqual(r.status, 200, r.body)
        e = entries(r.json())
        self.assertEqual(e[("kubectl-create", "Update", "")]["fieldsV1"],
                         {"f:data": {".": {}, "f:a": {}}})
        self.assertEqual(e[("putter", "Update", "")]["fieldsV1"], {"f:data": {"f:b": {}}})
        r = self.server.request("PATCH", CMS + "/keep", body='{"metadata":{"managedFields":[{}]}}',
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r.body)
        self.assertNotIn("managedFields", r.json()["metadata"])

    def test_repeat_a_second_later_is_a_no_op(self):
        # kube's IgnoreManagedFieldsTimestampsTransformer: an apply or patch that
        # changes nothing but its manager's time writes nothing. The EndpointSlice's
        # endpoint omits conditions, which defaulting fills: the applied set differs
        # from the stored one, the object does not.
        path = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/again"
        body = json.dumps({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                           "metadata": {"name": "again"}, "addressType": "IPv4",
                           "endpoints": [{"addresses": ["10.0.0.1"]}],
                           "ports": [{"port": 80}]})
        r = self.apply(path, body)
        self.assertEqual(r.status, 201, r.body)
        first = r.json()
        time.sleep(1.1)
        r = self.apply(path, body)
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json(), first)
        r = self.server.request("PATCH", path + "?fieldManager=patcher",
                                body='{"endpoints":[{"addresses":["10.0.0.1"]}]}',
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json(), first)

    def test_client_side_apply_upgrade(self):
        cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\ndata:\n  key: v1\n"
        path = self.write("csa.yaml", cm)
        self.ok("apply", "-f", path)
        self.assertIn(("kubectl-client-side-apply", "Update", ""),
                      entries(self.get(CMS + "/csa")))
        self.ok("apply", "--server-side", "-f", self.write("csa.yaml", cm.replace("key: v1", "key: v2")))
        obj = self.get(CMS + "/csa")
        self.assertEqual(obj["data"]["key"], "v2")
        self.assertIn(("kubectl", "Apply", ""), entries(obj))

    def test_client_side_apply_upgrade_keeps_last_applied(self):
        """Issue 43: kubectl's upgrade from client-side to server-side apply
        (a JSON patch replacing managedFields with resourceVersion as its
        precondition) is accepted without a warning, kubectl's server-side
        apply keeps the last-applied annotation (kube's lastAppliedUpdater),
        and later applies of either kind neither conflict nor go stale."""
        manifests = {
            "configmaps": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: up\n"
                          "data:\n  key: {v}\n",
            "pods": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: up\n  labels:\n"
                    "    v: {v}\nspec:\n  containers:\n  - name: c\n    image: nginx\n",
        }
        for resource, manifest in manifests.items():
            with self.subTest(resource=resource):
                def apply(v, *flags):
                    path = self.write("up.yaml", manifest.format(v=v))
                    p = self.k("apply", *flags, "-f", path)
                    self.assertEqual(p.returncode, 0, describe(p))
                    self.assertNotIn("Warning", p.stderr, describe(p))
                    self.assertNotIn("conflict", p.stderr.lower(), describe(p))

                def last_applied():
                    text = self.ok("apply", "view-last-applied", resource, "up", "-o", "json")
                    cfg = json.loads(text)
                    return cfg["data"]["key"] if resource == "configmaps" \
                        else cfg["metadata"]["labels"]["v"]

                path = "/api/v1/namespaces/default/%s/up" % resource
                apply("v1")
                self.assertIn(("kubectl-client-side-apply", "Update", ""),
                              entries(self.get(path)))
                apply("v2", "--server-side")
                e = entries(self.get(path))
                self.assertIn(("kubectl", "Apply", ""), e)
                self.assertNotIn(("kubectl-client-side-apply", "Update", ""), e)
                self.assertEqual(last_applied(), "v2")
                apply("v3")
                self.assertEqual(last_applied(), "v3")
                apply("v4", "--server-side")
                self.assertEqual(last_applied(), "v4")
                obj = self.get(path)
                got = obj["data"]["key"] if resource == "configmaps" \
                    else obj["metadata"]["labels"]["v"]
                self.assertEqual(got, "v4")
                self.ok("delete", resource, "up", "--wait=false")

    def test_json_patch_of_managed_fields(self):
        """The upgrade's JSON patch as kubectl sends it: replacing
        /metadata/resourceVersion is its precondition (a stale one is 409),
        and the managedFields it sets are taken as given."""
        self.ok("create", "configmap", "mfp", "--from-literal=a=1")
        obj = self.get(CMS + "/mfp")
        rv = obj["metadata"]["resourceVersion"]
        mf = obj["metadata"]["managedFields"]
        mf[0]["manager"] = "renamed"
        jp = {"Content-Type": "application/json-patch+json"}
        stale = [{"op": "replace", "path": "/metadata/managedFields", "value": mf},
                 {"op": "replace", "path": "/metadata/resourceVersion", "value": str(int(rv) - 1)}]
        r = self.server.request("PATCH", CMS + "/mfp", body=json.dumps(stale), headers=jp)
        self.assertEqual(r.status, 409, r.body)
        self.assertEqual(r.json()["reason"], "Conflict")
        r = self.server.request("PATCH", CMS + "/mfp", body=json.dumps(
            [{"op": "test", "path": "/metadata/resourceVersion", "value": rv}] + stale[:1] +
            [{"op": "replace", "path": "/metadata/resourceVersion", "value": rv}]), headers=jp)
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(list(entries(r.json())), [("renamed", "Update", "")])
        # a failed operation: kube's generic 422 (NewGenericServerResponse
        # keeps the jsonpatch error out of the Status)
        r = self.server.request("PATCH", CMS + "/mfp", body=json.dumps(
            [{"op": "test", "path": "/metadata/resourceVersion", "value": "1"}]), headers=jp)
        self.assertEqual(r.status, 422, r.body)
        st = r.json()
        self.assertEqual((st["reason"], st["message"]), (
            "Invalid", "the server rejected our request due to an error in our request"))

    def test_crd_list_map(self):
        crd = {
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.ssa.example.com"},
            "spec": {"group": "ssa.example.com", "scope": "Namespaced",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                             "type": "object", "properties": {"parts": {
                                 "type": "array", "x-kubernetes-list-type": "map",
                                 "x-kubernetes-list-map-keys": ["id"],
                                 "items": {"type": "object", "required": ["id"], "properties": {
                                     "id": {"type": "string"},
                                     "size": {"type": "integer"}}}}}}}}}}]}}
        self.ok("apply", "-f", self.write("crd.json", crd))
        path = "/apis/ssa.example.com/v1/namespaces/default/gadgets/g"

        def served():
            return self.server.request("GET", "/apis/ssa.example.com/v1").status == 200
        wait_until(served, what="the CRD served")
        g = {"apiVersion": "ssa.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"},
             "spec": {"parts": [{"id": "a", "size": 1}]}}
        self.assertEqual(self.apply(path, json.dumps(g), "one").status, 201)
        g["spec"]["parts"] = [{"id": "b", "size": 2}]
        r = self.apply(path, json.dumps(g), "two")
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json()["spec"]["parts"], [{"id": "a", "size": 1}, {"id": "b", "size": 2}])
        g["spec"]["parts"] = [{"id": "c", "color": "red"}]
        r = self.apply(path, json.dumps(g), "two")
        self.assertEqual(r.status, 422, r.body)
        self.assertIn('.spec.parts[id="c"].color: field not declared in schema',
                      r.json()["message"])
        g["spec"]["parts"] = [{"size": 3}]
        r = self.apply(path, json.dumps(g), "two")
        self.assertEqual(r.status, 422, r.body)
        self.assertIn('omits key field "id"', r.json()["message"])

    def test_bad_input(self):
        cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\ndata:\n  a: b\n"
        r = self.server.request("PATCH", CMS + "/bad", body=cm, headers=APPLY)
        self.assertEqual(r.status, 422, r.body)
        self.assertEqual(r.json()["message"], 'PatchOptions.meta.k8s.io "" is invalid: '
                                              'fieldManager: Required value: is required for '
                                              'apply patch')
        r = self.apply(CMS + "/bad", cm.replace("apiVersion: v1", "apiVersion: v2"))
        self.assertEqual(r.status, 400, r.body)
        self.assertEqual(r.json()["message"], "Incorrect version specified in apply patch. "
                                              "Specified patch version: v2, expected: v1")
        r = self.apply(CMS + "/bad", cm.replace("kind: ConfigMap", "kind: Secret"))
        self.assertEqual(r.status, 400, r.body)
        self.assertEqual(r.json()["message"], "the kind in the data (Secret) does not match the "
                                              "expected kind (ConfigMap)")
        r = self.apply(CMS + "/other", cm)
        self.assertEqual(r.status, 400, r.body)
        self.assertIn("does not match the name on the URL", r.json()["message"])
        r = self.apply(CMS + "/bad", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n"
                                     "data:\n  a: b\n c: d: e\n")
        self.assertEqual(r.status, 400, r.body)
        self.assertRegex(r.json()["message"],
                         r"^error decoding YAML: error converting YAML to JSON: yaml: line \d+: ")
        svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "nokey"},
               "spec": {"ports": [{"name": "http"}]}}
        r = self.apply("/api/v1/namespaces/default/services/nokey", json.dumps(svc))
        self.assertEqual(r.status, 422, r.body)
        self.assertEqual(r.json()["message"],
                         'failed to create typed patch object (/nokey; /v1, Kind=Service): '
                         '.spec.ports: element 0: associative list with keys has an element that '
                         'omits key field "port" (and doesn\'t have default value)')
        r = self.apply(CMS + "/bad", cm + "spec:\n  x: 1\n")
        self.assertEqual(r.status, 422, r.body)
        self.assertIn(".spec: field not declared in schema", r.json()["message"])
        r = self.apply(CMS + "/bad", cm, manager="m" * 129)
        self.assertEqual(r.status, 422, r.body)
        self.assertEqual(r.json()["message"], 'PatchOptions.meta.k8s.io "" is invalid: '
                                              'fieldManager: Too long: may not be more than 128 '
                                              'bytes')
        r = self.server.request("PATCH", CMS + "/bad?force=true", body="{}",
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 422, r.body)
        self.assertIn("force: Forbidden: may not be specified for non-apply patch",
                      r.json()["message"])
        self.assertEqual(self.server.request("GET", CMS + "/bad").status, 404)

    def test_every_builtin_kind(self):
        r = self.server.request("POST", "/api/v1/namespaces",
                                {"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": kinds.NS}})
        self.assertIn(r.status, (201, 409), r.body)
        failures = []
        builtin = [(gv, r) for gv, r in self.storable()
                   if kinds.key_of(gv, r["name"]) in kinds.SAMPLES]
        self.assertGreaterEqual(len(builtin), 50)
        for i, (gv, res) in enumerate(builtin):
            # one name per resource: v1 and events.k8s.io/v1 events share storage
            obj = self.sample(gv, res, "ssa-every-%d" % i)
            prefix = "/api/" if gv == "v1" else "/apis/"
            path = prefix + gv + ("/namespaces/" + kinds.NS if res["namespaced"] else "") + "/" + \
                res["name"] + "/" + obj["metadata"]["name"]
            first = self.apply(path, json.dumps(obj), "every")
            again = self.apply(path, json.dumps(obj), "every")
            if first.status != 201 or again.status != 200:
                failures.append("%s: %s %s / %s %s" % (path, first.status, first.body[:300],
                                                       again.status, again.body[:300]))
                continue
            # a sample of nothing but its name (or empty lists) leaves the
            # applier owning nothing: kube drops such an entry. A repeated apply changes
            # no field it owns and no entry (defaulting on update may still
            # add what a create did not: a PVC's phase, a Job's labels).
            owns = sets_something({k: v for k, v in obj.items()
                                   if k not in ("apiVersion", "kind", "metadata")} or [])
            e = entries(again.json()).get(("every", "Apply", ""))
            strip = lambda o: {k: v for k, v in o.items() if k != "status"}  # noqa: E731
            # the applier's own entries: a controller may write meanwhile (a
            # CRD's status, recorded as kube-apiserver's)
            meta = lambda o: [x for x in o["metadata"].get("managedFields", [])  # noqa: E731
                              if x["manager"] == "every"]
            if (owns and not e) or meta(again.json()) != meta(first.json()) or \
                    strip(again.json())["spec" if "spec" in obj else "kind"] != \
                    strip(first.json())["spec" if "spec" in obj else "kind"]:
                failures.append("%s: no Apply entry, or a repeated apply changed it:\n%s\n%s" % (
                    path, first.body.decode()[:1500], again.body.decode()[:1500]))
        self.assertEqual(failures, [])

    def test_python_client_apply(self):
        """The Python client's DynamicClient.server_side_apply: create,
        update, a 409 naming the field and its manager, force. This client
        release (22.x) sends only a serialized body as apply-patch+yaml (a
        dict is refused client-side; later releases serialize it), and its
        typed API cannot choose the apply content type at all."""
        from kubernetes import client, config
        from kubernetes.dynamic import DynamicClient
        from kubernetes.dynamic.exceptions import ConflictError
        cfg = client.Configuration()
        config.load_kube_config(config_file=self.server.kubeconfig, client_configuration=cfg,
                                persist_config=False)
        dyn = DynamicClient(client.ApiClient(cfg))
        cms = dyn.resources.get(api_version="v1", kind="ConfigMap")

        def ssa(data, manager, **kw):
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py"},
                    "data": data}
            return cms.server_side_apply(body=json.dumps(body), name="py", namespace="default",
                                         field_manager=manager, **kw)
        got = ssa({"k": "v"}, "py-mgr")
        self.assertEqual(got.data.k, "v")
        got = ssa({"k": "v", "k2": "w"}, "py-mgr")
        self.assertEqual(dict(got.data), {"k": "v", "k2": "w"})
        obj = self.get(CMS + "/py")
        self.assertEqual(entries(obj)[("py-mgr", "Apply", "")]["fieldsV1"],
                         {"f:data": {"f:k": {}, "f:k2": {}}})
        with self.assertRaises(ConflictError) as cm:
            ssa({"k": "other"}, "py-other")
        self.assertEqual(cm.exception.status, 409)
        st = json.loads(cm.exception.body)
        self.assertEqual(st["message"],
                         'Apply failed with 1 conflict: conflict with "py-mgr": .data.k')
        self.assertEqual(st["details"]["causes"][0]["field"], ".data.k")
        got = ssa({"k": "other"}, "py-other", force_conflicts=True)
        self.assertEqual(got.data.k, "other")
        obj = self.get(CMS + "/py")
        self.assertEqual(entries(obj)[("py-mgr", "Apply", "")]["fieldsV1"],
                         {"f:data": {"f:k2": {}}})
        self.assertEqual(entries(obj)[("py-other", "Apply", "")]["fieldsV1"],
                         {"f:data": {"f:k": {}}})


if __name__ == "__main__":
    unittest.main()
