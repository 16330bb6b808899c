"""RBAC: kube's bootstrap roles and bindings, clusterrole aggregation, and the
authorization.k8s.io/v1 reviews answered by the RBAC authorizer.

At start every server creates kube-apiserver 1.32's bootstrap policy
(src/kube/gen/rbac_bootstrap.json, generated from kube's own record of it by
scripts/gen_rbac_bootstrap.py): cluster-admin, admin, edit, view,
system:discovery, system:basic-user, system:public-info-viewer, ... and their
bindings, plus the kube-system/kube-public roles; an existing object is
reconciled (missing rules, subjects, labels put back) unless it is annotated
rbac.authorization.kubernetes.io/autoupdate=false. /readyz waits for it
(poststarthook/rbac/bootstrap-roles). ClusterRoles with an aggregationRule get
the rules of the ClusterRoles their selectors match, so view flows into edit and
edit into admin. SubjectAccessReview and LocalSubjectAccessReview (user and
groups in the body) are decided by the same authorizer a request with an
identity meets: system:masters, then RBAC over Roles and bindings indexed from
the watch cache, so a binding change counts as soon as it is committed.
SelfSubject* reviews (kubectl auth can-i) are about the caller (in the
harness's plain-HTTP mode, system:masters).

Why: RBAC decides what every client may do; bootstrap roles missing or wrong,
aggregation that does not follow labels, or a stale authorizer after a binding
change are security bugs that only a running server shows.
"""

import json
import os
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from server import CONFIG, Server, ServerTestCase, describe, wait_until  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
RBAC = "/apis/rbac.authorization.k8s.io/v1"
AUTHZ = "/apis/authorization.k8s.io/v1"
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
MERGE = {"Content-Type": "application/merge-patch+json"}


def bootstrap_data():
    with open(os.path.join(ROOT, "src", "kube", "gen", "rbac_bootstrap.json")) as f:
        return json.load(f)


def ok(r, status=200):
    if r.status != status:
        raise AssertionError("want %d, got %r" % (status, r))
    return r.json()


def sar(server, user=None, groups=None, ns=None, path=None, local=None, **attrs):
    """A SubjectAccessReview (LocalSubjectAccessReview in namespace local);
    attrs are resourceAttributes, or path gives nonResourceAttributes."""
    spec = {}
    if user is not None:
        spec["user"] = user
    if groups is not None:
        spec["groups"] = groups
    if path is not None:
        spec["nonResourceAttributes"] = {"path": path, "verb": attrs.get("verb", "get")}
    else:
        spec["resourceAttributes"] = dict(attrs, **({"namespace": ns} if ns else {}))
    kind = "LocalSubjectAccessReview" if local else "SubjectAccessReview"
    url = (AUTHZ + "/namespaces/%s/localsubjectaccessreviews" % local if local
           else AUTHZ + "/subjectaccessreviews")
    return server.request("POST", url, {"kind": kind, "apiVersion": "authorization.k8s.io/v1",
                                        "spec": spec})


def allowed(server, **kw):
    r = sar(server, **kw)
    body = ok(r, 201)
    return body["status"]["allowed"]


