"""Admission webhooks (admissionregistration.k8s.io/v1) addressed by URL,
called over HTTPS by a real webhook server with its own CA.

Checked here, each against kube-apiserver 1.32's behaviour: the
AdmissionReview v1 a webhook is sent for CREATE, UPDATE and DELETE (uid,
kind, resource, namespace, name, operation, userInfo, object, oldObject,
dryRun, options); a denial's Status (the webhook's code, at least 400, and
"admission webhook \"NAME\" denied the request: ..."), also as kubectl
prints it; warnings as Warning headers; a mutating webhook's JSONPatch in
the stored object, and reinvocation of an IfNeeded webhook after a later
webhook's change; failurePolicy Fail and Ignore on a dead webhook, on one
that answers too late (timeoutSeconds) and on one whose certificate the
caBundle does not vouch for; validating webhooks called in parallel;
connections kept alive between calls; namespaceSelector and objectSelector; a dry
run reaching a NoneOnDryRun webhook with dryRun true and nothing stored;
matchConditions (CEL, evaluated with object, oldObject and request as
kube binds them): a false condition skips the webhook whatever the others
gave, an error (kube's per-call cost limit's too) or an exhausted cost
budget (in kube's runtime cost) is decided by failurePolicy (Fail: kube's
Forbidden with "expression '...' resulted in error: ..."), authorizer checks
(kube's CEL authorization library, two a condition within the per-call
limit, three past it) decided by the server's RBAC, and a condition that does not compile refused with 422 when
the configuration is written, with cel-go's display of the error; a plain-http URL refused with 422; clientConfig.service reached through the stored Service's
EndpointSlices with the certificate checked for NAME.NAMESPACE.svc, and
kube's reasons when it does not resolve. kube's order: mutating webhooks
run before the registry's checks, so a webhook's added RBAC rules meet the
escalation check (Role, ClusterRole, create and update), a CSR's requester
is the caller's whatever the webhook wrote, and a CREATE review carries no
uid, a null creationTimestamp and no generated name yet (validating ones see
them); a patch is reviewed with UpdateOptions, a patch that is not a JSON
patch is a 500 under Ignore too; DeleteOptions with preconditions, and
deletecollection's items reviewed without a name. Audit annotations in the
audit log's ResponseComplete event: a webhook's own as NAME/KEY (an invalid
key left out, a refusing webhook's kept), kube's mutation.webhook... and
failed-open... ones. A /scale update reviewed as the autoscaling/v1 Scale
(object and oldObject, a patch setting the parent's replicas); a pod
eviction as a CREATE of pods/eviction with the policy/v1 Eviction, a patch
to its deleteOptions obeyed, the pod's DELETE webhooks not called.

CRD conversion webhooks (ConversionReview v1), a CRD whose v1 stores
spec.size and whose v2 says spec.replicas: a create, update, patch and
status patch in v2 converted to v1 before they are stored and the answer
back; reads in v1 and writes in v1 never sent; GET and LIST in v2 (the
list's items in one review); watchers of v2 seeing converted events, each
event sent once for all of them; the webhook by Service; a dead webhook
and wrong answers (a renamed object, too few objects, a Failure result) as
kube's 500 texts with nothing stored; labels from the answer kept, the rest
of metadata the original's, and labels the webhook made invalid refused
with kube's field error.

Why: operators (cert-manager, Cluster API, Kueue, anything kubebuilder
made) rely on their webhooks refusing and defaulting objects; a server that
stores webhook configurations but never calls them diverges silently.
"""

import base64
import datetime
import http.server
import ipaddress
import json
import os
import socket
import ssl
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import AuditedServerTestCase, describe, wait_until  # noqa: E402
from test_watch import WatchStream  # noqa: E402

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CONV_GROUP = "conv.example.com"
MWC = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"


SERVICE_NS = "wh-service"
SERVICE_DNS = "hooks.%s.svc" % SERVICE_NS


def _cert(cn, key, issuer, issuer_key, ca):
    now = datetime.datetime.now(datetime.timezone.utc)
    b = (x509.CertificateBuilder()
         .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
         .issuer_name(issuer).public_key(key.public_key())
         .serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(days=1))
         .not_valid_after(now + datetime.timedelta(days=1)))
    if ca:
        b = b.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    else:
        b = b.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName(SERVICE_DNS)]),
            critical=False)
    return b.sign(issuer_key, hashes.SHA256())


def make_pki(directory):
    """A CA and a serving certificate for 127.0.0.1 and SERVICE_DNS it signed: returns
    (ca_pem bytes, cert_path, key_path)."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "webhook-test-ca")])
    ca = _cert("webhook-test-ca", ca_key, ca_name, ca_key, True)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _cert("127.0.0.1", key, ca_name, ca_key, False)
    cert_path = os.path.join(directory, "webhook.crt")
    key_path = os.path.join(directory, "webhook.key")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return ca.public_bytes(serialization.Encoding.PEM), cert_path, key_path


def json_patch(ops):
    return base64.b64encode(json.dumps(ops).encode()).decode()


class WebhookServer:
    """An HTTPS server answering AdmissionReviews and ConversionReviews; a path is a behaviour
    (self.behaviours[path](request) -> response fields), every review it
    receives is kept in self.seen[path]."""

    def __init__(self, cert_path, key_path):
        self.behaviours = {}
        self.seen = {}
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                # headers and body leave in two writes: without this, Nagle
                # holds the body for the client's delayed ACK (40 ms)
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                review = json.loads(self.rfile.read(n))
                path = self.path.split("?")[0]
                with outer.lock:
                    outer.seen.setdefault(path, []).append(
                        {"review": review, "query": self.path.partition("?")[2],
                         "at": time.monotonic()})
                fields = outer.behaviours[path](review["request"])
                # answered in the version and kind asked (an AdmissionReview
                # or a ConversionReview), as webhook libraries do
                answer = {"apiVersion": review["apiVersion"], "kind": review["kind"],
                          "response": dict({"uid": review["request"]["uid"]}, **fields)}
                body = json.dumps(answer).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.connections = 0

        class Quiet(http.server.ThreadingHTTPServer):
            def process_request(self, request, client_address):
                with outer.lock:
                    outer.connections += 1
                super().process_request(request, client_address)

            def finish_request(self, request, client_address):
                # the handshake on the connection's own thread, so that one
                # slow client cannot hold up the others' accepts
                try:
                    request = ctx.wrap_socket(request, server_side=True)
                except (ssl.SSLError, OSError):
                    return  # a client refusing our certificate is a test
                super().finish_request(request, client_address)

            def handle_error(self, request, client_address):
                pass

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert_path, key_path)
        self.httpd = Quiet(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return "https://127.0.0.1:%d%s" % (self.port, path)

    def reviews(self, path):
        with self.lock:
            return [s["review"]["request"] for s in self.seen.get(path, [])]

    def arrivals(self, path):
        """When each review of path arrived (time.monotonic())."""
        with self.lock:
            return [s["at"] for s in self.seen.get(path, [])]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# ---- a kubebuilder project's layout (issue 40: "as envtest would set them up") ----
# What `kubebuilder create api` and `kubebuilder create webhook --defaulting
# --programmatic-validation` leave in config/ after `make manifests`
# (controller-gen's output shape, written here for a CronJob kind of our own):
# the CRD in config/crd/bases, both webhook configurations in
# config/webhook/manifests.yaml, addressed to the in-cluster webhook Service.
KB_GROUP = "batch.tutorial.kubebuilder.io"
KB_CRD = """---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.16.4
  name: cronjobs.batch.tutorial.kubebuilder.io
spec:
  group: batch.tutorial.kubebuilder.io
  names:
    kind: CronJob
    listKind: CronJobList
    plural: cronjobs
    singular: cronjob
  scope: Namespaced
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: CronJob is the Schema for the cronjobs API
        properties:
          apiVersion:
            type: string
          kind:
            type: string
          metadata:
            type: object
          spec:
            properties:
              concurrencyPolicy:
                enum:
                - Allow
                - Forbid
                - Replace
                type: string
              failedJobsHistoryLimit:
                format: int32
                minimum: 0
                type: integer
              jobTemplate:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              schedule:
                minLength: 0
                type: string
              startingDeadlineSeconds:
                format: int64
                minimum: 0
                type: integer
              successfulJobsHistoryLimit:
                format: int32
                minimum: 0
                type: integer
              suspend:
                type: boolean
            required:
            - jobTemplate
            - schedule
            type: object
          status:
            properties:
              lastScheduleTime:
                format: date-time
                type: string
            type: object
        type: object
    served: true
    storage: true
    subresources:
      status: {}
"""
KB_WEBHOOK = """---
apiVersion: admissionregistration.k8s.io/v1
kind: {kind}WebhookConfiguration
metadata:
  name: {prefix}-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /{verb}-batch-tutorial-kubebuilder-io-v1-cronjob
  failurePolicy: Fail
  name: {letter}cronjob-v1.kb.io
  rules:
  - apiGroups:
    - batch.tutorial.kubebuilder.io
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - cronjobs
  sideEffects: None
"""
KB_WEBHOOKS = "".join(KB_WEBHOOK.format(kind=kind, prefix=kind.lower(), verb=verb, letter=verb[0])
                      for kind, verb in (("Mutating", "mutate"), ("Validating", "validate")))


def envtest_rewrite(manifests, base_url, ca_bundle):
    """What envtest's WebhookInstallOptions does to config/webhook before it
    installs it: each webhook's service reference becomes a URL on the
    local webhook server (its path kept), with envtest's CA as caBundle."""
    out = []
    for doc in manifests.split("\n---\n"):
        lines, path = [], None
        skip = 0
        for line in doc.strip("-\n").splitlines():
            if line.strip() == "service:":
                skip = 3  # name, namespace, path
                continue
            if skip:
                skip -= 1
                if line.strip().startswith("path:"):
                    path = line.split(":", 1)[1].strip()
                    lines.append("    caBundle: %s" % ca_bundle)
                    lines.append("    url: %s%s" % (base_url, path))
                continue
            lines.append(line)
        out.append("\n".join(lines))
    return "---\n" + "\n---\n".join(out) + "\n"


def kb_default(rq):
    """The CronJob defaulter of the kubebuilder tutorial, answered as
    controller-runtime's admission.Defaulter answers: the defaulted object
    as a JSON patch against the one sent."""
    spec = rq["object"]["spec"]
    ops = [{"op": "add", "path": "/spec/" + field, "value": value}
           for field, value in (("concurrencyPolicy", "Allow"), ("suspend", False),
                                ("successfulJobsHistoryLimit", 3),
                                ("failedJobsHistoryLimit", 1)) if field not in spec]
    return {"allowed": True, "patchType": "JSONPatch", "patch": json_patch(ops)} if ops else \
        {"allowed": True}


def kb_validate(rq):
    """Its validator, refusing as controller-runtime does an error made with
    apierrors.NewInvalid: the response carries that error's Status."""
    obj = rq["object"]
    name = obj["metadata"]["name"]
    causes = []
    if len(name) > 52:
        causes.append(("metadata.name", json.dumps(name), "must be no more than 52 characters"))
    if len(obj["spec"]["schedule"].split()) != 5:
        causes.append(("spec.schedule", json.dumps(obj["spec"]["schedule"]),
                       "Expected exactly 5 fields, found %d: %s" % (
                           len(obj["spec"]["schedule"].split()), obj["spec"]["schedule"])))
    if not causes:
        return {"allowed": True}
    msgs = ["%s: Invalid value: %s: %s" % c for c in causes]
    message = 'CronJob.%s "%s" is invalid: %s' % (
        KB_GROUP, name, msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]")
    return {"allowed": False, "status": {
        "metadata": {}, "status": "Failure", "message": message, "reason": "Invalid",
        "details": {"name": name, "group": KB_GROUP, "kind": "CronJob",
                    "causes": [{"reason": "FieldValueInvalid", "message": "Invalid value: %s: %s"
                                % (v, m), "field": f} for f, v, m in causes]},
        "code": 422}}


