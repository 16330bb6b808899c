"""CustomResourceDefinitions (apiextensions.k8s.io/v1), through kubectl, the
Python client and raw HTTP.

Covers: a CRD applied with kubectl is Established (kubectl wait) and its
status carries acceptedNames, storedVersions and the NamesAccepted and
Established conditions; its kind is served at once, without a restart, in
legacy and aggregated discovery and OpenAPI v3 (kubectl get by plural,
short name and category, kubectl explain); Table output with the CRD's
additionalPrinterColumns (and the default Age column of a CRD without
them); the Python client's CustomObjectsApi create/list/watch/patch and
its status and scale calls; generation moving for spec changes only;
several versions with one storage version (apiVersion rewritten, objects
stored once); selectableFields and label selectors; a CRD whose names
another CRD took is NamesAccepted False and not served; a bad CRD is 422
with kube's field paths; deleting a CRD deletes its objects behind the
customresourcecleanup finalizer (creates refused meanwhile, objects with
finalizers waited for) and stops serving its kind; and, on PostgreSQL, a
CRD created on one instance serves on another.
Why: an operator's first act is to install its CRDs; before this every
`kind: CustomResourceDefinition` was "no matches".
"""

import json
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import CONFIG, Server, ServerTestCase, wait_until  # noqa: E402
from test_kubectl import KubectlMixin  # noqa: E402

from kubernetes import client, config, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

GROUP = "stable.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def crontab_crd(plural="crontabs", kind="CronTab", short=("ct",), group=GROUP):
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "cronSpec": {"type": "string"}, "replicas": {"type": "integer"},
            "image": {"type": "string"}}},
        "status": {"type": "object", "properties": {
            "replicas": {"type": "integer"}, "labelSelector": {"type": "string"}}}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "%s.%s" % (plural, group)},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"plural": plural, "singular": plural[:-1], "kind": kind,
                      "shortNames": list(short), "categories": ["all"]},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema},
                 "subresources": {"status": {}, "scale": {
                     "specReplicasPath": ".spec.replicas",
                     "statusReplicasPath": ".status.replicas",
                     "labelSelectorPath": ".status.labelSelector"}},
                 "additionalPrinterColumns": [
                     {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
                     {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                     {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
                 "selectableFields": [{"jsonPath": ".spec.cronSpec"},
                                      {"jsonPath": ".spec.replicas"}]},
                {"name": "v1beta1", "served": True, "storage": False,
                 "schema": {"openAPIV3Schema": {"type": "object",
                                                "x-kubernetes-preserve-unknown-fields": True}}},
            ],
        },
    }


def crontab(name, cron="* * * * */5", replicas=1, version="v1", labels=None):
    return {"apiVersion": "%s/%s" % (GROUP, version), "kind": "CronTab",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"cronSpec": cron, "replicas": replicas, "image": "img"}}


def condition(crd, type_):
    for c in crd.get("status", {}).get("conditions") or []:
        if c["type"] == type_:
            return c
    return None


