"""TLS by default and authentication, with real clients over HTTPS.

A server started without --plain-http generates a CA, a serving certificate
and an admin client certificate (CN kubernetes-admin, O system:masters) and
writes them into its kubeconfig; kubectl and the Python client use that
kubeconfig unchanged. Checked here: the generated files and their modes;
kubectl get/create and `kubectl auth whoami`; the Python client from
load_kube_config; kube's 401 Unauthorized Status for a request without
credentials, a garbage bearer token, a client certificate from another CA,
an expired one and one not made for client auth (the handshake completes
and the authenticator refuses, as kube-apiserver, which only requests a
client certificate and verifies it in its x509 authenticator); users of
--token-auth-file and of any certificate the CA signs (CN user, O groups);
--anonymous-auth; TLS 1.1 refused, renegotiation ending the connection, a
handshake that never completes dropped after the request header timeout;
--plain-http refused off loopback; two servers sharing one CA through
--client-ca-file/--client-ca-key-file, each accepting the other's
kubeconfig (on PostgreSQL they also share the objects).

Why: kubectl and client libraries (client-node 1.x refuses plain HTTP)
expect an API server that speaks TLS and knows who is calling; every
decision authorization will make rests on this identity.
"""

import base64
import datetime
import json
import os
import socket
import ssl
import stat
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import CONFIG, KUBECTL, Server, ServerTestCase, describe  # noqa: E402

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402
from kubernetes import client, config  # noqa: E402

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
TOKENS = ('s3cret-alice,alice,uid-alice,"dev,ops"\n'
          'token-bob,bob,uid-bob\n')
HEADER_TIMEOUT = 2


def make_cert(directory, name, cn, orgs=(), ca=None, days=(-1, 30),
              usage=ExtendedKeyUsageOID.CLIENT_AUTH):
    """A key and certificate (files in directory), signed by ca = (cert, key)
    objects or self-signed as a CA when ca is None; returns (cert_path,
    key_path, cert, key)."""
    key = ec.generate_private_key(ec.SECP256R1())
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    attrs += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    subject = x509.Name(attrs)
    now = datetime.datetime.now(datetime.timezone.utc)
    b = (x509.CertificateBuilder().subject_name(subject)
         .issuer_name(ca[0].subject if ca else subject)
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now + datetime.timedelta(days=days[0]))
         .not_valid_after(now + datetime.timedelta(days=days[1])))
    if ca is None:
        b = b.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    else:
        b = b.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    cert = b.sign(ca[1] if ca else key, hashes.SHA256())
    cert_path = os.path.join(directory, name + ".crt")
    key_path = os.path.join(directory, name + ".key")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert_path, key_path, cert, key


def load_ca(data_dir):
    with open(os.path.join(data_dir, "ca.crt"), "rb") as f:
        cert = x509.load_pem_x509_certificate(f.read())
    with open(os.path.join(data_dir, "ca.key"), "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    return cert, key


def run_kubectl(kubeconfig, *args, home):
    env = dict(os.environ, HOME=home)
    env.pop("KUBECONFIG", None)
    return subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "--request-timeout=30s"]
                          + list(args), capture_output=True, text=True, timeout=90, env=env)


