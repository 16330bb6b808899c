"""Hostile input: what one request, or a few connections, from anyone on the
port must not do to sqlkube.

Each class of attack from issue 18 is sent to a real server (the ASan+UBSan
build in `make test`, on SQLite and PostgreSQL): a crash (SEGV, abort in a
reply), a poisoned stored object, amplification, quadratic work, connection
and descriptor exhaustion, wrong answers and readable data at rest. Every
test asserts the 4xx it expects and that the server is still alive and
ready afterwards; the exhaustion test asserts /readyz answers within a
second while 10,000 idle connections, 300 slow-header connections and 16
unpaginated lists are open.

Run: tests/e2e/run.sh both --dir tests/hostile
"""

import json
import os
import resource
import socket
import stat
import sys
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import Server, ServerTestCase, wait_until  # noqa: E402

CM = "/api/v1/namespaces/default/configmaps"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
SMP = {"Content-Type": "application/strategic-merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}


def raw_exchange(port, data, timeout=10.0, source=None):
    """Sends raw bytes, returns everything the server sends until it closes
    (or the timeout passes)."""
    s = socket.socket()
    if source:
        s.bind((source, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    out = b""
    try:
        s.sendall(data)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
            if b"\r\n\r\n" in out and _complete(out):
                break
    except (socket.timeout, ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return out


def _complete(resp):
    head, _, body = resp.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def status_of(resp):
    try:
        return int(resp.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def body_json(resp):
    return json.loads(resp.partition(b"\r\n\r\n")[2].decode("utf-8"))


def get_line(path):
    return ("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode()


def cm(name, data=None, **meta):
    m = {"name": name}
    m.update(meta)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": m, "data": data or {"a": "b"}}


def _closed(s):
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class HostileCase(ServerTestCase):
    """Helpers: every test ends with the server alive and ready."""

    def assertStatus(self, r, code, reason=None):
        self.assertEqual(r.status, code, "want HTTP %d, got %r" % (code, r))
        st = r.json()
        self.assertEqual((st.get("kind"), st.get("code")), ("Status", code), st)
        if reason:
            self.assertEqual(st.get("reason"), reason, st)
        return st

    def assertAlive(self):
        self.assertIsNone(self.server.proc.poll(), "the server exited:\n" + self.server.log_tail())
        r = self.server.request("GET", "/readyz", timeout=5)
        self.assertEqual(r.status, 200, r)

    def tearDown(self):
        self.assertAlive()


class Crashes(HostileCase, unittest.TestCase):
    """Requests that used to crash the server (SEGV, abort while encoding a reply)."""

    def test_empty_segments_are_404(self):
        for path in ("/openapi//v3/api/v1", "//api/v1", "/api//v1/namespaces", "/apis//v1",
                     "/api/v1/namespaces//configmaps", "/openapi/v3//"):
            r = self.server.request("GET", path)
            self.assertStatus(r, 404, "NotFound")

    def test_invalid_utf8_anywhere_is_400(self):
        for path in ("/api/v1/namespaces/default/configmaps/%ff%fe",
                     CM + "?labelSelector=%ff", CM + "?fieldValidation=%ff",
                     CM + "?continue=%ff", CM + "?fieldSelector=metadata.name%3D%c3",
                     "/api/v1/namespaces/%ed%a0%80/configmaps",  # a UTF-16 surrogate
                     CM + "?%ff=1"):
            r = self.server.request("GET", path)
            st = self.assertStatus(r, 400, "BadRequest")
            self.assertIn("UTF-8", st["message"])
        r = self.server.request("PATCH", CM + "/x?fieldValidation=%c0%af", body=b"{}",
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertStatus(r, 400, "BadRequest")

    def test_malformed_escapes_are_400(self):
        for path in (CM + "/%zz", CM + "/%f", CM + "?labelSelector=%", CM + "/a%"):
            resp = raw_exchange(self.server.port, get_line(path))
            self.assertEqual(status_of(resp), 400, resp[:300])
            self.assertIn("invalid URL escape", body_json(resp)["message"])

    def test_long_multibyte_names_are_answered_whole(self):
        name = "\u00e9" * 150
        r = self.server.request("GET", CM + "/" + urllib.parse.quote(name))
        st = self.assertStatus(r, 404, "NotFound")
        self.assertEqual(st["message"], 'configmaps "%s" not found' % name)
        # The same name in a create: a 422 quoting it whole, not a cut character.
        r = self.server.request("POST", CM, body=cm(name))
        st = self.assertStatus(r, 422, "Invalid")
        self.assertIn(name, st["message"])
        r = self.server.request("PATCH", CM + "/x?fieldValidation=" + urllib.parse.quote(name * 3),
                                body=b"{}", headers={"Content-Type": "application/merge-patch+json"})
        st = self.assertStatus(r, 422, "Invalid")  # kube's ValidatePatchOptions
        self.assertIn(name * 3, st["message"])

    def test_unparsable_bodies_with_invalid_utf8_are_400(self):
        for body in (b'{"metadata":{"name":"\xff"}}', b'{"\xfe": 1}', b"\xc3"):
            r = self.server.request("POST", CM, body=body,
                                    headers={"Content-Type": "application/json"})
            self.assertStatus(r, 400, "BadRequest")

    def test_invalid_utf8_header_is_400(self):
        resp = raw_exchange(self.server.port,
                            b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nAccept: \xff\xfe\r\n"
                            b"Connection: close\r\n\r\n")
        self.assertEqual(status_of(resp), 400, resp[:300])


class Poison(HostileCase, unittest.TestCase):
    """Objects that cannot be read back must not be storable; one that
    exists anyway (an older version stored it) is skipped, not fatal."""

    def deep(self, levels):
        """A JSON text nested `levels` deep (built as text: Python's own
        encoder would hit its recursion limit)."""
        return '{"a":' * levels + '"x"' + "}" * levels

    def test_deep_patches_are_refused(self):
        r = self.server.request("POST", CM, body=cm("deep"))
        self.assertEqual(r.status, 201, r)
        # Two 1,500-level JSON patches, the second added at the bottom of
        # the first, used to store a 3,000-level object no reader could parse.
        ops = ('[{"op":"add","path":"/data/deep","value":%s},'
               '{"op":"add","path":"/data/deep%s/b","value":%s}]'
               % (self.deep(1500), "/a" * 1500, self.deep(1500)))
        r = self.server.request("PATCH", CM + "/deep", body=ops.encode(), headers=JSON_PATCH)
        self.assertIn(r.status, (400, 422), r)
        body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"spec":%s}'
        r = self.server.request("PUT", CM + "/deep", body=(body % self.deep(300)).encode(),
                                headers={"Content-Type": "application/json"})
        self.assertStatus(r, 400, "BadRequest")
        r = self.server.request("PATCH", CM + "/deep",
                                body=('{"data":{"d":%s}}' % self.deep(300)).encode(),
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertIn(r.status, (400, 422), r)
        # The object is as before, and every path still reads it.
        r = self.server.request("GET", CM + "/deep")
        self.assertEqual(r.json()["data"], {"a": "b"})
        self.assertEqual(self.server.request("GET", CM + "?labelSelector=x!=y").status, 200)
        self.assertEqual(self.server.request("DELETE", CM + "/deep").status, 200)

    def test_unreadable_stored_object_is_skipped_and_deletable(self):
        for name in ("poisoned", "healthy"):
            r = self.server.request("POST", CM, body=cm(name, labels={"app": "p"}))
            self.assertEqual(r.status, 201, r)
        # Store 3,000 levels under "poisoned" behind the server's back, the
        # way an older version could, and restart so the cache loads it.
        deep_text = '{"a":' * 3000 + "1" + "}" * 3000
        self.server.stop()
        self.rewrite_value("poisoned", deep_text)
        self.server.start()
        r = self.server.request("GET", CM + "?labelSelector=app%3Dp")
        self.assertEqual(r.status, 200, r)
        self.assertEqual([i["metadata"]["name"] for i in r.json()["items"]], ["healthy"])
        r = self.server.request("GET", CM + "?fieldSelector=metadata.name%3Dpoisoned")
        self.assertEqual(r.json()["items"], [])
        r = self.server.request("PATCH", CM + "/poisoned", body={"data": {"b": "c"}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertStatus(r, 500)
        r = self.server.request("DELETE", CM + "/poisoned")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["details"]["name"], "poisoned")
        self.assertEqual(self.server.request("GET", CM + "/poisoned").status, 404)
        r = self.server.request("GET", CM)
        self.assertEqual([i["metadata"]["name"] for i in r.json()["items"]], ["healthy"])

    def rewrite_value(self, name, text):
        sql = ("UPDATE sk_history SET value = %s WHERE rev = (SELECT max(rev) FROM sk_history "
               "WHERE resource = 'configmaps' AND namespace = 'default' AND name = '%s')")
        if self.server.backend == "postgres":
            import subprocess
            p = subprocess.run(["psql", self.server.db_url, "-v", "ON_ERROR_STOP=1", "-qc",
                                sql % ("$v$" + text + "$v$", name)],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
        else:
            import sqlite3
            db = sqlite3.connect(os.path.join(self.server.data_dir, "sqlkube.db"))
            db.execute(sql % ("?", name), (text,))
            db.commit()
            db.close()


class Amplification(HostileCase, unittest.TestCase):
    """Small requests that would store large objects."""

    def test_json_patch_copies_are_bounded(self):
        big = "x" * (200 * 1024)
        r = self.server.request("POST", CM, body=cm("amp", {"big": big}))
        self.assertEqual(r.status, 201, r)
        ops = [{"op": "copy", "from": "/data/big", "path": "/data/c%d" % i} for i in range(60)]
        body = json.dumps(ops).encode()
        self.assertLess(len(body), 4096)
        r = self.server.request("PATCH", CM + "/amp", body=body, headers=JSON_PATCH)
        st = self.assertStatus(r, 413, "RequestEntityTooLarge")
        self.assertIn("copy", st["message"])
        # Copying the whole document into itself doubles it per operation.
        ops = [{"op": "copy", "from": "", "path": "/data/self%d" % i} for i in range(40)]
        r = self.server.request("PATCH", CM + "/amp", body=json.dumps(ops).encode(),
                                headers=JSON_PATCH)
        self.assertIn(r.status, (413, 422), r)
        self.assertEqual(sorted(self.server.request("GET", CM + "/amp").json()["data"]), ["big"])

    def test_object_size_is_capped_after_patches(self):
        # A Lease: no field of it has a size limit of its own (a ConfigMap's
        # data would be refused at 1 MiB by its validation first).
        def lease(name, holder):
            return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": name}, "spec": {"holderIdentity": holder}}
        r = self.server.request("POST", LEASES, body=lease("grow", "x" * (900 * 1024)))
        self.assertEqual(r.status, 201, r)
        r = self.server.request("PATCH", LEASES + "/grow",
                                body={"metadata": {"labels": {"a": "b"}},
                                      "spec": {"holderIdentity": "y" * (1600 * 1024)}},
                                headers={"Content-Type": "application/merge-patch+json"})
        st = self.assertStatus(r, 413, "RequestEntityTooLarge")
        self.assertEqual(st["message"], "Request entity too large: limit is 1572864")
        r = self.server.request("PUT", LEASES + "/grow", body=lease("grow", "z" * (1600 * 1024)))
        self.assertStatus(r, 413, "RequestEntityTooLarge")
        r = self.server.request("POST", LEASES, body=lease("born-big", "x" * (1600 * 1024)))
        self.assertStatus(r, 413, "RequestEntityTooLarge")
        self.assertEqual(self.server.request("GET", LEASES + "/born-big").status, 404)
        got = self.server.request("GET", LEASES + "/grow").json()
        self.assertEqual(got["spec"]["holderIdentity"], "x" * (900 * 1024))

    def test_unknown_fields_of_builtin_kinds_are_dropped(self):
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                 "metadata": {"name": "l"}, "spec": {"holderIdentity": "a", "junk": "x" * 1000},
                 "extra": {"more": 1}}
        r = self.server.request("POST", LEASES, body=lease)
        self.assertEqual(r.status, 201, r)
        self.assertIn("unknown field", r.headers.get("warning", ""))
        got = r.json()
        self.assertNotIn("junk", got["spec"])
        self.assertNotIn("extra", got)
        r = self.server.request("PATCH", LEASES + "/l", body={"spec": {"junk2": "y"}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r)
        self.assertNotIn("junk2", r.json()["spec"])
        r = self.server.request("PATCH", LEASES + "/l?fieldValidation=Strict",
                                body={"spec": {"junk3": "y"}},
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertStatus(r, 422, "Invalid")
        r = self.server.request("POST", LEASES + "?fieldValidation=Strict",
                                body=dict(lease, metadata={"name": "l2"}))
        st = self.assertStatus(r, 400, "BadRequest")
        self.assertIn('unknown field "spec.junk"', st["message"])
        r = self.server.request("POST", LEASES + "?fieldValidation=Ignore",
                                body=dict(lease, metadata={"name": "l3"}))
        self.assertEqual(r.status, 201, r)
        self.assertNotIn("junk", r.json()["spec"])
        self.assertNotIn("warning", r.headers)


class QuadraticWork(HostileCase, unittest.TestCase):

    def test_large_strategic_merge_is_linear(self):
        def refs(start, n):
            return [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o%d" % i,
                     "uid": "00000000-0000-0000-0000-%012d" % i} for i in range(start, start + n)]
        # 3,000 references and their managedFields entries (one per list-map
        # key, about as many bytes again), and the 6,000 after the merge, fit
        # the 1.5 MiB object limit. The
        # owners do not exist, so the garbage collector deletes the object
        # soon: a finalizer keeps it (deleting) for the patches below.
        r = self.server.request("POST", CM, body=cm("owned", ownerReferences=refs(0, 3000),
                                                    finalizers=["example.com/hold"]))
        self.assertEqual(r.status, 201, r)
        # 3,000 new references onto 3,000: merged and stored.
        patch = {"metadata": {"ownerReferences": refs(3000, 3000)}}
        t0 = time.monotonic()
        r = self.server.request("PATCH", CM + "/owned", body=patch, headers=SMP, timeout=60)
        took = time.monotonic() - t0
        self.assertEqual(r.status, 200, r)
        self.assertLess(took, 10.0, "3k-onto-3k strategic merge took %.1fs" % took)
        # 12,000 duplicates of existing keys: merged, not appended.
        patch = {"metadata": {"ownerReferences": refs(0, 6000) * 2}}
        t0 = time.monotonic()
        r = self.server.request("PATCH", CM + "/owned", body=patch, headers=SMP, timeout=60)
        took = time.monotonic() - t0
        self.assertLess(took, 10.0, "strategic merge of duplicates took %.1fs" % took)

    def test_malformed_directives_are_client_errors(self):
        r = self.server.request("POST", CM, body=cm("d", finalizers=["a/b"]))
        self.assertEqual(r.status, 201, r)
        for patch in ({"$patch": "bogus"}, {"$setElementOrder/data": 5},
                      {"metadata": {"ownerReferences": [{"name": "no-uid"}]}},
                      {"metadata": {"finalizers": [{"$patch": "merge"}]}},
                      {"$retainKeys": "data"}, {"metadata": {"$patch": 7}}):
            r = self.server.request("PATCH", CM + "/d", body=patch, headers=SMP)
            self.assertIn(r.status, (400, 422), "%r -> %r" % (patch, r))
        # kube's strategic merge (kubectl patch --local) takes a deletion list
        # aimed at a map as nothing to do: accepted, the object unchanged
        r = self.server.request("PATCH", CM + "/d", body={"$deleteFromPrimitiveList/metadata": "x"},
                                headers=SMP)
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json()["data"], r.json()["metadata"]["finalizers"]),
                         ({"a": "b"}, ["a/b"]))


class WrongAnswers(HostileCase, unittest.TestCase):

    def test_path_decoding_happens_after_splitting(self):
        r = self.server.request("POST", CM, body=cm("abc"))
        self.assertEqual(r.status, 201, r)
        resp = raw_exchange(self.server.port, get_line(CM + "/abc%00def"))
        self.assertEqual(status_of(resp), 400, resp[:300])
        resp = raw_exchange(self.server.port, get_line(CM + "/abc%2Fdef"))
        self.assertEqual(status_of(resp), 404, resp[:300])
        resp = raw_exchange(self.server.port, get_line("/api/v1/namespaces/default%2Fconfigmaps"))
        self.assertEqual(status_of(resp), 404, resp[:300])
        # A plain escape still names the object.
        resp = raw_exchange(self.server.port, get_line(CM + "/%61bc"))
        self.assertEqual(status_of(resp), 200, resp[:300])

    def test_wrongly_typed_delete_options_are_400(self):
        r = self.server.request("POST", CM, body=cm("keep"))
        self.assertEqual(r.status, 201, r)
        for opts in ({"preconditions": {"uid": 123}}, {"preconditions": {"resourceVersion": 5}},
                     {"preconditions": "x"}, {"gracePeriodSeconds": "10"},
                     {"propagationPolicy": 1}, {"dryRun": [1]}, {"orphanDependents": "yes"}):
            r = self.server.request("DELETE", CM + "/keep", body=opts)
            st = self.assertStatus(r, 400, "BadRequest")
            self.assertIn("cannot unmarshal", st["message"])
        self.assertEqual(self.server.request("GET", CM + "/keep").status, 200)
        r = self.server.request("DELETE", CM + "/keep",
                                body={"preconditions": {"uid": "not-the-uid"}})
        self.assertStatus(r, 409, "Conflict")
        self.assertEqual(self.server.request("GET", CM + "/keep").status, 200)

    def test_watch_of_item_with_selector_characters(self):
        r = self.server.request("GET", CM + "/a,metadata.name=b?watch=1&timeoutSeconds=1")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.body, b"")


class HeaderTimeout(HostileCase, unittest.TestCase):
    """A connection that never completes a request header is closed."""

    @classmethod
    def setUpClass(cls):
        super(ServerTestCase, cls).setUpClass()
        cls.server = Server(cls.__name__, extra_args=["--request-header-timeout", "3"])
        cls.server.start()

    def test_silent_and_dripping_connections_are_closed(self):
        socks = []
        for i in range(50):
            s = socket.create_connection(("127.0.0.1", self.server.port))
            socks.append(s)
        drip = socket.create_connection(("127.0.0.1", self.server.port))
        drip.sendall(b"GET /readyz HTTP/1.1\r\n")
        t0 = time.monotonic()
        for _ in range(8):  # a byte every half second keeps an idle timer alive, not the deadline
            time.sleep(0.5)
            try:
                drip.sendall(b"X")
            except OSError:
                break
        for s in socks + [drip]:
            s.settimeout(10)
            try:
                self.assertEqual(s.recv(1), b"")
            except (ConnectionResetError, socket.timeout) as e:
                self.assertNotIsInstance(e, socket.timeout, "connection not closed")
            s.close()
        self.assertLess(time.monotonic() - t0, 8.0)
        # A connection that sent its header in time is served as usual.
        r = self.server.request("GET", "/readyz")
        self.assertEqual(r.status, 200)


class Exhaustion(HostileCase, unittest.TestCase):
    """Connections and request lines that used to stall the server."""

    def timed_readyz(self):
        t0 = time.monotonic()
        r = self.server.request("GET", "/readyz", timeout=10)
        return r.status, time.monotonic() - t0

    def test_many_query_parameters_are_answered(self):
        for n, want in ((900, 200), (2000, 400), (20000, 414)):
            query = "&".join("p%d=1" % i for i in range(n))
            resp = raw_exchange(self.server.port, get_line(CM + "?" + query), timeout=10)
            self.assertEqual(status_of(resp), want, "%d parameters: %r" % (n, resp[:200]))

    def test_oversize_uri_is_414(self):
        resp = raw_exchange(self.server.port, get_line(CM + "/" + "a" * 100000), timeout=10)
        self.assertEqual(status_of(resp), 414, resp[:200])

    def test_oversize_content_length_is_refused_before_the_body(self):
        t0 = time.monotonic()
        resp = raw_exchange(self.server.port,
                            b"PUT " + CM.encode() + b"/x HTTP/1.1\r\nHost: x\r\n"
                            b"Content-Type: application/json\r\nContent-Length: 3000000000\r\n\r\n{",
                            timeout=10)
        self.assertEqual(status_of(resp), 413, resp[:300])
        self.assertEqual(body_json(resp)["message"], "Request entity too large: limit is 3145728")
        self.assertLess(time.monotonic() - t0, 2.0)

    def test_per_ip_connection_cap(self):
        srv = Server("capped", extra_args=["--max-connections-per-ip", "40"])
        srv.start()
        try:
            socks, refused = [], 0
            for i in range(60):
                s = socket.socket()
                s.bind(("127.0.0.9", 0))
                s.connect(("127.0.0.1", srv.port))
                socks.append(s)
            time.sleep(0.3)
            for s in socks:
                s.setblocking(False)
                try:
                    if s.recv(1) == b"":
                        refused += 1
                except BlockingIOError:
                    pass
                except ConnectionResetError:
                    refused += 1
            self.assertEqual(refused, 20)
            r = srv.request("GET", "/readyz", timeout=5)
            self.assertEqual(r.status, 200, r)
            for s in socks:
                s.close()
        finally:
            srv.cleanup()

    def test_readyz_answers_within_a_second_under_load(self):
        limit = raise_fd_limit()
        n_idle = min(10000, limit - 1000)
        self.assertGreaterEqual(n_idle, 2000, "open-file limit %d too low for this test" % limit)
        # 16 unpaginated lists need something to list: 3,000 objects of 1 KiB.
        payload = "x" * 1024
        created = 0
        body = json.dumps(cm("seed", {"v": payload}))
        for i in range(3000):
            r = self.server.request("POST", CM, body=body.replace('"seed"', '"seed-%d"' % i),
                                    headers={"Content-Type": "application/json"})
            created += r.status == 201
        self.assertEqual(created, 3000)
        idle = []
        try:
            for i in range(n_idle):  # spread over source addresses, as many clients would be
                s = socket.socket()
                s.bind(("127.1.%d.%d" % (i // 200, 1 + i % 200), 0))
                s.connect(("127.0.0.1", self.server.port))
                idle.append(s)
            slow = []
            for i in range(300):
                s = socket.socket()
                s.bind(("127.2.%d.%d" % (i // 200, 1 + i % 200), 0))
                s.connect(("127.0.0.1", self.server.port))
                s.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHo")
                slow.append(s)
            lists = []
            for i in range(16):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.connect(("127.0.0.1", self.server.port))
                s.sendall(get_line(CM))
                s.recv(1024)  # the list has started; it is not read any further
                lists.append(s)
            worst = 0.0
            for _ in range(10):
                status, took = self.timed_readyz()
                self.assertEqual(status, 200)
                worst = max(worst, took)
                time.sleep(0.1)
            open_idle = sum(1 for s in idle if not _closed(s))
            print("\n  readyz with %d idle (%d still open), 300 slow-header, 16 list "
                  "connections: worst %.3fs" % (n_idle, open_idle, worst))
            self.assertGreaterEqual(open_idle, n_idle * 9 // 10)
            self.assertLess(worst, 1.0)
        finally:
            for s in idle:
                s.close()
        status, took = self.timed_readyz()
        self.assertEqual(status, 200)
        self.assertLess(took, 1.0, "readyz took %.3fs right after the idle connections closed"
                        % took)
        for s in slow + lists:
            s.close()


class HostileTls(HostileCase, unittest.TestCase):
    """Over HTTPS with the default request header timeout (10 s): stalled
    TLS handshakes are dropped and do not keep anyone else waiting; TLS 1.0
    and 1.1 are refused. (Renegotiation ending the connection is tested in
    tests/e2e/test_tls_auth.py with openssl s_client.)"""

    server_tls = True

    def test_stalled_handshakes_dropped_while_others_are_served(self):
        # nothing at all, a record header only, and a ClientHello cut short
        hello = (b"\x16\x03\x01\x00\xc8\x01\x00\x00\xc4\x03\x03" + os.urandom(32))
        stalled = []
        for i in range(60):
            s = socket.socket()
            s.bind(("127.3.%d.%d" % (i // 200, 1 + i % 200), 0))
            s.connect(("127.0.0.1", self.server.port))
            s.sendall((b"", b"\x16\x03\x01\x02", hello)[i % 3])
            stalled.append(s)
        start = time.monotonic()
        try:
            served = 0
            while time.monotonic() - start < 8:
                r = self.server.request("GET", CM + "?limit=1", timeout=3)
                self.assertEqual(r.status, 200, r)
                served += 1
                time.sleep(0.2)
            self.assertGreater(served, 10)
            for s in stalled:
                s.settimeout(max(0.1, start + 13 - time.monotonic()))
                try:
                    while True:
                        data = s.recv(4096)
                        if not data:
                            break
                        self.assertEqual(data[:1], b"\x15", data)  # a TLS alert at most
                except ConnectionResetError:
                    pass
                except socket.timeout:
                    self.fail("a stalled handshake was still open after %.1f s"
                              % (time.monotonic() - start))
            waited = time.monotonic() - start
            self.assertGreater(waited, 9)
            self.assertLess(waited, 13)
        finally:
            for s in stalled:
                s.close()
        self.assertEqual(self.server.request("GET", "/readyz").status, 200)

    def test_stalled_handshake_burns_no_cpu(self):
        """A handshake stopped in the middle of a record must not make the
        server spin (MHD's epoll loop did, one pool thread per connection)."""
        def cpu_ms():
            with open("/proc/%d/stat" % self.server.proc.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
        hello = b"\x16\x03\x01\x00\xc8\x01\x00\x00\xc4\x03\x03" + os.urandom(32)
        socks = []
        try:
            for i in range(4):
                s = socket.create_connection(("127.0.0.1", self.server.port))
                s.sendall(hello if i % 2 else b"\x16\x03\x01\x02")
                socks.append(s)
            time.sleep(0.5)
            before = cpu_ms()
            time.sleep(3)
            used = cpu_ms() - before
            self.assertLess(used, 300, "the server used %d ms of CPU in 3 s" % used)
        finally:
            for s in socks:
                s.close()

    def test_old_tls_versions_refused(self):
        import ssl
        for v in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
            ctx = self.server.ssl_context()
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
            ctx.minimum_version = v
            ctx.maximum_version = v
            with self.subTest(v), self.assertRaises((ssl.SSLError, ConnectionResetError)), \
                    socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as raw:
                ctx.wrap_socket(raw, server_hostname="localhost").close()


class DataAtRest(HostileCase, unittest.TestCase):

    def test_data_dir_and_files_are_private(self):
        mode = stat.S_IMODE(os.stat(self.server.data_dir).st_mode)
        self.assertEqual(mode, 0o700, oct(mode))
        names = ["kubeconfig"]
        if self.server.backend == "sqlite":
            names += ["sqlkube.db", "sqlkube.db-wal", "sqlkube.db-shm"]
        for name in names:
            path = os.path.join(self.server.data_dir, name)
            mode = stat.S_IMODE(os.stat(path).st_mode)
            self.assertEqual(mode, 0o600, "%s is %s" % (name, oct(mode)))

    def test_modes_are_restored_on_start(self):
        os.chmod(self.server.data_dir, 0o755)
        os.chmod(self.server.kubeconfig, 0o644)
        self.server.stop()
        self.server.start()
        self.assertEqual(stat.S_IMODE(os.stat(self.server.data_dir).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(self.server.kubeconfig).st_mode), 0o600)


if __name__ == "__main__":
    unittest.main()
