"""The audit log: --audit-log-path writes kube's audit.k8s.io/v1 Events at
the Metadata level, one JSON line each, over HTTPS with real identities.

Checked here: the stages kube emits for a Metadata policy with no omitStages
(RequestReceived then ResponseComplete; a watch also ResponseStarted; a
request that fails authentication one ResponseStarted with an empty user);
each event's fields (verb, user, sourceIPs, userAgent, objectRef,
responseStatus as kube's Metadata level keeps it, the two timestamps, the
authorization annotations: allow for the admin, forbid with the RBAC reason
for a user with no binding, allow with the binding for one with); the
Audit-Id response header naming the request's events, a client's own
Audit-ID kept; that neither a Secret's data nor a bearer token ever reaches
the file; and rotation by --audit-log-maxsize/--audit-log-maxbackup.

Why: the audit log is how operators answer "who did this"; a wrong verb,
user or decision misleads them, and a secret or token in it is a leak.
"""

import base64
import glob
import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import CONFIG, Server, ServerTestCase, wait_until  # noqa: E402

SECRET_VALUE = "pa55-Wh1sper-do-not-log"
TOKEN_CAROL = "tok-carol-7f3a9c2e51"
TOKEN_DAVE = "tok-dave-0b8d6e4f27"
GARBAGE = "garbage-bearer-c4e1d9"
TOKENS = ('%s,carol,uid-carol,"team-a"\n%s,dave,uid-dave\n' % (TOKEN_CAROL, TOKEN_DAVE))
CM = "/api/v1/namespaces/default/configmaps"
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def bearer(token):
    return {"Authorization": "Bearer " + token}