def dead_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Webhooks(AuditedServerTestCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.ca_pem, cert, key = make_pki(cls.tmp.name)
        cls.ca_bundle = base64.b64encode(cls.ca_pem).decode()
        cls.hooks = WebhookServer(cert, key)
        h = cls.hooks.behaviours
        h["/deny"] = lambda rq: {"allowed": False, "status": {
            "code": 403, "reason": "Forbidden", "message": "no thanks"}}
        h["/deny-bare"] = lambda rq: {"allowed": False}
        h["/allow"] = lambda rq: {"allowed": True, "warnings": ["careful, %s" % rq["operation"]]}
        h["/slow"] = lambda rq: (time.sleep(3), {"allowed": True})[1]
        h["/two-seconds"] = lambda rq: (time.sleep(2), {"allowed": True})[1]
        h["/huge"] = lambda rq: {"allowed": True, "warnings": ["w" * (17 << 20)]}
        h["/label"] = cls.label_hook
        h["/reinvoked"] = cls.counting_hook
        h["/mutate-batch-tutorial-kubebuilder-io-v1-cronjob"] = kb_default
        h["/validate-batch-tutorial-kubebuilder-io-v1-cronjob"] = kb_validate
        h["/late-label"] = lambda rq: {"allowed": True} if "late" in (
            rq["object"]["metadata"].get("labels") or {}) else {
            "allowed": True, "patchType": "JSONPatch", "patch": json_patch(
                [{"op": "add", "path": "/metadata/labels", "value": {"late": "yes"}}])}

    @classmethod
    def tearDownClass(cls):
        cls.hooks.stop()
        cls.tmp.cleanup()
        super().tearDownClass()

    @staticmethod
    def label_hook(rq):
        ops = []
        if not rq["object"]["metadata"].get("labels"):
            ops.append({"op": "add", "path": "/metadata/labels", "value": {}})
        ops.append({"op": "add", "path": "/metadata/labels/mutated", "value": "yes"})
        ops.append({"op": "add", "path": "/data/added", "value": "by-webhook"})
        return {"allowed": True, "patchType": "JSONPatch", "patch": json_patch(ops)}

    @staticmethod
    def counting_hook(rq):
        ann = rq["object"]["metadata"].get("annotations") or {}
        n = int(ann.get("calls", "0")) + 1
        ops = []
        if not ann:
            ops.append({"op": "add", "path": "/metadata/annotations", "value": {}})
        ops.append({"op": "add", "path": "/metadata/annotations/calls", "value": str(n)})
        return {"allowed": True, "patchType": "JSONPatch", "patch": json_patch(ops)}

    # ---- helpers ----

    def namespace(self, name):
        """A namespace labelled wh=<name>, for this test's namespaceSelector."""
        r = self.server.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"wh": name}}})
        self.assertEqual(r.status, 201, r)
        return name

    def webhook(self, name, path=None, url=None, **extra):
        w = {"name": name, "clientConfig": {"url": url or self.hooks.url(path),
                                            "caBundle": self.ca_bundle},
             "rules": [{"operations": ["CREATE", "UPDATE", "DELETE"], "apiGroups": [""],
                        "apiVersions": ["v1"], "resources": ["configmaps"]}],
             "sideEffects": "None", "admissionReviewVersions": ["v1"]}
        w.update(extra)
        return w

    def register(self, collection, name, *webhooks):
        kind = ("Validating" if collection == VWC else "Mutating") + "WebhookConfiguration"
        r = self.server.request("POST", collection, {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": name}, "webhooks": list(webhooks)})
        self.assertEqual(r.status, 201, r)
        self.addCleanup(self.server.request, "DELETE", "%s/%s" % (collection, name))

    def create_cm(self, ns, name, labels=None, query=""):
        meta = {"name": name}
        if labels:
            meta["labels"] = labels
        return self.server.request("POST", "/api/v1/namespaces/%s/configmaps%s" % (ns, query), {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}})

    def on_ns(self, ns):
        return {"namespaceSelector": {"matchLabels": {"wh": ns}}}

    # ---- tests ----

    def test_denial_as_kube_words_it_and_the_review_sent(self):
        ns = self.namespace("wh-deny")
        self.register(VWC, "deny", self.webhook("deny.example.com", "/deny", **self.on_ns(ns)))
        r = self.create_cm(ns, "refused")
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json(), {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'admission webhook "deny.example.com" denied the request: no thanks',
            "reason": "Forbidden", "code": 403})
        self.assertEqual(self.server.request(
            "GET", "/api/v1/namespaces/%s/configmaps/refused" % ns).status, 404)
        rq = self.hooks.reviews("/deny")[-1]
        self.assertEqual(rq["kind"], {"group": "", "version": "v1", "kind": "ConfigMap"})
        self.assertEqual(rq["resource"], {"group": "", "version": "v1", "resource": "configmaps"})
        self.assertEqual(rq["requestKind"], rq["kind"])
        self.assertEqual((rq["operation"], rq["namespace"], rq["name"]), ("CREATE", ns, "refused"))
        self.assertEqual(rq["object"]["data"], {"k": "v"})
        self.assertIsNone(rq["oldObject"])
        self.assertIs(rq["dryRun"], False)
        self.assertEqual(rq["options"]["kind"], "CreateOptions")
        self.assertIn("username", rq["userInfo"])
        self.assertEqual(len(rq["uid"]), 36)
        # kube tells the webhook its deadline in the URL
        self.assertEqual(self.hooks.seen["/deny"][-1]["query"], "timeout=10s")
        # namespaceSelector: another namespace is not the webhook's
        self.assertEqual(self.create_cm("default", "wh-deny-elsewhere").status, 201)
        self.server.request("DELETE", "/api/v1/namespaces/default/configmaps/wh-deny-elsewhere")

    def test_denial_without_code_or_message(self):
        ns = self.namespace("wh-bare")
        self.register(VWC, "bare", self.webhook("bare.example.com", "/deny-bare",
                                                **self.on_ns(ns)))
        r = self.create_cm(ns, "x")
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["message"],
                         'admission webhook "bare.example.com" denied the request without '
                         'explanation')
        self.assertEqual(r.json()["status"], "Failure")

    def test_kubectl_prints_the_denial(self):
        ns = self.namespace("wh-kubectl")
        self.register(VWC, "deny-kubectl", self.webhook("deny.example.com", "/deny",
                                                        **self.on_ns(ns)))
        manifest = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": "cm", "namespace": ns}})
        p = self.server.kubectl("create", "-f", "-", input=manifest)
        self.assertNotEqual(p.returncode, 0, describe(p))
        self.assertIn('Error from server (Forbidden): error when creating "STDIN": admission '
                      'webhook "deny.example.com" denied the request: no thanks', p.stderr,
                      describe(p))

    def test_allow_update_delete_and_warnings(self):
        ns = self.namespace("wh-allow")
        self.register(VWC, "allow", self.webhook("allow.example.com", "/allow", **self.on_ns(ns)))
        r = self.create_cm(ns, "cm")
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.headers.get("warning"), '299 - "careful, CREATE"', r.headers)
        cm = r.json()
        cm["data"]["k"] = "v2"
        r = self.server.request("PUT", "/api/v1/namespaces/%s/configmaps/cm" % ns, cm)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.headers.get("warning"), '299 - "careful, UPDATE"')
        rq = self.hooks.reviews("/allow")[-1]
        self.assertEqual(rq["operation"], "UPDATE")
        self.assertEqual((rq["oldObject"]["data"], rq["object"]["data"]),
                         ({"k": "v"}, {"k": "v2"}))
        self.assertEqual(rq["options"]["kind"], "UpdateOptions")
        r = self.server.request("DELETE", "/api/v1/namespaces/%s/configmaps/cm" % ns)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.headers.get("warning"), '299 - "careful, DELETE"')
        rq = self.hooks.reviews("/allow")[-1]
        self.assertEqual((rq["operation"], rq["name"]), ("DELETE", "cm"))
        self.assertIsNone(rq["object"])
        self.assertEqual(rq["oldObject"]["data"], {"k": "v2"})
        self.assertEqual(rq["options"]["kind"], "DeleteOptions")

    def test_delete_denied(self):
        ns = self.namespace("wh-nodelete")
        self.assertEqual(self.create_cm(ns, "kept").status, 201)
        hook = self.webhook("nodelete.example.com", "/deny", **self.on_ns(ns))
        hook["rules"][0]["operations"] = ["DELETE"]
        self.register(VWC, "nodelete", hook)
        r = self.server.request("DELETE", "/api/v1/namespaces/%s/configmaps/kept" % ns)
        self.assertEqual(r.status, 403, r)
        self.assertEqual(self.server.request(
            "GET", "/api/v1/namespaces/%s/configmaps/kept" % ns).status, 200)

    def test_mutation_is_stored_and_validated_after(self):
        ns = self.namespace("wh-mutate")
        self.register(MWC, "label", self.webhook("label.example.com", "/label", **self.on_ns(ns)))
        self.register(VWC, "allow-after", self.webhook("allow.example.com", "/allow",
                                                       **self.on_ns(ns)))
        r = self.create_cm(ns, "cm")
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["metadata"]["labels"], {"mutated": "yes"})
        got = self.server.request("GET", "/api/v1/namespaces/%s/configmaps/cm" % ns).json()
        self.assertEqual(got["metadata"]["labels"], {"mutated": "yes"})
        self.assertEqual(got["data"], {"k": "v", "added": "by-webhook"})
        # the validating webhook is sent the mutated object
        self.assertEqual(self.hooks.reviews("/allow")[-1]["object"]["metadata"]["labels"],
                         {"mutated": "yes"})

    def test_mutation_is_validated(self):
        ns = self.namespace("wh-badpatch")
        self.hooks.behaviours["/bad-name"] = lambda rq: {
            "allowed": True, "patchType": "JSONPatch",
            "patch": json_patch([{"op": "add", "path": "/data/not a key!", "value": "x"}])}
        self.register(MWC, "bad", self.webhook("bad.example.com", "/bad-name", **self.on_ns(ns)))
        r = self.create_cm(ns, "cm")
        self.assertEqual(r.status, 422, r)
        self.assertIn("data[not a key!]", r.json()["message"])

    def test_mutation_cannot_move_the_write(self):
        ns = self.namespace("wh-rename")
        self.assertEqual(self.create_cm(ns, "cm").status, 201)
        self.hooks.behaviours["/rename"] = lambda rq: {
            "allowed": True, "patchType": "JSONPatch", "patch": json_patch(
                [{"op": "replace", "path": "/metadata/name", "value": "other"},
                 {"op": "replace", "path": "/metadata/namespace", "value": "default"}])}
        hook = self.webhook("rename.example.com", "/rename", **self.on_ns(ns))
        hook["rules"][0]["operations"] = ["UPDATE"]
        self.register(MWC, "rename", hook)
        cm = self.server.request("GET", "/api/v1/namespaces/%s/configmaps/cm" % ns).json()
        cm["data"] = {"k": "changed"}
        r = self.server.request("PUT", "/api/v1/namespaces/%s/configmaps/cm" % ns, cm)
        self.assertEqual(r.status, 400, r)
        self.assertEqual(self.server.request(
            "GET", "/api/v1/namespaces/%s/configmaps/cm" % ns).json()["data"], {"k": "v"})
        self.assertEqual(self.server.request(
            "GET", "/api/v1/namespaces/default/configmaps/other").status, 404)

    def test_each_patched_object_is_defaulted_before_the_next_webhook(self):
        ns = self.namespace("wh-defaults")
        self.hooks.behaviours["/add-port"] = lambda rq: {
            "allowed": True, "patchType": "JSONPatch", "patch": json_patch(
                [{"op": "add", "path": "/spec/ports/-", "value": {"name": "b", "port": 81}}])}
        self.hooks.behaviours["/look"] = lambda rq: {"allowed": True}
        rules = [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                  "resources": ["services"]}]
        self.register(MWC, "a-add-port", self.webhook("add.example.com", "/add-port",
                                                      rules=rules, **self.on_ns(ns)))
        self.register(MWC, "b-look", self.webhook("look.example.com", "/look", rules=rules,
                                                  **self.on_ns(ns)))
        r = self.server.request("POST", "/api/v1/namespaces/%s/services" % ns, {
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"},
            "spec": {"ports": [{"name": "a", "port": 80}]}})
        self.assertEqual(r.status, 201, r)
        seen = self.hooks.reviews("/look")[-1]["object"]["spec"]["ports"]
        # the port the first webhook added has kube's defaults when the second sees it
        self.assertEqual([(p["port"], p.get("protocol"), p.get("targetPort")) for p in seen],
                         [(80, "TCP", 80), (81, "TCP", 81)])
        self.assertEqual(len(r.json()["spec"]["ports"]), 2)

    def test_reinvocation_if_needed(self):
        ns = self.namespace("wh-reinvoke")
        self.register(MWC, "a-counting",
                      self.webhook("count.example.com", "/reinvoked", reinvocationPolicy="IfNeeded",
                                   **self.on_ns(ns)))
        self.register(MWC, "b-late", self.webhook("late.example.com", "/late-label",
                                                  **self.on_ns(ns)))
        before = len(self.hooks.reviews("/reinvoked"))
        r = self.create_cm(ns, "cm")
        self.assertEqual(r.status, 201, r)
        obj = r.json()
        # counted twice: called, then called again after the later webhook's change
        self.assertEqual(obj["metadata"]["annotations"], {"calls": "2"})
        self.assertEqual(obj["metadata"]["labels"], {"late": "yes"})
        seen = self.hooks.reviews("/reinvoked")[before:]
        self.assertEqual(len(seen), 2)
        self.assertEqual(seen[1]["object"]["metadata"]["labels"], {"late": "yes"})
        # the audit event names each call by round and index, across configurations
        ann = self.audit_events(r)[-1]["annotations"]
        calls = {k: json.loads(v) for k, v in ann.items() if k.startswith("mutation.webhook.")}
        self.assertEqual(calls, {
            "mutation.webhook.admission.k8s.io/round_0_index_0": {
                "configuration": "a-counting", "webhook": "count.example.com", "mutated": True},
            "mutation.webhook.admission.k8s.io/round_0_index_1": {
                "configuration": "b-late", "webhook": "late.example.com", "mutated": True},
            "mutation.webhook.admission.k8s.io/round_1_index_0": {
                "configuration": "a-counting", "webhook": "count.example.com", "mutated": True},
        })
        # Never (the default): called once
        self.server.request("DELETE", MWC + "/a-counting")
        self.register(MWC, "a-counting-never", self.webhook("count.example.com", "/reinvoked",
                                                            **self.on_ns(ns)))
        r = self.create_cm(ns, "cm2")
        self.assertEqual(r.json()["metadata"]["annotations"], {"calls": "1"})

    def test_dead_webhook_fail_and_ignore(self):
        ns = self.namespace("wh-dead")
        url = "https://127.0.0.1:%d/" % dead_port()
        self.register(VWC, "dead", self.webhook("dead.example.com", url=url, **self.on_ns(ns)))
        r = self.create_cm(ns, "cm")
        self.assertEqual(r.status, 500, r)
        st = r.json()
        self.assertEqual(st["reason"], "InternalError")
        prefix = ('Internal error occurred: failed calling webhook "dead.example.com": failed to '
                  'call webhook: Post "%s?timeout=10s": ' % url)
        self.assertTrue(st["message"].startswith(prefix), st["message"])
        self.assertEqual(st["details"]["causes"][0]["message"],
                         st["message"][len("Internal error occurred: "):])
        self.server.request("DELETE", VWC + "/dead")
        self.register(VWC, "dead-ignored", self.webhook("dead.example.com", url=url,
                                                        failurePolicy="Ignore", **self.on_ns(ns)))
        self.assertEqual(self.create_cm(ns, "cm").status, 201)

    def test_timeout(self):
        ns = self.namespace("wh-slow")
        self.register(VWC, "slow", self.webhook("slow.example.com", "/slow", timeoutSeconds=1,
                                                **self.on_ns(ns)))
        t = time.monotonic()
        r = self.create_cm(ns, "cm")
        took = time.monotonic() - t
        self.assertEqual(r.status, 500, r)
        self.assertTrue(r.json()["message"].endswith(
            'Post "%s?timeout=1s": context deadline exceeded' % self.hooks.url("/slow")),
            r.json()["message"])
        self.assertLess(took, 2.5)
        self.assertEqual(self.hooks.seen["/slow"][-1]["query"], "timeout=1s")

    def test_an_endless_answer_is_a_call_failure(self):
        # 17 MiB of answer: the server reads 16 MiB at most and calls the
        # call failed, so failurePolicy decides, and its memory stays bounded
        ns = self.namespace("wh-huge")
        self.register(VWC, "huge", self.webhook("huge.example.com", "/huge", **self.on_ns(ns)))
        r = self.create_cm(ns, "cm")
        self.assertEqual(r.status, 500, r)
        self.assertTrue(r.json()["message"].endswith(
            "the webhook's answer is larger than 16777216 bytes"), r.json()["message"])
        self.server.request("DELETE", VWC + "/huge")
        self.register(VWC, "huge-ignored", self.webhook("huge.example.com", "/huge",
                                                        failurePolicy="Ignore", **self.on_ns(ns)))
        self.assertEqual(self.create_cm(ns, "cm").status, 201)

    def test_connections_are_reused(self):
        ns = self.namespace("wh-reuse")
        self.register(VWC, "reuse", self.webhook("reuse.example.com", "/allow", **self.on_ns(ns)))
        self.assertEqual(self.create_cm(ns, "cm0").status, 201)
        before = (self.hooks.connections, len(self.hooks.reviews("/allow")))
        for i in range(1, 6):
            self.assertEqual(self.create_cm(ns, "cm%d" % i).status, 201)
        calls = len(self.hooks.reviews("/allow")) - before[1]
        self.assertEqual(calls, 5)
        # one after another, the calls find the kept-alive connection
        self.assertLessEqual(self.hooks.connections - before[0], 1)

    def test_validating_webhooks_run_in_parallel(self):
        ns = self.namespace("wh-parallel")
        self.register(VWC, "par", *[self.webhook("p%d.example.com" % i, "/two-seconds",
                                                 **self.on_ns(ns)) for i in range(3)])
        before = len(self.hooks.reviews("/two-seconds"))
        self.assertEqual(self.create_cm(ns, "cm").status, 201)
        arrived = self.hooks.arrivals("/two-seconds")[before:]
        self.assertEqual(len(arrived), 3)
        # each answer takes two seconds: called in turn, the calls would
        # arrive two seconds apart; at once, all arrive before the first ends
        self.assertLess(max(arrived) - min(arrived), 1.9, arrived)

    def test_unknown_ca_is_a_call_failure(self):
        ns = self.namespace("wh-ca")
        other_ca, _, _ = make_pki(tempfile.mkdtemp(dir=self.tmp.name))
        hook = self.webhook("ca.example.com", "/allow", **self.on_ns(ns))
        hook["clientConfig"]["caBundle"] = base64.b64encode(other_ca).decode()
        self.register(VWC, "wrong-ca", hook)
        r = self.create_cm(ns, "cm")
        self.assertEqual(r.status, 500, r)
        self.assertIn('failed calling webhook "ca.example.com"', r.json()["message"])
        # without a caBundle the system roots do not know the test CA either
        self.server.request("DELETE", VWC + "/wrong-ca")
        del hook["clientConfig"]["caBundle"]
        self.register(VWC, "system-roots", hook)
        self.assertEqual(self.create_cm(ns, "cm").status, 500)

    def test_object_selector(self):
        ns = self.namespace("wh-objsel")
        self.register(VWC, "objsel", self.webhook(
            "objsel.example.com", "/deny", objectSelector={
                "matchExpressions": [{"key": "guarded", "operator": "In", "values": ["yes"]}]},
            **self.on_ns(ns)))
        self.assertEqual(self.create_cm(ns, "free").status, 201)
        self.assertEqual(self.create_cm(ns, "guarded", labels={"guarded": "yes"}).status, 403)
        # an update is selected by its old object too
        r = self.server.request("GET", "/api/v1/namespaces/%s/configmaps/free" % ns).json()
        r["metadata"]["labels"] = {"guarded": "yes"}
        self.assertEqual(self.server.request(
            "PUT", "/api/v1/namespaces/%s/configmaps/free" % ns, r).status, 403)

    def test_dry_run(self):
        ns = self.namespace("wh-dryrun")
        self.register(MWC, "dry-label", self.webhook("label.example.com", "/label",
                                                     sideEffects="NoneOnDryRun",
                                                     **self.on_ns(ns)))
        r = self.create_cm(ns, "cm", query="?dryRun=All")
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["metadata"]["labels"], {"mutated": "yes"})
        rq = self.hooks.reviews("/label")[-1]
        self.assertIs(rq["dryRun"], True)
        self.assertEqual(rq["options"]["dryRun"], ["All"])
        self.assertEqual(self.server.request(
            "GET", "/api/v1/namespaces/%s/configmaps/cm" % ns).status, 404)

    def test_configurations_are_validated(self):
        base = self.webhook("v.example.com", "/allow")
        cases = [
            (dict(base, matchConditions=[{"name": "c", "expression": "params.x == 1"}]),
             'webhooks[0].matchConditions[0].expression: Invalid value: "params.x == 1": '
             "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in "
             "container '')\n | params.x == 1\n | ^"),
            (dict(base, matchConditions=[{"name": "c", "expression": "object.metadata.name =="}]),
             'webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name '
             '==": compilation failed: ERROR: <input>:1:24: Syntax error: '),
            (dict(base, matchConditions=[{"name": "c", "expression": " "},
                                         {"name": "c", "expression": "true"},
                                         {"name": "Not Valid!", "expression": "true"}]),
             "webhooks[0].matchConditions[0].expression: Required value, "
             "webhooks[0].matchConditions[1].name: Duplicate value: \"c\", "
             "webhooks[0].matchConditions[2].name: Invalid value: \"Not Valid!\": name part "
             "must consist of alphanumeric characters"),
            (dict(base, matchConditions=[{"name": "c%d" % i, "expression": "true"}
                                         for i in range(65)]),
             "webhooks[0].matchConditions: Too many: 65: must have at most 64 items"),
            # type-checked as kube 1.32 checks them: a bool, request and
            # namespaceObject as kube declares them, the authorizer's types
            (dict(base, matchConditions=[{"name": "c", "expression": "'yes'"}]),
             'webhooks[0].matchConditions[0].expression: Invalid value: "\'yes\'": must '
             "evaluate to bool but got string"),
            (dict(base, matchConditions=[{"name": "c", "expression": "object.metadata.name"}]),
             'webhooks[0].matchConditions[0].expression: Invalid value: '
             '"object.metadata.name": must evaluate to bool but got dyn'),
            (dict(base, matchConditions=[{"name": "c", "expression": "request.user == 'bob'"}]),
             'webhooks[0].matchConditions[0].expression: Invalid value: "request.user == '
             "'bob'\": compilation failed: ERROR: <input>:1:8: undefined field 'user'\n"
             " | request.user == 'bob'\n | .......^"),
            (dict(base, matchConditions=[{"name": "c", "expression":
                                          "namespaceObject.metadata.labels.tier == 1"}]),
             "compilation failed: ERROR: <input>:1:38: found no matching overload for '_==_' "
             "applied to '(string, int)'\n | namespaceObject.metadata.labels.tier == 1\n"
             " | .....................................^"),
            (dict(base, matchConditions=[{"name": "c", "expression":
                                          "authorizer.check('get').allowed()"}]),
             "compilation failed: ERROR: <input>:1:17: found no matching overload for 'check' "
             "applied to 'kubernetes.authorization.Authorizer.(string)'\n"
             " | authorizer.check('get').allowed()\n | ................^"),
            # a new expression is checked in kube 1.31's environment (no
            # two-variable comprehensions), and trimmed
            (dict(base, matchConditions=[{"name": "c", "expression":
                                          "  request.userInfo.extra.all(k, v, size(v) > 0)"}]),
             'webhooks[0].matchConditions[0].expression: Invalid value: '
             '"request.userInfo.extra.all(k, v, size(v) > 0)": compilation failed: '
             "ERROR: <input>:1:27: undeclared reference to 'all' (in container '')"),

            (dict(base, clientConfig={"url": "http://127.0.0.1:1/"}),
             "webhooks[0].clientConfig.url: Invalid value: \"http://127.0.0.1:1/\": 'https' is "
             "the only allowed URL scheme"),
            (dict(base, sideEffects="Some"),
             'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", '
             '"NoneOnDryRun"'),
            (dict(base, clientConfig={"service": {"namespace": "default", "name": "x",
                                                  "path": "validate"}}),
             "webhooks[0].clientConfig.service.path: Invalid value: \"validate\": must start "
             "with a '/'"),
            (dict(base, clientConfig={"url": "https://x/", "service": {"name": "x"}}),
             "webhooks[0].clientConfig: Required value: exactly one of url or service is "
             "required"),
            (dict(base, timeoutSeconds=31),
             "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between "
             "1 and 30 seconds"),
            (dict(base, admissionReviewVersions=["v2"]),
             "webhooks[0].admissionReviewVersions: Invalid value: "),
        ]
        for hook, want in cases:
            for collection, kind in ((VWC, "ValidatingWebhookConfiguration"),
                                     (MWC, "MutatingWebhookConfiguration")):
                r = self.server.request("POST", collection, {
                    "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                    "metadata": {"name": "refused"}, "webhooks": [hook]})
                self.assertEqual(r.status, 422, r)
                self.assertIn(want, r.json()["message"])

    def test_match_conditions(self):
        ns = self.namespace("wh-match")
        cms = "/api/v1/namespaces/%s/configmaps" % ns
        guarded = {"name": "guarded",
                   "expression": "has(object.metadata.labels) && "
                                 "'guarded' in object.metadata.labels"}
        self.register(VWC, "match", self.webhook(
            "match.example.com", "/deny", matchConditions=[guarded], **self.on_ns(ns)))
        before = len(self.hooks.reviews("/deny"))
        self.assertEqual(self.create_cm(ns, "free").status, 201)
        self.assertEqual(len(self.hooks.reviews("/deny")), before)  # not called
        r = self.create_cm(ns, "kept", labels={"guarded": "yes"})
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json()["message"],
                         'admission webhook "match.example.com" denied the request: no thanks')
        self.assertEqual(len(self.hooks.reviews("/deny")), before + 1)

    def test_match_conditions_see_request_and_old_object(self):
        ns = self.namespace("wh-match-vars")
        cms = "/api/v1/namespaces/%s/configmaps" % ns
        changed = {"name": "data-changed", "expression":
                   "request.operation == 'UPDATE' && request.name == 'cm' && "
                   "request.namespace == '%s' && request.subResource == '' && "
                   "request.userInfo.username != '' && request.dryRun == false && "
                   "request.kind.kind == 'ConfigMap' && request.resource.resource == 'configmaps' "
                   "&& oldObject.data.k != object.data.k" % ns}
        doomed = {"name": "doomed", "expression":
                  "request.operation == 'DELETE' && object == null && "
                  "oldObject.metadata.name == 'doomed'"}
        self.register(VWC, "match-vars",
                      self.webhook("changed.example.com", "/deny", matchConditions=[changed],
                                   **self.on_ns(ns)),
                      self.webhook("doomed.example.com", "/deny", matchConditions=[doomed],
                                   **self.on_ns(ns)))
        for name in ("cm", "doomed", "other"):
            self.assertEqual(self.create_cm(ns, name).status, 201)
        cm = self.server.request("GET", cms + "/cm").json()
        cm["metadata"]["labels"] = {"same": "data"}
        r = self.server.request("PUT", cms + "/cm", cm)
        self.assertEqual(r.status, 200, r)
        cm = r.json()
        cm["data"]["k"] = "changed"
        r = self.server.request("PUT", cms + "/cm", cm)
        self.assertEqual((r.status, r.json()["message"]), (
            403, 'admission webhook "changed.example.com" denied the request: no thanks'))
        # the same change as a dry run: request.dryRun is true, not matched
        self.assertEqual(self.server.request("PUT", cms + "/cm?dryRun=All", cm).status, 200)
        self.assertEqual(self.server.request("DELETE", cms + "/other").status, 200)
        r = self.server.request("DELETE", cms + "/doomed")
        self.assertEqual((r.status, r.json()["message"]), (
            403, 'admission webhook "doomed.example.com" denied the request: no thanks'))

    def test_match_conditions_ask_the_authorizer(self):
        # kube's CEL authorization library: checks decided by this server's
        # RBAC, for a service account here (the test's own user may do
        # anything), so a RoleBinding written in between changes the answer.
        ns = self.namespace("wh-match-authz")
        # (a check costs 350,000: kube's per-call limit allows two an
        # expression, so the third is a condition of its own)
        sa_cannot = {"name": "sa-cannot-list-secrets", "expression":
                     "!authorizer.serviceAccount(request.namespace, 'reader').group('')"
                     ".resource('secrets').namespace(request.namespace).check('list').allowed()"
                     " && authorizer.requestResource.check('create').allowed()"}
        healthz = {"name": "healthz", "expression":
                   "authorizer.path('/healthz').check('get').allowed()"}
        self.register(VWC, "match-authz", self.webhook(
            "authz.example.com", "/deny", matchConditions=[sa_cannot, healthz],
            **self.on_ns(ns)))
        r = self.create_cm(ns, "first")
        self.assertEqual((r.status, r.json()["message"]), (
            403, 'admission webhook "authz.example.com" denied the request: no thanks'))
        rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/" % ns
        self.assertEqual(self.server.request("POST", rbac + "roles", {
            "metadata": {"name": "secret-lister"},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]}).status,
            201)
        self.assertEqual(self.server.request("POST", rbac + "rolebindings", {
            "metadata": {"name": "reader-lists"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                        "name": "secret-lister"},
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": ns}]}).status,
            201)
        wait_until(lambda: self.create_cm(ns, "second").status == 201,
                   what="the binding seen by the condition")
        # an invalid account is an error of the expression: failurePolicy
        bad = {"name": "bad-account", "expression":
               "authorizer.serviceAccount(request.namespace, 'Not_A_Name').group('')"
               ".resource('pods').check('get').allowed()"}
        self.server.request("DELETE", VWC + "/match-authz")
        self.register(VWC, "match-authz-bad", self.webhook(
            "bad.example.com", "/allow", matchConditions=[bad], **self.on_ns(ns)))
        r = self.create_cm(ns, "third")
        self.assertEqual((r.status, r.json()["message"]), (
            403, "configmaps \"third\" is forbidden: expression '%s' resulted in error: Invalid "
                 "service account name" % bad["expression"]))
        # three checks in one expression pass kube's per-call limit
        three = {"name": "three", "expression": " && ".join(
            "authorizer.path('/%s').check('get').allowed()" % p for p in ("a", "b", "healthz"))}
        self.server.request("DELETE", VWC + "/match-authz-bad")
        self.register(VWC, "match-authz-three", self.webhook(
            "three.example.com", "/allow", matchConditions=[three], **self.on_ns(ns)))
        r = self.create_cm(ns, "fourth")
        self.assertEqual((r.status, r.json()["message"]), (
            403, "configmaps \"fourth\" is forbidden: expression '%s' resulted in error: "
                 "operation cancelled: actual cost limit exceeded" % three["expression"]))

    def test_match_condition_errors_follow_failure_policy(self):
        ns = self.namespace("wh-match-err")
        missing = {"name": "missing", "expression": "object.metadata.labels.missing == 'x'"}
        never = {"name": "never", "expression": "object.metadata.name == 'never'"}
        levels = "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]"
        costly = {"name": "costly", "expression": "%s.all(a, %s.all(b, %s.all(c, %s.all(d, "
                  "%s.all(e, a + b + c + d + e >= 0)))))" % ((levels,) * 5)}
        self.register(VWC, "match-err", self.webhook(
            "fail.example.com", "/allow", matchConditions=[missing], **self.on_ns(ns)))
        r = self.create_cm(ns, "a", labels={"l": "1"})
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json(), {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "configmaps \"a\" is forbidden: expression 'object.metadata.labels."
                       "missing == 'x'' resulted in error: no such key: missing",
            "reason": "Forbidden", "details": {"name": "a", "kind": "configmaps"},
            "code": 403})
        self.server.request("DELETE", VWC + "/match-err")
        # a false condition skips the webhook whatever an error before it
        before = len(self.hooks.reviews("/deny"))
        self.register(VWC, "match-err-2",
                      self.webhook("false-wins.example.com", "/deny",
                                   matchConditions=[missing, never], **self.on_ns(ns)),
                      self.webhook("ignored.example.com", "/deny", failurePolicy="Ignore",
                                   matchConditions=[missing], **self.on_ns(ns)))
        self.assertEqual(self.create_cm(ns, "b", labels={"l": "1"}).status, 201)
        self.assertEqual(len(self.hooks.reviews("/deny")), before)
        # kube's per-call cost limit (1,000,000; the expression would cost
        # some 36,000,000): stopped with cel-go's error, then failurePolicy
        # (Fail), in bounded time
        self.register(VWC, "match-cost", self.webhook(
            "costly.example.com", "/allow", matchConditions=[costly], **self.on_ns(ns)))
        t0 = time.monotonic()
        r = self.create_cm(ns, "c")
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json()["message"],
                         "configmaps \"c\" is forbidden: expression '%s' resulted in error: "
                         "operation cancelled: actual cost limit exceeded" % costly["expression"])
        self.server.request("DELETE", VWC + "/match-cost")
        # the conditions' budget (RuntimeCELCostBudgetMatchConditions,
        # 2,500,000): four conditions of 738,369 each spend it at the
        # fourth, the one failure; three are within it
        sixteen = "[" + ",".join(str(i) for i in range(16)) + "]"
        quartic = ("%s.all(a, %s.all(b, %s.all(c, %s.all(d, a + b + c + d >= 0))))"
                   % ((sixteen,) * 4))
        four = [{"name": "q%d" % i, "expression": quartic} for i in range(4)]
        self.register(VWC, "match-budget", self.webhook(
            "budget.example.com", "/allow", matchConditions=four, **self.on_ns(ns)))
        t0 = time.monotonic()
        r = self.create_cm(ns, "d")
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json()["message"],
                         'configmaps "d" is forbidden: validation failed due to running out of '
                         'cost budget, no further validation rules will be run')
        self.server.request("DELETE", VWC + "/match-budget")
        self.register(VWC, "match-budget-3", self.webhook(
            "budget3.example.com", "/allow", matchConditions=four[:3], **self.on_ns(ns)))
        self.assertEqual(self.create_cm(ns, "e").status, 201)

    def test_kubebuilder_layout_as_envtest_installs_it(self):
        # A kubebuilder project's config/ (the CRD and controller-gen's
        # webhook manifests), rewritten as envtest does (service -> url on
        # the local webhook server, envtest's CA), applied with kubectl;
        # then an operator developer's cycle against it.
        tmp = tempfile.mkdtemp(dir=self.tmp.name)
        for rel, text in (("config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml",
                           KB_CRD),
                          ("config/webhook/manifests.yaml",
                           envtest_rewrite(KB_WEBHOOKS, self.hooks.url(""), self.ca_bundle))):
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w") as f:
                f.write(text)
        for rel in ("config/crd/bases", "config/webhook"):
            p = self.server.kubectl("apply", "-f", os.path.join(tmp, rel))
            self.assertEqual(p.returncode, 0, describe(p))
        self.addCleanup(self.server.request, "DELETE", MWC + "/mutating-webhook-configuration")
        self.addCleanup(self.server.request, "DELETE", VWC + "/validating-webhook-configuration")
        mwc = self.server.request("GET", MWC + "/mutating-webhook-configuration").json()
        self.assertEqual(mwc["webhooks"][0]["clientConfig"]["url"],
                         self.hooks.url("/mutate-batch-tutorial-kubebuilder-io-v1-cronjob"))
        cjs = "/apis/%s/v1/namespaces/default/cronjobs" % KB_GROUP
        wait_until(lambda: self.server.request("GET", cjs).status == 200, what="cronjobs served")

        def cronjob(name, schedule, **spec):
            return json.dumps({"apiVersion": KB_GROUP + "/v1", "kind": "CronJob",
                               "metadata": {"name": name, "namespace": "default"},
                               "spec": dict({"schedule": schedule, "jobTemplate": {
                                   "spec": {"template": {"spec": {"containers": [
                                       {"name": "hello", "image": "busybox"}]}}}}}, **spec)})

        # defaulted by the mutating webhook, accepted by the validating one
        p = self.server.kubectl("apply", "-f", "-", input=cronjob("nightly", "0 3 * * *"))
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertIn("cronjob.batch.tutorial.kubebuilder.io/nightly created", p.stdout)
        got = self.server.request("GET", cjs + "/nightly").json()["spec"]
        self.assertEqual({k: got[k] for k in ("concurrencyPolicy", "suspend",
                                              "successfulJobsHistoryLimit",
                                              "failedJobsHistoryLimit")},
                         {"concurrencyPolicy": "Allow", "suspend": False,
                          "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1})
        # refused by the validator: its Status passed on under kube's
        # "denied the request" (ToStatusErr keeps code, reason and causes),
        # which kubectl prints from the causes; nothing stored
        p = self.server.kubectl("apply", "-f", "-", input=cronjob("broken", "every day"))
        self.assertNotEqual(p.returncode, 0, describe(p))
        self.assertEqual(p.stderr, 'The CronJob "broken" is invalid: spec.schedule: Invalid '
                         'value: "every day": Expected exactly 5 fields, found 2: every day\n')
        r = self.server.request("POST", cjs, json.loads(cronjob("broken", "every day")))
        st = r.json()
        self.assertEqual((r.status, st["reason"], st["code"], st["details"]["causes"][0]["field"]),
                         (422, "Invalid", 422, "spec.schedule"))
        self.assertEqual(st["message"], 'admission webhook "vcronjob-v1.kb.io" denied the '
                         'request: CronJob.%s "broken" is invalid: spec.schedule: Invalid value: '
                         '"every day": Expected exactly 5 fields, found 2: every day' % KB_GROUP)
        self.assertEqual(self.server.request("GET", cjs + "/broken").status, 404)
        # an update keeps its own values and is validated against them
        p = self.server.kubectl("apply", "-f", "-", input=cronjob(
            "nightly", "30 3 * * *", concurrencyPolicy="Forbid"))
        self.assertEqual(p.returncode, 0, describe(p))
        got = self.server.request("GET", cjs + "/nightly").json()["spec"]
        self.assertEqual((got["schedule"], got["concurrencyPolicy"]), ("30 3 * * *", "Forbid"))
        p = self.server.kubectl("patch", "cronjobs." + KB_GROUP, "nightly", "--type=merge",
                                "-p", '{"spec": {"schedule": "now"}}')
        self.assertNotEqual(p.returncode, 0, describe(p))
        self.assertIn('The CronJob "nightly" is invalid: spec.schedule: Invalid value: "now"',
                      p.stderr)
        # server-side apply and a server dry run reach both webhooks too
        p = self.server.kubectl("apply", "--server-side", "--dry-run=server", "-f", "-",
                                input=cronjob("dry", "* * * * *"))
        self.assertEqual(p.returncode, 0, describe(p))
        seen = self.hooks.reviews("/validate-batch-tutorial-kubebuilder-io-v1-cronjob")
        self.assertEqual((seen[-1]["name"], seen[-1]["dryRun"],
                          seen[-1]["object"]["spec"]["failedJobsHistoryLimit"]), ("dry", True, 1))
        self.assertEqual(self.server.request("GET", cjs + "/dry").status, 404)
        p = self.server.kubectl("delete", "cronjobs." + KB_GROUP, "nightly")
        self.assertEqual(p.returncode, 0, describe(p))

    def hooks_service(self):
        """Services hooks and nohooks in SERVICE_NS (the webhook server's
        certificate names hooks.SERVICE_NS.svc), hooks' EndpointSlice
        pointing at the webhook server; made once, shared by the tests."""
        ns = SERVICE_NS
        r = self.server.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "labels": {"wh": ns}}})
        if r.status == 409:
            return ns
        self.assertEqual(r.status, 201, r)
        svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hooks"},
               "spec": {"ports": [{"name": "https", "port": 443,
                                   "targetPort": self.hooks.port}]}}
        r = self.server.request("POST", "/api/v1/namespaces/%s/services" % ns, svc)
        self.assertEqual(r.status, 201, r)
        svc["metadata"]["name"] = "nohooks"
        r = self.server.request("POST", "/api/v1/namespaces/%s/services" % ns, svc)
        self.assertEqual(r.status, 201, r)
        r = self.server.request(
            "POST", "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices" % ns, {
                "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": "hooks-1",
                             "labels": {"kubernetes.io/service-name": "hooks"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}],
                "ports": [{"name": "https", "port": self.hooks.port, "protocol": "TCP"}]})
        self.assertEqual(r.status, 201, r)
        return ns

    def test_service_reference_through_endpoint_slices(self):
        ns = self.hooks_service()
        hook = self.webhook("svc.example.com", "/deny", **self.on_ns(ns))
        hook["clientConfig"] = {"service": {"namespace": ns, "name": "hooks", "path": "/deny"},
                                "caBundle": self.ca_bundle}
        self.register(VWC, "by-service", hook)
        before = len(self.hooks.reviews("/deny"))
        r = self.create_cm(ns, "cm")
        # reached at the slice's address, its certificate checked for hooks.NS.svc
        self.assertEqual(r.status, 403, r)
        self.assertEqual(len(self.hooks.reviews("/deny")) - before, 1)
        self.server.request("DELETE", VWC + "/by-service")
        for name, port, why in (
                ("nohooks", 443, 'no endpoints available for service "nohooks"'),
                ("hooks", 8443, 'no service port 8443 found for service "hooks"'),
                ("absent", 443, 'service "absent" not found')):
            hook["clientConfig"]["service"] = {"namespace": ns, "name": name, "port": port}
            self.register(VWC, "svc-" + name + str(port), hook)
            r = self.create_cm(ns, "cm")
            self.assertEqual(r.status, 500, r)
            self.assertEqual(r.json()["message"],
                             'Internal error occurred: failed calling webhook "svc.example.com": '
                             'could not get REST client: ' + why)
            self.server.request("DELETE", VWC + "/svc-" + name + str(port))

    # ---- kube's admission order: mutation first, then every check ----

    def wait_for(self, fn, what):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if fn():
                return
            time.sleep(0.1)
        self.fail("timed out waiting for " + what)

    def as_user(self, user, method, path, body=None):
        # the plain-HTTP harness user is system:masters, so it may
        # impersonate; the impersonated user is held to RBAC
        return self.server.request(method, path, body, headers={"Impersonate-User": user})

    def test_a_webhook_cannot_escalate_rbac_rules(self):
        ns = self.namespace("wh-esc")
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        # wh-writer may write roles in wh-esc and clusterroles, and holds
        # only get on configmaps there
        writer = [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"],
                   "verbs": ["create", "get", "update", "patch"]},
                  {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
        for path, body in (
                ("%s/namespaces/%s/roles" % (rbac, ns),
                 {"metadata": {"name": "writer"}, "rules": writer}),
                ("%s/namespaces/%s/rolebindings" % (rbac, ns),
                 {"metadata": {"name": "writer"},
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                              "name": "writer"},
                  "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                "name": "wh-writer"}]}),
                (rbac + "/clusterroles",
                 {"metadata": {"name": "wh-cluster-writer"},
                  "rules": [{"apiGroups": ["rbac.authorization.k8s.io"],
                             "resources": ["clusterroles"], "verbs": ["create"]}]}),
                (rbac + "/clusterrolebindings",
                 {"metadata": {"name": "wh-cluster-writer"},
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                              "name": "wh-cluster-writer"},
                  "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                "name": "wh-writer"}]})):
            r = self.server.request("POST", path, body)
            self.assertEqual(r.status, 201, r)
        self.wait_for(lambda: self.as_user(
            "wh-writer", "GET", "/api/v1/namespaces/%s/configmaps/none" % ns).status == 404,
            "wh-writer's binding in effect")
        self.hooks.behaviours["/escalate"] = lambda rq: {
            "allowed": True, "patchType": "JSONPatch", "patch": json_patch(
                [{"op": "add", "path": "/rules/-", "value": {
                    "apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}}])}
        self.register(MWC, "escalate", self.webhook(
            "escalate.example.com", "/escalate",
            rules=[{"operations": ["CREATE", "UPDATE"],
                    "apiGroups": ["rbac.authorization.k8s.io"], "apiVersions": ["v1"],
                    "resources": ["roles", "clusterroles"]}],
            objectSelector={"matchLabels": {"wh-escalate": "yes"}}))
        own = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
        held = "is attempting to grant RBAC permissions not currently held"
        cases = (("%s/namespaces/%s/roles" % (rbac, ns), "Role", "roles"),
                 (rbac + "/clusterroles", "ClusterRole", "clusterroles"))
        for path, kind, resource in cases:
            body = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
                    "metadata": {"name": "wh-grows", "labels": {"wh-escalate": "yes"}},
                    "rules": own if kind == "Role" else []}
            before = len(self.hooks.reviews("/escalate"))
            r = self.as_user("wh-writer", "POST", path, body)
            # the webhook was called, and the rules it added are what the
            # escalation check refuses
            self.assertEqual(len(self.hooks.reviews("/escalate")) - before, 1)
            self.assertEqual(r.status, 403, r)
            self.assertIn(held, r.json()["message"])
            self.assertIn('{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}',
                          r.json()["message"])
            self.assertEqual(self.server.request("GET", path + "/wh-grows").status, 404)
        # an update of a role the user could write is refused the same way
        r = self.server.request("POST", "%s/namespaces/%s/roles" % (rbac, ns), {
            "metadata": {"name": "wh-plain"}, "rules": own})
        self.assertEqual(r.status, 201, r)
        role = r.json()
        role["metadata"]["labels"] = {"wh-escalate": "yes"}
        r = self.as_user("wh-writer", "PUT", "%s/namespaces/%s/roles/wh-plain" % (rbac, ns),
                         role)
        self.assertEqual(r.status, 403, r)
        self.assertIn(held, r.json()["message"])
        # system:masters holds everything: the webhook's rule is stored
        r = self.server.request("POST", cases[0][0], {
            "metadata": {"name": "wh-admin", "labels": {"wh-escalate": "yes"}}, "rules": own})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["rules"][-1]["resources"], ["secrets"])

    def test_a_webhook_cannot_name_a_csr_requester(self):
        csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
        self.hooks.behaviours["/requester"] = lambda rq: {
            "allowed": True, "patchType": "JSONPatch", "patch": json_patch(
                [{"op": "add", "path": "/spec/username", "value": "system:admin"},
                 {"op": "add", "path": "/spec/groups", "value": ["wh-evil"]},
                 {"op": "add", "path": "/spec/uid", "value": "wh-forged"}])}
        self.register(MWC, "requester", self.webhook(
            "requester.example.com", "/requester",
            rules=[{"operations": ["CREATE"], "apiGroups": ["certificates.k8s.io"],
                    "apiVersions": ["v1"], "resources": ["certificatesigningrequests"]}]))
        r = self.server.request("POST", csrs, {
            "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "wh-csr"},
            "spec": {"request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
                     "signerName": "example.com/signer", "usages": ["client auth"]}})
        self.addCleanup(self.server.request, "DELETE", csrs + "/wh-csr")
        self.assertEqual(r.status, 201, r)
        self.assertEqual(len(self.hooks.reviews("/requester")), 1)
        me = self.server.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "SelfSubjectReview"}).json()["status"]["userInfo"]
        spec = self.server.request("GET", csrs + "/wh-csr").json()["spec"]
        # the requester is who created it, whatever the webhook wrote
        self.assertEqual(spec["username"], me["username"])
        self.assertEqual(spec["groups"], me["groups"])
        self.assertNotEqual(spec.get("uid"), "wh-forged")

    def test_what_a_create_review_carries(self):
        ns = self.namespace("wh-create-review")
        self.hooks.behaviours["/look-mutating"] = lambda rq: {"allowed": True}
        self.hooks.behaviours["/look-validating"] = lambda rq: {"allowed": True}
        self.register(MWC, "look-create", self.webhook("look.example.com", "/look-mutating",
                                                       **self.on_ns(ns)))
        self.register(VWC, "look-create", self.webhook("look.example.com", "/look-validating",
                                                       **self.on_ns(ns)))
        r = self.server.request("POST", "/api/v1/namespaces/%s/configmaps" % ns, {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"generateName": "gen-", "uid": "client-uid",
                         "creationTimestamp": "2020-01-01T00:00:00Z"},
            "data": {"k": "v"}})
        self.assertEqual(r.status, 201, r)
        stored = r.json()["metadata"]
        self.assertNotEqual(stored["uid"], "client-uid")
        # kube-apiserver's create handler wipes what only the server sets
        # and calls mutating admission before the registry fills it in:
        # no uid, a zero creationTimestamp (Go writes null), no name yet
        rq = self.hooks.reviews("/look-mutating")[-1]
        meta = rq["object"]["metadata"]
        self.assertNotIn("uid", meta)
        self.assertIn("creationTimestamp", meta)
        self.assertIsNone(meta["creationTimestamp"])
        self.assertNotIn("name", meta)
        self.assertNotIn("name", rq)
        self.assertEqual(meta["generateName"], "gen-")
        self.assertEqual((rq["namespace"], meta["namespace"]), (ns, ns))
        # validating admission sees the object the registry will store
        rq = self.hooks.reviews("/look-validating")[-1]
        meta = rq["object"]["metadata"]
        self.assertEqual(rq["name"], stored["name"])
        self.assertEqual((meta["name"], meta["uid"], meta["creationTimestamp"]),
                         (stored["name"], stored["uid"], stored["creationTimestamp"]))

    def test_patch_review_options_and_undecodable_patch(self):
        ns = self.namespace("wh-patch")
        self.assertEqual(self.create_cm(ns, "cm").status, 201)
        self.register(VWC, "patch-look", self.webhook("look.example.com", "/allow",
                                                      **self.on_ns(ns)))
        r = self.server.request(
            "PATCH", "/api/v1/namespaces/%s/configmaps/cm?fieldManager=wh-test" % ns,
            {"data": {"k": "patched"}}, headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r)
        rq = self.hooks.reviews("/allow")[-1]
        # kube reviews a patch with the UpdateOptions it makes of PatchOptions
        self.assertEqual(rq["operation"], "UPDATE")
        self.assertEqual(rq["options"], {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1",
                                         "fieldManager": "wh-test"})
        # a patch that is not a JSON patch is kube's internal error, which
        # failurePolicy Ignore does not let through
        self.hooks.behaviours["/not-a-patch"] = lambda rq: {
            "allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(b'{"op":"add"}').decode()}
        self.register(MWC, "not-a-patch", self.webhook("bad.example.com", "/not-a-patch",
                                                       failurePolicy="Ignore", **self.on_ns(ns)))
        r = self.create_cm(ns, "cm2")
        self.assertEqual(r.status, 500, r)
        self.assertEqual(r.json()["message"], "Internal error occurred: json: cannot unmarshal "
                         "object into Go value of type jsonpatch.Patch")

    def test_delete_reviews(self):
        ns = self.namespace("wh-delete")
        for name in ("a", "b", "c"):
            self.assertEqual(self.create_cm(ns, name).status, 201)
        self.hooks.behaviours["/look-delete"] = lambda rq: {"allowed": True}
        hook = self.webhook("del.example.com", "/look-delete", **self.on_ns(ns))
        hook["rules"][0]["operations"] = ["DELETE"]
        self.register(VWC, "look-delete", hook)
        uid = self.server.request("GET", "/api/v1/namespaces/%s/configmaps/a" % ns).json()[
            "metadata"]["uid"]
        r = self.server.request("DELETE", "/api/v1/namespaces/%s/configmaps/a" % ns, {
            "apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": uid},
            "orphanDependents": False})
        self.assertEqual(r.status, 200, r)
        rq = self.hooks.reviews("/look-delete")[-1]
        self.assertEqual(rq["name"], "a")
        self.assertEqual(rq["options"], {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                         "preconditions": {"uid": uid},
                                         "orphanDependents": False})
        # deletecollection: each object reviewed under the request's name, none
        before = len(self.hooks.reviews("/look-delete"))
        r = self.server.request("DELETE", "/api/v1/namespaces/%s/configmaps" % ns)
        self.assertEqual(r.status, 200, r)
        seen = self.hooks.reviews("/look-delete")[before:]
        self.assertEqual(sorted(rq["oldObject"]["metadata"]["name"] for rq in seen), ["b", "c"])
        for rq in seen:
            self.assertNotIn("name", rq)
            self.assertEqual(rq["namespace"], ns)

    def test_admission_review_v1beta1(self):
        ns = self.namespace("wh-v1beta1")
        # a v1beta1 answer's patch needs no patchType (kube never checked it)
        self.hooks.behaviours["/beta-label"] = lambda rq: {
            "allowed": True, "patch": json_patch(
                [{"op": "add", "path": "/metadata/labels", "value": {"beta": "yes"}}])}
        self.hooks.behaviours["/versions"] = lambda rq: {"allowed": True}
        self.register(MWC, "beta", self.webhook("beta.example.com", "/beta-label",
                                                admissionReviewVersions=["v1beta1"],
                                                **self.on_ns(ns)))
        self.register(VWC, "versions", *[
            self.webhook("v%d.example.com" % i, "/versions", admissionReviewVersions=versions,
                         **self.on_ns(ns))
            for i, versions in enumerate((["v1beta1", "v1"], ["v2", "v1"]))])
        before = len(self.hooks.seen.get("/versions", []))
        r = self.create_cm(ns, "cm")
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["metadata"]["labels"], {"beta": "yes"})
        self.assertEqual(self.hooks.seen["/beta-label"][-1]["review"]["apiVersion"],
                         "admission.k8s.io/v1beta1")
        # kube sends the first version of the list it knows
        got = sorted(s["review"]["apiVersion"] for s in self.hooks.seen["/versions"][before:])
        self.assertEqual(got, ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"])

    def test_match_policy_equivalent(self):
        ns = self.namespace("wh-equivalent")
        rules = [{"operations": ["CREATE"], "apiGroups": ["autoscaling"], "apiVersions": ["v2"],
                  "resources": ["horizontalpodautoscalers"]}]

        def retarget(rq):
            # the webhook knows autoscaling/v2 only
            assert rq["object"]["apiVersion"] == "autoscaling/v2", rq["object"]
            return {"allowed": True, "patchType": "JSONPatch", "patch": json_patch([
                {"op": "replace", "path": "/spec/metrics/0/resource/target/averageUtilization",
                 "value": 70},
                {"op": "add", "path": "/metadata/labels", "value": {"seen": "v2"}}])}
        self.hooks.behaviours["/retarget"] = retarget
        self.hooks.behaviours["/exact"] = lambda rq: {"allowed": True}
        self.register(MWC, "equivalent", self.webhook("retarget.example.com", "/retarget",
                                                      rules=rules, **self.on_ns(ns)))
        self.register(VWC, "exact", self.webhook("exact.example.com", "/exact", rules=rules,
                                                 matchPolicy="Exact", **self.on_ns(ns)))
        r = self.server.request(
            "POST", "/apis/autoscaling/v1/namespaces/%s/horizontalpodautoscalers" % ns, {
                "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "hpa"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                            "name": "d"},
                         "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}})
        self.assertEqual(r.status, 201, r)
        # the v2 webhook's change, converted back to the version asked
        self.assertEqual(r.json()["spec"]["targetCPUUtilizationPercentage"], 70)
        self.assertEqual(r.json()["metadata"]["labels"], {"seen": "v2"})
        rq = self.hooks.reviews("/retarget")[-1]
        self.assertEqual(rq["kind"], {"group": "autoscaling", "version": "v2",
                                      "kind": "HorizontalPodAutoscaler"})
        self.assertEqual(rq["resource"], {"group": "autoscaling", "version": "v2",
                                          "resource": "horizontalpodautoscalers"})
        self.assertEqual(rq["requestKind"], {"group": "autoscaling", "version": "v1",
                                             "kind": "HorizontalPodAutoscaler"})
        self.assertEqual(rq["requestResource"]["version"], "v1")
        self.assertEqual(rq["object"]["spec"]["metrics"][0]["resource"]["target"],
                         {"type": "Utilization", "averageUtilization": 50})
        # matchPolicy Exact: only the version named
        self.assertEqual(self.hooks.reviews("/exact"), [])

    # ---- CRD conversion webhooks (ConversionReview v1) ----

    @staticmethod
    def convert_widgets(rq):
        """v1 keeps the count as spec.size, v2 as spec.replicas."""
        out = []
        to = rq["desiredAPIVersion"]
        for o in rq["objects"]:
            o = json.loads(json.dumps(o))
            spec = o.get("spec") or {}
            if to.endswith("/v2") and "size" in spec:
                spec["replicas"] = spec.pop("size")
            if to.endswith("/v1") and "replicas" in spec:
                spec["size"] = spec.pop("replicas")
            o["apiVersion"] = to
            out.append(o)
        return {"convertedObjects": out, "result": {"status": "Success"}}

    def conversion_crd(self, plural, kind, path=None, url=None):
        """A two-version CRD (v1 stored, spec.size; v2, spec.replicas)
        converted by the webhook at path (or url)."""
        def version(name, field, storage):
            schema = {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {field: {"type": "integer"}}},
                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}
            return {"name": name, "served": True, "storage": storage,
                    "schema": {"openAPIV3Schema": schema},
                    "additionalPrinterColumns": [
                        {"name": "Count", "type": "integer", "jsonPath": ".spec." + field}],
                    "subresources": {"status": {}, "scale": {
                        "specReplicasPath": ".spec." + field,
                        "statusReplicasPath": ".status.replicas"}}}
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "%s.%s" % (plural, CONV_GROUP)},
               "spec": {"group": CONV_GROUP, "scope": "Namespaced",
                        "names": {"plural": plural, "singular": plural[:-1], "kind": kind},
                        "versions": [version("v1", "size", True),
                                     version("v2", "replicas", False)],
                        "conversion": {"strategy": "Webhook", "webhook": {
                            "clientConfig": {"url": url or self.hooks.url(path),
                                             "caBundle": self.ca_bundle},
                            "conversionReviewVersions": ["v1"]}}}}
        r = self.server.request("POST", CRDS, crd)
        if r.status == 409 and plural == "widgets":
            return  # shared by the tests that convert correctly
        self.assertEqual(r.status, 201, r)
        if plural != "widgets":
            self.addCleanup(self.server.request, "DELETE", "%s/%s.%s" % (CRDS, plural, CONV_GROUP))

    def widgets(self, version, ns, name="", plural="widgets"):
        return "/apis/%s/%s/namespaces/%s/%s%s" % (CONV_GROUP, version, ns, plural,
                                                   "/" + name if name else "")

    def widget(self, version, name, count):
        field = "size" if version == "v1" else "replicas"
        return {"apiVersion": "%s/%s" % (CONV_GROUP, version), "kind": "Widget",
                "metadata": {"name": name, "labels": {"app": "w"}}, "spec": {field: count}}

    def conversions(self):
        return self.hooks.reviews("/convert")

    def test_conversion_on_write_and_read(self):
        self.hooks.behaviours["/convert"] = self.convert_widgets
        self.conversion_crd("widgets", "Widget", "/convert")
        ns = self.namespace("conv-rw")
        before = len(self.conversions())
        r = self.server.request("POST", self.widgets("v2", ns), self.widget("v2", "w1", 3))
        self.assertEqual(r.status, 201, r)
        made = r.json()
        self.assertEqual((made["apiVersion"], made["spec"]), (CONV_GROUP + "/v2", {"replicas": 3}))
        sent = self.conversions()[before:]
        # to the storage version, then the answer back to the version asked
        self.assertEqual([rq["desiredAPIVersion"] for rq in sent],
                         [CONV_GROUP + "/v1", CONV_GROUP + "/v2"], sent)
        self.assertEqual(sent[0]["objects"][0]["spec"], {"replicas": 3})
        self.assertEqual(sent[0]["objects"][0]["apiVersion"], CONV_GROUP + "/v2")
        self.assertEqual(len(sent[0]["uid"]), 36)
        self.assertEqual(sent[1]["objects"][0]["spec"], {"size": 3})
        # stored as v1: read in v1, the webhook not asked
        n = len(self.conversions())
        got = self.server.request("GET", self.widgets("v1", ns, "w1")).json()
        self.assertEqual((got["apiVersion"], got["spec"]), (CONV_GROUP + "/v1", {"size": 3}))
        self.assertEqual(got["metadata"]["uid"], made["metadata"]["uid"])
        # a write in the storage version is not sent either
        r = self.server.request("PATCH", self.widgets("v1", ns, "w1"), {"spec": {"size": 5}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["spec"], {"size": 5})
        self.assertEqual(len(self.conversions()), n, "same-version reads and writes are not sent")
        # and back in v2
        got = self.server.request("GET", self.widgets("v2", ns, "w1")).json()
        self.assertEqual((got["apiVersion"], got["spec"]), (CONV_GROUP + "/v2", {"replicas": 5}))
        self.assertEqual(got["metadata"]["labels"], {"app": "w"})
        self.assertEqual(self.conversions()[-1]["desiredAPIVersion"], CONV_GROUP + "/v2")
        # an update and the status subresource in v2: converted to be stored
        got["spec"]["replicas"] = 7
        r = self.server.request("PUT", self.widgets("v2", ns, "w1"), got)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["spec"], {"replicas": 7})
        r = self.server.request("PATCH", self.widgets("v2", ns, "w1") + "/status",
                                {"status": {"ready": True}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json()["apiVersion"], r.json()["status"]),
                         (CONV_GROUP + "/v2", {"ready": True}))
        got = self.server.request("GET", self.widgets("v1", ns, "w1")).json()
        self.assertEqual((got["spec"], got["status"]), ({"size": 7}, {"ready": True}))
        # /scale reads and writes the version's own path
        for version in ("v1", "v2"):
            sc = self.server.request("GET", self.widgets(version, ns, "w1") + "/scale").json()
            self.assertEqual(sc["spec"], {"replicas": 7}, version)
        r = self.server.request("PATCH", self.widgets("v2", ns, "w1") + "/scale",
                                {"spec": {"replicas": 8}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r)
        got = self.server.request("GET", self.widgets("v1", ns, "w1")).json()
        self.assertEqual(got["spec"], {"size": 8})

    def test_conversion_of_lists_and_watches(self):
        self.hooks.behaviours["/convert"] = self.convert_widgets
        self.conversion_crd("widgets", "Widget", "/convert")
        ns = self.namespace("conv-list")
        for i in range(3):
            r = self.server.request("POST", self.widgets("v1", ns), self.widget("v1", "w%d" % i, i))
            self.assertEqual(r.status, 201, r)
        n = len(self.conversions())
        items = self.server.request("GET", self.widgets("v1", ns)).json()["items"]
        self.assertEqual([o["spec"] for o in items], [{"size": i} for i in range(3)])
        self.assertEqual(len(self.conversions()), n, "a list in the storage version is not sent")
        lst = self.server.request("GET", self.widgets("v2", ns)).json()
        self.assertEqual(lst["apiVersion"], CONV_GROUP + "/v2")
        self.assertEqual([(o["apiVersion"], o["spec"]) for o in lst["items"]],
                         [(CONV_GROUP + "/v2", {"replicas": i}) for i in range(3)])
        sent = self.conversions()[n:]
        # the whole list in one review, as kube sends it
        self.assertEqual(len(sent), 1, sent)
        self.assertEqual([o["metadata"]["name"] for o in sent[0]["objects"]], ["w0", "w1", "w2"])
        # as Tables, the v2 column reads the converted objects
        table = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
        for path in (self.widgets("v2", ns), self.widgets("v1", ns)):
            t = self.server.request("GET", path, headers=table).json()
            self.assertEqual([r["cells"] for r in t["rows"]],
                             [["w%d" % i, i] for i in range(3)], path)
        t = self.server.request("GET", self.widgets("v2", ns, "w2"), headers=table).json()
        self.assertEqual(t["rows"][0]["cells"], ["w2", 2])
        # two watchers of v2, one of v1: each event converted once for v2
        v2 = [WatchStream(self.server, self.widgets("v2", ns) + "?watch=true&resourceVersion=%s"
                          % lst["metadata"]["resourceVersion"]) for _ in range(2)]
        v1 = WatchStream(self.server, self.widgets("v1", ns) + "?watch=true&resourceVersion=%s"
                         % lst["metadata"]["resourceVersion"])
        for w in v2 + [v1]:
            self.addCleanup(w.close)
        n = len(self.conversions())
        r = self.server.request("POST", self.widgets("v1", ns), self.widget("v1", "w9", 9))
        self.assertEqual(r.status, 201, r)
        r = self.server.request("PATCH", self.widgets("v1", ns, "w9"), {"spec": {"size": 10}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r)
        for w in v2:
            evs = w.wait_for(lambda e: len(e) >= 2, what="two v2 events")
            self.assertEqual([(e["type"], e["object"]["apiVersion"], e["object"]["spec"])
                              for e in evs[:2]],
                             [("ADDED", CONV_GROUP + "/v2", {"replicas": 9}),
                              ("MODIFIED", CONV_GROUP + "/v2", {"replicas": 10})])
        evs = v1.wait_for(lambda e: len(e) >= 2, what="two v1 events")
        self.assertEqual([e["object"]["spec"] for e in evs[:2]], [{"size": 9}, {"size": 10}])
        sent = self.conversions()[n:]
        self.assertEqual([[o["spec"] for o in rq["objects"]] for rq in sent],
                         [[{"size": 9}], [{"size": 10}]],
                         "each event converted once for both v2 watchers")

    def test_conversion_webhook_by_service(self):
        self.hooks.behaviours["/convert-svc"] = self.convert_widgets
        svc_ns = self.hooks_service()
        self.conversion_crd("sprockets", "Sprocket", "/convert-svc")
        r = self.server.request("PATCH", "%s/sprockets.%s" % (CRDS, CONV_GROUP), {
            "spec": {"conversion": {"webhook": {"clientConfig": {
                "url": None, "service": {"namespace": svc_ns, "name": "hooks",
                                         "path": "/convert-svc"}}}}}},
            headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r)
        ns = self.namespace("conv-svc")
        r = self.server.request("POST", self.widgets("v2", ns, plural="sprockets"), {
            "apiVersion": CONV_GROUP + "/v2", "kind": "Sprocket", "metadata": {"name": "s"},
            "spec": {"replicas": 4}})
        # reached at the slice's address, its certificate checked for hooks.NS.svc
        self.assertEqual(r.status, 201, r)
        self.assertEqual(len(self.hooks.reviews("/convert-svc")), 2)
        self.assertEqual(self.hooks.seen["/convert-svc"][-1]["query"], "timeout=30s")
        got = self.server.request("GET", self.widgets("v1", ns, "s", plural="sprockets")).json()
        self.assertEqual(got["spec"], {"size": 4})

    def test_admission_in_an_equivalent_version_through_the_conversion_webhook(self):
        self.hooks.behaviours["/convert"] = self.convert_widgets

        def resize(rq):
            # the webhook knows v1 only
            assert rq["object"]["apiVersion"] == CONV_GROUP + "/v1", rq["object"]
            return {"allowed": True, "patchType": "JSONPatch", "patch": json_patch([
                {"op": "replace", "path": "/spec/size", "value": rq["object"]["spec"]["size"] * 10}])}
        self.hooks.behaviours["/resize"] = resize
        self.conversion_crd("widgets", "Widget", "/convert")
        ns = self.namespace("conv-admission")
        rules = [{"operations": ["CREATE"], "apiGroups": [CONV_GROUP], "apiVersions": ["v1"],
                  "resources": ["widgets"]}]
        self.register(MWC, "resize", self.webhook("resize.example.com", "/resize", rules=rules,
                                                  **self.on_ns(ns)))
        r = self.server.request("POST", self.widgets("v2", ns), self.widget("v2", "w", 4))
        self.assertEqual(r.status, 201, r)
        # reviewed in v1 (converted by the CRD's webhook), patched there, converted back
        self.assertEqual(r.json()["spec"], {"replicas": 40})
        rq = self.hooks.reviews("/resize")[-1]
        self.assertEqual(rq["object"]["spec"], {"size": 4})
        self.assertEqual((rq["kind"]["version"], rq["requestKind"]["version"]), ("v1", "v2"))
        got = self.server.request("GET", self.widgets("v1", ns, "w")).json()
        self.assertEqual(got["spec"], {"size": 40})

    def test_objects_of_an_older_storage_version_are_converted(self):
        self.hooks.behaviours["/convert-mig"] = self.convert_widgets
        self.conversion_crd("doohickeys", "Doohickey", "/convert-mig")
        ns = self.namespace("conv-migrate")
        path = lambda version, name="": self.widgets(version, ns, name, plural="doohickeys")
        old = {"apiVersion": CONV_GROUP + "/v1", "kind": "Doohickey",
               "metadata": {"name": "old"}, "spec": {"size": 2}}
        self.assertEqual(self.server.request("POST", path("v1"), old).status, 201)
        # v2 becomes the storage version: "old" stays stored as v1
        crd = self.server.request("GET", "%s/doohickeys.%s" % (CRDS, CONV_GROUP)).json()
        for v in crd["spec"]["versions"]:
            v["storage"] = v["name"] == "v2"
        r = self.server.request("PUT", "%s/doohickeys.%s" % (CRDS, CONV_GROUP), crd)
        self.assertEqual(r.status, 200, r)
        n = len(self.hooks.reviews("/convert-mig"))
        got = self.server.request("GET", path("v2", "old")).json()
        self.assertEqual((got["apiVersion"], got["spec"]), (CONV_GROUP + "/v2", {"replicas": 2}))
        sent = self.hooks.reviews("/convert-mig")[n:]
        self.assertEqual([(rq["desiredAPIVersion"], rq["objects"][0]["apiVersion"]) for rq in sent],
                         [(CONV_GROUP + "/v2", CONV_GROUP + "/v1")])
        items = self.server.request("GET", path("v2")).json()["items"]
        self.assertEqual([o["spec"] for o in items], [{"replicas": 2}])
        # read in the version it is stored in: not sent
        n = len(self.hooks.reviews("/convert-mig"))
        got = self.server.request("GET", path("v1", "old")).json()
        self.assertEqual((got["apiVersion"], got["spec"]), (CONV_GROUP + "/v1", {"size": 2}))
        # a write in the new storage version is stored as it is, not sent
        new = {"apiVersion": CONV_GROUP + "/v2", "kind": "Doohickey",
               "metadata": {"name": "new"}, "spec": {"replicas": 5}}
        r = self.server.request("POST", path("v2"), new)
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["spec"], {"replicas": 5})
        self.assertEqual(len(self.hooks.reviews("/convert-mig")), n)

    def test_failing_conversion_is_a_500_and_nothing_is_stored(self):
        url = "https://127.0.0.1:%d/" % dead_port()
        self.conversion_crd("gadgets", "Gadget", url=url)
        ns = self.namespace("conv-dead")
        gadget = {"apiVersion": CONV_GROUP + "/v2", "kind": "Gadget",
                  "metadata": {"name": "g"}, "spec": {"replicas": 1}}
        r = self.server.request("POST", self.widgets("v2", ns, plural="gadgets"), gadget)
        self.assertEqual(r.status, 500, r)
        st = r.json()
        self.assertEqual((st["kind"], st["status"], st["code"]), ("Status", "Failure", 500))
        self.assertNotIn("reason", st)  # kube's answer to an error that is no API status
        prefix = ('conversion for %s/v2, Kind=Gadget failed: conversion webhook for /, Kind= '
                  'failed: Post "%s?timeout=30s": ' % (CONV_GROUP, url))
        self.assertTrue(st["message"].startswith(prefix), st["message"])
        self.assertEqual(self.server.request(
            "GET", self.widgets("v1", ns, plural="gadgets")).json()["items"], [])
        # stored in v1 (no webhook), unreadable in v2, as one, as a list and as a watch
        lst = self.server.request("GET", self.widgets("v1", ns, plural="gadgets")).json()
        watch = WatchStream(self.server, self.widgets("v2", ns, plural="gadgets") +
                            "?watch=true&resourceVersion=" + lst["metadata"]["resourceVersion"])
        self.addCleanup(watch.close)
        gadget.update(apiVersion=CONV_GROUP + "/v1", spec={"size": 1})
        r = self.server.request("POST", self.widgets("v1", ns, plural="gadgets"), gadget)
        self.assertEqual(r.status, 201, r)
        evs = watch.wait_for(lambda e: len(e) >= 1, what="the watch's ERROR event")
        self.assertEqual((evs[0]["type"], evs[0]["object"]["code"]), ("ERROR", 500), evs)
        self.assertTrue(evs[0]["object"]["message"].startswith(
            "conversion for %s/v1, Kind=Gadget failed: " % CONV_GROUP), evs)
        self.assertTrue(watch.done.wait(10), "the watch ends after the ERROR event")
        r = self.server.request("GET", self.widgets("v2", ns, "g", plural="gadgets"))
        self.assertEqual(r.status, 500, r)
        self.assertTrue(r.json()["message"].startswith(
            "conversion for %s/v1, Kind=Gadget failed: conversion webhook for /, Kind= failed: "
            % CONV_GROUP), r.json()["message"])
        r = self.server.request("GET", self.widgets("v2", ns, plural="gadgets"))
        self.assertEqual(r.status, 500, r)
        self.assertTrue(r.json()["message"].startswith(
            "conversion for %s/v2, Kind=GadgetList failed: conversion webhook for %s/v2, "
            "Kind=GadgetList failed: Post " % (CONV_GROUP, CONV_GROUP)), r.json()["message"])
        # a failed update leaves the stored object as it was
        r = self.server.request("PATCH", self.widgets("v2", ns, "g", plural="gadgets"),
                                {"spec": {"replicas": 4}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 500, r)
        got = self.server.request("GET", self.widgets("v1", ns, "g", plural="gadgets")).json()
        self.assertEqual(got["spec"], {"size": 1})

    def test_conversion_answers_are_checked_as_kube_checks_them(self):
        def renamed(rq):
            out = self.convert_widgets(rq)
            for o in out["convertedObjects"]:
                o["metadata"]["name"] = "other"
            return out

        def relabelled(rq):
            out = self.convert_widgets(rq)
            for o in out["convertedObjects"]:
                o["metadata"]["labels"] = {"converted": "yes"}
                o["metadata"]["generation"] = 42  # not the webhook's to change: restored
            return out
        h = self.hooks.behaviours
        h["/conv-renamed"] = renamed
        h["/conv-none"] = lambda rq: {"convertedObjects": [], "result": {"status": "Success"}}
        h["/conv-failed"] = lambda rq: {"result": {"status": "Failure", "message": "cannot"}}
        h["/conv-relabelled"] = relabelled

        def badly_labelled(rq):
            out = self.convert_widgets(rq)
            for o in out["convertedObjects"]:
                o["metadata"]["labels"] = {"bad key!": "x"}
            return out
        h["/conv-bad-label"] = badly_labelled
        cases = [
            ("/conv-bad-label", "conversion for %s/v2, Kind=Gizmo returned invalid metadata in "
             "object at index 1: metadata.labels: Invalid value: \"bad key!\": name part must "
             "consist of alphanumeric characters" % CONV_GROUP),
            ("/conv-renamed", "conversion for %s/v2, Kind=Gizmo returned invalid converted "
             "object at index 1: must have the same name: g != other" % CONV_GROUP),
            ("/conv-none", "conversion for %s/v2, Kind=Gizmo returned 0 objects, expected 1"
             % CONV_GROUP),
            ("/conv-failed", "conversion for %s/v2, Kind=Gizmo failed: conversion webhook for "
             "/, Kind= failed: cannot" % CONV_GROUP),
        ]
        ns = self.namespace("conv-checked")
        gizmo = {"apiVersion": CONV_GROUP + "/v2", "kind": "Gizmo", "metadata": {"name": "g"},
                 "spec": {"replicas": 2}}
        for path, message in cases:
            self.conversion_crd("gizmos", "Gizmo", path)
            r = self.server.request("POST", self.widgets("v2", ns, plural="gizmos"), gizmo)
            self.assertEqual(r.status, 500, r)
            self.assertTrue(r.json()["message"].startswith(message), (path, r.json()["message"]))
            r = self.server.request("DELETE", "%s/gizmos.%s" % (CRDS, CONV_GROUP))
            self.assertEqual(r.status, 200, r)
            self.wait_for(lambda: self.server.request("GET", "%s/gizmos.%s" % (
                CRDS, CONV_GROUP)).status == 404, "the CRD gone")
        self.conversion_crd("gizmos", "Gizmo", "/conv-relabelled")
        r = self.server.request("POST", self.widgets("v2", ns, plural="gizmos"), gizmo)
        self.assertEqual(r.status, 201, r)
        # labels and annotations are the webhook's, the rest of metadata the original's
        self.assertEqual(r.json()["metadata"]["labels"], {"converted": "yes"})
        self.assertEqual(r.json()["metadata"]["generation"], 1)
        self.assertEqual(r.json()["spec"], {"replicas": 2})


    # ---- audit annotations, /scale, pods/eviction ----

    def test_audit_annotations(self):
        """A webhook's auditAnnotations land in the audit event as NAME/KEY (a key that is not a
        qualified name left out), with kube's own mutation and failed-open annotations; kube's
        patch.webhook... ones are Request level, not written at Metadata."""
        ns = self.namespace("wh-audit")
        self.hooks.behaviours["/annotate-m"] = lambda rq: {
            "allowed": True, "auditAnnotations": {"decision": "stamped", "Bad Key!": "x"},
            "patchType": "JSONPatch", "patch": json_patch(
                [{"op": "add", "path": "/data/stamp", "value": "yes"}])}
        self.hooks.behaviours["/annotate-v"] = lambda rq: {
            "allowed": True, "auditAnnotations": {"verdict": "fine"}}
        self.hooks.behaviours["/annotate-deny"] = lambda rq: {
            "allowed": False, "auditAnnotations": {"why": "named-no"},
            "status": {"code": 403, "message": "no"}}
        dead = "https://127.0.0.1:%d/dead" % dead_port()
        self.register(MWC, "audit-m",
                      self.webhook("annotate.example.com", "/annotate-m", **self.on_ns(ns)),
                      self.webhook("dead.example.com", url=dead, failurePolicy="Ignore",
                                   **self.on_ns(ns)))
        self.register(VWC, "audit-v",
                      self.webhook("check.example.com", "/annotate-v", **self.on_ns(ns)),
                      self.webhook("dead-v.example.com", url=dead, failurePolicy="Ignore",
                                   **self.on_ns(ns)))
        r = self.create_cm(ns, "cm")
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json()["data"]["stamp"], "yes")
        evs = self.audit_events(r)
        self.assertEqual([e["stage"] for e in evs], ["RequestReceived", "ResponseComplete"])
        self.assertNotIn("annotations", evs[0])
        ann = evs[-1]["annotations"]
        self.assertEqual(ann["authorization.k8s.io/decision"], "allow")
        mine = {k: v for k, v in ann.items() if not k.startswith("authorization.k8s.io/")}
        mutation = "mutation.webhook.admission.k8s.io/round_0_index_%d"
        self.assertEqual({k: v for k, v in mine.items() if not k.startswith("mutation.")}, {
            "annotate.example.com/decision": "stamped",
            "check.example.com/verdict": "fine",
            "failed-open.mutation.webhook.admission.k8s.io/round_0_index_1": "dead.example.com",
            "failed-open.validating.webhook.admission.k8s.io/round_0_index_1":
                "dead-v.example.com",
        })
        self.assertEqual(json.loads(mine[mutation % 0]), {
            "configuration": "audit-m", "webhook": "annotate.example.com", "mutated": True})
        self.assertEqual(json.loads(mine[mutation % 1]), {
            "configuration": "audit-m", "webhook": "dead.example.com", "mutated": False})
        self.assertEqual(len(mine), 6, mine)
        # a refusal keeps what the refusing webhook annotated
        self.register(VWC, "audit-w", self.webhook("refuse.example.com", "/annotate-deny",
                                                    **self.on_ns(ns)))
        r = self.create_cm(ns, "refused")
        self.assertEqual(r.status, 403, r)
        ann = self.audit_events(r)[-1]["annotations"]
        self.assertEqual(ann.get("refuse.example.com/why"), "named-no", ann)
        self.assertEqual(ann["annotate.example.com/decision"], "stamped")

    def test_scale_is_reviewed_as_a_scale(self):
        """A /scale update sends webhooks the autoscaling/v1 Scale (and the old Scale), kind
        autoscaling/v1 Scale, resource the parent's, subResource scale; a JSONPatch on the Scale
        sets the parent's replicas; validating webhooks see the Scale as admitted."""
        ns = self.namespace("wh-scale")
        self.hooks.behaviours["/scale-m"] = lambda rq: {
            "allowed": True, "patchType": "JSONPatch", "patch": json_patch(
                [{"op": "replace", "path": "/spec/replicas", "value": 5}]
                if rq["object"]["spec"]["replicas"] == 3 else [])}
        self.hooks.behaviours["/scale-v"] = lambda rq: {"allowed": True}
        rules = [{"operations": ["UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                  "resources": ["deployments/scale"]}]
        self.register(MWC, "scale-m", self.webhook("scale-m.example.com", "/scale-m",
                                                   rules=rules, **self.on_ns(ns)))
        self.register(VWC, "scale-v", self.webhook("scale-v.example.com", "/scale-v",
                                                   rules=rules, **self.on_ns(ns)))
        deps = "/apis/apps/v1/namespaces/%s/deployments" % ns
        r = self.server.request("POST", deps, {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                     "template": {"metadata": {"labels": {"app": "d"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
        self.assertEqual(r.status, 201, r)
        # the parent's own update is not a scale request
        self.assertEqual(self.hooks.reviews("/scale-m"), [])
        r = self.server.request("PATCH", deps + "/d/scale", {"spec": {"replicas": 3}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json()["kind"], r.json()["spec"]["replicas"]), ("Scale", 5))
        got = self.server.request("GET", deps + "/d").json()
        self.assertEqual(got["spec"]["replicas"], 5)
        for path, new in (("/scale-m", 3), ("/scale-v", 5)):
            rq = self.hooks.reviews(path)[-1]
            scale = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
            self.assertEqual((rq["kind"], rq["requestKind"]), (scale, scale), path)
            parent = {"group": "apps", "version": "v1", "resource": "deployments"}
            self.assertEqual((rq["resource"], rq["requestResource"]), (parent, parent), path)
            self.assertEqual((rq["subResource"], rq["operation"], rq["name"]),
                             ("scale", "UPDATE", "d"))
            for obj, replicas in ((rq["object"], new), (rq["oldObject"], 1)):
                self.assertEqual((obj["apiVersion"], obj["kind"]), ("autoscaling/v1", "Scale"))
                self.assertEqual(obj["metadata"]["name"], "d")
                self.assertEqual(obj["spec"], {"replicas": replicas}, path)
                self.assertNotIn("template", json.dumps(obj))
        # a PUT of a Scale too
        scale = self.server.request("GET", deps + "/d/scale").json()
        scale["spec"]["replicas"] = 3
        r = self.server.request("PUT", deps + "/d/scale", scale)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["spec"]["replicas"], 5)
        self.assertEqual(self.hooks.reviews("/scale-m")[-1]["oldObject"]["spec"]["replicas"], 5)
        # kubectl scale goes the same way
        p = self.server.kubectl("scale", "deployment", "d", "-n", ns, "--replicas=3")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertEqual(self.server.request("GET", deps + "/d").json()["spec"]["replicas"], 5)
        # a patched Scale whose replicas are not a count is refused, nothing written
        self.hooks.behaviours["/scale-m"] = lambda rq: {
            "allowed": True, "patchType": "JSONPatch", "patch": json_patch(
                [{"op": "replace", "path": "/spec/replicas", "value": -1}])}
        r = self.server.request("PATCH", deps + "/d/scale", {"spec": {"replicas": 2}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 422, r)
        self.assertEqual(self.server.request("GET", deps + "/d").json()["spec"]["replicas"], 5)

    def test_eviction_is_reviewed_as_an_eviction(self):
        """POST pods/NAME/eviction is a CREATE of pods/eviction whose object is the policy/v1
        Eviction; a mutating webhook's patch to its deleteOptions is what the eviction does; the
        pod's deletion itself calls no DELETE webhook of pods, as kube's eviction REST."""
        ns = self.namespace("wh-evict")
        pods = "/api/v1/namespaces/%s/pods" % ns

        def make_pod(name):
            r = self.server.request("POST", pods, {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
            self.assertEqual(r.status, 201, r)

        def evict(name):
            return self.server.request("POST", "%s/%s/eviction" % (pods, name), {
                "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}})
        make_pod("p")
        self.hooks.behaviours["/evict-dry"] = lambda rq: {
            "allowed": True, "patchType": "JSONPatch", "patch": json_patch(
                [{"op": "add", "path": "/deleteOptions", "value": {"dryRun": ["All"]}}])}
        self.hooks.behaviours["/evict-v"] = lambda rq: {"allowed": True}
        on_evict = [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                     "resources": ["pods/eviction"]}]
        self.register(MWC, "evict-dry", self.webhook("evict-dry.example.com", "/evict-dry",
                                                     rules=on_evict, **self.on_ns(ns)))
        self.register(VWC, "evict-v", self.webhook("evict-v.example.com", "/evict-v",
                                                   rules=on_evict, **self.on_ns(ns)))
        pod_delete = self.webhook("nodelete.example.com", "/deny", **self.on_ns(ns))
        pod_delete["rules"] = [{"operations": ["DELETE"], "apiGroups": [""],
                                "apiVersions": ["v1"], "resources": ["pods"]}]
        self.register(VWC, "evict-pod-nodelete", pod_delete)
        r = evict("p")
        self.assertEqual(r.status, 201, r)
        # the webhook made it a dry run: the pod stays
        self.assertEqual(self.server.request("GET", pods + "/p").status, 200)
        rq = self.hooks.reviews("/evict-dry")[-1]
        self.assertEqual(rq["kind"], {"group": "policy", "version": "v1", "kind": "Eviction"})
        self.assertEqual(rq["resource"], {"group": "", "version": "v1", "resource": "pods"})
        self.assertEqual((rq["subResource"], rq["operation"], rq["name"], rq["namespace"]),
                         ("eviction", "CREATE", "p", ns))
        self.assertEqual((rq["object"]["apiVersion"], rq["object"]["kind"]),
                         ("policy/v1", "Eviction"))
        self.assertEqual((rq["object"]["metadata"]["name"], rq["object"]["metadata"]["namespace"]),
                         ("p", ns))
        self.assertIsNone(rq["oldObject"])
        self.assertEqual(rq["options"]["kind"], "CreateOptions")
        # validating webhooks see the mutated Eviction
        self.assertEqual(self.hooks.reviews("/evict-v")[-1]["object"]["deleteOptions"],
                         {"dryRun": ["All"]})
        # without the mutating webhook: the query's dryRun is put into deleteOptions before
        # the validating webhooks (kube's propagateDryRun)
        self.server.request("DELETE", MWC + "/evict-dry")
        r = self.server.request("POST", "%s/p/eviction?dryRun=All" % pods, {
            "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"},
            "deleteOptions": {"gracePeriodSeconds": 0}})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(self.server.request("GET", pods + "/p").status, 200)
        rq = self.hooks.reviews("/evict-v")[-1]
        self.assertIs(rq["dryRun"], True)
        self.assertEqual(rq["object"]["deleteOptions"], {"gracePeriodSeconds": 0,
                                                         "dryRun": ["All"]})
        # and the pod goes, its DELETE webhook never asked
        denials = len(self.hooks.reviews("/deny"))
        r = evict("p")
        self.assertEqual(r.status, 201, r)
        self.assertEqual(self.server.request("GET", pods + "/p").status, 404)
        self.assertEqual(len(self.hooks.reviews("/deny")), denials)
        # a refusing webhook keeps the pod
        make_pod("q")
        self.register(VWC, "evict-deny", self.webhook("evict-deny.example.com", "/deny",
                                                      rules=on_evict, **self.on_ns(ns)))
        r = evict("q")
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json()["message"],
                         'admission webhook "evict-deny.example.com" denied the request: no thanks')
        self.assertEqual(self.server.request("GET", pods + "/q").status, 200)

if __name__ == "__main__":
    unittest.main()