class TlsAuth(ServerTestCase, unittest.TestCase):
    server_tls = True

    @classmethod
    def setUpClass(cls):
        cls.tokens = os.path.join(CONFIG.ensure_work_dir(), "tokens-%d.csv" % os.getpid())
        with open(cls.tokens, "w") as f:
            f.write(TOKENS)
        cls.server_args = ["--token-auth-file", cls.tokens,
                           "--request-header-timeout", str(HEADER_TIMEOUT),
                           "--tls-san", "sqlkube.example"]
        super().setUpClass()

    def whoami(self, **kw):
        r = self.server.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                body={"apiVersion": "authentication.k8s.io/v1",
                                      "kind": "SelfSubjectReview"}, **kw)
        return r

    def assertUnauthorized(self, r):
        self.assertEqual(r.status, 401, r)
        self.assertEqual(r.json(), UNAUTHORIZED)

    # --- what the server generated -----------------------------------------

    def test_generated_files(self):
        d = self.server.data_dir
        for name in ("ca.key", "apiserver.key", "kubeconfig"):
            mode = stat.S_IMODE(os.stat(os.path.join(d, name)).st_mode)
            self.assertEqual(mode, 0o600, name)
        with open(self.server.kubeconfig) as f:
            kc = f.read()
        self.assertIn("server: https://127.0.0.1:%d\n" % self.server.port, kc)
        with open(os.path.join(d, "apiserver.crt"), "rb") as f:
            serving = x509.load_pem_x509_certificate(f.read())
        sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        dns = sans.get_values_for_type(x509.DNSName)
        ips = [str(i) for i in sans.get_values_for_type(x509.IPAddress)]
        for want in ("localhost", "kubernetes.default.svc", "sqlkube.example",
                     socket.gethostname()):
            self.assertIn(want, dns)
        for want in ("127.0.0.1", "::1", "10.96.0.1"):
            self.assertIn(want, ips)
        admin = x509.load_pem_x509_certificate(
            open(self.server.kubeconfig_pem("client-certificate-data"), "rb").read())
        self.assertEqual(admin.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value,
                         "kubernetes-admin")
        self.assertEqual([a.value for a in
                          admin.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)],
                         ["system:masters"])
        # Every generated key reads back with a strict reader (GnuTLS wrote
        # half of all P-256 scalars in 31 or 33 bytes, which it refuses).
        for path in (os.path.join(d, "ca.key"), os.path.join(d, "apiserver.key"),
                     self.server.kubeconfig_pem("client-key-data")):
            with open(path, "rb") as f:
                serialization.load_pem_private_key(f.read(), password=None)

    # --- real clients ------------------------------------------------------

    def test_kubectl(self):
        p = self.server.kubectl("get", "ns", "kube-system", "-o", "name")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertEqual(p.stdout.strip(), "namespace/kube-system")
        p = self.server.kubectl("create", "configmap", "tls-cm", "--from-literal=k=v")
        self.assertEqual(p.returncode, 0, describe(p))
        p = self.server.kubectl("get", "configmap", "tls-cm", "-o", "jsonpath={.data.k}")
        self.assertEqual((p.returncode, p.stdout), (0, "v"), describe(p))

    def test_kubectl_whoami(self):
        p = self.server.kubectl("auth", "whoami", "-o", "json")
        self.assertEqual(p.returncode, 0, describe(p))
        info = json.loads(p.stdout)["status"]["userInfo"]
        self.assertEqual(info, {"username": "kubernetes-admin",
                                "groups": ["system:masters", "system:authenticated"]})
        p = self.server.kubectl("auth", "whoami")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertRegex(p.stdout, r"Username\s+kubernetes-admin")
        self.assertRegex(p.stdout, r"Groups\s+\[system:masters system:authenticated\]")

    def test_python_client(self):
        cfg = client.Configuration()
        config.load_kube_config(config_file=self.server.kubeconfig, client_configuration=cfg,
                                persist_config=False)
        self.assertTrue(cfg.host.startswith("https://"))
        with client.ApiClient(cfg) as api:
            core = client.CoreV1Api(api)
            names = [n.metadata.name for n in core.list_namespace().items]
            self.assertIn("default", names)
            core.create_namespaced_config_map("default", client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name="py-tls"), data={"a": "b"}))
            self.assertEqual(core.read_namespaced_config_map("py-tls", "default").data,
                             {"a": "b"})

    # --- refusals ------------------------------------------------------------

    def test_oversized_body_gets_its_413_over_tls(self):
        # The server reads and drops the rest of a body over the limit before
        # answering: cut off mid-upload, a TLS client lost the 413 to a reset.
        cfg = client.Configuration()
        config.load_kube_config(config_file=self.server.kubeconfig, client_configuration=cfg,
                                persist_config=False)
        huge = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "huge"},
                "data": {"blob": "x" * (4 * 1024 * 1024)}}
        with client.ApiClient(cfg) as api:
            core = client.CoreV1Api(api)
            for _ in range(5):
                with self.assertRaises(client.ApiException) as ctx:
                    core.create_namespaced_config_map("default", huge)
                self.assertEqual(ctx.exception.status, 413)
                self.assertIn("RequestEntityTooLarge", ctx.exception.body)
        for _ in range(3):
            p = self.server.kubectl("create", "-f", "-", input=json.dumps(huge))
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("Request entity too large", p.stderr)

    def test_no_credentials_401(self):
        for path in ("/api/v1/namespaces", "/version", "/readyz", "/no/such/path"):
            self.assertUnauthorized(self.server.request("GET", path, client_cert=False))
        self.assertUnauthorized(self.whoami(client_cert=False))
        # A space before the token: ignored (no credentials), with kube's warning.
        r = self.server.request("GET", "/version", client_cert=False,
                                headers={"Authorization": "Bearer  s3cret-alice"})
        self.assertUnauthorized(r)
        self.assertEqual(r.headers.get("warning"),
                         '299 - "the provided Authorization header contains extra space before '
                         'the bearer token, and is ignored"')
        # Not a bearer scheme: no credentials either.
        self.assertUnauthorized(self.server.request(
            "GET", "/version", client_cert=False, headers={"Authorization": "Basic YTpi"}))

    def test_bad_bearer_401(self):
        for header in ("Bearer garbage", "Bearer s3cret-alic", "Bearer s3cret-alice2",
                       "bearer TOKEN-BOB"):
            self.assertUnauthorized(self.server.request(
                "GET", "/api/v1/namespaces", client_cert=False,
                headers={"Authorization": header}))
        # A valid client certificate is authenticated first, as in kube.
        r = self.server.request("GET", "/version", headers={"Authorization": "Bearer garbage"})
        self.assertEqual(r.status, 200, r)

    def test_token_users(self):
        r = self.whoami(client_cert=False, headers={"Authorization": "Bearer s3cret-alice"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json(), {
            "kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": None},
            "status": {"userInfo": {"username": "alice", "uid": "uid-alice",
                                    "groups": ["dev", "ops", "system:authenticated"]}}})
        r = self.whoami(client_cert=False, headers={"Authorization": "bEaReR token-bob"})
        self.assertEqual(r.json()["status"]["userInfo"],
                         {"username": "bob", "uid": "uid-bob",
                          "groups": ["system:authenticated"]})
        # kubectl with a token kubeconfig (the CA, no client certificate).
        kc = os.path.join(self.server.data_dir, "kubeconfig-alice")
        with open(self.server.kubeconfig) as f:
            text = f.read()
        text = text[:text.index("users:")] + ("users:\n- name: sqlkube\n  user:\n"
                                              "    token: s3cret-alice\n")
        with open(kc, "w") as f:
            f.write(text)
        p = run_kubectl(kc, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}",
                        home=self.server.data_dir)
        self.assertEqual((p.returncode, p.stdout), (0, "alice"), describe(p))
        # Authorization (RBAC) reads this identity: alice has no binding.
        p = run_kubectl(kc, "get", "ns", "default", "-o", "name", home=self.server.data_dir)
        self.assertEqual(p.returncode, 1, describe(p))
        self.assertIn('namespaces "default" is forbidden: User "alice" cannot get resource '
                      '"namespaces" in API group "" in the namespace "default"', p.stderr)

    def test_forbidden_review_is_answered(self):
        """A user without rights asking for a SubjectAccessReview gets kube's
        403 (it once crashed the server: the 403 text read a name the review
        route did not set)."""
        r = self.server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                                body={"apiVersion": "authorization.k8s.io/v1",
                                      "kind": "SubjectAccessReview",
                                      "spec": {"user": "x", "resourceAttributes": {
                                          "verb": "get", "resource": "pods"}}},
                                client_cert=False, headers={"Authorization": "Bearer token-bob"})
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json()["message"],
                         'subjectaccessreviews.authorization.k8s.io is forbidden: User "bob" '
                         'cannot create resource "subjectaccessreviews" in API group '
                         '"authorization.k8s.io" at the cluster scope')
        self.assertEqual(self.server.request("GET", "/readyz").status, 200)

    def test_certificate_users(self):
        """Any certificate the CA signs for client auth: CN user, O groups."""
        d = self.server.data_dir
        ca = load_ca(d)
        cert, key, _, _ = make_cert(d, "frank", "frank", ["team-a", "team-b"], ca=ca)
        r = self.whoami(client_cert=(cert, key))
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["status"]["userInfo"],
                         {"username": "frank",
                          "groups": ["team-a", "team-b", "system:authenticated"]})

    def test_bad_certificates_401(self):
        """The handshake completes (a certificate is only requested); the
        authenticator answers 401, as kube-apiserver's x509 authenticator."""
        d = self.server.data_dir
        other = make_cert(d, "other-ca", "other-ca")
        foreign = make_cert(d, "foreign", "kubernetes-admin", ["system:masters"],
                            ca=(other[2], other[3]))
        ca = load_ca(d)
        expired = make_cert(d, "expired", "kubernetes-admin", ["system:masters"], ca=ca,
                            days=(-10, -1))
        not_yet = make_cert(d, "not-yet", "kubernetes-admin", ["system:masters"], ca=ca,
                            days=(2, 10))
        server_only = make_cert(d, "server-only", "kubernetes-admin", ["system:masters"], ca=ca,
                                usage=ExtendedKeyUsageOID.SERVER_AUTH)
        for name, c in (("foreign CA", foreign), ("expired", expired), ("not yet valid", not_yet),
                        ("server auth only", server_only)):
            with self.subTest(name):
                self.assertUnauthorized(self.server.request("GET", "/api/v1/namespaces",
                                                            client_cert=c[:2]))
        # A bad certificate with a valid token: the token's user (kube's union).
        r = self.whoami(client_cert=foreign[:2], headers={"Authorization": "Bearer token-bob"})
        self.assertEqual(r.json()["status"]["userInfo"]["username"], "bob")

    def test_certificate_expiring_on_an_open_connection(self):
        """Validity is checked at every request, not only at the handshake."""
        import http.client
        d = self.server.data_dir
        cert, key, _, _ = make_cert(d, "short", "shortlived", ca=load_ca(d),
                                    days=(-1, 4 / 86400))
        conn = http.client.HTTPSConnection("127.0.0.1", self.server.port, timeout=30,
                                           context=self.server.ssl_context((cert, key)))
        try:
            conn.request("GET", "/version")
            first = conn.getresponse()
            first.read()
            self.assertEqual(first.status, 200)
            sock = conn.sock
            time.sleep(5)
            conn.request("GET", "/version")
            second = conn.getresponse()
            second.read()
            self.assertIs(conn.sock, sock, "the connection was not kept alive")
            self.assertEqual(second.status, 401)
        finally:
            conn.close()

    # --- the TLS connection ------------------------------------------------------

    def tls_context(self, version):
        ctx = self.server.ssl_context()
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")  # let the client offer old versions at all
        ctx.minimum_version = version
        ctx.maximum_version = version
        return ctx

    def handshake(self, ctx):
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                return s.version()

    def test_tls_versions(self):
        self.assertEqual(self.handshake(self.tls_context(ssl.TLSVersion.TLSv1_2)), "TLSv1.2")
        self.assertEqual(self.handshake(self.tls_context(ssl.TLSVersion.TLSv1_3)), "TLSv1.3")
        for v in (ssl.TLSVersion.TLSv1_1, ssl.TLSVersion.TLSv1):
            with self.subTest(v), self.assertRaises((ssl.SSLError, ConnectionResetError)):
                self.handshake(self.tls_context(v))

    def records_per_response(self, requests):
        """Sends each request in turn on one keep-alive TLS 1.2 connection
        (the admin certificate) and reads its response off the wire through
        a MemoryBIO; returns, per request, (TLS application-data records
        the response came in, seconds it took, the response's bytes)."""
        ctx = self.tls_context(ssl.TLSVersion.TLSv1_2)
        inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = ctx.wrap_bio(inc, out, server_hostname="localhost")
        results = []
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as raw:
            while True:
                try:
                    tls.do_handshake()
                    break
                except ssl.SSLWantReadError:
                    raw.sendall(out.read())
                    inc.write(raw.recv(65536))
            raw.sendall(out.read())
            for req in requests:
                tls.write(req.encode())
                t0 = time.monotonic()
                raw.sendall(out.read())
                wire, plain, records = b"", b"", 0
                while not self.complete_response(plain):
                    chunk = raw.recv(65536)
                    self.assertTrue(chunk, "connection closed mid-response")
                    wire += chunk
                    while len(wire) >= 5 and len(wire) >= 5 + int.from_bytes(wire[3:5], "big"):
                        n = 5 + int.from_bytes(wire[3:5], "big")
                        records += wire[0] == 23  # application data
                        inc.write(wire[:n])
                        wire = wire[n:]
                    try:
                        while True:
                            plain += tls.read(65536)
                    except ssl.SSLWantReadError:
                        pass
                results.append((records, time.monotonic() - t0, plain))
        return results

    @staticmethod
    def complete_response(data):
        head, sep, body = data.partition(b"\r\n\r\n")
        if not sep:
            return False
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                return len(body) >= int(value)
        return body.endswith(b"0\r\n\r\n")  # chunked

    def test_small_response_in_one_record(self):
        """A small response (header and body) goes out as one TLS record,
        at once: MHD hands GnuTLS the header and the body separately, which
        cost a second record, send and client wake-up per request. A large
        one (a list past the cork bound) still arrives whole after them,
        on the same connection."""
        get = "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n"
        for i in range(20):
            self.server.request("POST", "/api/v1/namespaces/default/configmaps", body={
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rec-%d" % i},
                "data": {"k": "v" * 1000}})
        got = self.records_per_response(
            [get % "/version", get % "/api/v1/namespaces/default",
             get % "/api/v1/namespaces/nope", get % "/api/v1/namespaces/default/configmaps",
             get % "/version"])
        for (records, seconds, body), want in zip(got, (200, 200, 404, 200, 200)):
            self.assertTrue(body.startswith(b"HTTP/1.1 %d " % want), body[:200])
            self.assertLess(seconds, 0.1, body[:200])  # no TCP_CORK stall (200 ms)
        self.assertEqual([r for r, _, _ in got[:3]], [1, 1, 1])
        self.assertGreater(got[3][0], 1)  # 20 KiB: not corked
        self.assertIn(b'"rec-19"', got[3][2])
        self.assertEqual(got[4][0], 1)

    def s_client(self, script):
        """openssl s_client (TLS 1.2, the admin certificate) fed script, a
        list of strings and pauses; returns (stdout, stderr)."""
        p = subprocess.Popen(
            ["openssl", "s_client", "-connect", "127.0.0.1:%d" % self.server.port, "-tls1_2",
             "-CAfile", self.server.kubeconfig_pem("certificate-authority-data"),
             "-cert", self.server.kubeconfig_pem("client-certificate-data"),
             "-key", self.server.kubeconfig_pem("client-key-data")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            for step in script:
                if isinstance(step, str):
                    p.stdin.write(step.encode())
                    p.stdin.flush()
                else:
                    time.sleep(step)
            p.stdin.close()
        except BrokenPipeError:  # s_client ended: the server closed the connection
            pass
        p.wait(timeout=30)
        out, err = p.stdout.read(), p.stderr.read()
        p.stdout.close()
        p.stderr.close()
        return out.decode(errors="replace"), err.decode(errors="replace")

    def test_renegotiation_ends_connection(self):
        get = "GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n"
        out, _ = self.s_client([get, 1.0, get, 1.0])
        self.assertEqual(out.count("HTTP/1.1 200 OK"), 2, out[-2000:])
        # "R" alone on a line makes s_client renegotiate: the server ends the
        # connection instead, and the request after it is never answered.
        out, err = self.s_client([get, 1.0, "R\n", 1.5, get, 1.0])
        self.assertIn("RENEGOTIATING", err)
        self.assertEqual(out.count("HTTP/1.1 200 OK"), 1, out[-2000:])

    def test_slow_handshake_dropped(self):
        """A connection that starts no handshake, or stops in the middle of
        a record, is closed after the request header timeout."""
        for sent in (b"", b"\x16\x03\x01\x02"):
            with self.subTest(sent=sent), \
                    socket.create_connection(("127.0.0.1", self.server.port), timeout=15) as s:
                s.sendall(sent)
                start = time.monotonic()
                data = b""
                try:
                    while True:
                        chunk = s.recv(100)
                        if not chunk:
                            break
                        data += chunk
                except ConnectionResetError:
                    pass
                waited = time.monotonic() - start
                # nothing, or at most a TLS alert record (type 21) on the way out
                self.assertTrue(data == b"" or data[:1] == b"\x15", data)
                self.assertLess(waited, HEADER_TIMEOUT + 3)
                self.assertGreater(waited, HEADER_TIMEOUT - 1)
        self.assertEqual(self.server.request("GET", "/readyz").status, 200)


class TlsModes(unittest.TestCase):
    """Modes and flags that need servers of their own."""

    def setUp(self):
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.cleanup()

    def start(self, name, **kw):
        s = Server(name, tls=True, **kw)
        self.servers.append(s)
        return s.start()

    def test_anonymous_auth(self):
        s = self.start("anon", extra_args=["--anonymous-auth=true"])
        # kube's bootstrap policy lets anonymous read /version, nothing more:
        # the 403 names the identity.
        r = s.request("GET", "/version", client_cert=False)
        self.assertEqual(r.status, 200, r)
        r = s.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body={},
                      client_cert=False)
        self.assertEqual(r.status, 403, r)
        self.assertIn('User "system:anonymous" cannot create resource "selfsubjectreviews" in '
                      'API group "authentication.k8s.io" at the cluster scope', r.json()["message"])
        # AlwaysAllow: the review shows who anonymous is.
        s = self.start("anon-allow", extra_args=["--anonymous-auth=true",
                                                 "--authorization-mode", "AlwaysAllow"])
        r = s.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body={},
                      client_cert=False)
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["status"]["userInfo"],
                         {"username": "system:anonymous", "groups": ["system:unauthenticated"]})
        # A bad token is never taken for anonymous.
        r = s.request("GET", "/version", client_cert=False,
                      headers={"Authorization": "Bearer garbage"})
        self.assertEqual(r.status, 401, r)

    def test_plain_http(self):
        s = Server("plain")
        self.servers.append(s)
        s.start()
        with open(s.kubeconfig) as f:
            kc = f.read()
        self.assertIn("server: http://127.0.0.1:%d\n" % s.port, kc)
        self.assertNotIn("client-certificate-data", kc)
        r = s.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body={})
        self.assertEqual(r.json()["status"]["userInfo"],
                         {"username": "system:unsecured",
                          "groups": ["system:masters", "system:authenticated"]})
        self.assertEqual(s.request("GET", "/version",
                                   headers={"Authorization": "Bearer garbage"}).status, 401)
        self.assertIn("requests without credentials are trusted", s.log_tail())
        p = subprocess.run([CONFIG.binary, "serve", "--plain-http", "--listen", "0.0.0.0:1",
                            "--data-dir", os.path.join(s.data_dir, "never")],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr.strip(),
                         "sqlkube: --plain-http serves without TLS or authentication: it is "
                         "refused on 0.0.0.0:1, which is not a loopback address")

    def test_shared_ca(self):
        """Two servers (one PostgreSQL database on that backend) on one CA:
        each accepts the other's kubeconfig."""
        a = self.start("ca-a")
        b_args = ["--client-ca-file", os.path.join(a.data_dir, "ca.crt"),
                  "--client-ca-key-file", os.path.join(a.data_dir, "ca.key")]
        b = self.start("ca-b", db_url=a.db_url, extra_args=b_args)
        self.assertFalse(os.path.exists(os.path.join(b.data_dir, "ca.key")))
        p = a.kubectl("create", "configmap", "shared", "--from-literal=k=a")
        self.assertEqual(p.returncode, 0, describe(p))
        for kc_owner, target in ((a, b), (b, a)):
            kc = os.path.join(kc_owner.data_dir, "kubeconfig-for-%s" % target.name)
            with open(kc_owner.kubeconfig) as f:
                text = f.read().replace(":%d\n" % kc_owner.port, ":%d\n" % target.port)
            with open(kc, "w") as f:
                f.write(text)
            p = run_kubectl(kc, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}",
                            home=kc_owner.data_dir)
            self.assertEqual((p.returncode, p.stdout), (0, "kubernetes-admin"), describe(p))
        if CONFIG.backend == "postgres":
            p = b.kubectl("get", "configmap", "shared", "-o", "jsonpath={.data.k}")
            self.assertEqual((p.returncode, p.stdout), (0, "a"), describe(p))

    def test_per_ip_connection_cap_over_tls(self):
        """--max-connections-per-ip counts TLS connections: past the cap a
        client from that address gets no handshake; others are served."""
        s = self.start("tls-capped", extra_args=["--max-connections-per-ip", "8"])
        ctx = s.ssl_context()
        held = []
        try:
            for _ in range(8):
                raw = socket.socket()
                raw.bind(("127.0.0.9", 0))
                raw.settimeout(10)
                raw.connect(("127.0.0.1", s.port))
                held.append(ctx.wrap_socket(raw, server_hostname="localhost"))
            raw = socket.socket()
            raw.bind(("127.0.0.9", 0))
            raw.settimeout(10)
            raw.connect(("127.0.0.1", s.port))
            with self.assertRaises((ssl.SSLError, ConnectionResetError, OSError)):
                held.append(ctx.wrap_socket(raw, server_hostname="localhost"))
            held[0].sendall(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            self.assertTrue(held[0].recv(100).startswith(b"HTTP/1.1 200"))
            self.assertEqual(s.request("GET", "/readyz", timeout=5).status, 200)
        finally:
            for c in held:
                c.close()
            raw.close()

    def test_bad_tls_flags(self):
        d = os.path.join(CONFIG.ensure_work_dir(), "bad-flags-%d" % os.getpid())
        os.makedirs(d, exist_ok=True)
        ca_only = make_cert(d, "ca-only", "ca-only")[0]
        cases = [
            (["--tls-cert-file", "/nonexistent.crt"],
             "sqlkube: --tls-cert-file and --tls-private-key-file go together"),
            (["--client-ca-file", "/nonexistent/ca.crt"],
             "sqlkube: cannot read /nonexistent/ca.crt: No such file or directory"),
            (["--client-ca-file", os.devnull],
             "sqlkube: the client CA %s is not a PEM certificate" % os.devnull),
            (["--client-ca-file", ca_only],
             "sqlkube: --tls-cert-file is needed when the client CA's key is not given "
             "(--client-ca-key-file)"),
            (["--plain-http", "--tls-san", "example.org"],
             "sqlkube: --plain-http serves no TLS: drop the TLS flags"),
            (["--token-auth-file", os.devnull + "x"],
             "sqlkube: cannot read --token-auth-file %sx (missing, unreadable or over 16 MiB)"
             % os.devnull),
        ]
        for args, want in cases:
            with self.subTest(args=args):
                p = subprocess.run([CONFIG.binary, "serve", "--listen", "127.0.0.1:1",
                                    "--data-dir", d] + args,
                                   capture_output=True, text=True, timeout=30)
                self.assertEqual((p.returncode, p.stderr.strip()), (1, want))
        bad = os.path.join(CONFIG.ensure_work_dir(), "bad-tokens.csv")
        with open(bad, "w") as f:
            f.write("tok,user,uid\nonly-two,fields\n")
        p = subprocess.run([CONFIG.binary, "serve", "--listen", "127.0.0.1:1", "--data-dir", d,
                            "--token-auth-file", bad], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr.strip(),
                         "sqlkube: invalid --token-auth-file %s: line 2: must have at least 3 "
                         "columns (token, user name, user uid), found 2" % bad)


if __name__ == "__main__":
    unittest.main()
