"""Official Python client (python3-kubernetes 22.6) against sqlkube.

Covers the typed-client paths controllers and scripts use: CoreV1Api
namespace and ConfigMap CRUD (create/read/replace/patch/delete/list with
label_selector, delete_collection), optimistic concurrency (409 on a stale
replace), 404 after delete, and CoordinationV1Api Lease create/read/update
with MicroTime fields (what leader election does).
Why: the generated client deserializes responses strictly into model
classes and sends its own content types (strategic-merge-patch for dicts,
json-patch for lists), so it catches response-shape and header bugs kubectl
tolerates. Configured only from the server-written kubeconfig, like a user.
"""

import datetime
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import ServerTestCase  # noqa: E402

from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402


class PythonClient(ServerTestCase, unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cfg = client.Configuration()
        config.load_kube_config(config_file=cls.server.kubeconfig, client_configuration=cfg,
                                persist_config=False)
        cls.api_client = client.ApiClient(cfg)
        cls.core = client.CoreV1Api(cls.api_client)
        cls.coord = client.CoordinationV1Api(cls.api_client)

    @classmethod
    def tearDownClass(cls):
        api = getattr(cls, "api_client", None)
        if api is not None:
            api.close()
        super().tearDownClass()

    def ns(self, name):
        got = self.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
        self.assertEqual(got.metadata.name, name)
        return name

    def cm(self, name, data, labels=None, ns=None):
        return client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name=name, namespace=ns, labels=labels), data=data)

    def assertApiStatus(self, ctx, status):
        e = ctx.exception
        self.assertEqual(e.status, status, "body: %s" % e.body)

    def test_namespaces(self):
        got = self.ns("py-ns")
        read = self.core.read_namespace(got)
        self.assertEqual(read.metadata.name, "py-ns")
        self.assertTrue(read.metadata.uid)
        self.assertIsInstance(read.metadata.creation_timestamp, datetime.datetime)
        self.assertEqual(read.status.phase, "Active")
        names = {n.metadata.name for n in self.core.list_namespace().items}
        self.assertTrue({"default", "kube-system", "kube-public", "py-ns"} <= names, names)
        with self.assertRaises(ApiException) as ctx:
            self.ns("py-ns")
        self.assertApiStatus(ctx, 409)

    def test_configmap_crud(self):
        ns = self.ns("py-cm")
        created = self.core.create_namespaced_config_map(ns, self.cm("x", {"a": "1"}, {"app": "e2e"}))
        self.assertEqual(created.metadata.name, "x")
        self.assertEqual(created.metadata.namespace, ns)
        self.assertEqual(created.data, {"a": "1"})
        self.assertRegex(created.metadata.resource_version, r"^[0-9]+$")
        self.assertTrue(created.metadata.uid)

        read = self.core.read_namespaced_config_map("x", ns)
        self.assertEqual(read.data, {"a": "1"})
        self.assertEqual(read.metadata.resource_version, created.metadata.resource_version)
        self.assertEqual(read.metadata.labels, {"app": "e2e"})

        read.data["b"] = "2"
        replaced = self.core.replace_namespaced_config_map("x", ns, read)
        self.assertEqual(replaced.data, {"a": "1", "b": "2"})
        self.assertNotEqual(replaced.metadata.resource_version, created.metadata.resource_version)
        self.assertEqual(replaced.metadata.uid, created.metadata.uid)
        self.assertEqual(replaced.metadata.creation_timestamp, created.metadata.creation_timestamp)

        # dict body -> strategic merge patch
        patched = self.core.patch_namespaced_config_map("x", ns, {"data": {"c": "3"},
                                                                  "metadata": {"labels": {"p": "1"}}})
        self.assertEqual(patched.data, {"a": "1", "b": "2", "c": "3"})
        self.assertEqual(patched.metadata.labels, {"app": "e2e", "p": "1"})
        # list body -> JSON patch
        patched = self.core.patch_namespaced_config_map(
            "x", ns, [{"op": "remove", "path": "/data/a"}])
        self.assertEqual(patched.data, {"b": "2", "c": "3"})
        self.assertEqual(self.core.read_namespaced_config_map("x", ns).data, {"b": "2", "c": "3"})

        st = self.core.delete_namespaced_config_map("x", ns)
        self.assertEqual((st.status, st.details.name, st.details.kind),
                         ("Success", "x", "configmaps"))
        with self.assertRaises(ApiException) as ctx:
            self.core.read_namespaced_config_map("x", ns)
        self.assertApiStatus(ctx, 404)
        with self.assertRaises(ApiException) as ctx:
            self.core.delete_namespaced_config_map("x", ns)
        self.assertApiStatus(ctx, 404)

    def test_stale_replace_conflict(self):
        ns = self.ns("py-conflict")
        self.core.create_namespaced_config_map(ns, self.cm("x", {"a": "1"}))
        stale = self.core.read_namespaced_config_map("x", ns)
        self.core.patch_namespaced_config_map("x", ns, {"data": {"a": "2"}})
        stale.data = {"a": "stale"}
        with self.assertRaises(ApiException) as ctx:
            self.core.replace_namespaced_config_map("x", ns, stale)
        self.assertApiStatus(ctx, 409)
        self.assertIn("the object has been modified", ctx.exception.body)
        self.assertEqual(self.core.read_namespaced_config_map("x", ns).data, {"a": "2"})

    def test_create_duplicate_and_missing_namespace(self):
        ns = self.ns("py-dup")
        self.core.create_namespaced_config_map(ns, self.cm("x", {"a": "1"}))
        with self.assertRaises(ApiException) as ctx:
            self.core.create_namespaced_config_map(ns, self.cm("x", {"a": "1"}))
        self.assertApiStatus(ctx, 409)
        self.assertIn("AlreadyExists", ctx.exception.body)
        with self.assertRaises(ApiException) as ctx:
            self.core.create_namespaced_config_map("py-missing-ns", self.cm("x", {"a": "1"}))
        self.assertApiStatus(ctx, 404)

    def test_list_with_label_selector_and_delete_collection(self):
        ns = self.ns("py-list")
        for i in range(5):
            self.core.create_namespaced_config_map(
                ns, self.cm("c%d" % i, {"i": str(i)}, {"parity": "even" if i % 2 == 0 else "odd"}))
        lst = self.core.list_namespaced_config_map(ns, label_selector="parity=even")
        self.assertEqual(sorted(c.metadata.name for c in lst.items), ["c0", "c2", "c4"])
        self.assertRegex(lst.metadata.resource_version or "", r"^[0-9]+$")
        lst = self.core.list_namespaced_config_map(ns, label_selector="parity in (odd)")
        self.assertEqual(sorted(c.metadata.name for c in lst.items), ["c1", "c3"])
        everywhere = self.core.list_config_map_for_all_namespaces(label_selector="parity=odd")
        self.assertEqual(sorted((c.metadata.namespace, c.metadata.name) for c in everywhere.items),
                         [(ns, "c1"), (ns, "c3")])
        lst = self.core.list_namespaced_config_map(ns, field_selector="metadata.name=c3")
        self.assertEqual([c.metadata.name for c in lst.items], ["c3"])

        self.core.delete_collection_namespaced_config_map(ns, label_selector="parity=even")
        left = self.core.list_namespaced_config_map(ns)
        self.assertEqual(sorted(c.metadata.name for c in left.items), ["c1", "c3"])

    def test_lease_create_read_update(self):
        ns = self.ns("py-lease")
        now = datetime.datetime(2024, 5, 1, 10, 0, 0, 250000, tzinfo=datetime.timezone.utc)
        lease = client.V1Lease(
            metadata=client.V1ObjectMeta(name="leader"),
            spec=client.V1LeaseSpec(holder_identity="pod-a", lease_duration_seconds=15,
                                    acquire_time=now, renew_time=now, lease_transitions=0))
        created = self.coord.create_namespaced_lease(ns, lease)
        self.assertEqual(created.metadata.name, "leader")
        self.assertEqual(created.spec.holder_identity, "pod-a")

        read = self.coord.read_namespaced_lease("leader", ns)
        self.assertEqual(read.api_version, "coordination.k8s.io/v1")
        self.assertEqual(read.kind, "Lease")
        self.assertEqual(read.spec.holder_identity, "pod-a")
        self.assertEqual(read.spec.lease_duration_seconds, 15)
        self.assertEqual(read.spec.renew_time, now)
        self.assertEqual(read.spec.acquire_time, now)

        later = now + datetime.timedelta(seconds=5)
        read.spec.renew_time = later
        read.spec.holder_identity = "pod-b"
        read.spec.lease_transitions = 1
        updated = self.coord.replace_namespaced_lease("leader", ns, read)
        self.assertEqual(updated.spec.holder_identity, "pod-b")
        self.assertEqual(updated.spec.renew_time, later)
        names = [l.metadata.name for l in self.coord.list_namespaced_lease(ns).items]
        self.assertEqual(names, ["leader"])


if __name__ == "__main__":
    unittest.main()