class CustomResources(KubectlMixin, ServerTestCase, unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cfg = client.Configuration()
        config.load_kube_config(config_file=cls.server.kubeconfig, client_configuration=cfg,
                                persist_config=False)
        cls.api_client = client.ApiClient(cfg)
        cls.custom = client.CustomObjectsApi(cls.api_client)
        # Discovery before the CRD exists: kubectl must see it appear without a restart.
        cls.before = cls.server.request("GET", "/apis").json()
        path = os.path.join(cls.tmp, "crd.json")
        with open(path, "w") as f:
            json.dump(crontab_crd(), f)
        p = cls.server.kubectl("apply", "-f", path)
        assert p.returncode == 0, p.stderr
        p = cls.server.kubectl("wait", "--for", "condition=established",
                               "crd/crontabs." + GROUP, "--timeout=20s")
        assert p.returncode == 0, p.stderr

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
            self.assertEqual(r.status, want, "%s %s -> %s %r" % (method, path, r.status,
                                                                 r.body[:800]))
        return r

    def items(self, path):
        return [o["metadata"]["name"] for o in self.req("GET", path, want=200).json()["items"]]

    # --- the CRD itself -------------------------------------------------------

    def test_crd_status(self):
        crd = self.get_json("crd", "crontabs." + GROUP)
        st = crd["status"]
        self.assertEqual(st["acceptedNames"]["plural"], "crontabs")
        self.assertEqual(st["acceptedNames"]["shortNames"], ["ct"])
        self.assertEqual(st["storedVersions"], ["v1"])
        self.assertEqual(condition(crd, "NamesAccepted")["status"], "True")
        self.assertEqual(condition(crd, "NamesAccepted")["reason"], "NoConflicts")
        est = condition(crd, "Established")
        self.assertEqual((est["status"], est["reason"]), ("True", "InitialNamesAccepted"))
        self.assertEqual(crd["metadata"]["generation"], 1)
        # kube's defaults: listKind and the None conversion
        self.assertEqual(crd["spec"]["names"]["listKind"], "CronTabList")
        self.assertEqual(crd["spec"]["conversion"], {"strategy": "None"})
        # the short name of the CRD kind itself
        self.assertIn("crontabs." + GROUP, self.ok("get", "crds"))
        # the status as kube-apiserver's naming and establishing controllers record it
        raw = self.req("GET", CRDS + "/crontabs." + GROUP, want=200).json()
        mine = [e for e in raw["metadata"]["managedFields"] if e["manager"] == "kube-apiserver"]
        self.assertEqual([(e["operation"], e["subresource"], e["apiVersion"]) for e in mine],
                         [("Update", "status", "apiextensions.k8s.io/v1")], mine)
        self.assertEqual(sorted(mine[0]["fieldsV1"]["f:status"]),
                         ["f:acceptedNames", "f:conditions"])

    def test_bad_crd_is_422_with_field_paths(self):
        bad = crontab_crd()
        bad["metadata"]["name"] = "wrong.example.com"
        bad["spec"]["group"] = "nodot"
        bad["spec"]["scope"] = "Everywhere"
        bad["spec"]["versions"][1]["storage"] = True
        del bad["spec"]["versions"][0]["schema"]
        bad["spec"]["names"]["shortNames"] = ["Bad_Name"]
        r = self.req("POST", CRDS, bad, want=422)
        st = r.json()
        self.assertEqual(st["reason"], "Invalid")
        self.assertEqual(st["details"]["kind"], "CustomResourceDefinition")
        self.assertEqual(st["details"]["group"], "apiextensions.k8s.io")
        fields = {c["field"] for c in st["details"]["causes"]}
        for f in ("metadata.name", "spec.group", "spec.scope", "spec.versions",
                  "spec.versions[0].schema.openAPIV3Schema", "spec.names.shortNames[0]"):
            self.assertIn(f, fields, st["message"])
        self.assertIn('metadata.name: Invalid value: "wrong.example.com": must be '
                      'spec.names.plural+"."+spec.group', st["message"])
        self.assertIn("must have exactly one version marked as storage version", st["message"])
        self.assertIn('spec.scope: Unsupported value: "Everywhere": supported values: '
                      '"Cluster", "Namespaced"', st["message"])
        # kubectl shows the same
        p = self.bad("apply", "-f", self.write("bad.json", bad))
        self.assertIn("is invalid", p.stderr)

    def test_names_conflict(self):
        other = crontab_crd(plural="crontwos", kind="CronTwo", short=("ct",))
        self.req("POST", CRDS, other, want=201)
        url = CRDS + "/crontwos." + GROUP

        def accepted():
            c = condition(self.req("GET", url, want=200).json(), "NamesAccepted")
            return c if c and c["status"] == "False" else None
        c = wait_until(accepted, what="NamesAccepted False")
        self.assertEqual((c["reason"], c["message"]), ("ShortNamesConflict",
                                                       '"ct" is already in use'))
        crd = self.req("GET", url, want=200).json()
        self.assertEqual(condition(crd, "Established")["status"], "False")
        self.assertEqual(crd["status"]["acceptedNames"]["plural"], "crontwos",
                         "the names that are free are accepted")
        self.assertNotIn("shortNames", crd["status"]["acceptedNames"])
        self.assertEqual(self.req("GET", "/apis/%s/v1/crontwos" % GROUP).status, 404)
        self.req("DELETE", url, want=200)

    # --- serving ----------------------------------------------------------------

    def test_discovery_without_restart(self):
        names = [g["name"] for g in self.before["groups"]]
        self.assertNotIn(GROUP, names)
        groups = self.req("GET", "/apis", want=200).json()["groups"]
        g = [g for g in groups if g["name"] == GROUP][0]
        self.assertEqual(g["preferredVersion"]["version"], "v1")
        self.assertEqual([v["version"] for v in g["versions"]], ["v1", "v1beta1"])
        res = self.req("GET", "/apis/%s/v1" % GROUP, want=200).json()["resources"]
        by_name = {r["name"]: r for r in res}
        self.assertEqual(sorted(by_name), ["crontabs", "crontabs/scale", "crontabs/status"])
        self.assertEqual(by_name["crontabs"]["kind"], "CronTab")
        self.assertEqual(by_name["crontabs"]["shortNames"], ["ct"])
        self.assertEqual(by_name["crontabs"]["categories"], ["all"])
        self.assertTrue(by_name["crontabs"]["namespaced"])
        agg = self.server.request("GET", "/apis", headers={
            "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
        self.assertIn(GROUP, [i["metadata"]["name"] for i in agg.json()["items"]])
        # OpenAPI v3 index and document
        paths = self.req("GET", "/openapi/v3", want=200).json()["paths"]
        self.assertIn("apis/%s/v1" % GROUP, paths)
        doc = self.req("GET", "/openapi/v3/apis/%s/v1" % GROUP, want=200).json()
        schema = doc["components"]["schemas"]["com.example.stable.v1.CronTab"]
        self.assertEqual(schema["properties"]["spec"]["properties"]["cronSpec"]["type"], "string")
        self.assertEqual(schema["x-kubernetes-group-version-kind"],
                         [{"group": GROUP, "version": "v1", "kind": "CronTab"}])
        out = self.ok("explain", "crontab.spec")
        self.assertIn("cronSpec", out)
        self.assertIn("replicas", out)

    def test_kubectl_get_columns_short_names_categories(self):
        self.ok("apply", "-f", self.write("c1.json", crontab("kc1", replicas=3)))
        out = self.ok("get", "ct")
        header = out.splitlines()[0].split()
        self.assertEqual(header, ["NAME", "SPEC", "REPLICAS", "AGE"])
        row = [l for l in out.splitlines() if l.startswith("kc1 ")][0]
        self.assertIn("* * * * */5", row)
        self.assertEqual(row.split()[-2], "3")
        self.assertIn("kc1", self.ok("get", "crontabs"))
        self.assertIn("crontab.%s/kc1" % GROUP, self.ok("get", "all"))
        # the Table as the server sends it
        t = self.server.request("GET", "/apis/%s/v1/namespaces/default/crontabs" % GROUP, headers={
            "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
        self.assertEqual([c["name"] for c in t["columnDefinitions"]],
                         ["Name", "Spec", "Replicas", "Age"])
        self.assertEqual(t["columnDefinitions"][2]["type"], "integer")
        self.ok("delete", "ct", "kc1")

    def test_default_age_column(self):
        crd = crontab_crd(plural="plains", kind="Plain", short=())
        del crd["spec"]["versions"][0]["additionalPrinterColumns"]
        # not in "all": kubectl's discovery cache would still expand it after the delete
        crd["spec"]["names"]["categories"] = []
        self.req("POST", CRDS, crd, want=201)
        self.ok("wait", "--for", "condition=established", "crd/plains." + GROUP, "--timeout=20s")
        o = crontab("p1")
        o["kind"] = "Plain"
        self.req("POST", "/apis/%s/v1/namespaces/default/plains" % GROUP, o, want=201)
        out = self.ok("get", "plains")
        self.assertEqual(out.splitlines()[0].split(), ["NAME", "AGE"])
        # deleting the CRD stops serving the kind
        self.ok("delete", "crd", "plains." + GROUP)
        wait_until(lambda: self.server.request(
            "GET", "/apis/%s/v1/namespaces/default/plains" % GROUP).status == 404,
            what="plains no longer served")
        res = self.req("GET", "/apis/%s/v1" % GROUP, want=200).json()["resources"]
        self.assertNotIn("plains", [r["name"] for r in res])

    def test_python_client_create_list_watch_patch(self):
        ns = "default"
        created = self.custom.create_namespaced_custom_object(GROUP, "v1", ns, "crontabs",
                                                              crontab("py1", labels={"app": "a"}))
        self.assertEqual(created["metadata"]["generation"], 1)
        self.assertNotIn("status", created, "create drops the status with a status subresource")
        self.custom.create_namespaced_custom_object(GROUP, "v1", ns, "crontabs",
                                                    crontab("py2", cron="0 * * * *",
                                                            labels={"app": "b"}))
        lst = self.custom.list_namespaced_custom_object(GROUP, "v1", ns, "crontabs",
                                                        label_selector="app=a")
        self.assertEqual([o["metadata"]["name"] for o in lst["items"]], ["py1"])
        lst = self.custom.list_namespaced_custom_object(GROUP, "v1", ns, "crontabs",
                                                        field_selector="spec.cronSpec=0 * * * *")
        self.assertEqual([o["metadata"]["name"] for o in lst["items"]], ["py2"])
        lst = self.custom.list_namespaced_custom_object(GROUP, "v1", ns, "crontabs",
                                                        field_selector="spec.replicas!=1")
        self.assertEqual(lst["items"], [], "an integer field selects by its decimal text")
        lst = self.custom.list_namespaced_custom_object(GROUP, "v1", ns, "crontabs",
                                                        field_selector="spec.replicas=1")
        self.assertEqual(len(lst["items"]), 2)
        r = self.req("GET", "/apis/%s/v1/namespaces/default/crontabs?fieldSelector=spec.image%%3Dx"
                     % GROUP)
        self.assertEqual(r.status, 400, "only selectableFields select")
        # paging
        page = self.custom.list_namespaced_custom_object(GROUP, "v1", ns, "crontabs", limit=1)
        self.assertEqual(len(page["items"]), 1)
        self.assertTrue(page["metadata"]["continue"])
        rest = self.custom.list_namespaced_custom_object(GROUP, "v1", ns, "crontabs", limit=10,
                                                         _continue=page["metadata"]["continue"])
        self.assertNotIn(page["items"][0]["metadata"]["name"],
                         [o["metadata"]["name"] for o in rest["items"]])

        # watch from the list's revision: a patch arrives as MODIFIED
        rv = lst["metadata"]["resourceVersion"]
        events = []

        def run():
            w = watch.Watch()
            for ev in w.stream(self.custom.list_namespaced_custom_object, GROUP, "v1", ns,
                               "crontabs", resource_version=rv, timeout_seconds=10):
                events.append((ev["type"], ev["object"]["metadata"]["name"]))
                if ev["type"] == "MODIFIED":
                    w.stop()
        t = threading.Thread(target=run)
        t.start()
        patched = self.custom.patch_namespaced_custom_object(
            GROUP, "v1", ns, "crontabs", "py1", {"spec": {"replicas": 5}})
        t.join(15)
        self.assertIn(("MODIFIED", "py1"), events)
        self.assertEqual(patched["spec"]["replicas"], 5)
        self.assertEqual(patched["metadata"]["generation"], 2)

        # status: spec ignored there, status ignored on the main resource
        st = self.custom.patch_namespaced_custom_object_status(
            GROUP, "v1", ns, "crontabs", "py1",
            {"spec": {"replicas": 99}, "status": {"replicas": 2, "labelSelector": "app=a"}})
        self.assertEqual(st["status"]["replicas"], 2)
        self.assertEqual(st["spec"]["replicas"], 5)
        self.assertEqual(st["metadata"]["generation"], 2, "a status write is no new generation")
        main = self.custom.patch_namespaced_custom_object(
            GROUP, "v1", ns, "crontabs", "py1", {"status": {"replicas": 50}})
        self.assertEqual(main["status"]["replicas"], 2)
        self.assertEqual(main["metadata"]["generation"], 2)

        # scale
        sc = self.custom.get_namespaced_custom_object_scale(GROUP, "v1", ns, "crontabs", "py1")
        self.assertEqual((sc["kind"], sc["apiVersion"]), ("Scale", "autoscaling/v1"))
        self.assertEqual(sc["spec"]["replicas"], 5)
        self.assertEqual(sc["status"], {"replicas": 2, "selector": "app=a"})
        sc = self.custom.patch_namespaced_custom_object_scale(
            GROUP, "v1", ns, "crontabs", "py1", {"spec": {"replicas": 7}})
        self.assertEqual(sc["spec"]["replicas"], 7)
        obj = self.custom.get_namespaced_custom_object(GROUP, "v1", ns, "crontabs", "py1")
        self.assertEqual(obj["spec"]["replicas"], 7)
        self.assertEqual(obj["metadata"]["generation"], 3)
        self.ok("scale", "ct", "py1", "--replicas=1")
        self.assertEqual(self.get_json("ct", "py1")["spec"]["replicas"], 1)

        for name in ("py1", "py2"):
            self.custom.delete_namespaced_custom_object(GROUP, "v1", ns, "crontabs", name)
        with self.assertRaises(ApiException) as cm:
            self.custom.get_namespaced_custom_object(GROUP, "v1", ns, "crontabs", "py1")
        self.assertEqual(cm.exception.status, 404)

    def test_versions_share_one_storage(self):
        base = "/apis/%s/%%s/namespaces/default/crontabs" % GROUP
        made = self.req("POST", base % "v1beta1", crontab("mv", version="v1beta1"), want=201).json()
        self.assertEqual(made["apiVersion"], GROUP + "/v1beta1")
        got = self.req("GET", base % "v1" + "/mv", want=200).json()
        self.assertEqual(got["apiVersion"], GROUP + "/v1")
        self.assertEqual(got["metadata"]["uid"], made["metadata"]["uid"])
        self.assertIn("mv", self.items(base % "v1"))
        self.assertIn("mv", self.items(base % "v1beta1"))
        # no protobuf form: a client that also accepts JSON gets JSON
        r = self.server.request("GET", base % "v1", headers={
            "Accept": "application/vnd.kubernetes.protobuf, application/json"})
        self.assertEqual(r.status, 200)
        self.assertTrue(r.headers.get("content-type", "").startswith("application/json"),
                        r.headers)
        self.assertIn("mv", [o["metadata"]["name"] for o in r.json()["items"]])
        gone = self.req("DELETE", base % "v1" + "/mv", want=200).json()
        self.assertEqual((gone["kind"], gone["details"]["name"], gone["details"]["group"]),
                         ("Status", "mv", GROUP), "a custom resource's DELETE answers a Status")
        self.assertEqual(self.req("GET", base % "v1beta1" + "/mv").status, 404)

    def test_delete_crd_deletes_its_objects(self):
        crd = crontab_crd(plural="gadgets", kind="Gadget", short=())
        crd["spec"]["names"]["categories"] = []
        self.req("POST", CRDS, crd, want=201)
        self.ok("wait", "--for", "condition=established", "crd/gadgets." + GROUP, "--timeout=20s")
        url = "/apis/%s/v1/namespaces/default/gadgets" % GROUP
        for name in ("g1", "g2"):
            o = crontab(name)
            o["kind"] = "Gadget"
            self.req("POST", url, o, want=201)
        held = crontab("held")
        held["kind"] = "Gadget"
        held["metadata"]["finalizers"] = ["example.com/hold"]
        self.req("POST", url, held, want=201)
        d = self.req("DELETE", CRDS + "/gadgets." + GROUP, want=200).json()
        self.assertIn("customresourcecleanup.apiextensions.k8s.io", d["metadata"]["finalizers"])
        self.assertIn("deletionTimestamp", d["metadata"])
        self.assertEqual(condition(d, "Terminating")["reason"], "InstanceDeletionPending")
        # the objects go; the one with a finalizer of its own is marked and waited for
        wait_until(lambda: self.items(url) == ["held"], what="g1 and g2 deleted")
        o = self.req("GET", url + "/held", want=200).json()
        self.assertIn("deletionTimestamp", o["metadata"])
        r = self.req("POST", url, dict(crontab("g3"), kind="Gadget"), want=405)
        self.assertEqual(r.json()["message"],
                         "create not allowed while custom resource definition is terminating")
        # the controller marks the CRD once it has begun deleting (its own
        # write, which a loaded machine may show a moment after the objects go)
        wait_until(lambda: condition(self.req("GET", CRDS + "/gadgets." + GROUP, want=200).json(),
                                     "Terminating")["reason"] == "InstanceDeletionInProgress",
                   what="the CRD's Terminating condition to say InstanceDeletionInProgress")
        # releasing the last object lets the CRD go
        self.req("PATCH", url + "/held", {"metadata": {"finalizers": None}},
                 ctype="application/merge-patch+json", want=200)
        wait_until(lambda: self.server.request("GET", CRDS + "/gadgets." + GROUP).status == 404,
                   what="the CRD removed")
        wait_until(lambda: self.server.request("GET", url).status == 404,
                   what="gadgets no longer served")

    def test_served_when_created_and_gone_when_deleted_100_times(self):
        # A CRD write is answered once its resources are served (or, after a
        # delete, refuse creates), so the next request finds them; once the
        # CRD is gone its paths and discovery are too; re-created with the
        # other scope, the kind is served at its new paths at once (issue 43,
        # item 3).
        group = "loop.example.com"
        crd = crontab_crd(plural="loops", kind="Loop", short=(), group=group)
        crd["spec"]["versions"] = crd["spec"]["versions"][:1]
        name = "loops." + group
        failures = []
        for i in range(100):
            scope = "Namespaced" if i % 2 == 0 else "Cluster"
            crd["spec"]["scope"] = scope
            r = self.req("POST", CRDS, crd)
            if r.status != 201:
                failures.append((i, "create CRD", r.status, r.body[:200]))
                break
            base = "/apis/%s/v1/%sloops" % (group, "namespaces/default/" if scope == "Namespaced"
                                              else "")
            obj = {"apiVersion": group + "/v1", "kind": "Loop", "metadata": {"name": "l%d" % i},
                   "spec": {"replicas": i}}
            r = self.req("POST", base, obj)
            if r.status != 201:
                failures.append((i, "create CR", scope, r.status, r.body[:200]))
            found = [x["name"] for x in self.req("GET", "/apis/%s/v1" % group).json().get(
                "resources", [])]
            if "loops" not in found:
                failures.append((i, "discovery", found))
            r = self.req("DELETE", CRDS + "/" + name)
            if r.status not in (200, 202):
                failures.append((i, "delete CRD", r.status, r.body[:200]))
            # Terminating when the delete returns, as in kube: no new objects
            r = self.req("POST", base, dict(obj, metadata={"name": "late%d" % i}))
            if r.status != 405:
                failures.append((i, "create after the CRD's delete returned", r.status))
            # once the CRD is gone (kubectl delete waits for that), so is all of it
            wait_until(lambda: self.req("GET", CRDS + "/" + name).status == 404, timeout=10,
                       interval=0.01, what="the CRD gone")
            r = self.req("GET", base)
            if r.status != 404:
                failures.append((i, "served once the CRD is gone", r.status))
            r = self.req("GET", "/apis")
            if group in [g["name"] for g in r.json()["groups"]]:
                failures.append((i, "group in discovery once the CRD is gone"))
            if len(failures) > 5:
                break
        self.assertEqual(failures, [])

    def test_kubectl_delete_of_a_crd_and_its_objects(self):
        # kubectl delete -f of a bundle naming the CRD first and then its
        # objects deletes those itself, as against kube-apiserver: the CRD's
        # delete answers Terminating and its objects stay served for deletes
        # a moment (kubectl's test/cmd apply case runs exactly this).
        group = "bundle.example.com"
        crd = crontab_crd(plural="widgets", kind="Widget", short=(), group=group)
        crd["spec"]["versions"] = crd["spec"]["versions"][:1]
        widget = {"apiVersion": group + "/v1", "kind": "Widget",
                  "metadata": {"name": "foo", "namespace": "default"}, "spec": {"replicas": 1}}
        path = self.write("bundle.json", {"apiVersion": "v1", "kind": "List",
                                          "items": [crd, widget]})
        for i in range(3):
            # kubectl maps a file's kinds before it applies any (so a CRD and
            # its objects are applied in two steps, against kube as here)
            cache = ["--cache-dir", os.path.join(self.tmp, "kubectl-cache-bundle-%d" % i)]
            self.ok(*cache, "apply", "-f", self.write("bundle-crd.json", crd))
            self.ok(*cache, "apply", "-f", self.write("bundle-widget.json", widget))
            out = self.ok(*cache, "delete", "-f", path)
            self.assertIn('customresourcedefinition.apiextensions.k8s.io "widgets.%s" deleted'
                          % group, out)
            self.assertIn('widget.%s "foo" deleted' % group, out)

    def test_kubectl_apply_crd_then_cr_and_rescope(self):
        # How Helm charts and operator installs run: no wait in between; then
        # the CRD deleted and re-created with the other scope. Each round's
        # kubectl starts with no discovery cache, as a fresh Helm or kubectl
        # process on another machine would (a cache kept from the last round
        # would name the old scope against any server).
        group = "rescope.example.com"
        crd = crontab_crd(plural="scopes", kind="Scope", short=(), group=group)
        crd["spec"]["versions"] = crd["spec"]["versions"][:1]
        for i, scope in enumerate(("Namespaced", "Cluster", "Namespaced")):
            crd["spec"]["scope"] = scope
            obj = {"apiVersion": group + "/v1", "kind": "Scope", "metadata": {"name": "s%d" % i},
                   "spec": {"replicas": i}}
            path = self.write("rescope-%d.json" % i, {"apiVersion": "v1", "kind": "List",
                                                     "items": [crd]})
            cache = ["--cache-dir", os.path.join(self.tmp, "kubectl-cache-%d" % i)]
            self.ok(*cache, "apply", "-f", path)
            out = self.ok(*cache, "apply", "-f", self.write("rescope-cr-%d.json" % i, obj))
            self.assertIn("scope.%s/s%d created" % (group, i), out)
            got = self.get_json(*cache, "scopes.%s" % group, "s%d" % i)
            self.assertEqual(got["metadata"].get("namespace") is not None,
                             scope == "Namespaced", got["metadata"])
            self.ok(*cache, "delete", "crd", "scopes." + group)

    def test_wrong_kind_and_missing_namespace(self):
        url = "/apis/%s/v1/namespaces/default/crontabs" % GROUP
        o = crontab("wk")
        o["kind"] = "Other"
        self.assertEqual(self.req("POST", url, o).status, 400)
        r = self.req("POST", "/apis/%s/v1/namespaces/nope/crontabs" % GROUP, crontab("x"))
        self.assertEqual(r.status, 404)


class CustomResourcesRestart(ServerTestCase, unittest.TestCase):
    """After a restart, /readyz passes only once the stored CRDs are served again."""

    def test_served_when_ready_after_restart(self):
        s = self.server
        self.assertEqual(s.request("POST", CRDS, crontab_crd()).status, 201)
        url = "/apis/%s/v1/namespaces/default/crontabs" % GROUP
        wait_until(lambda: s.request("GET", url).status == 200, what="served")
        self.assertEqual(s.request("POST", url, crontab("kept")).status, 201)
        s.restart()  # returns once /readyz passes
        r = s.request("GET", url + "/kept")
        self.assertEqual(r.status, 200, r.body[:300])
        ready = s.request("GET", "/readyz?verbose").body.decode()
        self.assertIn("[+]poststarthook/crd-informer-synced ok", ready)


class CustomResourcesAcrossInstances(unittest.TestCase):
    """Two sqlkube processes on one PostgreSQL: a CRD made on one serves on the other."""

    def test_crd_on_one_serves_on_other(self):
        if CONFIG.backend != "postgres":
            self.skipTest("needs a shared PostgreSQL")
        a = Server("crd-a")
        b = Server("crd-b", db_url=a.db_url)
        try:
            a.start()
            b.start()
            r = a.request("POST", CRDS, crontab_crd())
            self.assertEqual(r.status, 201, r)
            url = "/apis/%s/v1/namespaces/default/crontabs" % GROUP
            # The goal is 50 ms (measured: a few ms); a second leaves room for
            # a loaded machine while still failing the old polling.
            start = time.monotonic()
            wait_until(lambda: b.request("GET", url).status == 200, timeout=20,
                       what="the CRD served on the second instance")
            self.assertLess(time.monotonic() - start, 1.0)
            r = b.request("POST", url, crontab("xi"))
            self.assertEqual(r.status, 201, r)
            wait_until(lambda: a.request("GET", url + "/xi").status == 200, timeout=20,
                       what="the object read on the first instance")
            res = b.request("GET", "/apis/%s/v1" % GROUP).json()["resources"]
            self.assertIn("crontabs", [x["name"] for x in res])
        finally:
            b.cleanup()
            a.cleanup()


if __name__ == "__main__":
    unittest.main()
