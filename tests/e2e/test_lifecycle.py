"""Object lifecycle: finalizers, graceful deletion, propagation policies,
garbage collection and namespace termination, through raw HTTP, kubectl
and the Python client.

Covers: a delete of an object with finalizers marks it (deletionTimestamp,
deletionGracePeriodSeconds 0) and keeps it readable; a watcher sees
MODIFIED then DELETED when the last finalizer goes; no new finalizers once
deleting; preconditions (uid, resourceVersion) answer kube's 409; the
propagation policy leaves `orphan` / `foregroundDeletion`; DeleteOptions
errors; namespaces: Terminating with kube's conditions while content is
held by a finalizer, 403 for creates in a terminating namespace, the
`kubernetes` finalizer dropped once empty, the four immortal namespaces,
the default ServiceAccount; the garbage collector: Background, Foreground
(blockOwnerDeletion), Orphan, dangling owners, cluster-scoped owners of
namespaced dependents, invalid cross-scope references ignored,
deletecollection with a policy, a deletion that carries on across a
restart, a collector that lost track of the changes (a tiny watch cache
window) reading everything again, and two instances on one PostgreSQL
deleting each object once.
Why: every controller and operator relies on these; before them a
finalizer was ignored and deleting an owner left its dependents forever.
"""

import json
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import CONFIG, Server, ServerTestCase, describe, sql, wait_until  # noqa: E402
from test_kubectl import KubectlMixin  # noqa: E402

from kubernetes import client, config  # noqa: E402
from kubernetes import watch as watch_mod  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

CMS = "/api/v1/namespaces/%s/configmaps"
HOLD = "example.com/hold"


