"""RBAC privilege-escalation prevention and user impersonation, as
kube-apiserver 1.32 does them.

Escalation: a user may create or update a Role (ClusterRole) only with rules
they already hold in its namespace (cluster-wide), unless they may `escalate`
roles; a binding only to a role whose rules they hold in the binding's
namespace, unless they may `bind` that role (by name). system:masters (the
harness's admin certificate) is never checked. Refusals are 403 with kube's
"is attempting to grant RBAC permissions not currently held" text, one
compacted rule per line, sorted.

Impersonation: Impersonate-User/-Group/-Uid/-Extra-* headers (kubectl --as,
--as-group) switch the request's user when the real user may `impersonate`
each of them; otherwise 403 about the first refused one; groups without a user
is 400. The impersonated user gets system:authenticated (a service account its
groups too), and everything after (RBAC, reviews, auth can-i) sees it.

Why: without these any user allowed to write roles or bindings could grant
themselves cluster-admin; and kubectl --as is how administrators check and
delegate rights.
"""

import http.client
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from server import CONFIG, KUBECTL, ServerTestCase, describe, wait_until  # noqa: E402
import subprocess  # noqa: E402

RBAC = "/apis/rbac.authorization.k8s.io/v1"
NS = "esc"
TOKENS = ("t-limited,limited,u-limited\n"
          "t-escalator,escalator,u-escalator\n"
          "t-binder,binder,u-binder\n"
          "t-imp,imp,u-imp\n")
RULES_HEAD = ("is attempting to grant RBAC permissions not currently held:\n")


def rule(groups, resources, verbs, names=None):
    r = {"apiGroups": groups, "resources": resources, "verbs": verbs}
    if names:
        r["resourceNames"] = names
    return r


def role(name, rules, kind="Role"):
    meta = {"name": name}
    if kind == "Role":
        meta["namespace"] = NS
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "rules": rules}


def binding(name, ref_kind, ref_name, subjects, kind="RoleBinding"):
    meta = {"name": name}
    if kind == "RoleBinding":
        meta["namespace"] = NS
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": ref_kind,
                        "name": ref_name},
            "subjects": subjects}


def user(name):
    return [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}]


