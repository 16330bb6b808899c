"""WATCH: complete ordered streams, selectors, expiry, bookmarks, watch-list.

A watch is a cursor over the store's gap-free history, so what a watcher
sees after revision N must equal the store's history after N for its
resource, in order, with nothing missing, also while several writers race.
Checked with raw HTTP streams, kubectl get -w, kubectl wait through the
watch-list path (KUBE_FEATURE_WatchListClient=true), and the Python client's
Watch().stream. On PostgreSQL, a write on one sqlkube instance must reach a
watcher on another instance sharing the database.
"""

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import CONFIG, KUBECTL, Server, ServerTestCase, describe, metric, wait_until  # noqa: E402

MERGE = {"Content-Type": "application/merge-patch+json"}


def cm(name, data, labels=None):
    meta = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


class WatchStream:
    """Reads a watch response line by line on a background thread."""

    def __init__(self, server, path):
        if server.tls:
            self.conn = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=60,
                                                    context=server.ssl_context())
        else:
            self.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        self.conn.request("GET", path, headers={"Accept": "application/json"})
        self.sock = self.conn.sock
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.events = []
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    break
                if line.strip():
                    with self.lock:
                        self.events.append(json.loads(line))
        except (OSError, ValueError, http.client.HTTPException):
            pass
        finally:
            self.done.set()

    def wait_for(self, pred, timeout=20, what="events"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if pred(self.events):
                    return list(self.events)
            time.sleep(0.02)
        with self.lock:
            raise AssertionError("timed out waiting for %s; got %r" % (what, self.events[-5:]))

    def close(self):
        # Shut the socket down first: the reader thread holds the response's
        # buffer lock inside readline(), and close() would wait for it.
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.done.wait(10)
        self.conn.close()


class Watch(ServerTestCase, unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        # A short stall timeout so the slow-reader test sees its watch closed.
        cls.server = Server("Watch", extra_args=["--watch-stall-timeout", "2"])
        cls.server.start()

    def ns(self, name):
        r = self.server.request("POST", "/api/v1/namespaces",
                                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        self.assertIn(r.status, (201, 409), r)

    def rv_now(self, ns):
        r = self.server.request("GET", "/api/v1/namespaces/%s/configmaps?limit=1" % ns)
        return int(r.json()["metadata"]["resourceVersion"])

    def test_complete_ordered_stream_under_concurrent_writers(self):
        self.ns("w-order")
        start = self.rv_now("w-order")
        ws = WatchStream(self.server, "/api/v1/namespaces/w-order/configmaps?watch=true"
                         "&resourceVersion=%d" % start)
        self.assertEqual(ws.status, 200)
        log, lock = [], threading.Lock()

        def writer(t):
            base = "/api/v1/namespaces/w-order/configmaps"
            for i in range(40):
                name = "c-%d-%d" % (t, i % 7)
                r = self.server.request("POST", base, cm(name, {"i": str(i)}))
                kind = "ADDED"
                if r.status == 409:
                    r = self.server.request("PATCH", base + "/" + name, {"data": {"i": str(i)}},
                                           headers=MERGE)
                    kind = "MODIFIED"
                if r.status in (200, 201):
                    with lock:
                        log.append((int(r.json()["metadata"]["resourceVersion"]), kind, name))
                if i % 5 == 4 and r.status in (200, 201):
                    r = self.server.request("DELETE", base + "/" + name)
                    if r.status == 200:
                        # A ConfigMap's DELETE answers a Status, without a revision.
                        with lock:
                            log.append((None, "DELETED", name))

        threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # An unrelated resource changing must not appear.
        self.server.request("POST", "/api/v1/namespaces/w-order/secrets",
                            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
        self.server.request("POST", "/api/v1/namespaces/w-order/configmaps", cm("zz-end", {}))
        events = ws.wait_for(lambda ev: any(e["object"]["metadata"]["name"] == "zz-end"
                                            for e in ev), what="the last write")
        ws.close()
        got = [(int(e["object"]["metadata"]["resourceVersion"]), e["type"],
                e["object"]["metadata"]["name"]) for e in events
               if e["object"]["metadata"]["name"] != "zz-end"]
        self.assertEqual([g[0] for g in got], sorted(g[0] for g in got), "events out of order")
        self.assertEqual(len(set(g[0] for g in got)), len(got), "duplicate events")
        # Each name has one writer thread, so its writes' order is known: the
        # watch must show each name's writes, and only those, in that order,
        # with the revisions their responses gave.
        for name in set(n for _, _, n in log) | set(n for _, _, n in got):
            wrote = [(rv, kind) for rv, kind, n in log if n == name]
            seen = [(rv, kind) for rv, kind, n in got if n == name]
            self.assertEqual([k for _, k in seen], [k for _, k in wrote], name)
            self.assertTrue(all(w is None or w == s for (w, _), (s, _) in zip(wrote, seen)), name)
        # The stream is the store's history: a fresh watch from `start` reads it back.
        self.assertTrue(all(e["object"]["kind"] == "ConfigMap" for e in events))
        ws2 = WatchStream(self.server, "/api/v1/namespaces/w-order/configmaps?watch=true"
                          "&resourceVersion=%d" % start)
        replay = ws2.wait_for(lambda ev: len(ev) >= len(got), what="replay")
        ws2.close()
        self.assertEqual([(int(e["object"]["metadata"]["resourceVersion"]), e["type"],
                           e["object"]["metadata"]["name"]) for e in replay[:len(got)]], got)

    def test_selector_transitions(self):
        self.ns("w-sel")
        base = "/api/v1/namespaces/w-sel/configmaps"
        ws = WatchStream(self.server, base + "?watch=true&labelSelector=app%%3Dweb"
                         "&resourceVersion=%d" % self.rv_now("w-sel"))
        self.server.request("POST", base, cm("a", {"k": "1"}, {"app": "web"}))
        self.server.request("POST", base, cm("b", {"k": "1"}, {"app": "db"}))
        self.server.request("PATCH", base + "/a", {"metadata": {"labels": {"app": "db"}}},
                            headers=MERGE)
        self.server.request("PATCH", base + "/b", {"metadata": {"labels": {"app": "web"}}},
                            headers=MERGE)
        self.server.request("PATCH", base + "/b", {"data": {"k": "2"}}, headers=MERGE)
        self.server.request("DELETE", base + "/b")
        events = ws.wait_for(lambda ev: len(ev) >= 5, what="5 events")
        ws.close()
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in events[:5]],
                         [("ADDED", "a"), ("DELETED", "a"), ("ADDED", "b"), ("MODIFIED", "b"),
                          ("DELETED", "b")])

    def test_initial_events_bookmarks_and_watch_list(self):
        self.ns("w-list")
        base = "/api/v1/namespaces/w-list/configmaps"
        for i in range(5):
            self.server.request("POST", base, cm("i%d" % i, {"k": "v"}))
        legacy = WatchStream(self.server, base + "?watch=true")
        ev = legacy.wait_for(lambda ev: len(ev) >= 5, what="initial ADDED")
        legacy.close()
        self.assertEqual([e["type"] for e in ev[:5]], ["ADDED"] * 5)
        rv = self.rv_now("w-list")
        wl = WatchStream(self.server, base + "?watch=true&sendInitialEvents=true"
                         "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
        ev = wl.wait_for(lambda ev: any(e["type"] == "BOOKMARK" for e in ev), what="end bookmark")
        self.assertEqual([e["type"] for e in ev[:5]], ["ADDED"] * 5)
        bm = ev[5]
        self.assertEqual(bm["type"], "BOOKMARK")
        self.assertEqual(bm["object"]["kind"], "ConfigMap")
        self.assertEqual(bm["object"]["apiVersion"], "v1")
        self.assertEqual(bm["object"]["metadata"]["annotations"],
                         {"k8s.io/initial-events-end": "true"})
        self.assertGreaterEqual(int(bm["object"]["metadata"]["resourceVersion"]), rv)
        # The revision moving without matching events yields a bookmark.
        self.server.request("POST", "/api/v1/namespaces/w-list/secrets",
                            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
        wl.wait_for(lambda ev: sum(e["type"] == "BOOKMARK" for e in ev) >= 2, what="bookmark")
        self.server.request("POST", base, cm("late", {"k": "v"}))
        ev = wl.wait_for(lambda ev: ev[-1]["type"] == "ADDED"
                         and ev[-1]["object"]["metadata"]["name"] == "late", what="live event")
        wl.close()
        bad = self.server.request("GET", base + "?watch=true&sendInitialEvents=true")
        self.assertEqual(bad.status, 422, bad)

    def test_expired_resource_version_and_timeout(self):
        self.ns("w-exp")
        base = "/api/v1/namespaces/w-exp/configmaps"
        self.server.request("POST", base, cm("x", {"k": "1"}))
        old = self.rv_now("w-exp")
        for i in range(3):
            self.server.request("PATCH", base + "/x", {"data": {"k": str(i)}}, headers=MERGE)
        db = self.server.db_url or "sqlite:" + os.path.join(self.server.data_dir, "sqlkube.db")
        p = subprocess.run([CONFIG.binary, "compact", "--db", db, "--retain", "0"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        ws = WatchStream(self.server, base + "?watch=true&resourceVersion=%d" % (old - 1))
        ev = ws.wait_for(lambda ev: len(ev) >= 1, what="ERROR event")
        self.assertTrue(ws.done.wait(10), "the stream should end after the ERROR event")
        ws.close()
        self.assertEqual(ev[0]["type"], "ERROR")
        self.assertEqual(ev[0]["object"]["code"], 410)
        self.assertEqual(ev[0]["object"]["reason"], "Expired")
        self.assertIn("too old resource version", ev[0]["object"]["message"])
        t0 = time.monotonic()
        r = self.server.request("GET", base + "?watch=true&timeoutSeconds=1&resourceVersion=%d"
                                % self.rv_now("w-exp"))
        self.assertEqual(r.status, 200)
        self.assertLess(time.monotonic() - t0, 10)

    def test_kubectl_get_watch_and_wait(self):
        self.ns("w-kc")
        self.server.request("POST", "/api/v1/namespaces/w-kc/configmaps", cm("k", {"a": "1"}))
        env = dict(os.environ, HOME=self.server.data_dir, KUBE_FEATURE_WatchListClient="true")
        lists_before = metric(self.server, "apiserver_watch_list_duration_seconds_count")
        base = [KUBECTL, "--kubeconfig", self.server.kubeconfig, "--cache-dir",
                self.server.cache_dir, "-n", "w-kc"]
        watcher = subprocess.Popen(base + ["get", "cm", "-w", "--output-watch-events"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env=env)
        waiter = subprocess.Popen(base + ["wait", "--for=jsonpath={.data.a}=2", "cm/k",
                                          "--timeout=30s"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env)
        # The patch must come after the watcher's initial ADDED (kubectl can
        # take seconds to start on a loaded machine), or it sees a=2 listed.
        seen = []
        reader = threading.Thread(target=lambda: seen.extend(watcher.stdout), daemon=True)
        reader.start()
        deadline = time.monotonic() + 30
        while not any(l.split()[:2] == ["ADDED", "k"] for l in list(seen)):
            self.assertLess(time.monotonic(), deadline, "kubectl get -w printed no ADDED")
            time.sleep(0.05)
        r = self.server.request("PATCH", "/api/v1/namespaces/w-kc/configmaps/k",
                                {"data": {"a": "2"}}, headers=MERGE)
        self.assertEqual(r.status, 200, r)
        out, err = waiter.communicate(timeout=40)
        self.assertEqual(waiter.returncode, 0, err)
        self.assertIn("condition met", out)
        # kubectl synced through watch-list (sendInitialEvents), not LIST+WATCH.
        self.assertGreater(metric(self.server, "apiserver_watch_list_duration_seconds_count"),
                           lists_before)
        deadline = time.monotonic() + 30
        while not any(l.split()[:2] == ["MODIFIED", "k"] for l in list(seen)):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        watcher.terminate()
        watcher.wait(timeout=10)
        reader.join(timeout=10)
        out = "".join(seen)
        lines = [l.split() for l in out.splitlines() if l.strip()]
        self.assertEqual(lines[0][:2], ["EVENT", "NAME"], out)
        self.assertIn(["ADDED", "k"], [l[:2] for l in lines[1:]], out)
        self.assertIn(["MODIFIED", "k"], [l[:2] for l in lines[1:]], out)

    def test_python_client_watch_stream_with_bookmarks(self):
        from kubernetes import client, config, watch
        self.ns("w-py")
        api = client.CoreV1Api(config.new_client_from_config(config_file=self.server.kubeconfig))
        api.create_namespaced_config_map("w-py", client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="p0"), data={"a": "1"}))
        rv = api.list_namespaced_config_map("w-py").metadata.resource_version
        seen = []

        def produce():
            time.sleep(0.5)
            api.create_namespaced_config_map("w-py", client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name="p1"), data={"a": "1"}))
            api.delete_namespaced_config_map("p0", "w-py")

        t = threading.Thread(target=produce)
        t.start()
        w = watch.Watch()
        bookmarks = []
        for ev in w.stream(api.list_namespaced_config_map, "w-py", resource_version=rv,
                           allow_watch_bookmarks=True, timeout_seconds=10):
            if ev["type"] == "BOOKMARK":
                # The client hands bookmarks over undecoded; commits elsewhere
                # (identity lease renewals) may cause them at any time.
                bookmarks.append(ev["raw_object"])
                continue
            seen.append((ev["type"], ev["object"].metadata.name))
            if len(seen) == 2:
                w.stop()
        t.join()
        self.assertEqual(seen, [("ADDED", "p1"), ("DELETED", "p0")])
        for b in bookmarks:
            self.assertEqual((b["kind"], b["apiVersion"]), ("ConfigMap", "v1"))
            self.assertGreaterEqual(int(b["metadata"]["resourceVersion"]), int(rv))

    def test_slow_reader_does_not_harm_others(self):
        self.ns("w-slow")
        base = "/api/v1/namespaces/w-slow/configmaps"
        rv = self.rv_now("w-slow")
        slow = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        slow.request("GET", base + "?watch=true&resourceVersion=%d" % rv)
        slow_resp = slow.getresponse()  # never read further
        fast = WatchStream(self.server, base + "?watch=true&resourceVersion=%d" % rv)
        terminated = metric(self.server, "apiserver_terminated_watchers_total")
        big = "x" * 100000
        n = 150  # 15 MB: more than loopback socket buffers hold
        for i in range(n):
            r = self.server.request("POST", base, cm("big-%d" % i, {"k": big}))
            self.assertEqual(r.status, 201, r)
        ev = fast.wait_for(lambda ev: len(ev) >= n, what="%d events on the fast watcher" % n)
        self.assertEqual([e["object"]["metadata"]["name"] for e in ev],
                         ["big-%d" % i for i in range(n)])
        # The reader that stopped reading is closed and counted; the fast one lives on.
        wait_until(lambda: metric(self.server, "apiserver_terminated_watchers_total")
                   >= terminated + 1, what="the stalled watch to be closed")
        self.assertFalse(fast.done.is_set(), "the fast watcher must stay open")
        fast.close()
        slow_resp.close()
        slow.close()


class ConsistencyCheck(ServerTestCase, unittest.TestCase):
    """The cache-vs-store consistency checker finds a corrupted cache and repairs it.

    Test-only fault injection leaves one ConfigMap out of the cache's index
    (its event is still delivered, so the feed sees no gap): only the
    checker can notice.
    """

    @classmethod
    def setUpClass(cls):
        cls.server = Server("ConsistencyCheck", extra_args=["--consistency-check-interval", "1"],
                            env={"SQLKUBE_TEST_CORRUPT_OBJECT": "configmaps/default/corrupt"})
        cls.server.start()

    def names_from_cache(self):
        r = self.server.request("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=0")
        self.assertEqual(r.status, 200, r)
        return sorted(i["metadata"]["name"] for i in r.json()["items"])

    def test_corruption_detected_counted_and_repaired(self):
        s = self.server
        fail = 'storage_consistency_checks_total{resource="configmaps",status="failure"}'
        ok = 'storage_consistency_checks_total{resource="configmaps",status="success"}'
        wait_until(lambda: metric(s, ok) >= 1, what="a first passing check")
        self.assertEqual(metric(s, fail), 0)
        # Only the corrupted resource is rebuilt: its watchers are told to
        # re-list (410), other resources' watchers are left alone.
        cms = WatchStream(s, "/api/v1/namespaces/default/configmaps?watch=true")
        secrets = WatchStream(s, "/api/v1/namespaces/default/secrets?watch=true")
        for name in ("fine", "corrupt"):
            r = s.request("POST", "/api/v1/namespaces/default/configmaps", cm(name, {"k": "v"}))
            self.assertEqual(r.status, 201, r)
        wait_until(lambda: metric(s, fail) >= 1, what="the checker to find the corruption")
        passed = metric(s, ok)
        wait_until(lambda: metric(s, ok) > passed, what="a passing check after the repair")
        self.assertEqual(self.names_from_cache(), ["corrupt", "fine"])
        self.assertGreaterEqual(metric(s, "sqlkube_watch_cache_rebuilds_total"), 1)
        ev = cms.wait_for(lambda ev: any(e["type"] == "ERROR" for e in ev), what="410 on configmaps")
        self.assertEqual(ev[-1]["object"]["code"], 410)
        cms.close()
        r = s.request("POST", "/api/v1/namespaces/default/secrets",
                      {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "after-repair"}})
        self.assertEqual(r.status, 201, r)
        ev = secrets.wait_for(lambda ev: len(ev) >= 1, what="the secrets watch to go on")
        secrets.close()
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in ev],
                         [("ADDED", "after-repair")])
        report = s.request("GET", "/debug/consistency").body.decode()
        self.assertRegex(report, r"configmaps: revision \d+: cache [0-9a-f]{16} \(2 objects\), "
                                 r"store [0-9a-f]{16} \(2 objects\): ok")
        self.assertNotIn("MISMATCH", report)


class WatchAcrossInstances(unittest.TestCase):
    """Two sqlkube processes on one PostgreSQL: a write on one reaches a watch on the other."""

    def test_write_on_one_seen_on_other(self):
        if CONFIG.backend != "postgres":
            self.skipTest("needs a shared PostgreSQL")
        a = Server("watch-a")
        b = Server("watch-b", db_url=a.db_url)
        try:
            a.start()
            b.start()
            r = b.request("GET", "/api/v1/namespaces/default/configmaps?limit=1")
            rv = r.json()["metadata"]["resourceVersion"]
            ws = WatchStream(b, "/api/v1/namespaces/default/configmaps?watch=true"
                             "&resourceVersion=" + rv)
            t0 = time.monotonic()
            r = a.request("POST", "/api/v1/namespaces/default/configmaps", cm("x-inst", {"k": "v"}))
            self.assertEqual(r.status, 201, r)
            ev = ws.wait_for(lambda ev: len(ev) >= 1, timeout=10, what="cross-instance event")
            elapsed = time.monotonic() - t0
            ws.close()
            self.assertEqual((ev[0]["type"], ev[0]["object"]["metadata"]["name"]),
                             ("ADDED", "x-inst"))
            self.assertLess(elapsed, 5.0)
        finally:
            b.cleanup()
            a.cleanup()


class WatchCache(ServerTestCase, unittest.TestCase):
    """The watch cache: lists from memory, metrics, and a lost feed event.

    The server drops revision 7 from its cache feed once (test-only fault
    injection), as a lost event would. The cache must notice the gap,
    rebuild from a consistent list, close watchers that may have missed it
    with 410, and serve the right state afterwards.
    """

    # Past the server's own start-up writes (namespaces, ServiceAccounts, its
    # Service and Lease, the bootstrap RBAC policy and its aggregation).
    DROP = 200

    @classmethod
    def setUpClass(cls):
        cls.server = Server("WatchCache", env={"SQLKUBE_TEST_DROP_REVISION": str(cls.DROP)})
        cls.server.start()

    def test_lost_event_forces_rebuild_and_410(self):
        s = self.server
        base = "/api/v1/namespaces/default/configmaps"
        # the server's own start-up writes (namespaces, their default
        # ServiceAccounts, its Service and Lease) come first
        wait_until(lambda: len(s.request("GET", "/api/v1/serviceaccounts").json()["items"]) == 4,
                   what="the default ServiceAccounts")

        def settled():  # no start-up write for longer than the controllers' idle interval
            before = s.request("GET", base).json()["metadata"]["resourceVersion"]
            time.sleep(1.2)
            return before == s.request("GET", base).json()["metadata"]["resourceVersion"]
        wait_until(settled, timeout=30, what="the start-up writes")
        rv = int(s.request("GET", base).json()["metadata"]["resourceVersion"])
        self.assertLess(rv, self.DROP - 1, "the fault must lie ahead of the test's writes")
        self.assertEqual(metric(s, "sqlkube_watch_cache_rebuilds_total"), 0)
        ws = WatchStream(s, base + "?watch=true&resourceVersion=%d" % rv)
        names = []
        for i in range(self.DROP - rv + 2):
            names.append("gap-%d" % i)
            r = s.request("POST", base, cm(names[-1], {"i": str(i)}))
            self.assertEqual(r.status, 201, r)
        ev = ws.wait_for(lambda ev: any(e["type"] == "ERROR" for e in ev), what="410 after the gap")
        self.assertTrue(ws.done.wait(10), "the watch must end after the ERROR event")
        ws.close()
        err = [e for e in ev if e["type"] == "ERROR"][0]["object"]
        self.assertEqual((err["code"], err["reason"]), (410, "Expired"))
        # Every event before the ERROR was real and in order; none after it.
        seen = [e["object"]["metadata"]["name"] for e in ev if e["type"] == "ADDED"]
        self.assertEqual(seen, names[:len(seen)])
        self.assertEqual(ev[-1]["type"], "ERROR")
        wait_until(lambda: metric(s, "sqlkube_watch_cache_rebuilds_total") == 1, what="rebuild")
        # The rebuilt cache holds everything, including the dropped object.
        # Consistent reads (no resourceVersion): served from the cache once it
        # has applied the store's revision; resourceVersion=0 ("any") may be
        # served before the feed has applied the last create.
        got = s.request("GET", base).json()
        self.assertEqual(sorted(i["metadata"]["name"] for i in got["items"]), sorted(names))
        r = s.request("GET", base + "/gap-%d" % (self.DROP - rv - 1))
        self.assertEqual(r.status, 200, r)
        # And a new watch from the current revision works.
        rv2 = got["metadata"]["resourceVersion"]
        ws2 = WatchStream(s, base + "?watch=true&resourceVersion=" + rv2)
        s.request("POST", base, cm("after-gap", {"k": "v"}))
        ev2 = ws2.wait_for(lambda ev: len(ev) >= 1, what="event after rebuild")
        ws2.close()
        self.assertEqual((ev2[0]["type"], ev2[0]["object"]["metadata"]["name"]),
                         ("ADDED", "after-gap"))

    def test_metrics_and_lists_from_cache(self):
        s = self.server
        before = metric(s, 'sqlkube_list_chunks_total{source="cache"}')
        for rv in ("0", ""):
            r = s.request("GET", "/api/v1/namespaces?resourceVersion=" + rv)
            self.assertEqual(r.status, 200, r)
            self.assertIn("default", [i["metadata"]["name"] for i in r.json()["items"]])
        self.assertGreaterEqual(metric(s, 'sqlkube_list_chunks_total{source="cache"}'), before + 2)
        text = s.request("GET", "/metrics").body.decode()
        for name in ("apiserver_watch_list_duration_seconds_count",
                     "apiserver_terminated_watchers_total", "apiserver_watch_cache_lag",
                     "apiserver_registered_watchers", "apiserver_watch_events_total",
                     "apiserver_request_duration_seconds_bucket"):
            self.assertIn(name, text)
        self.assertIn('apiserver_request_total{verb="LIST",code="200"}', text)
        # no write here makes the database refuse a batch
        self.assertEqual(metric(s, "sqlkube_store_batch_replays_total"), 0)
        # a create is one committed write transaction at least (others may
        # share it, or run beside it: leases, events); deleted again, so no
        # other test sees the object
        commits = metric(s, "sqlkube_store_commits_total")
        base = "/api/v1/namespaces/default/configmaps"
        r = s.request("POST", base, cm("commits-counted", {"k": "v"}))
        self.assertEqual(r.status, 201, r)
        self.assertGreaterEqual(metric(s, "sqlkube_store_commits_total"), commits + 1)
        self.assertEqual(s.request("DELETE", base + "/commits-counted").status, 200)
        ws = WatchStream(s, "/api/v1/namespaces?watch=true")
        wait_until(lambda: metric(s, "apiserver_registered_watchers") >= 1, what="registered")
        ws.close()
        wait_until(lambda: metric(s, "apiserver_registered_watchers") == 0, what="unregistered")


if __name__ == "__main__":
    unittest.main()