class Lifecycle(KubectlMixin, ServerTestCase, unittest.TestCase):
    def setUp(self):
        super().setUp()
        config.load_kube_config(config_file=self.server.kubeconfig)
        self.api = client.ApiClient()
        self.core = client.CoreV1Api(self.api)
        self.apps = client.AppsV1Api(self.api)

    def tearDown(self):
        self.api.close()
        super().tearDown()

    def req(self, method, path, body=None, want=None, ctype="application/json"):
        data = body if isinstance(body, (str, bytes)) or body is None else json.dumps(body)
        r = self.server.request(method, path, data, headers={"Content-Type": ctype})
        if want is not None:
            self.assertEqual(r.status, want, "%s %s: %s" % (method, path, r.body[:600]))
        return r

    def ns(self, name):
        self.req("POST", "/api/v1/namespaces", {"metadata": {"name": name}}, want=201)
        return name

    def cm(self, ns, name, **meta):
        m = {"name": name}
        m.update(meta)
        return self.req("POST", CMS % ns, {"metadata": m}, want=201).json()

    def get(self, path):
        return self.req("GET", path)

    def gone(self, path):
        return self.get(path).status == 404

    # --- finalizers and graceful deletion -------------------------------------

    def test_finalizer_keeps_object_until_removed(self):
        ns = self.ns("fin")
        self.cm(ns, "held", finalizers=[HOLD])
        events = []
        rv = self.get(CMS % ns).json()["metadata"]["resourceVersion"]

        def watch():
            w = watch_mod.Watch()
            for ev in w.stream(self.core.list_namespaced_config_map, ns, resource_version=rv,
                               timeout_seconds=20):
                events.append((ev["type"], ev["object"].metadata))
                if ev["type"] == "DELETED":
                    w.stop()
        t = threading.Thread(target=watch, daemon=True)
        t.start()
        got = self.req("DELETE", CMS % ns + "/held", want=200).json()
        self.assertIn("deletionTimestamp", got["metadata"])
        self.assertEqual(got["metadata"]["deletionGracePeriodSeconds"], 0)
        # still readable; a second delete changes nothing
        again = self.req("DELETE", CMS % ns + "/held", want=200).json()
        self.assertEqual(again["metadata"]["resourceVersion"], got["metadata"]["resourceVersion"])
        self.assertEqual(self.get(CMS % ns + "/held").status, 200)
        # no new finalizers once deleting
        r = self.req("PATCH", CMS % ns + "/held",
                     {"metadata": {"finalizers": [HOLD, "example.com/other"]}}, want=422,
                     ctype="application/merge-patch+json")
        self.assertIn("no new finalizers can be added if the object is being deleted, found new "
                      "finalizers []string{\"example.com/other\"}", r.json()["message"])
        # other edits are fine while deleting
        self.req("PATCH", CMS % ns + "/held", {"data": {"k": "v"}}, want=200,
                 ctype="application/merge-patch+json")
        # dropping the last finalizer removes it
        self.req("PATCH", CMS % ns + "/held", {"metadata": {"finalizers": None}}, want=200,
                 ctype="application/merge-patch+json")
        self.assertTrue(self.gone(CMS % ns + "/held"))
        t.join(20)
        types = [e[0] for e in events]
        self.assertEqual(types, ["MODIFIED", "MODIFIED", "DELETED"], events)
        self.assertIsNotNone(events[0][1].deletion_timestamp)

    def test_preconditions(self):
        ns = self.ns("pre")
        obj = self.cm(ns, "p")
        r = self.req("DELETE", CMS % ns + "/p", {"preconditions": {"uid": "nope"}}, want=409)
        self.assertEqual(r.json()["message"],
                         'Operation cannot be fulfilled on ConfigMap "p": Precondition failed: '
                         'UID in precondition: nope, UID in object meta: %s'
                         % obj["metadata"]["uid"])
        r = self.req("DELETE", CMS % ns + "/p", {"preconditions": {"resourceVersion": "1"}},
                     want=409)
        self.assertIn("Precondition failed: ResourceVersion in precondition: 1", r.json()["message"])
        self.req("DELETE", CMS % ns + "/p",
                 {"preconditions": {"uid": obj["metadata"]["uid"],
                                    "resourceVersion": obj["metadata"]["resourceVersion"]}},
                 want=200)
        self.assertTrue(self.gone(CMS % ns + "/p"))

    def test_propagation_finalizers_and_bad_options(self):
        ns = self.ns("prop")
        self.cm(ns, "o", finalizers=[HOLD])
        got = self.req("DELETE", CMS % ns + "/o?propagationPolicy=Orphan", want=200).json()
        self.assertEqual(got["metadata"]["finalizers"], [HOLD, "orphan"])
        self.cm(ns, "f", finalizers=[HOLD])
        got = self.req("DELETE", CMS % ns + "/f", {"propagationPolicy": "Foreground"},
                       want=200).json()
        self.assertEqual(got["metadata"]["finalizers"], [HOLD, "foregroundDeletion"])
        # orphanDependents=false is a cascading delete: 202 while the object stays
        self.cm(ns, "c", finalizers=[HOLD])
        self.req("DELETE", CMS % ns + "/c", {"orphanDependents": False}, want=202)
        r = self.req("DELETE", CMS % ns + "/x", {"propagationPolicy": "Sideways"}, want=422)
        self.assertEqual(r.json()["message"],
                         'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported '
                         'value: "Sideways": supported values: "Foreground", "Background", '
                         '"Orphan", "nil"')
        r = self.req("DELETE", CMS % ns + "/x",
                     {"propagationPolicy": "Orphan", "orphanDependents": True}, want=422)
        self.assertIn("orphanDependents and deletionPropagation cannot be both set",
                      r.json()["message"])
        self.req("DELETE", CMS % ns + "/x?gracePeriodSeconds=soon", want=400)
        # orphanDependents from the query, as generated clients send it
        self.cm(ns, "q", finalizers=[HOLD])
        got = self.req("DELETE", CMS % ns + "/q?orphanDependents=true", want=200).json()
        self.assertEqual(got["metadata"]["finalizers"], [HOLD, "orphan"])
        r = self.req("DELETE", CMS % ns + "/q?orphanDependents=notabool", want=400)
        self.assertIn('strconv.ParseBool: parsing "notabool": invalid syntax', r.json()["message"])

    def test_pod_graceful_deletion_with_finalizer(self):
        ns = self.ns("podfin")
        pod = {"metadata": {"name": "p", "finalizers": [HOLD]},
               "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}}
        self.req("POST", "/api/v1/namespaces/%s/pods" % ns, pod, want=201)
        got = self.req("DELETE", "/api/v1/namespaces/%s/pods/p" % ns, want=200).json()
        self.assertEqual(got["metadata"]["deletionGracePeriodSeconds"], 30)
        # the kubelet's final delete (grace 0) keeps it for its finalizer
        got = self.req("DELETE", "/api/v1/namespaces/%s/pods/p?gracePeriodSeconds=0" % ns,
                       want=200).json()
        self.assertEqual(got["metadata"]["deletionGracePeriodSeconds"], 0)
        self.req("PATCH", "/api/v1/namespaces/%s/pods/p" % ns,
                 {"metadata": {"finalizers": None}}, want=200,
                 ctype="application/merge-patch+json")
        self.assertTrue(self.gone("/api/v1/namespaces/%s/pods/p" % ns))

    def test_delete_answers_as_kube(self):
        """A removal answers what the kind's store answers in kube 1.32: a
        Status Success naming it (details.kind is the resource), or the
        removed object for the kinds that return it (services here); a
        marked object is answered as it now is."""
        ns = self.ns("answers")
        uid = self.cm(ns, "plain")["metadata"]["uid"]
        got = self.req("DELETE", CMS % ns + "/plain", want=200).json()
        self.assertEqual(got, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                               "status": "Success",
                               "details": {"name": "plain", "kind": "configmaps", "uid": uid}})
        deploy = {"metadata": {"name": "d"}, "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
        path = "/apis/apps/v1/namespaces/%s/deployments" % ns
        self.req("POST", path, deploy, want=201)
        got = self.req("DELETE", path + "/d", want=200).json()
        self.assertEqual((got["kind"], got["details"]["group"], got["details"]["kind"]),
                         ("Status", "apps", "deployments"))
        svc = {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
        self.req("POST", "/api/v1/namespaces/%s/services" % ns, svc, want=201)
        got = self.req("DELETE", "/api/v1/namespaces/%s/services/s" % ns, want=200).json()
        self.assertEqual((got["kind"], got["metadata"]["name"]), ("Service", "s"))

    def test_python_client_finalizer_cycle(self):
        ns = self.ns("pyfin")
        body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py", finalizers=[HOLD]))
        self.core.create_namespaced_config_map(ns, body)
        self.core.delete_namespaced_config_map("py", ns)
        cm = self.core.read_namespaced_config_map("py", ns)
        self.assertIsNotNone(cm.metadata.deletion_timestamp)
        self.core.patch_namespaced_config_map("py", ns, {"metadata": {"finalizers": None}})
        with self.assertRaises(ApiException) as e:
            self.core.read_namespaced_config_map("py", ns)
        self.assertEqual(e.exception.status, 404)

    # --- namespaces -------------------------------------------------------------

    def test_namespace_termination(self):
        ns = self.ns("term")
        for i in range(3):
            self.cm(ns, "c%d" % i)
        self.cm(ns, "held", finalizers=[HOLD])
        got = self.req("DELETE", "/api/v1/namespaces/" + ns, want=200).json()
        self.assertEqual(got["status"]["phase"], "Terminating")
        self.assertEqual(got["spec"]["finalizers"], ["kubernetes"])

        def held_only():
            items = self.get(CMS % ns).json()["items"]
            return [i["metadata"]["name"] for i in items] == ["held"]
        wait_until(held_only, timeout=20, what="all but the held object deleted")

        def conditions():
            st = self.get("/api/v1/namespaces/" + ns).json()["status"]
            return {c["type"]: c for c in st.get("conditions", [])}
        wait_until(lambda: "NamespaceFinalizersRemaining" in conditions(), timeout=20,
                   what="namespace conditions")
        c = conditions()
        self.assertEqual(c["NamespaceContentRemaining"]["status"], "True")
        self.assertEqual(c["NamespaceContentRemaining"]["message"],
                         "Some resources are remaining: configmaps. has 1 resource instances")
        self.assertEqual(c["NamespaceFinalizersRemaining"]["message"],
                         "Some content in the namespace has finalizers remaining: "
                         "example.com/hold in 1 resource instances")
        self.assertEqual(c["NamespaceDeletionContentFailure"]["reason"], "ContentDeleted")
        # recorded as kube records its namespace controller's /status writes
        entry = [e for e in self.get("/api/v1/namespaces/" + ns).json()["metadata"][
            "managedFields"] if e["manager"] == "kube-controller-manager"]
        self.assertEqual([(e["operation"], e["subresource"], e["apiVersion"]) for e in entry],
                         [("Update", "status", "v1")], entry)
        self.assertIn("f:conditions", entry[0]["fieldsV1"]["f:status"])
        # nothing new goes in
        r = self.req("POST", CMS % ns, {"metadata": {"name": "late"}}, want=403)
        self.assertEqual(r.json()["message"],
                         'configmaps "late" is forbidden: unable to create new content in '
                         'namespace term because it is being terminated')
        self.assertEqual(r.json()["details"]["causes"][0]["reason"], "NamespaceTerminating")
        # the held object is marked, not removed; dropping its finalizer ends it all
        held = self.get(CMS % ns + "/held").json()
        self.assertIn("deletionTimestamp", held["metadata"])
        self.req("PATCH", CMS % ns + "/held", {"metadata": {"finalizers": None}}, want=200,
                 ctype="application/merge-patch+json")
        wait_until(lambda: self.gone("/api/v1/namespaces/" + ns), timeout=20,
                   what="namespace to go")

    def test_immortal_namespaces(self):
        for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
            r = self.req("DELETE", "/api/v1/namespaces/" + name, want=403)
            self.assertEqual(r.json()["message"],
                             'namespaces "%s" is forbidden: this namespace may not be deleted'
                             % name)
            self.assertEqual(r.json()["reason"], "Forbidden")

    def test_default_service_account(self):
        ns = self.ns("withsa")
        wait_until(lambda: self.get("/api/v1/namespaces/%s/serviceaccounts/default" % ns).status
                   == 200, timeout=10, what="default ServiceAccount")
        self.assertEqual(self.get("/api/v1/namespaces/" + ns).json()["metadata"]["labels"],
                         {"kubernetes.io/metadata.name": ns})
        # deleted, it comes back
        self.req("DELETE", "/api/v1/namespaces/%s/serviceaccounts/default" % ns, want=200)
        wait_until(lambda: self.get("/api/v1/namespaces/%s/serviceaccounts/default" % ns).status
                   == 200, timeout=10, what="default ServiceAccount again")

    def test_kubectl_delete_namespace_waits(self):
        ns = self.ns("kdel")
        self.cm(ns, "a")
        p = self.k("delete", "ns", ns, "--timeout=60s")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertTrue(self.gone("/api/v1/namespaces/" + ns))

    # --- garbage collection -----------------------------------------------------

    def owned(self, ns, name, owner, block=False, **meta):
        ref = {"apiVersion": owner.get("apiVersion", "v1"), "kind": owner.get("kind", "ConfigMap"),
               "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}
        if block:
            ref["blockOwnerDeletion"] = True
        return self.cm(ns, name, ownerReferences=[ref], **meta)

    def names(self, ns):
        return sorted(i["metadata"]["name"] for i in self.get(CMS % ns).json()["items"])

    def test_gc_background_and_dangling(self):
        ns = self.ns("gcbg")
        owner = self.cm(ns, "owner")
        for i in range(3):
            self.owned(ns, "dep%d" % i, owner)
        other = self.cm(ns, "other")
        both = {"apiVersion": "v1", "kind": "ConfigMap"}
        self.cm(ns, "shared", ownerReferences=[
            dict(both, name="owner", uid=owner["metadata"]["uid"]),
            dict(both, name="other", uid=other["metadata"]["uid"])])
        # an owner uid that never existed: collected
        self.cm(ns, "dangling", ownerReferences=[dict(both, name="ghost", uid="no-such-uid")])
        wait_until(lambda: "dangling" not in self.names(ns), timeout=20, what="dangling collected")
        self.req("DELETE", CMS % ns + "/owner", want=200)
        wait_until(lambda: self.names(ns) == ["other", "shared"], timeout=20,
                   what="dependents collected")
        # the dependent with another live owner only loses the reference
        refs = self.get(CMS % ns + "/shared").json()["metadata"]["ownerReferences"]
        self.assertEqual([r["name"] for r in refs], ["other"])

    def test_gc_follows_updated_references(self):
        """The collector keeps what it read of each object version between
        passes; a new version is read again. A reference added by an update
        to an owner that is gone is collected; a reference taken off by an
        update no longer holds the object to its owner."""
        ns = self.ns("gcup")
        gone = self.cm(ns, "gone")
        owner = self.cm(ns, "owner")
        late = self.cm(ns, "late")
        freed = self.owned(ns, "freed", owner)
        self.req("DELETE", CMS % ns + "/gone", want=200)
        time.sleep(2.5)  # passes have read "late" and "freed" as they were
        self.assertEqual(self.names(ns), ["freed", "late", "owner"])
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "gone",
               "uid": gone["metadata"]["uid"]}
        self.req("PATCH", CMS % ns + "/late", {"metadata": {"ownerReferences": [ref]}},
                 want=200, ctype="application/merge-patch+json")
        self.req("PATCH", CMS % ns + "/freed", {"metadata": {"ownerReferences": None}},
                 want=200, ctype="application/merge-patch+json")
        wait_until(lambda: "late" not in self.names(ns), timeout=20, what="late collected")
        self.req("DELETE", CMS % ns + "/owner", want=200)
        time.sleep(2.5)
        self.assertEqual(self.names(ns), ["freed"])
        self.assertEqual(self.get(CMS % ns + "/freed").json()["metadata"]["uid"],
                         freed["metadata"]["uid"])

    def test_gc_foreground_waits_for_blocking_dependents(self):
        ns = self.ns("gcfg")
        owner = self.cm(ns, "owner")
        self.owned(ns, "blocker", owner, block=True, finalizers=[HOLD])
        self.owned(ns, "plain", owner)
        got = self.req("DELETE", CMS % ns + "/owner", {"propagationPolicy": "Foreground"},
                       want=200).json()
        self.assertEqual(got["metadata"]["finalizers"], ["foregroundDeletion"])
        wait_until(lambda: "plain" not in self.names(ns), timeout=20, what="plain dependent")
        blocker = self.get(CMS % ns + "/blocker").json()
        self.assertIn("deletionTimestamp", blocker["metadata"])
        # the owner waits for its blocking dependent ...
        time.sleep(1.5)
        self.assertIn("owner", self.names(ns))
        # ... across a restart too
        self.server.restart()
        self.assertIn("owner", self.names(ns))
        self.req("PATCH", CMS % ns + "/blocker", {"metadata": {"finalizers": None}}, want=200,
                 ctype="application/merge-patch+json")
        wait_until(lambda: self.names(ns) == [], timeout=20, what="owner after its dependents")

    def test_gc_orphan(self):
        ns = self.ns("gcor")
        owner = self.cm(ns, "owner")
        self.owned(ns, "kept", owner)
        self.req("DELETE", CMS % ns + "/owner?propagationPolicy=Orphan", want=200)
        wait_until(lambda: self.names(ns) == ["kept"], timeout=20, what="owner gone, dependent kept")
        self.assertNotIn("ownerReferences", self.get(CMS % ns + "/kept").json()["metadata"])

    def test_gc_cluster_scoped_owner_and_invalid_reference(self):
        ns = self.ns("gccl")
        role = self.req("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                        {"metadata": {"name": "gc-owner-role"}, "rules": []}, want=201).json()
        self.owned(ns, "by-role", role)
        # a cluster-scoped dependent with a namespaced owner kind: never collected
        cm_owner = self.cm(ns, "cm-owner")
        self.req("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                 {"metadata": {"name": "gc-invalid-dep", "ownerReferences": [{
                     "apiVersion": "v1", "kind": "ConfigMap", "name": "cm-owner",
                     "uid": cm_owner["metadata"]["uid"]}]}, "rules": []}, want=201)
        self.req("DELETE", CMS % ns + "/cm-owner", want=200)
        self.req("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/gc-owner-role",
                 want=200)
        wait_until(lambda: "by-role" not in self.names(ns), timeout=20,
                   what="dependent of a cluster-scoped owner")
        time.sleep(1.5)
        self.req("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/gc-invalid-dep", want=200)

    def test_gc_kubectl_cascade(self):
        ns = self.ns("gckc")
        for mode in ("background", "foreground", "orphan"):
            owner = self.cm(ns, "o-" + mode)
            self.owned(ns, "d-" + mode, owner, block=True)
            p = self.k("delete", "cm", "o-" + mode, "-n", ns, "--cascade=" + mode)
            self.assertEqual(p.returncode, 0, describe(p))
        wait_until(lambda: self.names(ns) == ["d-orphan"], timeout=20,
                   what="cascade results")

    def test_gc_deletecollection_with_policy(self):
        ns = self.ns("gcdc")
        owner = self.cm(ns, "owner", labels={"role": "owner"})
        self.owned(ns, "dep", owner)
        r = self.req("DELETE", CMS % ns + "?labelSelector=role%3Downer",
                     {"propagationPolicy": "Orphan"}, want=200)
        self.assertEqual(len(r.json()["items"]), 1)
        wait_until(lambda: self.names(ns) == ["dep"], timeout=20, what="owner orphaned its dependent")

    def test_gc_python_client_background(self):
        ns = self.ns("gcpy")
        owner = self.core.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owner")))
        ref = client.V1OwnerReference(api_version="v1", kind="ConfigMap", name="owner",
                                      uid=owner.metadata.uid)
        self.core.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="dep", owner_references=[ref])))
        self.core.delete_namespaced_config_map(
            "owner", ns, body=client.V1DeleteOptions(propagation_policy="Background"))
        wait_until(lambda: self.core.list_namespaced_config_map(ns).items == [], timeout=20,
                   what="dependent collected")

    def test_owner_reference_without_uid(self):
        ns = self.ns("gcbad")
        r = self.req("POST", CMS % ns, {"metadata": {"name": "x", "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "o"}]}}, want=422)
        self.assertIn("metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty",
                      r.json()["message"])


class LifecycleSmallWindow(unittest.TestCase):
    """The collector follows the store through the watch cache's window of
    changes and reads every resource again when the window no longer holds
    the changes since its last pass. With a window of 20 events and
    hundreds of writes between two passes (one a second), a dependent whose
    owner never existed, created among them, is still collected, and the
    log says the collector read everything again."""

    def setUp(self):
        self.srv = Server("gc-window", extra_args=["--watch-cache-events", "20"])
        self.srv.start()

    def tearDown(self):
        self.srv.cleanup()

    def create(self, ns, name, **meta):
        meta["name"] = name
        r = self.srv.request("POST", CMS % ns, {"metadata": meta})
        self.assertEqual(r.status, 201, r)

    def test_collects_after_the_window_moved_on(self):
        r = self.srv.request("POST", "/api/v1/namespaces", {"metadata": {"name": "gcw"}})
        self.assertEqual(r.status, 201, r)
        ghost = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "no-such-uid"}
        errors = []

        def fill(first):
            try:
                for i in range(first, 300, 6):
                    self.create("gcw", "fill%d" % i)
            except AssertionError as e:
                errors.append(e)

        def collected(name):
            return self.srv.request("GET", CMS % "gcw" + "/" + name).status == 404
        # the collector is running and in step with the store
        self.create("gcw", "canary", ownerReferences=[ghost])
        wait_until(lambda: collected("canary"), timeout=20, what="canary collected")
        self.create("gcw", "dangling", ownerReferences=[ghost])
        threads = [threading.Thread(target=fill, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        wait_until(lambda: collected("dangling"), timeout=20, what="dangling collected")
        items = self.srv.request("GET", CMS % "gcw").json()["items"]
        self.assertEqual(len(items), 300)
        wait_until(lambda: "reading every resource again" in self.srv.log_tail(200000),
                   timeout=10, what="the collector's full read in the log")


class LifecycleTwoInstances(unittest.TestCase):
    """Two servers sharing PostgreSQL run the garbage collector and the
    namespace controller side by side: every deletion happens exactly once."""

    def setUp(self):
        if CONFIG.backend != "postgres":
            self.skipTest("needs a shared PostgreSQL")
        self.a = Server("life-a")
        self.b = Server("life-b", db_url=self.a.db_url)
        self.a.start()
        self.b.start()

    def tearDown(self):
        self.b.cleanup()
        self.a.cleanup()

    def test_each_deletion_once(self):
        n = 60
        for srv, ns in ((self.a, "gc2"), (self.b, "ns2")):
            r = srv.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
            self.assertEqual(r.status, 201, r)
        owner = self.a.request("POST", CMS % "gc2", {"metadata": {"name": "owner"}}).json()
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
               "uid": owner["metadata"]["uid"]}
        for i in range(n):
            srv = (self.a, self.b)[i % 2]
            r = srv.request("POST", CMS % "gc2",
                            {"metadata": {"name": "d%d" % i, "ownerReferences": [ref]}})
            self.assertEqual(r.status, 201, r)
            r = srv.request("POST", CMS % "ns2", {"metadata": {"name": "c%d" % i}})
            self.assertEqual(r.status, 201, r)
        self.assertEqual(self.a.request("DELETE", CMS % "gc2" + "/owner").status, 200)
        self.assertEqual(self.b.request("DELETE", "/api/v1/namespaces/ns2").status, 200)

        def empty():
            return (self.b.request("GET", CMS % "gc2").json()["items"] == [] and
                    self.a.request("GET", "/api/v1/namespaces/ns2").status == 404)
        wait_until(empty, timeout=60, what="dependents and namespace gone")
        twice = sql(self.a, "SELECT namespace, name, count(*) FROM sk_history WHERE deleted AND "
                            "namespace IN ('gc2', 'ns2') GROUP BY namespace, name "
                            "HAVING count(*) > 1")
        self.assertEqual(twice, [])
        total = sql(self.a, "SELECT count(*) FROM sk_history WHERE deleted AND "
                            "resource = 'configmaps' AND namespace IN ('gc2', 'ns2')")
        self.assertEqual(int(total[0][0]), 2 * n + 1)


if __name__ == "__main__":
    unittest.main()