class BootstrapPolicy(ServerTestCase, unittest.TestCase):

    def test_cluster_roles_as_kube_defines_them(self):
        data = bootstrap_data()
        got = {i["metadata"]["name"]: i for i in ok(self.server.request(
            "GET", RBAC + "/clusterroles"))["items"]}
        for want in data["clusterroles"]:
            name = want["metadata"]["name"]
            self.assertIn(name, got)
            self.assertEqual(got[name]["metadata"]["labels"]["kubernetes.io/bootstrapping"],
                             "rbac-defaults", name)
            self.assertEqual(got[name]["metadata"]["annotations"][AUTOUPDATE], "true", name)
            if "aggregationRule" not in want:
                self.assertEqual(got[name]["rules"], want["rules"], name)
        # Facts checked apart from the data file too.
        self.assertEqual(got["cluster-admin"]["rules"],
                         [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                          {"nonResourceURLs": ["*"], "verbs": ["*"]}])
        self.assertIn("/version", got["system:public-info-viewer"]["rules"][0]["nonResourceURLs"])
        self.assertIn("/apis/*", got["system:discovery"]["rules"][0]["nonResourceURLs"])
        self.assertIn("selfsubjectaccessreviews", got["system:basic-user"]["rules"][0]["resources"])

    def test_bindings_and_namespace_roles(self):
        crb = ok(self.server.request("GET", RBAC + "/clusterrolebindings/cluster-admin"))
        self.assertEqual(crb["roleRef"], {"apiGroup": "rbac.authorization.k8s.io",
                                          "kind": "ClusterRole", "name": "cluster-admin"})
        self.assertEqual([(s["kind"], s["name"]) for s in crb["subjects"]],
                         [("Group", "system:masters")])
        piv = ok(self.server.request("GET", RBAC + "/clusterrolebindings/system:public-info-viewer"))
        self.assertEqual(sorted(s["name"] for s in piv["subjects"]),
                         ["system:authenticated", "system:unauthenticated"])
        role = ok(self.server.request(
            "GET", RBAC + "/namespaces/kube-system/roles/extension-apiserver-authentication-reader"))
        self.assertEqual(role["rules"][0]["resourceNames"], ["extension-apiserver-authentication"])
        rb = ok(self.server.request(
            "GET", RBAC + "/namespaces/kube-public/rolebindings/system:controller:bootstrap-signer"))
        self.assertEqual(rb["subjects"], [{"kind": "ServiceAccount", "name": "bootstrap-signer",
                                           "namespace": "kube-system"}])

    def test_readyz_names_the_bootstrap_hook(self):
        r = self.server.request("GET", "/readyz?verbose")
        self.assertEqual(r.status, 200, r)
        self.assertIn("[+]poststarthook/rbac/bootstrap-roles ok", r.body.decode())

    def test_kubectl_sees_the_roles(self):
        p = self.server.kubectl("get", "clusterroles", "-o", "name")
        self.assertEqual(p.returncode, 0, describe(p))
        for name in ("cluster-admin", "admin", "edit", "view", "system:discovery"):
            self.assertIn("clusterrole.rbac.authorization.k8s.io/" + name, p.stdout.split())


def rule_set(role):
    return [json.dumps(r, sort_keys=True) for r in role.get("rules") or []]


class Aggregation(ServerTestCase, unittest.TestCase):

    def role(self, name):
        return ok(self.server.request("GET", RBAC + "/clusterroles/" + name))

    def test_view_edit_admin_aggregate_as_in_kube(self):
        agg_view = rule_set(self.role("system:aggregate-to-view"))
        agg_edit = rule_set(self.role("system:aggregate-to-edit"))
        view = wait_until(lambda: (lambda v: v if set(agg_view) <= set(v) else None)(
            rule_set(self.role("view"))), what="view aggregated")
        edit = wait_until(lambda: (lambda e: e if set(view + agg_edit) <= set(e) else None)(
            rule_set(self.role("edit"))), what="edit aggregated")
        wait_until(lambda: set(edit) <= set(rule_set(self.role("admin"))), what="admin aggregated")
        self.assertEqual(len(view), len(set(view)), "a rule twice in view")

    def test_labelled_role_flows_into_view_edit_admin_and_out_again(self):
        rule = {"apiGroups": ["e2e.example.com"], "resources": ["widgets"], "verbs": ["get"]}
        body = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "e2e-widgets-view",
                             "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
                "rules": [rule]}
        ok(self.server.request("POST", RBAC + "/clusterroles", body), 201)
        key = json.dumps(rule, sort_keys=True)
        for name in ("view", "edit", "admin"):
            wait_until(lambda: key in rule_set(self.role(name)), timeout=15,
                       what="the labelled rule in %s" % name)
        self.assertTrue(allowed(self.server, user="v", groups=["g"], verb="get",
                                group="e2e.example.com", resource="widgets", ns="x")
                        is False)
        ok(self.server.request("DELETE", RBAC + "/clusterroles/e2e-widgets-view"))
        wait_until(lambda: key not in rule_set(self.role("view")), timeout=15,
                   what="the rule leaves view")


