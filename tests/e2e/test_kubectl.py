"""kubectl 1.32 against sqlkube: the user-visible "done when" behaviour.

Covers what a kubectl user does day to day, through the real /usr/bin/kubectl
binary (not a reimplementation), checking exit codes, stdout and the exact
error text kubectl prints from the server's Status objects:
  namespaces (defaults exist, create, delete cascades to contents), apply
  create/configured/unchanged, get -o json/yaml/name/jsonpath, label and
  label selectors, merge/JSON/strategic patch, replace with a stale
  resourceVersion (Conflict), delete + NotFound, get -A, AlreadyExists,
  Invalid names (422), missing namespace, generateName, delete -l, secrets,
  serviceaccounts, leases, events, api-resources and multi-type get.
Why: kubectl is the compatibility yardstick of the project; if any of these
break, users notice first. Each test uses its own namespace so failures stay
independent; one server per class (see tests/support/server.py).
"""

import base64
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import ServerTestCase, describe, wait_until  # noqa: E402

try:
    import yaml  # shipped with (and required by) python3-kubernetes
except ImportError:  # pragma: no cover
    yaml = None

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


class KubectlMixin:
    """Helpers shared by kubectl-driven test classes."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = tempfile.mkdtemp(prefix="kubectl-files-", dir=cls.server.data_dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(getattr(cls, "tmp", ""), ignore_errors=True)
        super().tearDownClass()

    def k(self, *args, input=None):
        return self.server.kubectl(*args, input=input)

    def ok(self, *args, input=None):
        p = self.k(*args, input=input)
        self.assertEqual(p.returncode, 0, "expected success:\n" + describe(p))
        return p.stdout

    def bad(self, *args, input=None):
        p = self.k(*args, input=input)
        self.assertNotEqual(p.returncode, 0, "expected failure:\n" + describe(p))
        return p

    def write(self, name, obj):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            if isinstance(obj, str):
                f.write(obj)
            else:
                json.dump(obj, f)
        return path

    def get_json(self, *args):
        out = self.ok("get", *args, "-o", "json")
        try:
            return json.loads(out)
        except ValueError as e:
            self.fail("kubectl get %s -o json printed invalid JSON (%s): %r" % (args, e, out[:2000]))

    def make_ns(self, name):
        out = self.ok("create", "namespace", name)
        self.assertIn("namespace/%s created" % name, out)
        return name

    def make_cm(self, ns, name, data=None, labels=None):
        obj = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "namespace": ns}, "data": data or {"k": "v"}}
        if labels:
            obj["metadata"]["labels"] = labels
        out = self.ok("create", "-f", self.write("%s-%s.json" % (ns, name), obj))
        self.assertIn("configmap/%s created" % name, out)

    def names(self, *args):
        """`kubectl get ... -o name` as a sorted list of lines."""
        out = self.ok("get", *args, "-o", "name")
        return sorted(l.strip() for l in out.splitlines() if l.strip())


class KubectlBasics(KubectlMixin, ServerTestCase, unittest.TestCase):

    # --- namespaces --------------------------------------------------------

    def test_get_ns_lists_default_namespaces(self):
        out = self.ok("get", "ns")
        lines = out.splitlines()
        self.assertTrue(lines and lines[0].split()[0] == "NAME", "no header row: %r" % out)
        rows = {l.split()[0] for l in lines[1:] if l.strip()}
        for ns in ("default", "kube-system", "kube-public"):
            self.assertIn(ns, rows, "kubectl get ns:\n" + out)
        self.assertEqual(self.ok("get", "ns", "default", "-o", "jsonpath={.status.phase}"), "Active")

    def test_create_namespace_and_duplicate(self):
        self.make_ns("e2e-create")
        self.assertIn("namespace/e2e-create", self.names("ns"))
        p = self.bad("create", "namespace", "e2e-create")
        self.assertIn("AlreadyExists", p.stderr)
        self.assertIn('namespaces "e2e-create" already exists', p.stderr)

    # --- apply / get ---------------------------------------------------------

    def test_apply_created_configured_unchanged_and_get_formats(self):
        ns = self.make_ns("e2e-apply")
        cm = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "x", "namespace": ns}, "data": {"a": "1"}}
        path = self.write("apply-x.json", cm)
        self.assertIn("configmap/x created", self.ok("apply", "-f", path))
        first = self.get_json("cm", "x", "-n", ns)

        cm["data"] = {"a": "2", "b": "3"}
        self.write("apply-x.json", cm)
        self.assertIn("configmap/x configured", self.ok("apply", "-f", path))
        self.assertIn("configmap/x unchanged", self.ok("apply", "-f", path))

        obj = self.get_json("cm", "x", "-n", ns)
        self.assertEqual(obj.get("kind"), "ConfigMap")
        self.assertEqual(obj.get("apiVersion"), "v1")
        self.assertEqual(obj.get("data"), {"a": "2", "b": "3"})
        md = obj["metadata"]
        self.assertEqual(md.get("name"), "x")
        self.assertEqual(md.get("namespace"), ns)
        rv = md.get("resourceVersion")
        self.assertIsInstance(rv, str)
        self.assertRegex(rv, r"^[0-9]+$")
        self.assertNotEqual(rv, first["metadata"]["resourceVersion"], "update kept the resourceVersion")
        self.assertTrue(md.get("uid"), "uid missing: %r" % md)
        self.assertEqual(md.get("uid"), first["metadata"].get("uid"), "uid changed on update")
        self.assertRegex(md.get("creationTimestamp") or "", RFC3339)
        self.assertIn("kubectl.kubernetes.io/last-applied-configuration", md.get("annotations") or {})

        out = self.ok("get", "cm", "x", "-n", ns, "-o", "yaml")
        self.assertIn("kind: ConfigMap", out)
        if yaml is not None:
            y = yaml.safe_load(out)
            self.assertEqual(y["data"], {"a": "2", "b": "3"})
            self.assertEqual(str(y["metadata"]["resourceVersion"]), rv)
            self.assertEqual(y["metadata"]["uid"], md["uid"])

        table = self.ok("get", "cm", "x", "-n", ns)
        self.assertEqual(table.splitlines()[0].split()[0], "NAME", table)
        self.assertEqual(table.splitlines()[1].split()[0], "x", table)

    # --- labels --------------------------------------------------------------

    def test_label_and_label_selectors(self):
        ns = self.make_ns("e2e-label")
        self.make_cm(ns, "x")
        self.make_cm(ns, "y", labels={"a": "c"})
        self.make_cm(ns, "z")
        self.assertIn("configmap/x labeled", self.ok("label", "cm", "x", "a=b", "-n", ns))
        obj = self.get_json("cm", "x", "-n", ns)
        self.assertEqual(obj["metadata"].get("labels"), {"a": "b"})

        cases = {
            "a=b": ["configmap/x"],
            "a==b": ["configmap/x"],
            "a!=b": ["configmap/y", "configmap/z"],
            "a": ["configmap/x", "configmap/y"],
            "!a": ["configmap/z"],
            "a in (b,c)": ["configmap/x", "configmap/y"],
            "a notin (b)": ["configmap/y", "configmap/z"],
        }
        for sel, want in cases.items():
            with self.subTest(selector=sel):
                self.assertEqual(self.names("cm", "-n", ns, "-l", sel), want)
        table = self.ok("get", "cm", "-n", ns, "-l", "a=b")
        rows = [l.split()[0] for l in table.splitlines()[1:] if l.strip()]
        self.assertEqual(rows, ["x"], table)

        # overwrite and remove
        p = self.bad("label", "cm", "x", "a=d", "-n", ns)
        self.assertIn("already has a value", p.stderr)
        self.ok("label", "cm", "x", "a=d", "--overwrite", "-n", ns)
        self.assertEqual(self.names("cm", "-n", ns, "-l", "a=d"), ["configmap/x"])
        self.ok("label", "cm", "x", "a-", "-n", ns)
        self.assertEqual(self.names("cm", "-n", ns, "-l", "!a"), ["configmap/x", "configmap/z"])

    # --- patch ---------------------------------------------------------------

    def test_patch_merge(self):
        ns = self.make_ns("e2e-pmerge")
        self.make_cm(ns, "x", data={"a": "1", "gone": "1"})
        out = self.ok("patch", "cm", "x", "-n", ns, "--type=merge",
                      "-p", '{"data":{"m":"1","gone":null},"metadata":{"labels":{"p":"m"}}}')
        self.assertIn("configmap/x patched", out)
        obj = self.get_json("cm", "x", "-n", ns)
        self.assertEqual(obj["data"], {"a": "1", "m": "1"})
        self.assertEqual(obj["metadata"].get("labels"), {"p": "m"})

    def test_patch_json(self):
        ns = self.make_ns("e2e-pjson")
        self.make_cm(ns, "x", data={"a": "1"})
        out = self.ok("patch", "cm", "x", "-n", ns, "--type=json",
                      "-p", '[{"op":"add","path":"/data/k2","value":"v"}]')
        self.assertIn("configmap/x patched", out)
        self.assertEqual(self.get_json("cm", "x", "-n", ns)["data"], {"a": "1", "k2": "v"})
        self.ok("patch", "cm", "x", "-n", ns, "--type=json",
                "-p", '[{"op":"remove","path":"/data/a"},{"op":"replace","path":"/data/k2","value":"w"}]')
        self.assertEqual(self.get_json("cm", "x", "-n", ns)["data"], {"k2": "w"})
        # a failing "test" op must not change anything; kube-apiserver answers
        # 422 Invalid without details, which kubectl prints as "The request is invalid"
        p = self.bad("patch", "cm", "x", "-n", ns, "--type=json",
                     "-p", '[{"op":"test","path":"/data/k2","value":"nope"},{"op":"add","path":"/data/z","value":"1"}]')
        self.assertIn("The request is invalid", p.stderr)
        self.assertEqual(self.get_json("cm", "x", "-n", ns)["data"], {"k2": "w"})

    def test_patch_strategic_default(self):
        ns = self.make_ns("e2e-pstrat")
        self.make_cm(ns, "x", data={"a": "1"}, labels={"keep": "1"})
        out = self.ok("patch", "cm", "x", "-n", ns,
                      "-p", '{"data":{"s":"1"},"metadata":{"labels":{"p":"q"}}}')
        self.assertIn("configmap/x patched", out)
        obj = self.get_json("cm", "x", "-n", ns)
        self.assertEqual(obj["data"], {"a": "1", "s": "1"})
        self.assertEqual(obj["metadata"].get("labels"), {"keep": "1", "p": "q"})

    def test_patch_noop_keeps_resource_version(self):
        # kube-apiserver does not write (or bump resourceVersion) on a no-op
        # update; kubectl reports that as "patched (no change)".
        ns = self.make_ns("e2e-pnoop")
        self.make_cm(ns, "x", data={"a": "1"})
        rv = self.get_json("cm", "x", "-n", ns)["metadata"]["resourceVersion"]
        out = self.ok("patch", "cm", "x", "-n", ns, "--type=merge", "-p", '{"data":{"a":"1"}}')
        self.assertIn("configmap/x patched (no change)", out)
        self.assertEqual(self.get_json("cm", "x", "-n", ns)["metadata"]["resourceVersion"], rv)

    # --- replace ---------------------------------------------------------------

    def test_replace_with_stale_resource_version_conflicts(self):
        ns = self.make_ns("e2e-replace")
        self.make_cm(ns, "x", data={"a": "1"})
        stale = self.get_json("cm", "x", "-n", ns)
        self.ok("patch", "cm", "x", "-n", ns, "--type=merge", "-p", '{"data":{"a":"2"}}')

        stale["data"] = {"a": "stale"}
        p = self.bad("replace", "-f", self.write("stale.json", stale))
        self.assertIn("Conflict", p.stderr)
        self.assertIn("the object has been modified", p.stderr)
        self.assertEqual(self.get_json("cm", "x", "-n", ns)["data"], {"a": "2"})

        fresh = self.get_json("cm", "x", "-n", ns)
        fresh["data"] = {"a": "3"}
        self.assertIn("configmap/x replaced", self.ok("replace", "-f", self.write("fresh.json", fresh)))
        self.assertEqual(self.get_json("cm", "x", "-n", ns)["data"], {"a": "3"})

    # --- delete / NotFound / AlreadyExists / Invalid ------------------------------

    def test_delete_then_get_not_found(self):
        ns = self.make_ns("e2e-delete")
        self.make_cm(ns, "x")
        self.assertIn('configmap "x" deleted', self.ok("delete", "cm", "x", "-n", ns))
        p = self.bad("get", "cm", "x", "-n", ns)
        self.assertIn('Error from server (NotFound): configmaps "x" not found', p.stderr)
        p = self.bad("delete", "cm", "x", "-n", ns)
        self.assertIn('configmaps "x" not found', p.stderr)
        self.assertEqual(self.names("cm", "-n", ns), [])

    def test_get_all_namespaces(self):
        a = self.make_ns("e2e-alla")
        b = self.make_ns("e2e-allb")
        self.make_cm(a, "shared")
        self.make_cm(b, "shared")
        self.make_cm(b, "only-b")
        out = self.ok("get", "cm", "-A")
        lines = out.splitlines()
        self.assertTrue(lines, out)
        self.assertEqual(lines[0].split()[:2], ["NAMESPACE", "NAME"], out)
        rows = {tuple(l.split()[:2]) for l in lines[1:] if l.strip()}
        for row in [(a, "shared"), (b, "shared"), (b, "only-b")]:
            self.assertIn(row, rows, out)
        self.assertNotIn((a, "only-b"), rows, out)
        # also with -o json: items carry their namespaces
        items = self.get_json("cm", "--all-namespaces")["items"]
        got = {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items}
        self.assertTrue({(a, "shared"), (b, "shared"), (b, "only-b")} <= got, got)

    def test_create_existing_already_exists(self):
        ns = self.make_ns("e2e-dup")
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dup", "namespace": ns},
               "data": {"a": "1"}}
        path = self.write("dup.json", obj)
        self.assertIn("configmap/dup created", self.ok("create", "-f", path))
        p = self.bad("create", "-f", path)
        self.assertIn("Error from server (AlreadyExists)", p.stderr)
        self.assertIn('configmaps "dup" already exists', p.stderr)

    def test_invalid_name_is_rejected(self):
        ns = self.make_ns("e2e-invalid")
        p = self.bad("create", "configmap", "Bad_Name", "-n", ns)
        self.assertIn("Invalid value", p.stderr)
        self.assertIn('"Bad_Name"', p.stderr)
        self.assertIn("is invalid", p.stderr)
        p = self.bad("create", "namespace", "UPPER")
        self.assertIn("Invalid value", p.stderr)
        self.assertEqual(self.names("cm", "-n", ns), [])

    def test_create_in_missing_namespace(self):
        p = self.bad("create", "configmap", "z", "-n", "nope", "--from-literal=a=b")
        self.assertIn('namespaces "nope" not found', p.stderr)
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "z", "namespace": "nope"}}
        p = self.bad("create", "-f", self.write("nope.json", obj))
        self.assertIn("Error from server (NotFound)", p.stderr)
        self.assertIn('namespaces "nope" not found', p.stderr)
        p = self.bad("get", "ns", "nope")
        self.assertIn('namespaces "nope" not found', p.stderr)

    def test_generate_name(self):
        ns = self.make_ns("e2e-gen")
        obj = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"generateName": "gen-", "namespace": ns}, "data": {"a": "1"}}
        path = self.write("gen.json", obj)
        made = []
        for _ in range(2):
            out = self.ok("create", "-f", path)
            m = re.search(r"configmap/(gen-[a-z0-9]+) created", out)
            self.assertIsNotNone(m, "unexpected create output: %r" % out)
            made.append(m.group(1))
        self.assertNotEqual(made[0], made[1])
        for name in made:
            self.assertGreater(len(name), len("gen-"))
            got = self.get_json("cm", name, "-n", ns)
            self.assertEqual(got["metadata"]["name"], name)
            self.assertEqual(got["metadata"].get("generateName"), "gen-")
        self.assertEqual(self.names("cm", "-n", ns), sorted("configmap/" + n for n in made))

    def test_delete_by_label_selector(self):
        ns = self.make_ns("e2e-dell")
        self.make_cm(ns, "x1", labels={"a": "b"})
        self.make_cm(ns, "x2", labels={"a": "b"})
        self.make_cm(ns, "keep", labels={"a": "c"})
        out = self.ok("delete", "cm", "-l", "a=b", "-n", ns)
        self.assertIn('configmap "x1" deleted', out)
        self.assertIn('configmap "x2" deleted', out)
        self.assertEqual(self.names("cm", "-n", ns, "-l", "a=b"), [])
        self.assertEqual(self.names("cm", "-n", ns), ["configmap/keep"])
        p = self.k("get", "cm", "-n", ns, "-l", "a=b")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertIn("No resources found in %s namespace." % ns, p.stderr)

    # --- server-side dry runs delete nothing ------------------------------------------

    def test_delete_dry_run_server_keeps_objects(self):
        # kubectl sends dryRun in the DeleteOptions body, not in the query.
        ns = self.make_ns("e2e-dryd")
        other = self.make_ns("e2e-dryd2")
        self.make_cm(ns, "one", labels={"dry": "yes"})
        self.make_cm(other, "two", labels={"dry": "yes"})
        out = self.ok("delete", "cm", "one", "-n", ns, "--dry-run=server")
        self.assertIn('configmap "one" deleted (server dry run)', out)
        out = self.ok("delete", "cm", "-l", "dry=yes", "--all-namespaces", "--dry-run=server")
        self.assertIn('configmap "two" deleted (server dry run)', out)
        self.assertEqual(self.names("cm", "-n", ns, "-l", "dry=yes"), ["configmap/one"])
        self.assertEqual(self.names("cm", "-n", other, "-l", "dry=yes"), ["configmap/two"])

    def test_delete_options_body_dry_run_over_http(self):
        ns = self.make_ns("e2e-dryh")
        self.make_cm(ns, "a", labels={"g": "1"})
        self.make_cm(ns, "b", labels={"g": "1"})
        path = "/api/v1/namespaces/%s/configmaps" % ns
        dry = {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}
        r = self.server.request("DELETE", path + "/a", dry)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["details"]["name"], "a")
        r = self.server.request("DELETE", path + "?labelSelector=g%3D1", dry)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(sorted(i["metadata"]["name"] for i in r.json()["items"]), ["a", "b"])
        # Beside ?dryRun=All, a body without dryRun is a dry run too (kube would delete).
        r = self.server.request("DELETE", path + "/a?dryRun=All", {"kind": "DeleteOptions"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.names("cm", "-n", ns, "-l", "g=1"), ["configmap/a", "configmap/b"])
        # A dry run of a missing object is still its 404.
        r = self.server.request("DELETE", path + "/missing", dry)
        self.assertEqual(r.status, 404, r)
        # ValidateDeleteOptions: only "All", from the body as from the query.
        r = self.server.request("DELETE", path + "/a", {"dryRun": ["All", "Some"]})
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json()["message"],
                         'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: '
                         '[]string{"All", "Some"}: supported values: "All"')
        self.assertEqual(r.json()["details"]["causes"],
                         [{"reason": "FieldValueNotSupported", "field": "dryRun",
                           "message": 'Unsupported value: []string{"All", "Some"}: '
                                      'supported values: "All"'}])
        r = self.server.request("DELETE", path + "?dryRun=Some")
        self.assertEqual(r.status, 422, r)
        self.assertIn('dryRun: Unsupported value: []string{"Some"}', r.json()["message"])
        r = self.server.request("POST", path + "?dryRun=Some&fieldValidation=Loose",
                                {"metadata": {"name": "c"}})
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json()["message"],
                         'CreateOptions.meta.k8s.io "" is invalid: [dryRun: Unsupported value: '
                         '[]string{"Some"}: supported values: "All", fieldValidation: '
                         'Unsupported value: "Loose": supported values: "", "Ignore", '
                         '"Strict", "Warn"]')
        self.assertEqual(self.names("cm", "-n", ns, "-l", "g=1"), ["configmap/a", "configmap/b"])
        # client-go's typed clients send DeleteOptions as protobuf: honoured too
        def field(num, payload):
            return bytes([num << 3 | 2, len(payload)]) + payload
        options = field(5, b"All")  # DeleteOptions.dryRun
        envelope = b"k8s\x00" + field(1, field(1, b"v1") + field(2, b"DeleteOptions")) + \
            field(2, options)
        r = self.server.request("DELETE", path + "/a", envelope,
                                headers={"Content-Type": "application/vnd.kubernetes.protobuf"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.names("cm", "-n", ns, "-l", "g=1"), ["configmap/a", "configmap/b"])
        # Without dryRun the same body deletes.
        r = self.server.request("DELETE", path + "/a", {"kind": "DeleteOptions"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.names("cm", "-n", ns, "-l", "g=1"), ["configmap/b"])

    def test_eviction_and_drain_dry_run_keep_pods(self):
        ns = self.make_ns("e2e-dryev")
        pods = "/api/v1/namespaces/%s/pods" % ns
        for name in ("p1", "p2"):
            r = self.server.request("POST", pods, {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"nodeName": "dry-node",
                         "containers": [{"name": "c", "image": "busybox"}]}})
            self.assertEqual(r.status, 201, r)
        r = self.server.request("POST", "/api/v1/nodes",
                                {"apiVersion": "v1", "kind": "Node",
                                 "metadata": {"name": "dry-node"}})
        self.assertEqual(r.status, 201, r)
        evict = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p1"},
                 "deleteOptions": {"dryRun": ["All"]}}
        r = self.server.request("POST", pods + "/p1/eviction", evict)
        self.assertEqual(r.status, 201, r)
        r = self.server.request("POST", pods + "/missing/eviction?dryRun=All",
                                dict(evict, metadata={"name": "missing"}))
        self.assertEqual(r.status, 404, r)
        p = self.k("drain", "dry-node", "--dry-run=server", "--force", "--timeout=20s")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertIn("(server dry run)", p.stdout)
        self.assertEqual(self.names("pods", "-n", ns), ["pod/p1", "pod/p2"])
        node = self.get_json("node", "dry-node")
        self.assertFalse(node["spec"].get("unschedulable"), node["spec"])

    # --- other resources -------------------------------------------------------------

    def test_secrets(self):
        ns = self.make_ns("e2e-secret")
        out = self.ok("create", "secret", "generic", "s", "--from-literal=k=v", "-n", ns)
        self.assertIn("secret/s created", out)
        enc = self.ok("get", "secret", "s", "-n", ns, "-o", "jsonpath={.data.k}")
        self.assertEqual(base64.b64decode(enc).decode(), "v")
        self.assertEqual(self.ok("get", "secret", "s", "-n", ns, "-o", "jsonpath={.type}"), "Opaque")
        self.assertIn("s", [l.split()[0] for l in self.ok("get", "secrets", "-n", ns).splitlines()[1:]])
        self.assertIn('secret "s" deleted', self.ok("delete", "secret", "s", "-n", ns))

    def test_serviceaccounts(self):
        ns = self.make_ns("e2e-sa")
        self.assertIn("serviceaccount/robot created", self.ok("create", "sa", "robot", "-n", ns))
        self.assertIn("serviceaccount/robot", self.names("sa", "-n", ns))
        obj = self.get_json("serviceaccount", "robot", "-n", ns)
        self.assertEqual(obj["kind"], "ServiceAccount")
        self.assertEqual(obj["metadata"]["namespace"], ns)

    def test_leases(self):
        ns = self.make_ns("e2e-lease")
        lease = ("apiVersion: coordination.k8s.io/v1\n"
                 "kind: Lease\n"
                 "metadata:\n"
                 "  name: l1\n"
                 "  namespace: %s\n"
                 "spec:\n"
                 "  holderIdentity: me\n"
                 "  leaseDurationSeconds: 15\n"
                 "  leaseTransitions: 0\n"
                 "  renewTime: \"2024-05-01T10:00:00.123456Z\"\n" % ns)
        path = self.write("lease.yaml", lease)
        self.assertIn("lease.coordination.k8s.io/l1 created", self.ok("apply", "-f", path))
        self.assertEqual(self.ok("get", "lease", "l1", "-n", ns, "-o", "jsonpath={.spec.holderIdentity}"), "me")
        obj = self.get_json("leases.coordination.k8s.io", "l1", "-n", ns)
        self.assertEqual(obj["apiVersion"], "coordination.k8s.io/v1")
        self.assertEqual(obj["spec"]["leaseDurationSeconds"], 15)
        self.assertEqual(obj["spec"]["renewTime"], "2024-05-01T10:00:00.123456Z")
        self.write("lease.yaml", lease.replace("holderIdentity: me", "holderIdentity: you"))
        self.assertIn("lease.coordination.k8s.io/l1 configured", self.ok("apply", "-f", path))
        self.assertEqual(self.ok("get", "lease", "l1", "-n", ns, "-o", "jsonpath={.spec.holderIdentity}"), "you")

    def test_events(self):
        ns = self.make_ns("e2e-events")
        ev = {"apiVersion": "v1", "kind": "Event",
              "metadata": {"name": "e1", "namespace": ns},
              "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": ns, "apiVersion": "v1"},
              "reason": "E2eReason", "message": "e2e event message", "type": "Normal",
              "count": 1, "firstTimestamp": "2024-05-01T10:00:00Z", "lastTimestamp": "2024-05-01T10:00:00Z",
              "source": {"component": "e2e"}}
        self.assertIn("event/e1 created", self.ok("create", "-f", self.write("ev.json", ev)))
        self.assertEqual(self.names("ev", "-n", ns), ["event/e1"])
        out = self.ok("get", "events", "-n", ns)
        self.assertTrue("E2eReason" in out or "e1" in out, out)
        obj = self.get_json("ev", "e1", "-n", ns)
        self.assertEqual(obj["reason"], "E2eReason")
        self.assertEqual(obj["involvedObject"]["name"], "x")

    def test_api_resources(self):
        out = self.ok("api-resources")
        lines = out.splitlines()
        header = lines[0]
        cols = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
        starts = [header.find(c) for c in cols]
        self.assertTrue(all(s >= 0 for s in starts), "unexpected header: %r" % header)
        table = {}
        for l in lines[1:]:
            if not l.strip():
                continue
            fields = []
            for i, s in enumerate(starts):
                e = starts[i + 1] if i + 1 < len(starts) else None
                fields.append(l[s:e].strip())
            table[(fields[0], fields[2])] = fields
        want = [
            ("namespaces", "ns", "v1", "false", "Namespace"),
            ("configmaps", "cm", "v1", "true", "ConfigMap"),
            ("secrets", "", "v1", "true", "Secret"),
            ("serviceaccounts", "sa", "v1", "true", "ServiceAccount"),
            ("events", "ev", "v1", "true", "Event"),
            ("leases", "", "coordination.k8s.io/v1", "true", "Lease"),
        ]
        for name, short, gv, namespaced, kind in want:
            with self.subTest(resource=name):
                row = table.get((name, gv))
                self.assertIsNotNone(row, "%s (%s) missing from api-resources:\n%s" % (name, gv, out))
                self.assertEqual(row, [name, short, gv, namespaced, kind])
        out = self.ok("api-resources", "--namespaced=false", "-o", "name")
        self.assertIn("namespaces", out.split())
        self.assertNotIn("configmaps", out.split())

    def test_get_multiple_types(self):
        ns = self.make_ns("e2e-multi")
        self.make_cm(ns, "c1")
        self.ok("create", "secret", "generic", "s1", "--from-literal=a=b", "-n", ns)
        out = self.ok("get", "cm,secrets", "-n", ns)
        self.assertIn("configmap/c1", out)
        self.assertIn("secret/s1", out)
        self.assertEqual(self.names("cm,secrets", "-n", ns), ["configmap/c1", "secret/s1"])

    def test_delete_namespace_removes_objects(self):
        ns = self.make_ns("e2e")
        self.make_cm(ns, "c1")
        self.ok("create", "secret", "generic", "s1", "--from-literal=a=b", "-n", ns)
        self.ok("create", "sa", "sa1", "-n", ns)
        self.ok("create", "-f", self.write("ns-lease.json", {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "l1", "namespace": ns}, "spec": {"holderIdentity": "x"}}))
        self.ok("create", "-f", self.write("ns-ev.json", {
            "apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev1", "namespace": ns},
            "involvedObject": {"kind": "ConfigMap", "name": "c1", "namespace": ns},
            "reason": "R", "message": "m", "type": "Normal"}))
        other = self.make_ns("e2e-survivor")
        self.make_cm(other, "c1")
        kinds = "cm,secrets,sa,leases.coordination.k8s.io,events"
        # every namespace gets its default ServiceAccount
        wait_until(lambda: "serviceaccount/default" in self.names("sa", "-n", ns), timeout=10,
                   what="the default ServiceAccount of %s" % ns)
        self.assertEqual(len(self.names(kinds, "-n", ns)), 6)

        p = self.k("delete", "ns", ns, "--timeout=60s")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertIn('namespace "%s" deleted' % ns, p.stdout)

        def gone():
            q = self.k("get", "ns", ns)
            return q.returncode != 0 and 'namespaces "%s" not found' % ns in q.stderr
        wait_until(gone, timeout=30, what="namespace %s to disappear" % ns)
        wait_until(lambda: self.names(kinds, "-n", ns) == [], timeout=30,
                   what="objects of namespace %s to be deleted" % ns)
        # the objects stay gone when the namespace name is reused
        self.make_ns(ns)
        self.assertEqual([n for n in self.names(kinds, "-n", ns) if n != "serviceaccount/default"],
                         [])
        self.assertEqual(self.names("cm", "-n", other), ["configmap/c1"])


if __name__ == "__main__":
    unittest.main()
