"""ServiceAccount tokens: TokenRequest (`kubectl create token`), their
verification by the authenticator, and TokenReview.

A server signs RS256 JWTs with DATA/sa.key (generated on first start, 0600)
or --service-account-signing-key-file, and verifies them with that key's
public part or --service-account-key-file. Checked here with real clients:
kube's claims (iss, sub, aud, exp, iat, nbf, jti, kubernetes.io); a token
whose ServiceAccount has a Role granting only `get configmaps` in one
namespace can do exactly that (list, another namespace, secrets: 403 naming
the ServiceAccount user); `kubectl auth whoami` with the token shows
system:serviceaccount:NS:NAME, the SA's uid and kube's groups; a wrong
audience, a tampered payload or signature, a token signed by another key,
an expired token (signed here with the server's own key, so only the expiry
is wrong; kube's 60 s leeway honoured), a deleted ServiceAccount, one
re-created under the same name (new uid), a deleted bound Pod or Secret:
401 with kube's bare Unauthorized Status; tokens survive a restart;
TokenRequest's refusals (404, 422, 400, 409) as kube words them; TokenReview
says what a token proves; explicit key files, and a server that only
verifies.

Why: ServiceAccount tokens are how controllers get limited identities; a
token that outlives its ServiceAccount or its pod, or verifies with the
wrong key, is a security hole only a running server shows.
"""

import base64
import json
import os
import stat
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import CONFIG, KUBECTL, Server, ServerTestCase, describe, wait_until  # noqa: E402

import yaml  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import padding, rsa  # noqa: E402

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
ISSUER = "https://kubernetes.default.svc.cluster.local"
WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = "/apis/authentication.k8s.io/v1/tokenreviews"


