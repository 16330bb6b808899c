"""Raw-HTTP error handling of sqlkube: status codes and Status bodies.

Covers the request-validation paths clients rarely take but that must fail
cleanly and in kube-apiserver's shape: body over 3 MiB (413
RequestEntityTooLarge), malformed JSON (400), a body whose kind does not
match the URL (400), an unsupported Content-Type (415), an unknown
resource/group (404), an unsupported verb on an item path (405), an invalid
name (422 Invalid with causes), and 404/409 for item operations; and, word
for word, texts kube's clients and test suite match: a strategic merge
patch the converter cannot restore ("cannot restore map from string"), a
Service's changed cluster IP ("may not change once set"), a body of no
readable kind or of another kind posted to namespaces. Every error
must be a metav1.Status (kind Status, apiVersion v1, status Failure, code
equal to the HTTP status, reason) because clients parse it for messages.
Why: kubectl and client-go only show useful errors when the body is a
Status; a crash, hang or HTML body here is a real bug.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import ServerTestCase  # noqa: E402

CM_PATH = "/api/v1/namespaces/default/configmaps"


def cm(name, data=None):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": data or {"a": "b"}}


class HttpErrors(ServerTestCase, unittest.TestCase):

    def assertStatus(self, r, code, reason=None):
        """r must be an HTTP `code` response whose body is a matching Status."""
        self.assertEqual(r.status, code, "want HTTP %d, got %r" % (code, r))
        ctype = r.headers.get("content-type", "")
        self.assertTrue(ctype.startswith("application/json"),
                        "Status content-type %r (body %r)" % (ctype, r.body[:300]))
        try:
            st = r.json()
        except ValueError:
            self.fail("error body is not JSON: %r" % r.body[:500])
        self.assertEqual(st.get("kind"), "Status", st)
        self.assertEqual(st.get("apiVersion"), "v1", st)
        self.assertEqual(st.get("status"), "Failure", st)
        self.assertEqual(st.get("code"), code, st)
        self.assertTrue(st.get("message"), "Status without message: %r" % st)
        if reason is not None:
            self.assertEqual(st.get("reason"), reason, st)
        self.assertTrue(r.body.endswith(b"}\n"), "not ended as kube's encoder ends it: %r"
                        % r.body[-40:])
        return st

    def test_pretty_json_for_people(self):
        # kube's isPrettyPrint: ?pretty=true, or a curl / Wget / browser
        # User-Agent, gets indented JSON (kubectl's test/cmd greps for
        # '"allowed": true' in curl's output).
        r = self.server.request("POST", CM_PATH, cm("pp", {"k": "v"}))
        self.assertEqual(r.status, 201, r)
        for query, agent, pretty in (("?pretty=true", None, True), ("", "curl/7.88.1", True),
                                     ("", "Wget/1.21", True), ("", "Mozilla/5.0 (X11)", True),
                                     ("?pretty=false", "curl/7.88.1", False),
                                     ("", "kubectl/v1.32.4", False), ("", None, False)):
            headers = {"User-Agent": agent} if agent else {}
            r = self.server.request("GET", CM_PATH + "/pp" + query, headers=headers)
            self.assertEqual(r.status, 200, r)
            self.assertEqual(json.loads(r.body)["data"], {"k": "v"})
            self.assertEqual(b'\n  "kind": "ConfigMap",\n' in r.body, pretty, (query, agent, r.body))
            self.assertTrue(r.body.endswith(b"}\n"))
        r = self.server.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                {"apiVersion": "authorization.k8s.io/v1",
                                 "kind": "SelfSubjectAccessReview",
                                 "spec": {"resourceAttributes": {"verb": "get",
                                                                 "resource": "pods"}}},
                                headers={"User-Agent": "curl/7.88.1"})
        self.assertEqual(r.status, 201, r)
        self.assertIn(b'"allowed": true', r.body)

    def test_json_bodies_end_with_a_newline(self):
        # kube's JSON encoder ends every body with one newline; clients (the
        # Python client's own suite) compare bodies byte for byte.
        r = self.server.request("POST", CM_PATH, cm("nl", {"k": "v"}))
        self.assertEqual(r.status, 201, r)
        for path, accept in ((CM_PATH + "/nl", "application/json"),
                             (CM_PATH, "application/json"),
                             (CM_PATH + "?limit=1", "application/json"),
                             (CM_PATH, "application/json;as=Table;v=v1;g=meta.k8s.io"),
                             ("/api/v1", "application/json"),
                             ("/version", "application/json")):
            r = self.server.request("GET", path, headers={"Accept": accept})
            self.assertEqual(r.status, 200, (path, r))
            self.assertTrue(r.body.endswith(b"}\n") and not r.body.endswith(b"\n\n"),
                            (path, accept, r.body[-40:]))
            json.loads(r.body)
        r = self.server.request("GET", CM_PATH + "/nl",
                                headers={"Accept": "application/vnd.kubernetes.protobuf"})
        self.assertEqual(r.status, 200, r)
        self.assertTrue(r.body.startswith(b"k8s\x00"), r.body[:8])

    def test_body_too_large_413(self):
        big = json.dumps(cm("big", {"blob": "x" * (3 * 1024 * 1024 + 1024)})).encode()
        self.assertGreater(len(big), 3 * 1024 * 1024)
        r = self.server.request("POST", CM_PATH, body=big,
                                headers={"Content-Type": "application/json"})
        self.assertStatus(r, 413, "RequestEntityTooLarge")
        # the server is still serving and nothing was stored
        r = self.server.request("GET", CM_PATH + "/big")
        self.assertStatus(r, 404, "NotFound")

    def test_body_just_under_limit_is_not_413(self):
        # ~1.5 MiB of data is a legal (if large) ConfigMap; the limit must not
        # be confused with the 1 MiB object limit etcd imposes.
        body = cm("large-ok", {"blob": "y" * (1024 * 1024 + 512 * 1024)})
        r = self.server.request("POST", CM_PATH, body=body)
        self.assertNotEqual(r.status, 413, r)
        self.assertLess(r.status, 500, r)

    def test_malformed_json_400(self):
        r = self.server.request("POST", CM_PATH, body=b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {',
                                headers={"Content-Type": "application/json"})
        self.assertStatus(r, 400, "BadRequest")
        r = self.server.request("POST", CM_PATH, body=b"[1,2,3]",
                                headers={"Content-Type": "application/json"})
        self.assertStatus(r, 400, "BadRequest")

    def test_wrong_kind_400(self):
        body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "wrongkind"},
                "data": {"a": "Yg=="}}
        r = self.server.request("POST", CM_PATH, body=body)
        self.assertStatus(r, 400, "BadRequest")
        r = self.server.request("GET", CM_PATH + "/wrongkind")
        self.assertStatus(r, 404, "NotFound")
        # wrong apiVersion for the kind/URL
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "ConfigMap", "metadata": {"name": "wrongav"}}
        r = self.server.request("POST", CM_PATH, body=body)
        self.assertStatus(r, 400, "BadRequest")

    def test_unsupported_content_type_415(self):
        r = self.server.request("POST", CM_PATH, body=json.dumps(cm("ctype")),
                                headers={"Content-Type": "text/plain"})
        self.assertStatus(r, 415, "UnsupportedMediaType")
        # a patch needs one of the patch media types
        self.assertEqual(self.server.request("POST", CM_PATH, body=cm("patchme")).status, 201)
        r = self.server.request("PATCH", CM_PATH + "/patchme", body=json.dumps({"data": {"x": "y"}}),
                                headers={"Content-Type": "text/plain"})
        self.assertStatus(r, 415, "UnsupportedMediaType")

    def test_unknown_resource_404(self):
        for path in ("/api/v1/namespaces/default/widgets",
                     "/api/v1/widgets",
                     "/apis/example.com/v1/namespaces/default/bars",
                     "/apis/coordination.k8s.io/v9/leases"):
            with self.subTest(path=path):
                self.assertStatus(self.server.request("GET", path), 404, "NotFound")

    def test_unsupported_method_405(self):
        self.assertEqual(self.server.request("POST", CM_PATH, body=cm("m405")).status, 201)
        r = self.server.request("POST", CM_PATH + "/m405", body=cm("m405"))
        self.assertStatus(r, 405, "MethodNotAllowed")
        # PUT on a collection is not a Kubernetes verb either
        r = self.server.request("PUT", CM_PATH, body=cm("m405"))
        self.assertStatus(r, 405, "MethodNotAllowed")

    def test_invalid_name_422(self):
        r = self.server.request("POST", CM_PATH, body=cm("Not_Valid"))
        st = self.assertStatus(r, 422, "Invalid")
        self.assertIn("Invalid value", st["message"])
        details = st.get("details") or {}
        self.assertEqual(details.get("name"), "Not_Valid", st)
        self.assertEqual(details.get("kind"), "ConfigMap", st)
        causes = details.get("causes") or []
        self.assertTrue(any(c.get("field") == "metadata.name" for c in causes), st)

    def test_item_not_found_and_conflict(self):
        st = self.assertStatus(self.server.request("GET", CM_PATH + "/missing"), 404, "NotFound")
        self.assertEqual(st["message"], 'configmaps "missing" not found')
        self.assertEqual((st.get("details") or {}).get("name"), "missing", st)
        self.assertEqual((st.get("details") or {}).get("kind"), "configmaps", st)

        self.assertEqual(self.server.request("POST", CM_PATH, body=cm("dupe")).status, 201)
        st = self.assertStatus(self.server.request("POST", CM_PATH, body=cm("dupe")), 409, "AlreadyExists")
        self.assertEqual(st["message"], 'configmaps "dupe" already exists')

        stale = self.server.request("GET", CM_PATH + "/dupe").json()
        upd = dict(stale, data={"a": "new"})
        r = self.server.request("PUT", CM_PATH + "/dupe", body=upd)
        self.assertEqual(r.status, 200, r)
        self.assertNotEqual(r.json()["metadata"]["resourceVersion"], stale["metadata"]["resourceVersion"])
        stale["data"] = {"a": "stale"}
        st = self.assertStatus(self.server.request("PUT", CM_PATH + "/dupe", body=stale), 409, "Conflict")
        self.assertIn("the object has been modified", st["message"])

        st = self.assertStatus(self.server.request("GET", "/api/v1/namespaces/nope/configmaps/x"), 404, "NotFound")
        r = self.server.request("POST", "/api/v1/namespaces/nope/configmaps", body=cm("x"))
        st = self.assertStatus(r, 404, "NotFound")
        self.assertEqual(st["message"], 'namespaces "nope" not found')

    # Texts kube's clients and its own test suite match, each as
    # kube-apiserver 1.32 answers it (issue 43).

    def test_patch_cannot_restore_422(self):
        """A strategic merge patch whose result the unstructured converter
        cannot restore: NewInvalid with no kind or name, on "patch", valued
        with the patch as Go's %+v prints it."""
        self.assertEqual(self.server.request("POST", CM_PATH, body=cm("lbl")).status, 201)
        r = self.server.request("PATCH", CM_PATH + "/lbl",
                                body=json.dumps({"metadata": {"labels": "invalid"}}),
                                headers={"Content-Type": "application/strategic-merge-patch+json"})
        st = self.assertStatus(r, 422, "Invalid")
        body = 'Invalid value: "map[metadata:map[labels:invalid]]": cannot restore map from string'
        self.assertEqual(st["message"], ' "" is invalid: patch: ' + body)
        self.assertEqual(st["details"], {"causes": [
            {"reason": "FieldValueInvalid", "message": body, "field": "patch"}]})

    def test_service_cluster_ip_change_422(self):
        """A Service's cluster IP changed through clusterIP alone: kube's
        storage makes clusterIPs follow it, ValidateServiceUpdate refuses."""
        svcs = "/api/v1/namespaces/default/services"
        r = self.server.request("POST", svcs, body={
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "moved"},
            "spec": {"ports": [{"port": 80}]}})
        self.assertEqual(r.status, 201, r)
        r = self.server.request("PATCH", svcs + "/moved",
                                body=json.dumps({"spec": {"clusterIP": "10.0.0.12"}}),
                                headers={"Content-Type": "application/merge-patch+json"})
        st = self.assertStatus(r, 422, "Invalid")
        body = 'Invalid value: []string{"10.0.0.12"}: may not change once set'
        self.assertEqual(st["message"], 'Service "moved" is invalid: spec.clusterIPs[0]: ' + body)
        self.assertEqual(st["details"], {"name": "moved", "kind": "Service", "causes": [
            {"reason": "FieldValueInvalid", "message": body, "field": "spec.clusterIPs[0]"}]})

    def test_unrecognized_and_other_kind_400(self):
        """A body whose kind cannot be read (YAML sent as JSON, as `kubectl
        create --raw` sends a file), and an object of another kind."""
        ns = "/api/v1/namespaces"
        pod_yaml = b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: valid-pod\n"
        r = self.server.request("POST", ns, body=pod_yaml,
                                headers={"Content-Type": "application/json"})
        st = self.assertStatus(r, 400, "BadRequest")
        self.assertEqual(st["message"],
                         "the object provided is unrecognized (must be of type Namespace): "
                         "couldn't get version/kind; json parse error: invalid character 'a' "
                         "looking for beginning of value (%s ...)" % pod_yaml[:30].hex())
        r = self.server.request("POST", ns, body={"apiVersion": "v1", "kind": "Pod",
                                                  "metadata": {"name": "valid-pod"}})
        st = self.assertStatus(r, 400, "BadRequest")
        self.assertEqual(st["message"], 'Pod in version "v1" cannot be handled as a Namespace: '
                                        'converting (v1.Pod) to (core.Namespace): unknown '
                                        'conversion')
        r = self.server.request("POST", ns, body=b"[1]",
                                headers={"Content-Type": "application/json"})
        st = self.assertStatus(r, 400, "BadRequest")
        self.assertEqual(st["message"],
                         "the object provided is unrecognized (must be of type Namespace): "
                         "couldn't get version/kind; json parse error: json: cannot unmarshal "
                         "array into Go value of type struct { APIVersion string "
                         "\"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
                         "\"json:\\\"kind,omitempty\\\"\" } (5b315d)")
        self.assertStatus(self.server.request("GET", ns + "/valid-pod"), 404, "NotFound")

    def test_server_survives_errors(self):
        # After a burst of bad requests the server still serves normally.
        for _ in range(20):
            self.server.request("POST", CM_PATH, body=b"{not json",
                                headers={"Content-Type": "application/json"})
        r = self.server.request("GET", "/readyz")
        self.assertEqual(r.status, 200, r)
        r = self.server.request("GET", CM_PATH)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json().get("kind"), "ConfigMapList")


if __name__ == "__main__":
    unittest.main()