class AccessReviews(ServerTestCase, unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        s = cls.server
        for ns in ("rbac-a", "rbac-b"):
            ok(s.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}}), 201)
        ok(s.request("POST", RBAC + "/namespaces/rbac-a/roles", {
            "metadata": {"name": "cm-get"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}), 201)
        ok(s.request("POST", RBAC + "/namespaces/rbac-a/rolebindings", {
            "metadata": {"name": "bob-cm"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-get"},
            "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}]}),
            201)

    def test_role_grants_exactly_get_configmaps_in_its_namespace(self):
        s = self.server
        self.assertTrue(allowed(s, user="bob", verb="get", resource="configmaps", ns="rbac-a",
                                name="x"))
        self.assertTrue(allowed(s, user="bob", verb="get", resource="configmaps", ns="rbac-a"))
        for kw in ({"verb": "list", "resource": "configmaps", "ns": "rbac-a"},
                   {"verb": "get", "resource": "configmaps", "ns": "rbac-b"},
                   {"verb": "get", "resource": "configmaps"},
                   {"verb": "get", "resource": "secrets", "ns": "rbac-a"},
                   {"verb": "get", "group": "apps", "resource": "configmaps", "ns": "rbac-a"},
                   {"verb": "get", "resource": "configmaps", "subresource": "status",
                    "ns": "rbac-a"}):
            self.assertFalse(allowed(s, user="bob", **kw), kw)
        self.assertFalse(allowed(s, user="alice", verb="get", resource="configmaps", ns="rbac-a"))

    def test_reason_names_the_binding(self):
        st = ok(sar(self.server, user="bob", verb="get", resource="configmaps", ns="rbac-a"),
                201)["status"]
        self.assertEqual(st, {"allowed": True, "reason": 'RBAC: allowed by RoleBinding '
                              '"bob-cm/rbac-a" of Role "cm-get" to User "bob"'})
        st = ok(sar(self.server, user="bob", verb="list", resource="configmaps", ns="rbac-a"),
                201)["status"]
        self.assertEqual(st, {"allowed": False})

    def test_local_review_in_its_namespace(self):
        s = self.server
        self.assertTrue(allowed(s, local="rbac-a", user="bob", verb="get", resource="configmaps",
                                ns="rbac-a"))
        r = sar(s, local="rbac-b", user="bob", verb="get", resource="configmaps", ns="rbac-a")
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["message"],
                         "spec.resourceAttributes.namespace must match namespace: rbac-b")

    def test_groups_masters_and_non_resource_urls(self):
        s = self.server
        self.assertTrue(allowed(s, user="root", groups=["system:masters"], verb="delete",
                                resource="namespaces", name="kube-system"))
        self.assertTrue(allowed(s, user="u", groups=["system:authenticated"], verb="list",
                                group="rbac.authorization.k8s.io", resource="roles", ns="x")
                        is False)
        self.assertTrue(allowed(s, groups=["system:unauthenticated"], path="/version"))
        self.assertTrue(allowed(s, groups=["system:authenticated"], path="/apis/apps/v1"))
        self.assertFalse(allowed(s, groups=["system:unauthenticated"], path="/apis"))
        self.assertFalse(allowed(s, groups=["system:authenticated"], path="/metrics"))
        self.assertTrue(allowed(s, user="system:kube-scheduler", verb="update",
                                group="coordination.k8s.io", resource="leases",
                                name="kube-scheduler", ns="kube-system"))
        # The cluster role names only the kube-scheduler lease; any other lease is
        # reachable only in kube-system, through the leader-locking role binding.
        self.assertFalse(allowed(s, user="system:kube-scheduler", verb="update",
                                 group="coordination.k8s.io", resource="leases",
                                 name="other", ns="default"))
        self.assertTrue(allowed(s, user="system:kube-scheduler", verb="update",
                                group="coordination.k8s.io", resource="leases",
                                name="other", ns="kube-system"))

    def test_service_accounts(self):
        s = self.server
        # The bootstrap binding system:kube-dns names kube-system's kube-dns.
        self.assertTrue(allowed(s, user="system:serviceaccount:kube-system:kube-dns",
                                verb="watch", resource="services"))
        self.assertFalse(allowed(s, user="system:serviceaccount:default:kube-dns",
                                 verb="watch", resource="services"))
        ok(s.request("POST", RBAC + "/namespaces/rbac-b/rolebindings", {
            "metadata": {"name": "sa-view"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot"},
                         {"kind": "Group", "name": "system:serviceaccounts:rbac-a",
                          "apiGroup": "rbac.authorization.k8s.io"}]}), 201)
        self.assertTrue(wait_until(lambda: allowed(s, user="system:serviceaccount:rbac-b:robot",
                                                   verb="list", resource="pods", ns="rbac-b"),
                                   timeout=5, what="the sa binding"))
        self.assertFalse(allowed(s, user="system:serviceaccount:rbac-b:robot", verb="delete",
                                 resource="pods", ns="rbac-b"))
        self.assertFalse(allowed(s, user="system:serviceaccount:rbac-a:robot",
                                 verb="list", resource="pods", ns="rbac-b"))
        self.assertTrue(allowed(s, user="system:serviceaccount:rbac-a:other",
                                groups=["system:serviceaccounts", "system:serviceaccounts:rbac-a"],
                                verb="list", resource="pods", ns="rbac-b"))

    def test_binding_changes_count_without_restart(self):
        s = self.server
        body = {"metadata": {"name": "carol-cm"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                            "name": "cm-get"},
                "subjects": [{"kind": "User", "name": "carol",
                              "apiGroup": "rbac.authorization.k8s.io"}]}
        check = dict(user="carol", verb="get", resource="configmaps", ns="rbac-a")
        self.assertFalse(allowed(s, **check))
        ok(s.request("POST", RBAC + "/namespaces/rbac-a/rolebindings", body), 201)
        wait_until(lambda: allowed(s, **check), timeout=5, what="carol allowed")
        # The role gains a verb: the binding follows it.
        ok(s.request("PATCH", RBAC + "/namespaces/rbac-a/roles/cm-get",
                     {"rules": [{"apiGroups": [""], "resources": ["configmaps"],
                                 "verbs": ["get", "list"]}]}, MERGE))
        wait_until(lambda: allowed(s, **dict(check, verb="list")), timeout=5, what="list allowed")
        ok(s.request("PATCH", RBAC + "/namespaces/rbac-a/roles/cm-get",
                     {"rules": [{"apiGroups": [""], "resources": ["configmaps"],
                                 "verbs": ["get"]}]}, MERGE))
        ok(s.request("DELETE", RBAC + "/namespaces/rbac-a/rolebindings/carol-cm"))
        wait_until(lambda: not allowed(s, **check), timeout=5, what="carol denied again")

    def test_missing_role_is_reported(self):
        s = self.server
        ok(s.request("POST", RBAC + "/namespaces/rbac-b/rolebindings", {
            "metadata": {"name": "dangling"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "nope"},
            "subjects": [{"kind": "User", "name": "dave"}]}), 201)
        st = wait_until(lambda: (lambda st: st if st.get("reason") else None)(
            ok(sar(s, user="dave", verb="get", resource="pods", ns="rbac-b"), 201)["status"]),
            timeout=5, what="a reason")
        self.assertEqual(st, {"allowed": False, "reason":
                              'RBAC: role.rbac.authorization.k8s.io "nope" not found'})

    def test_invalid_reviews(self):
        s = self.server
        r = sar(s, verb="get", resource="pods")
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json()["message"], 'SubjectAccessReview.authorization.k8s.io "" is '
                         'invalid: spec.user: Invalid value: "": at least one of user or group '
                         'must be specified')
        r = s.request("POST", AUTHZ + "/subjectaccessreviews", {"spec": {"user": "x"}})
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json()["details"]["causes"][0]["field"], "spec.resourceAttributes")
        r = s.request("GET", AUTHZ + "/subjectaccessreviews")
        self.assertEqual(r.status, 405, r)

    def test_kubectl_auth_can_i_without_authentication(self):
        p = self.server.kubectl("auth", "can-i", "delete", "namespaces")
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "yes"), describe(p))
        p = self.server.kubectl("auth", "can-i", "--list")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertIn("*.*", p.stdout)
        r = self.server.request("POST", AUTHZ + "/selfsubjectaccessreviews", {
            "spec": {"resourceAttributes": {"verb": "get", "resource": "secrets"}}})
        st = ok(r, 201)["status"]
        # --plain-http: the caller is system:unsecured in system:masters,
        # allowed as kube's privileged group is, with no reason.
        self.assertEqual(st, {"allowed": True})

    def test_discovery_lists_the_reviews(self):
        doc = ok(self.server.request("GET", AUTHZ))
        got = {r["name"]: (r["namespaced"], r["verbs"]) for r in doc["resources"]}
        self.assertEqual(got, {"localsubjectaccessreviews": (True, ["create"]),
                               "selfsubjectaccessreviews": (False, ["create"]),
                               "selfsubjectrulesreviews": (False, ["create"]),
                               "subjectaccessreviews": (False, ["create"])})