def b64d(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def b64e(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims_of(token):
    return json.loads(b64d(token.split(".")[1]))


def sign(key, claims, header=None):
    """A compact JWS of claims signed RS256 with key (cryptography's)."""
    h = b64e(json.dumps(header or {"alg": "RS256"}).encode())
    c = b64e(json.dumps(claims).encode())
    sig = key.sign(("%s.%s" % (h, c)).encode(), padding.PKCS1v15(), hashes.SHA256())
    return "%s.%s.%s" % (h, c, b64e(sig))


def token_request(server, ns, name, **spec):
    return server.request("POST", "/api/v1/namespaces/%s/serviceaccounts/%s/token" % (ns, name),
                          {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                           "spec": spec})


class SaTokens(ServerTestCase, unittest.TestCase):
    server_tls = True

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        s = cls.server
        script = """
apiVersion: v1
kind: Namespace
metadata: {name: sa-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: sa-b}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: sa-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cm-get, namespace: sa-a}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader-cm-get, namespace: sa-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-get}
subjects: [{kind: ServiceAccount, name: reader, namespace: sa-a}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: sa-a}
data: {k: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: sa-b}
data: {k: b}
---
apiVersion: v1
kind: Secret
metadata: {name: sec, namespace: sa-a}
stringData: {k: s}
"""
        p = s.kubectl("apply", "-f", "-", input=script)
        if p.returncode != 0:
            raise AssertionError(describe(p))

    # --- helpers -----------------------------------------------------------

    def as_token(self, token, method, path, body=None):
        return self.server.request(method, path, body,
                                   headers={"Authorization": "Bearer " + token},
                                   client_cert=False)

    def whoami(self, token):
        return self.as_token(token, "POST", WHOAMI, {"apiVersion": "authentication.k8s.io/v1",
                                                     "kind": "SelfSubjectReview"})

    def assertUnauthorized(self, r):
        self.assertEqual(r.status, 401, r)
        self.assertEqual(r.json(), UNAUTHORIZED)

    def new_token(self, ns="sa-a", name="reader", **spec):
        r = token_request(self.server, ns, name, **spec)
        self.assertEqual(r.status, 201, r)
        return r.json()["status"]["token"]

    def uid(self, kind, name, ns):
        p = self.server.kubectl("get", kind, name, "-n", ns, "-o", "jsonpath={.metadata.uid}")
        self.assertEqual(p.returncode, 0, describe(p))
        return p.stdout

    def server_key(self):
        with open(os.path.join(self.server.data_dir, "sa.key"), "rb") as f:
            return serialization.load_pem_private_key(f.read(), password=None)

    def token_kubeconfig(self, token):
        """The server's kubeconfig with the client certificate swapped for
        the token (a certificate would be taken first, as in kube)."""
        with open(self.server.kubeconfig) as f:
            kc = yaml.safe_load(f)
        kc["users"][0]["user"] = {"token": token}
        path = os.path.join(self.server.data_dir, "kubeconfig-token-%d" % time.monotonic_ns())
        with open(path, "w") as f:
            yaml.safe_dump(kc, f)
        return path

    def kubectl_as(self, token, *args):
        env = dict(os.environ, HOME=self.server.data_dir)
        env.pop("KUBECONFIG", None)
        return subprocess.run([KUBECTL, "--kubeconfig", self.token_kubeconfig(token),
                               "--request-timeout=30s"] + list(args),
                              capture_output=True, text=True, timeout=90, env=env)

    # --- issuing -------------------------------------------------------------

    def test_kubectl_create_token(self):
        p = self.server.kubectl("create", "token", "reader", "-n", "sa-a")
        self.assertEqual(p.returncode, 0, describe(p))
        token = p.stdout.strip()
        header = json.loads(b64d(token.split(".")[0]))
        self.assertEqual(header["alg"], "RS256")
        self.assertTrue(header["kid"])
        c = claims_of(token)
        sa_uid = self.uid("serviceaccount", "reader", "sa-a")
        self.assertEqual(c["iss"], ISSUER)
        self.assertEqual(c["sub"], "system:serviceaccount:sa-a:reader")
        self.assertEqual(c["aud"], [ISSUER])
        self.assertEqual(c["exp"] - c["iat"], 3600)
        self.assertEqual(c["nbf"], c["iat"])
        self.assertLessEqual(abs(c["iat"] - time.time()), 5)
        self.assertRegex(c["jti"], r"^[0-9a-f-]{36}$")
        self.assertEqual(c["kubernetes.io"], {"namespace": "sa-a", "serviceaccount":
                                              {"name": "reader", "uid": sa_uid}})
        # --audience and --duration
        p = self.server.kubectl("create", "token", "reader", "-n", "sa-a", "--audience", "vault",
                                "--audience", "other", "--duration", "20m")
        self.assertEqual(p.returncode, 0, describe(p))
        c = claims_of(p.stdout.strip())
        self.assertEqual(c["aud"], ["vault", "other"])
        self.assertEqual(c["exp"] - c["iat"], 1200)
        # a token for other audiences does not authenticate to the API
        self.assertUnauthorized(self.whoami(p.stdout.strip()))
        # under 10 minutes: kube's 422
        p = self.server.kubectl("create", "token", "reader", "-n", "sa-a", "--duration", "5m")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('TokenRequest.authentication.k8s.io "reader" is invalid: '
                      'spec.expirationSeconds: Invalid value: 300: may not specify a duration '
                      'less than 10 minutes', p.stderr)

    def test_token_request_refusals(self):
        r = token_request(self.server, "sa-a", "nope")
        self.assertEqual(r.status, 404, r)
        self.assertEqual(r.json()["message"], 'serviceaccounts "nope" not found')
        r = token_request(self.server, "sa-a", "reader", expirationSeconds=599)
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json()["details"]["causes"][0]["field"], "spec.expirationSeconds")
        r = token_request(self.server, "sa-a", "reader", expirationSeconds=(1 << 32) + 1)
        self.assertEqual(r.status, 422, r)
        self.assertIn("may not specify a duration larger than 2^32 seconds", r.json()["message"])
        r = token_request(self.server, "sa-a", "reader",
                          boundObjectRef={"kind": "ConfigMap", "apiVersion": "v1", "name": "cm"})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["message"],
                         "cannot bind token to object of type /v1, Kind=ConfigMap")
        r = token_request(self.server, "sa-a", "reader",
                          boundObjectRef={"kind": "Secret", "apiVersion": "v1", "name": "nosuch"})
        self.assertEqual(r.status, 404, r)
        self.assertEqual(r.json()["message"], 'secrets "nosuch" not found')
        r = token_request(self.server, "sa-a", "reader",
                          boundObjectRef={"kind": "Secret", "apiVersion": "v1", "name": "sec",
                                          "uid": "00000000-0000-0000-0000-000000000000"})
        self.assertEqual(r.status, 409, r)
        self.assertIn("the UID in the bound object reference (00000000-0000-0000-0000-"
                      "000000000000) does not match the UID in record", r.json()["message"])
        p = self.server.kubectl("run", "other-sa-pod", "-n", "sa-a", "--image", "x",
                                "--overrides", '{"spec":{"serviceAccountName":"builder"}}')
        self.assertEqual(p.returncode, 0, describe(p))
        r = token_request(self.server, "sa-a", "reader",
                          boundObjectRef={"kind": "Pod", "apiVersion": "v1",
                                          "name": "other-sa-pod"})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["message"], 'cannot bind token for serviceaccount "reader" to '
                         'pod running with serviceaccount "builder"')
        r = self.server.request("POST", "/api/v1/namespaces/sa-a/serviceaccounts/reader/token",
                                {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                 "metadata": {"name": "someone-else"}})
        self.assertEqual(r.status, 422, r)
        self.assertIn("metadata.name: Invalid value: \"someone-else\": must match the service "
                      "account name if specified", r.json()["message"])

    # --- what a token may do ---------------------------------------------------

    def test_role_grants_exactly_get_configmaps(self):
        token = self.new_token()
        r = self.as_token(token, "GET", "/api/v1/namespaces/sa-a/configmaps/cm")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["data"], {"k": "a"})
        user = 'User "system:serviceaccount:sa-a:reader"'
        r = self.as_token(token, "GET", "/api/v1/namespaces/sa-a/configmaps")
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json()["message"], 'configmaps is forbidden: %s cannot list resource '
                         '"configmaps" in API group "" in the namespace "sa-a"' % user)
        r = self.as_token(token, "GET", "/api/v1/namespaces/sa-b/configmaps/cm")
        self.assertEqual(r.status, 403, r)
        self.assertIn(user, r.json()["message"])
        r = self.as_token(token, "GET", "/api/v1/namespaces/sa-a/secrets/sec")
        self.assertEqual(r.status, 403, r)
        self.assertIn('cannot get resource "secrets"', r.json()["message"])
        # issuing tokens is create on serviceaccounts/token: not granted
        r = self.as_token(token, "POST", "/api/v1/namespaces/sa-a/serviceaccounts/reader/token",
                          {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"})
        self.assertEqual(r.status, 403, r)
        self.assertIn('cannot create resource "serviceaccounts/token"', r.json()["message"])
        # kubectl with the token
        p = self.kubectl_as(token, "get", "configmap", "cm", "-n", "sa-a",
                            "-o", "jsonpath={.data.k}")
        self.assertEqual((p.returncode, p.stdout), (0, "a"), describe(p))
        p = self.kubectl_as(token, "get", "configmaps", "-n", "sa-a")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("forbidden", p.stderr)

    def test_kubectl_whoami(self):
        p = self.server.kubectl("create", "token", "reader", "-n", "sa-a")
        self.assertEqual(p.returncode, 0, describe(p))
        token = p.stdout.strip()
        p = self.kubectl_as(token, "auth", "whoami", "-o", "json")
        self.assertEqual(p.returncode, 0, describe(p))
        info = json.loads(p.stdout)["status"]["userInfo"]
        self.assertEqual(info, {
            "username": "system:serviceaccount:sa-a:reader",
            "uid": self.uid("serviceaccount", "reader", "sa-a"),
            "groups": ["system:serviceaccounts", "system:serviceaccounts:sa-a",
                       "system:authenticated"],
            "extra": {"authentication.kubernetes.io/credential-id":
                      ["JTI=" + claims_of(token)["jti"]]}})

    def test_reviews_in_discovery(self):
        # kubectl api-resources lists the authentication group's two
        # create-only kinds, as kube 1.32's discovery does.
        p = self.server.kubectl("api-resources", "--api-group", "authentication.k8s.io",
                                "-o", "wide")
        self.assertEqual(p.returncode, 0, describe(p))
        rows = {l.split()[0]: l.split() for l in p.stdout.splitlines()[1:] if l.strip()}
        self.assertEqual(sorted(rows), ["selfsubjectreviews", "tokenreviews"], p.stdout)
        for name, kind in (("selfsubjectreviews", "SelfSubjectReview"),
                           ("tokenreviews", "TokenReview")):
            self.assertIn(kind, rows[name])
            self.assertEqual(rows[name][-1], "create", rows[name])  # the VERBS column

    # --- tokens that must not work --------------------------------------------

    def test_forged_and_tampered(self):
        token = self.new_token()
        self.assertEqual(self.whoami(token).status, 201)
        h, c, s = token.split(".")
        claims = claims_of(token)
        claims["kubernetes.io"]["serviceaccount"]["name"] = "admin"
        self.assertUnauthorized(self.whoami("%s.%s.%s" % (h, b64e(json.dumps(claims).encode()),
                                                          s)))
        sig = bytearray(b64d(s))
        sig[10] ^= 1
        self.assertUnauthorized(self.whoami("%s.%s.%s" % (h, c, b64e(bytes(sig)))))
        self.assertUnauthorized(self.whoami("%s.%s." % (h, c)))
        none = b64e(json.dumps({"alg": "none"}).encode())
        self.assertUnauthorized(self.whoami("%s.%s." % (none, c)))
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.assertUnauthorized(self.whoami(sign(other, claims_of(token))))
        self.assertUnauthorized(self.whoami(token + "x"))

    def test_expiry(self):
        """Tokens signed with the server's own key, so only the times differ."""
        key = self.server_key()
        good = claims_of(self.new_token())
        self.assertEqual(self.whoami(sign(key, good)).status, 201)
        now = int(time.time())
        for exp, nbf, status in ((now - 120, now - 4000, 401),  # expired beyond the leeway
                                 (now - 20, now - 4000, 201),   # within kube's 60 s leeway
                                 (now + 4000, now + 300, 401),  # not valid yet
                                 (now + 4000, now + 20, 201)):
            c = dict(good, exp=exp, nbf=nbf, iat=min(nbf, now))
            r = self.whoami(sign(key, c))
            self.assertEqual(r.status, status, (exp - now, nbf - now, r))
            if status == 401:
                self.assertEqual(r.json(), UNAUTHORIZED)
        # another issuer: not ours, so the (empty) token file decides
        self.assertUnauthorized(self.whoami(sign(key, dict(good, iss="https://elsewhere"))))

    def test_deleted_and_recreated_service_account(self):
        p = self.server.kubectl("create", "serviceaccount", "temp", "-n", "sa-a")
        self.assertEqual(p.returncode, 0, describe(p))
        old = self.new_token(name="temp")
        self.assertEqual(self.whoami(old).status, 201)
        p = self.server.kubectl("delete", "serviceaccount", "temp", "-n", "sa-a")
        self.assertEqual(p.returncode, 0, describe(p))
        wait_until(lambda: self.whoami(old).status == 401, what="token of a deleted SA refused")
        self.assertUnauthorized(self.whoami(old))
        p = self.server.kubectl("create", "serviceaccount", "temp", "-n", "sa-a")
        self.assertEqual(p.returncode, 0, describe(p))
        new = self.new_token(name="temp")
        self.assertEqual(self.whoami(new).status, 201)
        self.assertUnauthorized(self.whoami(old))

    def test_bound_pod_and_secret(self):
        p = self.server.kubectl("run", "bound-pod", "-n", "sa-a", "--image", "x",
                                "--overrides", '{"spec":{"serviceAccountName":"reader"}}')
        self.assertEqual(p.returncode, 0, describe(p))
        pod_uid = self.uid("pod", "bound-pod", "sa-a")
        p = self.server.kubectl("create", "token", "reader", "-n", "sa-a",
                                "--bound-object-kind", "Pod", "--bound-object-name", "bound-pod")
        self.assertEqual(p.returncode, 0, describe(p))
        token = p.stdout.strip()
        self.assertEqual(claims_of(token)["kubernetes.io"]["pod"],
                         {"name": "bound-pod", "uid": pod_uid})
        r = self.whoami(token)
        self.assertEqual(r.status, 201, r)
        extra = r.json()["status"]["userInfo"]["extra"]
        self.assertEqual(extra["authentication.kubernetes.io/pod-name"], ["bound-pod"])
        self.assertEqual(extra["authentication.kubernetes.io/pod-uid"], [pod_uid])
        p = self.server.kubectl("delete", "pod", "bound-pod", "-n", "sa-a", "--grace-period=0",
                                "--force")
        self.assertEqual(p.returncode, 0, describe(p))
        wait_until(lambda: self.whoami(token).status == 401, what="token of a deleted pod refused")
        self.assertUnauthorized(self.whoami(token))
        # a pod re-created under the name has a new uid: still refused
        p = self.server.kubectl("run", "bound-pod", "-n", "sa-a", "--image", "x",
                                "--overrides", '{"spec":{"serviceAccountName":"reader"}}')
        self.assertEqual(p.returncode, 0, describe(p))
        wait_until(lambda: self.whoami(self.new_token(boundObjectRef={
            "kind": "Pod", "apiVersion": "v1", "name": "bound-pod"})).status == 201,
            what="the new pod in the cache")
        self.assertUnauthorized(self.whoami(token))
        # a pod on a node: the token names the node too (kube 1.32's pod node info)
        p = self.server.kubectl("apply", "-f", "-", input=json.dumps(
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}))
        self.assertEqual(p.returncode, 0, describe(p))
        node_uid = self.uid("node", "node-1", "default")
        p = self.server.kubectl("run", "node-pod", "-n", "sa-a", "--image", "x", "--overrides",
                                '{"spec":{"serviceAccountName":"reader","nodeName":"node-1"}}')
        self.assertEqual(p.returncode, 0, describe(p))
        token = self.new_token(boundObjectRef={"kind": "Pod", "apiVersion": "v1",
                                               "name": "node-pod"})
        self.assertEqual(claims_of(token)["kubernetes.io"]["node"],
                         {"name": "node-1", "uid": node_uid})
        r = self.whoami(token)
        self.assertEqual(r.status, 201, r)
        extra = r.json()["status"]["userInfo"]["extra"]
        self.assertEqual(extra["authentication.kubernetes.io/node-name"], ["node-1"])
        self.assertEqual(extra["authentication.kubernetes.io/node-uid"], [node_uid])
        # a Secret-bound token
        p = self.server.kubectl("create", "secret", "generic", "binder", "-n", "sa-a")
        self.assertEqual(p.returncode, 0, describe(p))
        token = self.new_token(boundObjectRef={"kind": "Secret", "apiVersion": "v1",
                                               "name": "binder"})
        self.assertEqual(claims_of(token)["kubernetes.io"]["secret"]["name"], "binder")
        self.assertEqual(self.whoami(token).status, 201)
        p = self.server.kubectl("delete", "secret", "binder", "-n", "sa-a")
        self.assertEqual(p.returncode, 0, describe(p))
        wait_until(lambda: self.whoami(token).status == 401, what="secret-bound token refused")

    # --- TokenReview -----------------------------------------------------------

    def review(self, token, audiences=None):
        spec = {"token": token}
        if audiences is not None:
            spec["audiences"] = audiences
        r = self.server.request("POST", REVIEW, {"apiVersion": "authentication.k8s.io/v1",
                                                 "kind": "TokenReview", "spec": spec})
        self.assertEqual(r.status, 201, r)
        body = r.json()
        self.assertEqual((body["kind"], body["apiVersion"]),
                         ("TokenReview", "authentication.k8s.io/v1"))
        return body["status"]

    def test_token_review(self):
        token = self.new_token(audiences=["api", ISSUER])
        st = self.review(token)
        self.assertTrue(st["authenticated"])
        self.assertEqual(st["user"]["username"], "system:serviceaccount:sa-a:reader")
        self.assertEqual(st["user"]["uid"], self.uid("serviceaccount", "reader", "sa-a"))
        self.assertEqual(st["user"]["groups"], ["system:serviceaccounts",
                                                "system:serviceaccounts:sa-a",
                                                "system:authenticated"])
        self.assertEqual(st["audiences"], [ISSUER])
        st = self.review(token, ["api"])
        self.assertTrue(st["authenticated"])
        self.assertEqual(st["audiences"], ["api"])
        st = self.review(token, ["elsewhere"])
        self.assertFalse(st["authenticated"])
        self.assertEqual(st["user"], {})
        self.assertIn("is invalid for the target audiences", st["error"])
        h, c, s = token.split(".")
        st = self.review("%s.%s.%s" % (h, c, s[:-4] + ("AAAA" if s[-4:] != "AAAA" else "BBBB")))
        self.assertFalse(st["authenticated"])
        self.assertTrue(st["error"])
        st = self.review("not-a-token")
        self.assertEqual(st, {"authenticated": False, "user": {}})
        r = self.server.request("POST", REVIEW, {"apiVersion": "authentication.k8s.io/v1",
                                                 "kind": "TokenReview", "spec": {}})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["message"], "token is required for TokenReview in "
                         "authentication")
        # a ServiceAccount may not review tokens unless granted
        r = self.as_token(token, "POST", REVIEW, {"apiVersion": "authentication.k8s.io/v1",
                                                  "kind": "TokenReview", "spec": {"token": "x"}})
        self.assertEqual(r.status, 403, r)
        self.assertIn('cannot create resource "tokenreviews" in API group '
                      '"authentication.k8s.io"', r.json()["message"])

    # --- restart ---------------------------------------------------------------

    def test_zz_token_survives_restart(self):
        key = os.path.join(self.server.data_dir, "sa.key")
        self.assertEqual(stat.S_IMODE(os.stat(key).st_mode), 0o600)
        with open(key) as f:
            before = f.read()
        token = self.new_token()
        self.server.restart()
        with open(key) as f:
            self.assertEqual(f.read(), before)
        r = self.as_token(token, "GET", "/api/v1/namespaces/sa-a/configmaps/cm")
        self.assertEqual(r.status, 200, r)