class RbacEscalation(ServerTestCase, unittest.TestCase):
    server_tls = True

    @classmethod
    def setUpClass(cls):
        cls.tokens = os.path.join(CONFIG.ensure_work_dir(), "esc-tokens-%d.csv" % os.getpid())
        with open(cls.tokens, "w") as f:
            f.write(TOKENS)
        cls.server_args = ["--token-auth-file", cls.tokens]
        super().setUpClass()
        s = cls.server
        admin = cls.admin_post
        admin(s, "/api/v1/namespaces", {"metadata": {"name": NS}})
        # limited: writes roles and rolebindings in esc; reads configmaps.
        writer = [rule(["rbac.authorization.k8s.io"], ["roles", "rolebindings"],
                       ["create", "get", "update", "patch"]),
                  rule([""], ["configmaps"], ["get", "list"])]
        admin(s, RBAC + "/namespaces/esc/roles", role("writer", writer))
        admin(s, RBAC + "/namespaces/esc/roles", role(
            "escalate", [rule(["rbac.authorization.k8s.io"], ["roles"], ["escalate"])]))
        for u in ("limited", "escalator"):
            admin(s, RBAC + "/namespaces/esc/rolebindings", binding("writer-" + u, "Role",
                                                                   "writer", user(u)))
        admin(s, RBAC + "/namespaces/esc/rolebindings",
              binding("escalate-escalator", "Role", "escalate", user("escalator")))
        # binder: writes (cluster)rolebindings, may bind cluster-admin only.
        admin(s, RBAC + "/clusterroles", role("binder", [
            rule(["rbac.authorization.k8s.io"], ["rolebindings", "clusterrolebindings"],
                 ["create"]),
            rule(["rbac.authorization.k8s.io"], ["clusterroles"], ["bind"], ["cluster-admin"])],
            kind="ClusterRole"))
        admin(s, RBAC + "/clusterrolebindings",
              binding("binder", "ClusterRole", "binder", user("binder"),
                      kind="ClusterRoleBinding"))
        # imp: may impersonate user alice, group g1, service accounts of esc.
        admin(s, RBAC + "/clusterroles", role("imp", [
            rule([""], ["users"], ["impersonate"], ["alice"]),
            rule([""], ["groups"], ["impersonate"], ["g1"])], kind="ClusterRole"))
        admin(s, RBAC + "/clusterrolebindings",
              binding("imp", "ClusterRole", "imp", user("imp"), kind="ClusterRoleBinding"))
        admin(s, RBAC + "/namespaces/esc/roles", role(
            "imp-sa", [rule([""], ["serviceaccounts"], ["impersonate"])]))
        admin(s, RBAC + "/namespaces/esc/rolebindings",
              binding("imp-sa", "Role", "imp-sa", user("imp")))
        # alice may list configmaps in esc (what an impersonating request shows).
        admin(s, RBAC + "/namespaces/esc/rolebindings",
              binding("alice-view", "ClusterRole", "view", user("alice")))
        # The authorizer reads the watch cache: wait until the last binding counts.
        wait_until(lambda: cls.as_user(s, "t-imp", "GET", "/api/v1/namespaces/esc/configmaps",
                                       headers={"Impersonate-User": "alice"}).status == 200,
                   what="the policy to be applied")

    @staticmethod
    def admin_post(s, path, body):
        r = s.request("POST", path, body)
        if r.status != 201:
            raise AssertionError("%s: %r" % (path, r))

    @staticmethod
    def as_user(s, token, method, path, body=None, headers=None):
        h = {"Authorization": "Bearer " + token}
        h.update(headers or {})
        return s.request(method, path, body, headers=h, client_cert=False)

    def kubectl_as(self, token, *args):
        kc = os.path.join(self.server.data_dir, "kubeconfig-" + token)
        if not os.path.exists(kc):
            with open(self.server.kubeconfig) as f:
                text = f.read()
            text = text[:text.index("users:")] + ("users:\n- name: sqlkube\n  user:\n"
                                                  "    token: %s\n" % token)
            with open(kc, "w") as f:
                f.write(text)
        env = dict(os.environ, HOME=self.server.data_dir)
        env.pop("KUBECONFIG", None)
        return subprocess.run([KUBECTL, "--kubeconfig", kc, "--request-timeout=30s"] + list(args),
                              capture_output=True, text=True, timeout=90, env=env)

    def assertForbidden(self, r, message):
        self.assertEqual(r.status, 403, r)
        body = r.json()
        self.assertEqual((body["reason"], body["code"]), ("Forbidden", 403), body)
        self.assertEqual(body["message"], message)
        return body

    # --- roles ---------------------------------------------------------------

    def test_role_within_rights(self):
        r = self.as_user(self.server, "t-limited", "POST", RBAC + "/namespaces/esc/roles",
                         role("cm-reader", [rule([""], ["configmaps"], ["get"])]))
        self.assertEqual(r.status, 201, r)

    def test_role_broader_than_rights(self):
        wanted = [rule([""], ["secrets"], ["get", "list"]),
                  rule([""], ["configmaps"], ["get", "delete"])]
        r = self.as_user(self.server, "t-limited", "POST", RBAC + "/namespaces/esc/roles",
                         role("too-broad", wanted))
        body = self.assertForbidden(
            r, 'roles.rbac.authorization.k8s.io "too-broad" is forbidden: user "limited" '
               '(groups=["system:authenticated"]) ' + RULES_HEAD +
               '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n'
               '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}')
        self.assertEqual(body["details"], {"name": "too-broad",
                                           "group": "rbac.authorization.k8s.io",
                                           "kind": "roles"})
        self.assertEqual(self.server.request(
            "GET", RBAC + "/namespaces/esc/roles/too-broad").status, 404)
        # An update that widens a role is refused the same way (PUT and PATCH).
        r = self.as_user(self.server, "t-limited", "POST", RBAC + "/namespaces/esc/roles",
                         role("grows", [rule([""], ["configmaps"], ["list"])]))
        self.assertEqual(r.status, 201, r)
        cur = r.json()
        cur["rules"] = wanted
        r = self.as_user(self.server, "t-limited", "PUT", RBAC + "/namespaces/esc/roles/grows",
                         cur)
        self.assertEqual(r.status, 403, r)
        self.assertIn(RULES_HEAD, r.json()["message"])
        p = self.kubectl_as("t-limited", "-n", NS, "patch", "role", "grows", "--type=json",
                            "-p", '[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],'
                            '"resources":["pods"],"verbs":["delete"]}}]')
        self.assertEqual(p.returncode, 1, describe(p))
        self.assertIn('roles.rbac.authorization.k8s.io "grows" is forbidden: user "limited"', p.stderr)
        self.assertIn('{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}', p.stderr)
        # Server-side apply goes through the same check.
        manifest = ('{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":'
                    '{"name":"applied","namespace":"esc"},"rules":[{"apiGroups":[""],'
                    '"resources":["secrets"],"verbs":["get"]}]}')
        r = self.as_user(self.server, "t-limited", "PATCH",
                         RBAC + "/namespaces/esc/roles/applied?fieldManager=t",
                         manifest, headers={"Content-Type": "application/apply-patch+yaml"})
        self.assertEqual(r.status, 403, r)
        self.assertIn('{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}', r.json()["message"])

    def test_escalate_verb(self):
        wanted = [rule([""], ["secrets"], ["*"]), rule(["*"], ["*"], ["*"])]
        r = self.as_user(self.server, "t-escalator", "POST", RBAC + "/namespaces/esc/roles",
                         role("escalated", wanted))
        self.assertEqual(r.status, 201, r)
        # escalate on roles in esc says nothing of ClusterRoles.
        r = self.as_user(self.server, "t-escalator", "POST", RBAC + "/clusterroles",
                         role("esc-cluster", wanted, kind="ClusterRole"))
        self.assertEqual(r.status, 403, r)

    def test_admin_unaffected(self):
        r = self.server.request("POST", RBAC + "/clusterroles", role(
            "anything", [rule(["*"], ["*"], ["*"])], kind="ClusterRole"))
        self.assertEqual(r.status, 201, r)
        r = self.server.request("POST", RBAC + "/namespaces/esc/rolebindings", binding(
            "admin-binds", "ClusterRole", "cluster-admin", user("someone")))
        self.assertEqual(r.status, 201, r)

    # --- bindings -----------------------------------------------------------

    def test_bind_cluster_admin_denied_without_bind(self):
        p = self.kubectl_as("t-limited", "-n", NS, "create", "rolebinding", "grab",
                            "--clusterrole=cluster-admin", "--user=limited")
        self.assertEqual(p.returncode, 1, describe(p))
        self.assertIn('rolebindings.rbac.authorization.k8s.io "grab" is forbidden: user "limited" '
                      '(groups=["system:authenticated"]) ' + RULES_HEAD +
                      '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n'
                      '{NonResourceURLs:["*"], Verbs:["*"]}', p.stderr)
        # A role whose rules the user holds may be bound without bind.
        r = self.as_user(self.server, "t-limited", "POST", RBAC + "/namespaces/esc/roles",
                         role("cm-list", [rule([""], ["configmaps"], ["list"])]))
        self.assertEqual(r.status, 201, r)
        # At once: the guard reads roles no older than the store was when the call began
        # (a role and its binding in one `kubectl apply` must not race the watch cache).
        r = self.as_user(self.server, "t-limited", "POST", RBAC + "/namespaces/esc/rolebindings",
                         binding("cm-list", "Role", "cm-list", user("x")))
        self.assertEqual(r.status, 201, r)
        for i in range(10):
            r = self.as_user(self.server, "t-limited", "POST", RBAC + "/namespaces/esc/roles",
                             role("quick-%d" % i, [rule([""], ["configmaps"], ["get"])]))
            self.assertEqual(r.status, 201, r)
            r = self.as_user(self.server, "t-limited", "POST",
                             RBAC + "/namespaces/esc/rolebindings",
                             binding("quick-%d" % i, "Role", "quick-%d" % i, user("x")))
            self.assertEqual(r.status, 201, r)
        # A missing role: 404, as kube's role lookup answers.
        r = self.as_user(self.server, "t-limited", "POST", RBAC + "/namespaces/esc/rolebindings",
                         binding("nothing", "Role", "no-such-role", user("x")))
        self.assertEqual(r.status, 404, r)
        self.assertEqual(r.json()["message"],
                         'roles.rbac.authorization.k8s.io "no-such-role" not found')

    def test_bind_allowed_by_name(self):
        r = self.as_user(self.server, "t-binder", "POST", RBAC + "/namespaces/esc/rolebindings",
                         binding("binder-ca", "ClusterRole", "cluster-admin", user("x")))
        self.assertEqual(r.status, 201, r)
        r = self.as_user(self.server, "t-binder", "POST", RBAC + "/clusterrolebindings",
                         binding("binder-ca", "ClusterRole", "cluster-admin", user("x"),
                                 kind="ClusterRoleBinding"))
        self.assertEqual(r.status, 201, r)
        # bind names cluster-admin only: admin is not covered.
        r = self.as_user(self.server, "t-binder", "POST", RBAC + "/namespaces/esc/rolebindings",
                         binding("binder-admin", "ClusterRole", "admin", user("x")))
        self.assertEqual(r.status, 403, r)
        self.assertTrue(r.json()["message"].startswith(
            'rolebindings.rbac.authorization.k8s.io "binder-admin" is forbidden: user "binder" '
            '(groups=["system:authenticated"]) ' + RULES_HEAD), r)

    # --- impersonation ------------------------------------------------------

    def whoami(self, token, headers):
        return self.as_user(self.server, token, "POST",
                            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                            {"apiVersion": "authentication.k8s.io/v1",
                             "kind": "SelfSubjectReview"}, headers=headers)

    def test_kubectl_as(self):
        p = self.kubectl_as("t-imp", "--as=alice", "auth", "whoami", "-o",
                            "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
        self.assertEqual((p.returncode, p.stdout), (0, 'alice ["system:authenticated"]'),
                         describe(p))
        p = self.kubectl_as("t-imp", "--as=alice", "--as-group=g1", "auth", "whoami", "-o",
                            "jsonpath={.status.userInfo.groups}")
        self.assertEqual((p.returncode, p.stdout), (0, '["g1","system:authenticated"]'),
                         describe(p))
        # RBAC decides as alice: she may list configmaps in esc, imp may not.
        p = self.kubectl_as("t-imp", "--as=alice", "-n", NS, "get", "configmaps", "-o", "name")
        self.assertEqual(p.returncode, 0, describe(p))
        p = self.kubectl_as("t-imp", "-n", NS, "get", "configmaps", "-o", "name")
        self.assertEqual(p.returncode, 1, describe(p))
        p = self.kubectl_as("t-imp", "--as=alice", "auth", "can-i", "list", "configmaps",
                            "-n", NS)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "yes"), describe(p))
        p = self.kubectl_as("t-imp", "--as=alice", "auth", "can-i", "delete", "configmaps",
                            "-n", NS)
        self.assertEqual(p.stdout.strip(), "no", describe(p))
        # Not allowed: another user, another group.
        p = self.kubectl_as("t-imp", "--as=bob", "get", "ns", "default")
        self.assertEqual(p.returncode, 1, describe(p))
        self.assertIn('users "bob" is forbidden: User "imp" cannot impersonate resource "users" '
                      'in API group "" at the cluster scope', p.stderr)
        p = self.kubectl_as("t-imp", "--as=alice", "--as-group=g2", "get", "ns", "default")
        self.assertEqual(p.returncode, 1, describe(p))
        self.assertIn('groups "g2" is forbidden: User "imp" cannot impersonate resource "groups" '
                      'in API group "" at the cluster scope', p.stderr)

    def test_raw_headers(self):
        r = self.whoami("t-imp", {"Impersonate-User": "bob"})
        self.assertForbidden(r, 'users "bob" is forbidden: User "imp" cannot impersonate '
                                'resource "users" in API group "" at the cluster scope')
        # A service account: checked in its namespace, given its groups.
        r = self.whoami("t-imp", {"Impersonate-User": "system:serviceaccount:esc:robot"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["status"]["userInfo"], {
            "username": "system:serviceaccount:esc:robot",
            "groups": ["system:serviceaccounts", "system:serviceaccounts:esc",
                       "system:authenticated"]})
        r = self.whoami("t-imp", {"Impersonate-User": "system:serviceaccount:other:robot"})
        self.assertForbidden(r, 'serviceaccounts "robot" is forbidden: User "imp" cannot '
                                'impersonate resource "serviceaccounts" in API group "" in the '
                                'namespace "other"')
        # uid and extras: authentication.k8s.io's uids and userextras.
        r = self.whoami("t-imp", {"Impersonate-User": "alice", "Impersonate-Uid": "u-1"})
        self.assertForbidden(r, 'uids.authentication.k8s.io "u-1" is forbidden: User "imp" '
                                'cannot impersonate resource "uids" in API group '
                                '"authentication.k8s.io" at the cluster scope')
        r = self.whoami("t-imp", {"Impersonate-User": "alice", "Impersonate-Extra-Scopes": "s"})
        self.assertForbidden(r, 'userextras.authentication.k8s.io "s" is forbidden: User "imp" '
                                'cannot impersonate resource "userextras/scopes" in API group '
                                '"authentication.k8s.io" at the cluster scope')
        # system:masters may impersonate anything; groups given replace the implied ones.
        r = self.server.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                {"apiVersion": "authentication.k8s.io/v1",
                                 "kind": "SelfSubjectReview"},
                                headers={"Impersonate-User": "system:serviceaccount:esc:robot",
                                         "Impersonate-Group": "grp",
                                         "Impersonate-Uid": "u-1",
                                         "Impersonate-Extra-Scopes": "s"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["status"]["userInfo"], {
            "username": "system:serviceaccount:esc:robot", "uid": "u-1",
            "groups": ["grp", "system:authenticated"], "extra": {"scopes": ["s"]}})
        # Repeated headers: every group and every value of an extra key.
        conn = http.client.HTTPSConnection("127.0.0.1", self.server.port, timeout=30,
                                           context=self.server.ssl_context(True))
        try:
            conn.putrequest("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews")
            for k, v in (("Content-Type", "application/json"), ("Impersonate-User", "carol"),
                         ("Impersonate-Group", "a"), ("Impersonate-Group", "b"),
                         ("Impersonate-Extra-Scopes", "x"), ("Impersonate-Extra-Scopes", "y"),
                         ("Impersonate-Extra-Dotted%2Fkey", "z")):
                conn.putheader(k, v)
            body = b'{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}'
            conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            resp = conn.getresponse()
            got = json.loads(resp.read())
        finally:
            conn.close()
        self.assertEqual(resp.status, 201, got)
        self.assertEqual(got["status"]["userInfo"], {
            "username": "carol", "groups": ["a", "b", "system:authenticated"],
            "extra": {"scopes": ["x", "y"], "dotted/key": ["z"]}})
        # Groups without a user: 400.
        r = self.whoami("t-imp", {"Impersonate-Group": "g1"})
        self.assertEqual(r.status, 400, r)
        self.assertEqual((r.json()["reason"], r.json()["message"]),
                         ("BadRequest", "requested [{Group  g1    }] without impersonating a user"))


if __name__ == "__main__":
    unittest.main()
