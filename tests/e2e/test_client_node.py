"""@kubernetes/client-node (the JavaScript client, 1.x) works over HTTPS
with the kubeconfig sqlkube writes, with no extra flags.

client-node 1.x refuses a plain-HTTP kubeconfig outright ("HTTP protocol is
not allowed when skipTLSVerify is not set"), so this is the TLS default's
test for Node.js clients: tests/node/client_node.mjs lists namespaces,
creates a ConfigMap, runs an informer (list, then watch) that must report
one ConfigMap made before it started and one made after, and reads a
missing object (404); tests/node/client_node_apply.mjs does server-side
apply through it (create, update, 409 naming field and manager, force).
The client is installed from the npm registry into
tests/node by `scripts/deps.sh test` (package-lock.json pins it).
"""

import json
import os
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from server import ServerTestCase  # noqa: E402

NODE = shutil.which("node")
NODE_DIR = os.path.join(HERE, "..", "node")
CLIENT = os.path.join(NODE_DIR, "node_modules", "@kubernetes", "client-node")


@unittest.skipUnless(NODE and os.path.isdir(CLIENT),
                     "node and @kubernetes/client-node (scripts/deps.sh test) needed")
class ClientNode(ServerTestCase, unittest.TestCase):

    server_tls = True

    def test_list_create_informer_over_https(self):
        r = self.server.request("POST", "/api/v1/namespaces",
                                {"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": "node-client"}})
        self.assertEqual(r.status, 201, r)
        p = subprocess.run([NODE, os.path.join(NODE_DIR, "client_node.mjs"),
                            self.server.kubeconfig, "node-client"],
                           capture_output=True, text=True, timeout=120, cwd=NODE_DIR)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        got = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertIn("node-client", got["namespaces"])
        self.assertIn("kube-system", got["namespaces"])
        self.assertEqual(got["created"], "node-a")
        self.assertNotIn("informer_error", got)
        self.assertEqual(got["informer_added"], ["node-a", "node-b"])
        self.assertEqual(got["missing_code"], 404)
        r = self.server.request("GET", "/api/v1/namespaces/node-client/configmaps/node-b")
        self.assertEqual(r.status, 200, r)

    def test_server_side_apply(self):
        p = subprocess.run([NODE, os.path.join(NODE_DIR, "client_node_apply.mjs"),
                            self.server.kubeconfig, "default"],
                           capture_output=True, text=True, timeout=120, cwd=NODE_DIR)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        got = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual(got["created"], {"a": "1"})
        self.assertEqual(got["updated"], {"a": "1", "b": "2"})
        self.assertEqual(got["conflict_code"], 409, got)
        self.assertEqual(got["conflict"]["message"],
                         'Apply failed with 1 conflict: conflict with "node-mgr": .data.a')
        self.assertEqual(got["forced"], {"a": "mine", "b": "2"})
        self.assertEqual(got["managers"], [["node-mgr", "Apply"], ["node-other", "Apply"]])
        r = self.server.request("GET", "/api/v1/namespaces/default/configmaps/node-ssa")
        self.assertEqual(r.status, 200, r)
        fields = {e["manager"]: e["fieldsV1"] for e in r.json()["metadata"]["managedFields"]}
        self.assertEqual(fields["node-other"], {"f:data": {"f:a": {}}})
        self.assertEqual(fields["node-mgr"], {"f:data": {"f:b": {}}})


if __name__ == "__main__":
    unittest.main()