class Audit(ServerTestCase, unittest.TestCase):
    server_tls = True

    @classmethod
    def setUpClass(cls):
        work = CONFIG.ensure_work_dir()
        cls.tokens = os.path.join(work, "audit-tokens-%d.csv" % os.getpid())
        with open(cls.tokens, "w") as f:
            f.write(TOKENS)
        cls.log = os.path.join(work, "audit-%d.log" % os.getpid())
        if os.path.exists(cls.log):
            os.unlink(cls.log)
        cls.server_args = ["--token-auth-file", cls.tokens, "--audit-log-path", cls.log]
        super().setUpClass()

    def events(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def events_of(self, r, stages):
        """The events of response r (by its Audit-Id), once all of stages are in."""
        aid = r.headers.get("audit-id")
        self.assertTrue(aid, r.headers)

        def got():
            evs = [e for e in self.events() if e["auditID"] == aid]
            return evs if [e["stage"] for e in evs] == stages else None
        try:
            return wait_until(got, timeout=10, what="events %s of %s" % (stages, aid))
        except Exception:
            self.fail("events of %s: %r" % (aid, [e for e in self.events()
                                                  if e["auditID"] == aid]))

    def assertCommon(self, ev, uri, verb):
        self.assertEqual(ev["kind"], "Event")
        self.assertEqual(ev["apiVersion"], "audit.k8s.io/v1")
        self.assertEqual(ev["level"], "Metadata")
        self.assertRegex(ev["auditID"], UUID)
        self.assertEqual(ev["requestURI"], uri)
        self.assertEqual(ev["verb"], verb)
        self.assertEqual(ev["sourceIPs"], ["127.0.0.1"])
        self.assertRegex(ev["requestReceivedTimestamp"], MICRO)
        self.assertRegex(ev["stageTimestamp"], MICRO)
        self.assertGreaterEqual(ev["stageTimestamp"], ev["requestReceivedTimestamp"])
        for key in ("requestObject", "responseObject"):
            self.assertNotIn(key, ev)

    def test_admin_verbs(self):
        s = self.server
        ua = {"User-Agent": "audit-test/1.0"}
        r = s.request("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "audited"}, "data": {"k": "v"}},
                      headers=ua)
        self.assertEqual(r.status, 201, r)
        received, complete = self.events_of(r, ["RequestReceived", "ResponseComplete"])
        self.assertCommon(received, CM, "create")
        self.assertEqual(received["stageTimestamp"], received["requestReceivedTimestamp"])
        self.assertEqual(received["userAgent"], "audit-test/1.0")
        self.assertEqual(received["user"]["username"], "kubernetes-admin")
        self.assertEqual(received["user"]["groups"], ["system:masters", "system:authenticated"])
        self.assertEqual(received["objectRef"], {"resource": "configmaps", "namespace": "default",
                                                 "apiVersion": "v1"})
        self.assertNotIn("responseStatus", received)
        self.assertNotIn("annotations", received)
        self.assertEqual(complete["responseStatus"], {"metadata": {}, "code": 201})
        self.assertEqual(complete["annotations"], {"authorization.k8s.io/decision": "allow",
                                                   "authorization.k8s.io/reason": ""})
        for e in (received, complete):
            self.assertEqual(e["auditID"], r.headers["audit-id"])

        for method, path, body, verb, code in (
                ("GET", CM + "/audited", None, "get", 200),
                ("GET", CM + "?limit=5", None, "list", 200),
                ("PATCH", CM + "/audited", {"data": {"k": "w"}}, "patch", 200),
                ("PUT", CM + "/audited", None, "update", 200),
                ("GET", CM + "/missing", None, "get", 404),
                ("DELETE", CM + "/audited", None, "delete", 200),
                ("DELETE", CM, None, "deletecollection", 200)):
            with self.subTest(verb=verb, code=code):
                headers = dict(ua)
                if method == "PATCH":
                    headers["Content-Type"] = "application/merge-patch+json"
                if method == "PUT":
                    body = s.request("GET", CM + "/audited").json()
                r = s.request(method, path, body, headers=headers)
                self.assertEqual(r.status, code, r)
                _, ev = self.events_of(r, ["RequestReceived", "ResponseComplete"])
                self.assertCommon(ev, path, verb)
                self.assertEqual(ev["responseStatus"]["code"], code)
                if code == 404:
                    self.assertEqual(ev["responseStatus"]["reason"], "NotFound")
                    self.assertEqual(ev["responseStatus"]["status"], "Failure")
                    self.assertEqual(ev["objectRef"]["name"], "missing")
                elif verb != "list" and verb != "deletecollection":
                    self.assertEqual(ev["objectRef"]["name"], "audited")

    def test_watch_has_response_started(self):
        path = CM + "?watch=true&timeoutSeconds=1"
        r = self.server.request("GET", path)
        self.assertEqual(r.status, 200, r)
        evs = self.events_of(r, ["RequestReceived", "ResponseStarted", "ResponseComplete"])
        for e in evs:
            self.assertCommon(e, path, "watch")
        self.assertEqual(evs[1]["responseStatus"], {"metadata": {}, "code": 200})
        self.assertLessEqual(evs[1]["stageTimestamp"], evs[2]["stageTimestamp"])

    def test_unauthenticated(self):
        r = self.server.request("GET", "/api/v1/pods", headers=bearer(GARBAGE), client_cert=False)
        self.assertEqual(r.status, 401, r)
        (ev,) = self.events_of(r, ["ResponseStarted"])
        self.assertCommon(ev, "/api/v1/pods", "list")
        self.assertEqual(ev["user"], {})
        self.assertEqual(ev["objectRef"], {"resource": "pods", "apiVersion": "v1"})
        self.assertEqual(ev["responseStatus"], {"metadata": {}, "status": "Failure",
                                                "message": "Unauthorized",
                                                "reason": "Unauthorized", "code": 401})
        self.assertNotIn("annotations", ev)

    def test_forbidden_then_allowed(self):
        s = self.server
        path = "/api/v1/namespaces/kube-public/configmaps/cluster-info-x"
        r = s.request("GET", path, headers=bearer(TOKEN_CAROL), client_cert=False)
        self.assertEqual(r.status, 403, r)
        _, ev = self.events_of(r, ["RequestReceived", "ResponseComplete"])
        self.assertCommon(ev, path, "get")
        self.assertEqual(ev["user"], {"username": "carol", "uid": "uid-carol",
                                      "groups": ["team-a", "system:authenticated"]})
        self.assertEqual(ev["responseStatus"]["code"], 403)
        self.assertEqual(ev["responseStatus"]["reason"], "Forbidden")
        self.assertIn('User "carol" cannot get resource "configmaps"',
                      ev["responseStatus"]["message"])
        self.assertEqual(ev["annotations"]["authorization.k8s.io/decision"], "forbid")

        # dave may read configmaps in default through a RoleBinding
        rb = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings"
        r = s.request("POST", rb, {"apiVersion": "rbac.authorization.k8s.io/v1",
                                   "kind": "RoleBinding", "metadata": {"name": "dave-view"},
                                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                               "kind": "ClusterRole", "name": "view"},
                                   "subjects": [{"kind": "User", "name": "dave",
                                                 "apiGroup": "rbac.authorization.k8s.io"}]})
        self.assertEqual(r.status, 201, r)
        _, ev = self.events_of(r, ["RequestReceived", "ResponseComplete"])
        self.assertEqual(ev["objectRef"]["apiGroup"], "rbac.authorization.k8s.io")
        self.assertEqual(ev["objectRef"]["resource"], "rolebindings")

        def dave_lists():
            r = s.request("GET", CM, headers=bearer(TOKEN_DAVE), client_cert=False)
            return r if r.status == 200 else None
        r = wait_until(dave_lists, what="dave's binding in effect")
        _, ev = self.events_of(r, ["RequestReceived", "ResponseComplete"])
        self.assertEqual(ev["annotations"]["authorization.k8s.io/decision"], "allow")
        self.assertIn('RoleBinding "dave-view/default"',
                      ev["annotations"]["authorization.k8s.io/reason"])

    def test_impersonation(self):
        r = self.server.request("GET", CM, headers={"Impersonate-User": "dave"})
        self.assertIn(r.status, (200, 403), r)
        received, complete = self.events_of(r, ["RequestReceived", "ResponseComplete"])
        for ev in (received, complete):
            self.assertEqual(ev["user"]["username"], "kubernetes-admin")
        self.assertEqual(complete["impersonatedUser"]["username"], "dave")

    def test_client_audit_id_kept(self):
        r = self.server.request("GET", "/version", headers={"Audit-ID": "my-own-id-42"})
        self.assertEqual(r.headers["audit-id"], "my-own-id-42")
        _, ev = self.events_of(r, ["RequestReceived", "ResponseComplete"])
        self.assertEqual(ev["verb"], "get")
        self.assertNotIn("objectRef", ev)  # a non-resource request

    def test_no_secrets_or_tokens(self):
        s = self.server
        encoded = base64.b64encode(SECRET_VALUE.encode()).decode()
        r = s.request("POST", "/api/v1/namespaces/default/secrets",
                      {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hush"},
                       "data": {"password": encoded}, "stringData": {"plain": SECRET_VALUE}})
        self.assertEqual(r.status, 201, r)
        r = s.request("GET", "/api/v1/namespaces/default/secrets/hush")
        self.assertEqual(r.status, 200, r)
        self.assertIn(encoded, r.body.decode())
        self.events_of(r, ["RequestReceived", "ResponseComplete"])
        for token in (TOKEN_CAROL, GARBAGE):
            r = s.request("GET", "/api/v1/namespaces/default/secrets/hush",
                          headers=bearer(token), client_cert=False)
            self.assertIn(r.status, (401, 403))
            self.events_of(r, ["ResponseStarted"] if r.status == 401
                           else ["RequestReceived", "ResponseComplete"])
        with open(self.log) as f:
            text = f.read()
        for leak in (SECRET_VALUE, encoded, TOKEN_CAROL, TOKEN_DAVE, GARBAGE):
            self.assertNotIn(leak, text)