class SaKeyFlags(unittest.TestCase):
    """--service-account-signing-key-file / --service-account-key-file /
    --service-account-issuer / --api-audiences: servers of their own."""

    def setUp(self):
        self.servers = []
        self.dir = os.path.join(CONFIG.ensure_work_dir(), "sa-keys-%d-%d" % (os.getpid(),
                                                                              time.monotonic_ns()))
        os.makedirs(self.dir)
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.key_file = os.path.join(self.dir, "signing.key")
        with open(self.key_file, "wb") as f:
            f.write(self.key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.TraditionalOpenSSL,
                                           serialization.NoEncryption()))
        old = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.pub_file = os.path.join(self.dir, "verify.pub")
        with open(self.pub_file, "wb") as f:
            for k in (old, self.key):
                f.write(k.public_key().public_bytes(serialization.Encoding.PEM,
                                                    serialization.PublicFormat.SubjectPublicKeyInfo))

    def tearDown(self):
        for s in self.servers:
            s.cleanup()

    def start(self, name, args, db_url=None):
        s = Server(name, tls=True, extra_args=args, db_url=db_url)
        self.servers.append(s)
        return s.start()

    def test_explicit_keys_issuer_and_audiences(self):
        s = self.start("sa-flags", ["--service-account-signing-key-file", self.key_file,
                                    "--service-account-key-file", self.pub_file,
                                    "--service-account-issuer", "https://issuer.example",
                                    "--api-audiences", "api-a,api-b"])
        self.assertFalse(os.path.exists(os.path.join(s.data_dir, "sa.key")))
        p = s.kubectl("create", "token", "default", "-n", "default")
        self.assertEqual(p.returncode, 0, describe(p))
        token = p.stdout.strip()
        c = claims_of(token)
        self.assertEqual((c["iss"], c["aud"]), ("https://issuer.example", ["api-a", "api-b"]))
        # signed with the given key: it verifies with the public key here too
        h, body, sig = token.split(".")
        self.key.public_key().verify(b64d(sig), ("%s.%s" % (h, body)).encode(),
                                     padding.PKCS1v15(), hashes.SHA256())
        r = s.request("POST", WHOAMI, {}, client_cert=False,
                      headers={"Authorization": "Bearer " + token})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["status"]["userInfo"]["username"],
                         "system:serviceaccount:default:default")
        # a second server that only verifies (shared key file; on PostgreSQL
        # it shares the ServiceAccounts too and accepts the token)
        v = self.start("sa-verify", ["--service-account-key-file", self.pub_file,
                                     "--service-account-issuer", "https://issuer.example",
                                     "--api-audiences", "api-b"], db_url=s.db_url)
        self.assertFalse(os.path.exists(os.path.join(v.data_dir, "sa.key")))
        r = v.request("POST", "/api/v1/namespaces/default/serviceaccounts/default/token",
                      {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"})
        self.assertEqual(r.status, 503, r)
        if CONFIG.backend == "postgres":
            r = v.request("POST", WHOAMI, {}, client_cert=False,
                          headers={"Authorization": "Bearer " + token})
            self.assertEqual(r.status, 201, r)

    def test_bad_key_files(self):
        bad = os.path.join(self.dir, "bad.pem")
        with open(bad, "w") as f:
            f.write("not a key\n")
        for args, msg in ((["--service-account-signing-key-file", bad],
                           "sqlkube: service account keys: the signing key is not a PEM RSA "
                           "private key"),
                          (["--service-account-key-file", bad],
                           "sqlkube: service account keys: key file 1 holds no public key, RSA "
                           "private key or certificate"),
                          (["--service-account-key-file", os.path.join(self.dir, "missing")],
                           "sqlkube: service account keys: cannot read")):
            p = subprocess.run([CONFIG.binary, "serve", "--listen", "127.0.0.1:1",
                                "--data-dir", os.path.join(self.dir, "never")] + args,
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(msg, p.stderr)


if __name__ == "__main__":
    unittest.main()
