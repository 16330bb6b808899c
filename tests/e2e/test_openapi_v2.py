"""GET /openapi/v2 in protobuf, as client-go reads it.

client-go's DiscoveryClient.OpenAPISchema() sends
Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf and
proto-unmarshals the body into gnostic's openapi_v2.Document; kubectl uses
it when it falls back to OpenAPI v2 (`kubectl explain
--output=plaintext-openapiv2` always does). No Go toolchain is on the test
machine, so the real kubectl 1.32 is the Go client: before the protobuf form
it failed with "proto: cannot parse invalid wire-format data".
The negotiation follows kube-openapi's handler: JSON by default and for
wildcards, protobuf (Content-Type with ".v1.0", not "@v1.0") when asked.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import ServerTestCase, describe  # noqa: E402

PB_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
PB_MEDIA = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


class OpenAPIV2Protobuf(ServerTestCase, unittest.TestCase):
    def explain(self, *args):
        p = self.server.kubectl("explain", *args, "--output=plaintext-openapiv2")
        self.assertEqual(p.returncode, 0, "kubectl explain failed:\n" + describe(p))
        return p.stdout

    def test_kubectl_explain_reads_v2_protobuf(self):
        out = self.explain("pods")
        self.assertIn("KIND:     Pod", out)
        self.assertIn("VERSION:  v1", out)
        for field in ("apiVersion", "kind", "metadata", "spec", "status"):
            self.assertIn("   %s\t<" % field, out)
        # a group's kind (found by its x-kubernetes-group-version-kind YAML)
        # and a nested field's type through $ref and TypeItem
        out = self.explain("deployments.spec.replicas")
        self.assertIn("KIND:     Deployment", out)
        self.assertIn("VERSION:  apps/v1", out)
        self.assertIn("replicas <integer>", out)
        out = self.explain("configmaps.data")
        self.assertIn("data <map[string]string>", out)

    def test_negotiation(self):
        r = self.server.request("GET", "/openapi/v2", headers={"Accept": PB_ACCEPT})
        self.assertEqual(r.status, 200)
        self.assertEqual(r.headers.get("content-type"), PB_MEDIA)
        self.assertEqual(r.body[:5], b"\x0a\x032.0")  # Document.swagger = "2.0" first
        r2 = self.server.request("GET", "/openapi/v2", headers={"Accept": PB_MEDIA})
        self.assertEqual(r2.body, r.body)
        for accept in ("application/json", "*/*", "application/json, " + PB_ACCEPT):
            r = self.server.request("GET", "/openapi/v2", headers={"Accept": accept})
            self.assertEqual(r.status, 200)
            self.assertEqual(r.headers.get("content-type"), "application/json", accept)
            self.assertEqual(json.loads(r.body)["swagger"], "2.0")


if __name__ == "__main__":
    unittest.main()