class AlwaysAllowMode(unittest.TestCase):

    def test_always_allow_and_bad_mode(self):
        s = Server("always-allow", extra_args=["--authorization-mode", "AlwaysAllow"])
        try:
            s.start()
            self.assertTrue(allowed(s, user="nobody", verb="delete", resource="secrets", ns="x"))
            # The bootstrap policy is still created, as kube-apiserver does.
            ok(s.request("GET", RBAC + "/clusterroles/cluster-admin"))
        finally:
            s.cleanup()
        p = subprocess.run([CONFIG.binary, "serve", "--authorization-mode", "Webhook"],
                           capture_output=True, text=True, timeout=20)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("invalid --authorization-mode Webhook: want RBAC or AlwaysAllow", p.stderr)


class Reconcile(unittest.TestCase):
    """Across restarts: objects are not rewritten; lost rules come back unless
    the object opts out; two instances on one PostgreSQL create each once."""

    def setUp(self):
        self.servers = []

    def tearDown(self):
        for s in reversed(self.servers):
            s.cleanup()

    def test_restart_reconciles_autoupdate_only(self):
        s = Server("rbac-reconcile")
        self.servers.append(s)
        s.start()
        before = ok(s.request("GET", RBAC + "/clusterroles/system:heapster"))
        kept = ok(s.request("GET", RBAC + "/clusterroles/cluster-admin"))
        ok(s.request("PATCH", RBAC + "/clusterroles/system:heapster",
                     {"rules": before["rules"][:1]}, MERGE))
        ok(s.request("PATCH", RBAC + "/clusterroles/system:kube-dns",
                     {"metadata": {"annotations": {AUTOUPDATE: "false"}}, "rules": []}, MERGE))
        ok(s.request("DELETE", RBAC + "/clusterrolebindings/system:discovery"))
        s.restart()
        after = ok(s.request("GET", RBAC + "/clusterroles/system:heapster"))
        self.assertEqual(after["rules"], before["rules"])
        dns = ok(s.request("GET", RBAC + "/clusterroles/system:kube-dns"))
        self.assertEqual(dns["rules"], [])  # left as edited: it opted out
        ok(s.request("GET", RBAC + "/clusterrolebindings/system:discovery"))
        again = ok(s.request("GET", RBAC + "/clusterroles/cluster-admin"))
        self.assertEqual(again["metadata"]["uid"], kept["metadata"]["uid"])
        self.assertEqual(again["metadata"]["resourceVersion"], kept["metadata"]["resourceVersion"])

    def test_two_instances_create_each_once(self):
        if CONFIG.backend != "postgres":
            self.skipTest("needs a shared PostgreSQL")
        a = Server("rbac-a")
        self.servers.append(a)
        b = Server("rbac-b", db_url=a.db_url)
        self.servers.append(b)
        # Started together: both bootstrap controllers race on an empty database.
        threads = [threading.Thread(target=s.start) for s in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for s in (a, b):
            items = ok(s.request("GET", RBAC + "/clusterroles"))["items"]
            names = [i["metadata"]["name"] for i in items]
            self.assertEqual(len(names), len(set(names)))
            self.assertGreaterEqual(len(names), len(bootstrap_data()["clusterroles"]))
        # Each bootstrap object was written by one create: revision == creation.
        crs = ok(a.request("GET", RBAC + "/clusterroles/cluster-admin"))
        self.assertEqual(b.request("GET", "/readyz").status, 200)
        time.sleep(1.5)  # a few passes of both controllers
        crs2 = ok(b.request("GET", RBAC + "/clusterroles/cluster-admin"))
        self.assertEqual(crs["metadata"]["resourceVersion"], crs2["metadata"]["resourceVersion"])


if __name__ == "__main__":
    unittest.main()
