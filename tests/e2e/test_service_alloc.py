"""SERVICE ALLOCATION: cluster IPs from --service-cluster-ip-range (default
10.96.0.0/12) and node ports from --service-node-port-range (default
30000-32767), as kube-apiserver allocates them.

Every Service but an ExternalName or headless one gets a cluster IP: the one
it asks for, if in range and free (else 422 in kube's words), or a random one
above the range's static band; clusterIPs is [clusterIP]. NodePort and
LoadBalancer ports get node ports likewise. The `kubernetes` Service in
default holds the range's first address. Values are owned through the table
sk_allocation, written in the Service's own transaction: released when the
Service is deleted (also with its namespace) or stops using them, never handed
out twice, also by two sqlkube processes sharing one PostgreSQL, and kept over
a restart.

The values these tests ask for by number lie in the static bands (node ports
30000-30085, cluster IPs 10.96.0.0-10.96.0.255), which random picks avoid
while the upper band has room: a fixed port in the upper band collides with
the random picks of the load tests now and then, as it would on a cluster.

Why: clients and controllers rely on cluster IPs and node ports being unique;
a leak or a double assignment only shows under concurrency, across
processes, or after a crash, so that is what this exercises.
"""

import ipaddress
import os
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from server import (CONFIG, Server, ServerTestCase, objects_view_0009, sql,  # noqa: E402
                    superseded_mismatches, wait_until)

RANGE = ipaddress.ip_network("10.96.0.0/12")
FIRST = "10.96.0.1"


def svc_path(ns, name=None):
    p = "/api/v1/namespaces/%s/services" % ns
    return p + "/" + name if name else p


def svc(name, type_=None, cluster_ip=None, ports=None, **spec):
    s = {"ports": ports if ports is not None else [{"port": 80}], "selector": {"app": name}}
    if type_:
        s["type"] = type_
    if cluster_ip is not None:
        s["clusterIP"] = cluster_ip
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": s}