class AuditRotation(unittest.TestCase):
    def test_rotates_and_prunes(self):
        work = CONFIG.ensure_work_dir()
        d = os.path.join(work, "audit-rot-%d" % os.getpid())
        os.makedirs(d, exist_ok=True)
        for old in glob.glob(os.path.join(d, "*")):
            os.unlink(old)
        log = os.path.join(d, "audit.log")
        s = Server("audit-rotation", extra_args=["--audit-log-path", log,
                                                  "--audit-log-maxsize", "1",
                                                  "--audit-log-maxbackup", "2"])
        try:
            s.start()
            pad = "/api/v1/namespaces/default/configmaps/" + "x" * 200
            for _ in range(2500):  # ~2 KB of events each: about 5 MB in all
                s.request("GET", pad)
            rotated = sorted(glob.glob(os.path.join(d, "audit-*.log")))
            self.assertEqual(len(rotated), 2, os.listdir(d))
            for p in rotated + [log]:
                self.assertRegex(os.path.basename(p),
                                 r"^audit(-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3})?\.log$")
                self.assertLessEqual(os.path.getsize(p), 1024 * 1024)
                with open(p) as f:
                    for line in f:
                        json.loads(line)  # whole lines only
        finally:
            s.cleanup()


if __name__ == "__main__":
    unittest.main()