def make_namespace(server, ns):
    r = server.request("POST", "/api/v1/namespaces",
                       {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    assert r.status in (201, 409), r


def create_many(servers, ns, count, threads, body_fn, path_fn):
    """Creates count objects with `threads` concurrent clients, spread over
    servers; returns (created objects, seconds)."""
    results, errors = [None] * count, []
    next_i = iter(range(count))
    lock = threading.Lock()

    def work(t):
        server = servers[t % len(servers)]
        while True:
            with lock:
                i = next(next_i, None)
            if i is None:
                return
            r = server.request("POST", path_fn(ns), body_fn(i))
            if r.status != 201:
                errors.append(r)
                return
            results[i] = r.json()

    t0 = time.monotonic()
    ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    elapsed = time.monotonic() - t0
    if errors:
        raise AssertionError("creates failed: %r" % errors[:3])
    return results, elapsed


def cm_body(i):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-%d" % i},
            "data": {"k": "v"}}


class ServiceAllocation(ServerTestCase, unittest.TestCase):

    def create(self, ns, body, status=201):
        r = self.server.request("POST", svc_path(ns), body)
        self.assertEqual(r.status, status, r)
        return r.json()

    def delete(self, ns, name):
        r = self.server.request("DELETE", svc_path(ns, name))
        self.assertEqual(r.status, 200, r)

    def assert_in_range(self, ip):
        a = ipaddress.ip_address(ip)
        self.assertIn(a, RANGE)
        self.assertNotIn(ip, (str(RANGE.network_address), str(RANGE.broadcast_address), FIRST))

    def test_kubernetes_service(self):
        r = self.server.request("GET", svc_path("default", "kubernetes"))
        self.assertEqual(r.status, 200, r)
        spec = r.json()["spec"]
        self.assertEqual(spec["clusterIP"], FIRST)
        self.assertEqual(spec["clusterIPs"], [FIRST])
        self.assertEqual(spec["type"], "ClusterIP")
        self.assertEqual(spec["ports"], [{"name": "https", "port": 443, "protocol": "TCP",
                                          "targetPort": 6443}])
        # Its address is taken.
        body = self.create("default", svc("wants-first", cluster_ip=FIRST), 422)
        self.assertEqual(body["message"],
                         'Service "wants-first" is invalid: spec.clusterIPs: Invalid value: '
                         '[]string{"10.96.0.1"}: failed to allocate IP 10.96.0.1: provided IP is '
                         'already allocated')

    def test_concurrent_cluster_ips_unique(self):
        ns = "alloc-many"
        make_namespace(self.server, ns)
        n = 200
        objs, secs = create_many([self.server], ns, n, 16, lambda i: svc("s-%d" % i), svc_path)
        ips = [o["spec"]["clusterIP"] for o in objs]
        for o, ip in zip(objs, ips):
            self.assert_in_range(ip)
            self.assertEqual(o["spec"]["clusterIPs"], [ip])
            self.assertEqual(o["spec"]["ipFamilies"], ["IPv4"])
            self.assertEqual(o["spec"]["ipFamilyPolicy"], "SingleStack")
            # Random picks come from above the static band (the lowest 256).
            offset = int(ipaddress.ip_address(ip)) - int(RANGE.network_address) - 1
            self.assertGreaterEqual(offset, 256, ip)
        self.assertEqual(len(set(ips)), n)
        listed = self.server.request("GET", svc_path(ns)).json()["items"]
        self.assertEqual(sorted(o["spec"]["clusterIP"] for o in listed), sorted(ips))
        make_namespace(self.server, ns + "-cm")
        _, cm_secs = create_many([self.server], ns + "-cm", n, 16, cm_body,
                                 lambda ns: "/api/v1/namespaces/%s/configmaps" % ns)
        print("\n  [%s] %d creates, 16 clients: services %.0f/s, configmaps %.0f/s"
              % (CONFIG.backend, n, n / secs, n / cm_secs), file=sys.stderr)

    def test_explicit_ip_reserved_and_released(self):
        ns = "alloc-explicit"
        make_namespace(self.server, ns)
        got = self.create(ns, svc("a", cluster_ip="10.96.0.5"))
        self.assertEqual(got["spec"]["clusterIP"], "10.96.0.5")
        self.assertEqual(got["spec"]["clusterIPs"], ["10.96.0.5"])
        body = self.create(ns, svc("b", cluster_ip="10.96.0.5"), 422)
        self.assertEqual(body["reason"], "Invalid")
        self.assertEqual(body["message"],
                         'Service "b" is invalid: spec.clusterIPs: Invalid value: '
                         '[]string{"10.96.0.5"}: failed to allocate IP 10.96.0.5: provided IP is '
                         'already allocated')
        self.assertEqual(body["details"]["causes"][0]["field"], "spec.clusterIPs")
        # Not written at all.
        self.assertEqual(self.server.request("GET", svc_path(ns, "b")).status, 404)
        body = self.create(ns, svc("c", cluster_ip="10.200.0.1"), 422)
        self.assertEqual(body["message"],
                         'Service "c" is invalid: spec.clusterIPs: Invalid value: '
                         '[]string{"10.200.0.1"}: failed to allocate IP 10.200.0.1: the provided '
                         'IP (10.200.0.1) is not in the valid range. The range of valid IPs is '
                         '10.96.0.0/12')
        # A dry run shows a value but claims nothing.
        r = self.server.request("POST", svc_path(ns) + "?dryRun=All", svc("d", cluster_ip="10.96.0.6"))
        self.assertEqual(r.status, 201, r)
        self.create(ns, svc("d", cluster_ip="10.96.0.6"))
        self.delete(ns, "a")
        self.assertEqual(self.create(ns, svc("b", cluster_ip="10.96.0.5"))["spec"]["clusterIP"],
                         "10.96.0.5")

    def test_headless_and_external_name(self):
        ns = "alloc-headless"
        make_namespace(self.server, ns)
        got = self.create(ns, svc("h", cluster_ip="None"))
        self.assertEqual(got["spec"]["clusterIP"], "None")
        self.assertEqual(got["spec"]["clusterIPs"], ["None"])
        self.assertEqual(got["spec"]["ipFamilies"], ["IPv4"])
        got = self.create(ns, svc("h2", cluster_ip="None", selector={}))
        self.assertEqual(got["spec"]["ipFamilyPolicy"], "RequireDualStack")
        got = self.create(ns, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"},
                               "spec": {"type": "ExternalName", "externalName": "example.com"}})
        self.assertNotIn("clusterIP", got["spec"])
        self.assertNotIn("clusterIPs", got["spec"])

    def test_node_ports(self):
        ns = "alloc-np"
        make_namespace(self.server, ns)
        got = self.create(ns, svc("np", "NodePort", ports=[{"port": 80, "name": "a"},
                                                           {"port": 81, "name": "b"}]))
        nps = [p["nodePort"] for p in got["spec"]["ports"]]
        self.assertEqual(len(set(nps)), 2)
        for np in nps:
            self.assertTrue(30000 + 86 <= np <= 32767, np)
        self.assert_in_range(got["spec"]["clusterIP"])
        self.create(ns, svc("fixed", "NodePort", ports=[{"port": 80, "nodePort": 30080}]))
        body = self.create(ns, svc("dup", "NodePort", ports=[{"port": 80, "nodePort": 30080}]), 422)
        self.assertEqual(body["message"],
                         'Service "dup" is invalid: spec.ports[0].nodePort: Invalid value: 30080: '
                         'provided port is already allocated')
        body = self.create(ns, svc("far", "NodePort", ports=[{"port": 80, "nodePort": 80}]), 422)
        self.assertEqual(body["message"],
                         'Service "far" is invalid: spec.ports[0].nodePort: Invalid value: 80: '
                         'provided port is not in the valid range. The range of valid ports is '
                         '30000-32767')
        self.delete(ns, "fixed")
        got = self.create(ns, svc("dup", "NodePort", ports=[{"port": 80, "nodePort": 30080}]))
        self.assertEqual(got["spec"]["ports"][0]["nodePort"], 30080)
        # LoadBalancer: node ports too, and a health check port for Local traffic.
        got = self.create(ns, svc("lb", "LoadBalancer", externalTrafficPolicy="Local"))
        hc = got["spec"]["healthCheckNodePort"]
        self.assertTrue(30000 <= hc <= 32767)
        self.assertNotEqual(hc, got["spec"]["ports"][0]["nodePort"])
        got = self.create(ns, svc("lb2", "LoadBalancer", allocateLoadBalancerNodePorts=False))
        self.assertNotIn("nodePort", got["spec"]["ports"][0])

    def patch(self, ns, name, patch, status=200):
        r = self.server.request("PATCH", svc_path(ns, name), patch,
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, status, r)
        return r.json()

    def test_updates_keep_allocations_consistent(self):
        ns = "alloc-update"
        make_namespace(self.server, ns)
        got = self.create(ns, svc("u", ports=[{"port": 80, "name": "a"}]))
        ip = got["spec"]["clusterIP"]
        # ClusterIP -> NodePort allocates a node port; the IP stays.
        got = self.patch(ns, "u", {"spec": {"type": "NodePort"}})
        np = got["spec"]["ports"][0]["nodePort"]
        self.assertEqual(got["spec"]["clusterIP"], ip)
        # A PUT that leaves the allocated values out keeps them.
        body = svc("u", "NodePort", ports=[{"port": 80, "name": "a"}])
        body["metadata"]["labels"] = {"x": "y"}
        r = self.server.request("PUT", svc_path(ns, "u"), body)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["spec"]["clusterIP"], ip)
        self.assertEqual(r.json()["spec"]["ports"][0]["nodePort"], np)
        # The node port is taken while u uses it...
        self.create(ns, svc("v", "NodePort", ports=[{"port": 80, "nodePort": np}]), 422)
        # ...and released when u goes back to ClusterIP.
        got = self.patch(ns, "u", {"spec": {"type": "ClusterIP"}})
        self.assertNotIn("nodePort", got["spec"]["ports"][0])
        self.create(ns, svc("v", "NodePort", ports=[{"port": 80, "nodePort": np, "name": "a"},
                                                    {"port": 81, "nodePort": 30081, "name": "b"}]))
        # Removing a port releases its node port.
        self.patch(ns, "v", {"spec": {"ports": [{"port": 80, "nodePort": np, "name": "a"}]}})
        self.create(ns, svc("w", "NodePort", ports=[{"port": 81, "nodePort": 30081}]))
        # Another Service's node port in an update is a 422 too.
        self.patch(ns, "w", {"spec": {"ports": [{"port": 81, "nodePort": np}]}}, 422)

    def test_namespace_delete_releases(self):
        make_namespace(self.server, "alloc-gone")
        self.create("alloc-gone", svc("g", "NodePort", cluster_ip="10.96.0.9",
                                      ports=[{"port": 80, "nodePort": 30060}]))
        make_namespace(self.server, "alloc-next")
        self.create("alloc-next", svc("g", cluster_ip="10.96.0.9"), 422)
        r = self.server.request("DELETE", "/api/v1/namespaces/alloc-gone")
        self.assertEqual(r.status, 200, r)
        # the namespace controller deletes the Service, which releases its values
        wait_until(lambda: self.server.request(
            "GET", "/api/v1/namespaces/alloc-gone").status == 404, timeout=30,
            what="namespace alloc-gone to go")
        self.create("alloc-next", svc("g", "NodePort", cluster_ip="10.96.0.9",
                                      ports=[{"port": 80, "nodePort": 30060}]))

    def test_survives_restart(self):
        make_namespace(self.server, "alloc-restart")
        self.create("alloc-restart", svc("r", "NodePort", cluster_ip="10.96.0.10",
                                         ports=[{"port": 80, "nodePort": 30061}]))
        self.server.restart(crash=True)
        self.create("alloc-restart", svc("r2", cluster_ip="10.96.0.10"), 422)
        self.create("alloc-restart", svc("r3", "NodePort", ports=[{"port": 80, "nodePort": 30061}]),
                    422)
        r = self.server.request("GET", svc_path("default", "kubernetes"))
        self.assertEqual(r.json()["spec"]["clusterIP"], FIRST)

    def test_migration_backfills(self):
        """A database from before migration 0005: the Services it holds own
        their values once it is migrated, (0009) the objects read and
        write on from history alone, and (0011) every history row's
        superseded flag is back-filled."""
        ns = "alloc-backfill"
        make_namespace(self.server, ns)
        self.create(ns, svc("old", "LoadBalancer", cluster_ip="10.96.0.11",
                            externalTrafficPolicy="Local",
                            ports=[{"port": 80, "nodePort": 30062, "name": "a"},
                                   {"port": 81, "nodePort": 30063, "name": "b"}],
                            healthCheckNodePort=30064))
        self.create(ns, svc("ext", "ExternalName", externalName="example.com", ports=[]))
        self.create(ns, svc("hl", cluster_ip="None"))
        self.create(ns, svc("gone", cluster_ip="None"))
        r = self.server.request("DELETE", svc_path(ns, "gone"))
        self.assertEqual(r.status, 200, r.body[:300])
        old_rv = self.server.request("GET", svc_path(ns, "old")).json()["metadata"]["resourceVersion"]
        before = sorted(sql(self.server, "SELECT kind, value, namespace, name FROM sk_allocation"))
        self.server.stop()
        # as before 0005 (and so before the later ones: 0009's index of
        # live keys is back, which 0005 reads; 0011's flag is gone, and
        # sk_objects is 0009's view without it; sk_history_key is 0001's;
        # 0014's decoded table and its trigger function are gone)
        sql(self.server, "CREATE TABLE sk_current AS SELECT resource, namespace, name, "
                         "resource_version AS rev FROM sk_objects; "
                         "DROP VIEW sk_objects; DROP INDEX sk_history_key; CREATE INDEX "
                         "sk_history_key ON sk_history (resource, namespace, name, rev); "
                         "ALTER TABLE sk_history DROP COLUMN superseded; "
                         + objects_view_0009(self.server) +
                         " DROP VIEW sk_kv_latest; DROP VIEW sk_kv_history; "
                         "DROP TABLE sk_allocation; DROP TABLE sk_kv_doc; DROP TABLE sk_kv; "
                         + ("DROP FUNCTION sk_kv_doc_compacted(); "
                            if self.server.backend == "postgres" else "") +
                         "DROP TABLE sk_lease; DROP TABLE sk_writer; "
                         "ALTER TABLE sk_revision DROP COLUMN kv_compact_rev; "
                         "DELETE FROM sk_migrations WHERE version >= 5")
        self.server.start()
        after = sorted(sql(self.server, "SELECT kind, value, namespace, name FROM sk_allocation"))
        self.assertEqual(after, before)
        self.assertIn(["nodeport", "30064", ns, "old"], after)
        self.assertEqual(superseded_mismatches(self.server), [])
        self.create(ns, svc("new", cluster_ip="10.96.0.11"), 422)
        self.create(ns, svc("new", "NodePort", ports=[{"port": 80, "nodePort": 30063}]), 422)
        r = self.server.request("GET", svc_path(ns))
        self.assertEqual(sorted(i["metadata"]["name"] for i in r.json()["items"]),
                         ["ext", "hl", "old"])
        self.assertEqual(self.server.request("GET", svc_path(ns, "gone")).status, 404)
        self.create(ns, svc("old", cluster_ip="None"), 409)  # it exists
        self.create(ns, svc("gone", cluster_ip="None"))      # it does not
        r = self.server.request("PATCH", svc_path(ns, "old"),
                                {"metadata": {"labels": {"migrated": "yes"},
                                              "resourceVersion": old_rv}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertEqual(superseded_mismatches(self.server), [])

    def test_kubectl(self):
        manifest = ("apiVersion: v1\nkind: Service\nmetadata:\n  name: kc\nspec:\n"
                    "  type: NodePort\n  selector:\n    app: kc\n  ports:\n"
                    "  - port: 80\n    targetPort: 8080\n")
        p = self.server.kubectl("apply", "-f", "-", input=manifest)
        self.assertEqual(p.returncode, 0, p.stderr)
        # Applying the same manifest again keeps the allocated values: unchanged.
        p = self.server.kubectl("apply", "-f", "-", input=manifest)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("unchanged", p.stdout)
        p = self.server.kubectl("get", "service", "kc", "-o",
                                "jsonpath={.spec.clusterIP} {.spec.ports[0].nodePort}")
        self.assertEqual(p.returncode, 0, p.stderr)
        ip, np = p.stdout.split()
        self.assert_in_range(ip)
        self.assertTrue(30000 <= int(np) <= 32767)


class CustomRanges(unittest.TestCase):

    def setUp(self):
        self.server = Server("alloc-ranges", extra_args=[
            "--service-cluster-ip-range", "192.168.50.0/24",
            "--service-node-port-range", "40000-40031"])
        self.server.start()

    def tearDown(self):
        self.server.cleanup()

    def test_small_ranges_fill_up(self):
        s = self.server
        r = s.request("GET", svc_path("default", "kubernetes"))
        self.assertEqual(r.json()["spec"]["clusterIP"], "192.168.50.1")
        # 32 ports: all of them can be handed out, static band included, and
        # none twice; then the range is full.
        nps = set()
        for i in range(32):
            r = s.request("POST", svc_path("default"), svc("p%d" % i, "NodePort"))
            self.assertEqual(r.status, 201, r)
            nps.add(r.json()["spec"]["ports"][0]["nodePort"])
        self.assertEqual(nps, set(range(40000, 40032)))
        r = s.request("POST", svc_path("default"), svc("full", "NodePort"))
        self.assertEqual(r.status, 500, r)
        self.assertIn("failed to allocate a nodePort: range is full", r.json()["message"])
        s.request("DELETE", svc_path("default", "p7"))
        r = s.request("POST", svc_path("default"), svc("full", "NodePort"))
        self.assertEqual(r.status, 201, r)

    def test_flags_checked(self):
        import subprocess
        for args in (["--service-cluster-ip-range", "10.0.0.0/8"],
                     ["--service-node-port-range", "3-2"]):
            p = subprocess.run([CONFIG.binary, "serve", "--listen", "127.0.0.1:1"] + args,
                               capture_output=True, text=True, timeout=30)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("invalid --service-", p.stderr)


class TwoInstancesOnePostgres(unittest.TestCase):
    """Two sqlkube processes on one database, creating concurrently: no IP
    and no node port is handed out twice."""

    def setUp(self):
        if CONFIG.backend != "postgres":
            self.skipTest("needs a shared PostgreSQL")
        self.a = Server("alloc-a")
        self.b = Server("alloc-b", db_url=self.a.db_url)
        self.a.start()
        self.b.start()

    def tearDown(self):
        self.b.cleanup()
        self.a.cleanup()

    def test_no_duplicates_across_instances(self):
        ns = "alloc-two"
        make_namespace(self.a, ns)
        n = 200
        objs, secs = create_many([self.a, self.b], ns, n, 16,
                                 lambda i: svc("s-%d" % i, "NodePort"), svc_path)
        ips = [o["spec"]["clusterIP"] for o in objs]
        nps = [o["spec"]["ports"][0]["nodePort"] for o in objs]
        self.assertEqual(len(set(ips)), n)
        self.assertEqual(len(set(nps)), n)
        self.assertNotIn(FIRST, ips)
        # Explicit requests racing on both: exactly one wins each value.
        wins = []

        def claim(server, i):
            r = server.request("POST", svc_path(ns), svc("race-%d" % i, cluster_ip="10.96.0.77"))
            wins.append(r.status)

        ts = [threading.Thread(target=claim, args=((self.a, self.b)[i % 2], i)) for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(sorted(wins), [201] + [422] * 7)
        make_namespace(self.a, ns + "-cm")
        _, cm_secs = create_many([self.a, self.b], ns + "-cm", n, 16, cm_body,
                                 lambda ns: "/api/v1/namespaces/%s/configmaps" % ns)
        print("\n  [postgres, 2 instances] %d creates, 16 clients: NodePort services %.0f/s, "
              "configmaps %.0f/s" % (n, n / secs, n / cm_secs), file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
