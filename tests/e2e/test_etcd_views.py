"""The views sk_kv_latest and sk_kv_history keep the etcd keyspace
inspectable with plain SQL: since migration 0014 they join sk_kv with
sk_kv_doc, each row decoded once by the server's follower (ctl/kvdecode)
instead of at every read.

etcdctl writes keys in the shapes kube-apiserver uses (namespaced,
cluster-scoped, group-prefixed, a custom resource with a JSON value,
protobuf values with kube's k8s\\0 prefix, the renamed services/specs,
services/endpoints and minions prefixes, compact_rev_key), an overwritten
key, a deleted key, a valid non-ASCII UTF-8 key and a key that is not UTF-8;
and a real ConfigMap in kube's protobuf envelope, once the follower has
decoded every row, the sqlite3 / psql CLI reads the views and every decoded
column is checked, on whichever backend the suite runs: the key, the
encoding (an encrypted k8s:enc: value as such), kind and apiVersion (a
protobuf value's from its envelope, even of a kind sqlkube cannot decode),
and the object as JSON, which SQL queries (the ConfigMap's data decoded from
protobuf). A compaction removes the compacted rows' docs with them. Also: sk_kv_latest reads
sk_kv's superseded flag (migration 0011) and probes no index per row; the
README's SQL examples run and reach every table through an index (for the
views the key indexes, whose sk_history one carries the flags on SQLite
since its 0012).

CurrentFlags: the superseded flag of sk_history and sk_kv (migration 0011),
which sk_objects and sk_kv_latest filter on, agrees with the anti-join it
replaced (a newer row of the key exists) after creates, updates (many of one
key in a group-commit batch), deletes, re-creates, a namespace's cascade,
etcd puts, deletes, re-puts and transactions, and compaction; and after a
database at migration 0010 is migrated (the flag back-filled), with a view a
person built on sk_objects still answering; the consistency check reports a
flag set wrong by hand.
"""

import json
import os
import re
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from readme_sql import examples  # noqa: E402
from server import (Server, free_port, objects_view_0009, sql, superseded_mismatches,  # noqa: E402
                    wait_until)
from test_etcd import ETCDCTL, QUIET  # noqa: E402

PROTO = b"k8s\x00\n\x0b\n\x02v1\x12\x05Thing"
CR_JSON = b'{"apiVersion":"example.com/v1","kind":"Widget","spec":{"size":3}}'
NOT_UTF8_KEY = b"/registry/pods/default/\xff\xfe"

# key -> value, written in this order; then the overwrite and the delete.
KEYS = [
    (b"/registry/pods/default/web", PROTO),
    (b"/registry/namespaces/team-a", PROTO),
    (b"/registry/apiregistration.k8s.io/apiservices/v1.apps", b'{"kind":"APIService"}'),
    (b"/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com", PROTO),
    (b"/registry/example.com/widgets/default/w1", CR_JSON),
    (b"/registry/example.com/clusterwidgets/cw1", CR_JSON),
    (b"/registry/services/specs/default/kubernetes", PROTO),
    (b"/registry/services/endpoints/default/kubernetes", PROTO),
    (b"/registry/minions/node-1", PROTO),
    (b"/registry/masterleases/10.0.0.1", PROTO),
    (b"/registry/clusterroles/syst\xc3\xa8me", PROTO),
    (b"/registry/secrets/default/s1", b"k8s:enc:aescbc:v1:key1:\x01\x02"),
    (b"/registry/configmaps/default/cfg", b'{"v":1}'),
    (b"/registry/configmaps/default/odd", b"{\xff}"),
    (b"/registry/pods//x", PROTO),
    (b"/registry/a/b/c/d", PROTO),
    (b"compact_rev_key", b"5"),
    (NOT_UTF8_KEY, PROTO),
    (b"/registry/secrets/default/gone", PROTO),
]
# A ConfigMap as kube-apiserver stores it: the k8s\0 envelope (TypeMeta v1
# ConfigMap) around the object's protobuf (metadata name "pb", namespace
# "default"; data {"color": "blue"}).
def _pb_field(num, payload):
    return bytes([num << 3 | 2, len(payload)]) + payload


CONFIGMAP_PB = b"k8s\x00" + _pb_field(1, _pb_field(1, b"v1") + _pb_field(2, b"ConfigMap")) + \
    _pb_field(2, _pb_field(1, _pb_field(1, b"pb") + _pb_field(3, b"default")) +
              _pb_field(2, _pb_field(1, b"color") + _pb_field(2, b"blue")))
KEYS.append((b"/registry/configmaps/default/pb", CONFIGMAP_PB))
OVERWRITTEN = (b"/registry/configmaps/default/cfg", b'{"v":2}')
DELETED = b"/registry/secrets/default/gone"

N = "<null>"
# key -> (key_text, group, resource, namespace, name, encoding, kind, api_version, value_json)
EXPECTED = {
    b"/registry/pods/default/web":
        ("/registry/pods/default/web", N, "pods", "default", "web", "protobuf", "Thing", "v1", N),
    b"/registry/namespaces/team-a":
        ("/registry/namespaces/team-a", N, "namespaces", N, "team-a", "protobuf", "Thing", "v1",
         N),
    b"/registry/apiregistration.k8s.io/apiservices/v1.apps":
        ("/registry/apiregistration.k8s.io/apiservices/v1.apps", "apiregistration.k8s.io",
         "apiservices", N, "v1.apps", "json", "APIService", N, {"kind": "APIService"}),
    b"/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com":
        ("/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com",
         "apiextensions.k8s.io", "customresourcedefinitions", N, "widgets.example.com",
         "protobuf", "Thing", "v1", N),
    b"/registry/example.com/widgets/default/w1":
        ("/registry/example.com/widgets/default/w1", "example.com", "widgets", "default", "w1",
         "json", "Widget", "example.com/v1", json.loads(CR_JSON)),
    b"/registry/example.com/clusterwidgets/cw1":
        ("/registry/example.com/clusterwidgets/cw1", "example.com", "clusterwidgets", N, "cw1",
         "json", "Widget", "example.com/v1", json.loads(CR_JSON)),
    b"/registry/services/specs/default/kubernetes":
        ("/registry/services/specs/default/kubernetes", N, "services", "default", "kubernetes",
         "protobuf", "Thing", "v1", N),
    b"/registry/services/endpoints/default/kubernetes":
        ("/registry/services/endpoints/default/kubernetes", N, "endpoints", "default",
         "kubernetes", "protobuf", "Thing", "v1", N),
    b"/registry/minions/node-1":
        ("/registry/minions/node-1", N, "nodes", N, "node-1", "protobuf", "Thing", "v1", N),
    b"/registry/masterleases/10.0.0.1":
        ("/registry/masterleases/10.0.0.1", N, "masterleases", N, "10.0.0.1", "protobuf",
         "Thing", "v1", N),
    b"/registry/clusterroles/syst\xc3\xa8me":
        ("/registry/clusterroles/syst\u00e8me", N, "clusterroles", N, "syst\u00e8me", "protobuf",
         "Thing", "v1", N),
    b"/registry/secrets/default/s1":
        ("/registry/secrets/default/s1", N, "secrets", "default", "s1", "encrypted", N, N, N),
    b"/registry/configmaps/default/cfg":
        ("/registry/configmaps/default/cfg", N, "configmaps", "default", "cfg", "json", N, N,
         {"v": 2}),
    # Starts like JSON but is not UTF-8 text.
    b"/registry/configmaps/default/odd":
        ("/registry/configmaps/default/odd", N, "configmaps", "default", "odd", "bytes", N, N, N),
    b"/registry/configmaps/default/pb":
        ("/registry/configmaps/default/pb", N, "configmaps", "default", "pb", "protobuf",
         "ConfigMap", "v1", {"kind": "ConfigMap", "apiVersion": "v1",
                             # Go's encoding/json prints a zero Time as null
                             "metadata": {"name": "pb", "namespace": "default",
                                          "creationTimestamp": None},
                             "data": {"color": "blue"}}),
    # Not kube's layout: an empty segment, one segment too many.
    b"/registry/pods//x": ("/registry/pods//x", N, N, N, N, "protobuf", "Thing", "v1", N),
    b"/registry/a/b/c/d": ("/registry/a/b/c/d", N, N, N, N, "protobuf", "Thing", "v1", N),
    b"compact_rev_key": ("compact_rev_key", N, N, N, N, "bytes", N, N, N),
    NOT_UTF8_KEY: (N, N, N, N, N, "protobuf", "Thing", "v1", N),
}

COLS = ("coalesce(key_text, '<null>'), coalesce(\"group\", '<null>'), "
        "coalesce(resource, '<null>'), coalesce(namespace, '<null>'), coalesce(name, '<null>'), "
        "coalesce(encoding, '<null>'), coalesce(kind, '<null>'), coalesce(api_version, '<null>'), "
        "coalesce(value_json, '<null>')")


def parsed(row):
    """A row of COLS with value_json parsed (PostgreSQL prints jsonb its own way)."""
    return row[:-1] + [json.loads(row[-1]) if row[-1] != N else N]


def decoded(server):
    """Whether the follower has decoded every row of sk_kv."""
    return sql(server, "SELECT (SELECT count(*) FROM sk_kv) = (SELECT count(*) FROM sk_kv_doc)"
               )[0][0] in ("1", "t")


def put(port, key, value):
    """etcdctl put with raw bytes: the key as an argument, the value on stdin
    (it may hold NUL, which no argument can)."""
    p = subprocess.run([ETCDCTL, "--endpoints=http://127.0.0.1:%d" % port, "put", key],
                       input=value, capture_output=True, timeout=60,
                       env=dict(os.environ, ETCDCTL_API="3"))
    assert p.returncode == 0, (key, p.stderr)


def delete(port, key):
    p = subprocess.run([ETCDCTL, "--endpoints=http://127.0.0.1:%d" % port, "del", key],
                       capture_output=True, timeout=60, env=dict(os.environ, ETCDCTL_API="3"))
    assert p.returncode == 0 and p.stdout.strip() == b"1", (key, p.stdout, p.stderr)


@unittest.skipUnless(ETCDCTL, "etcdctl not installed (Debian etcd-client)")
class EtcdViews(unittest.TestCase):

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.port = free_port()
        cls.server = Server(cls.__name__, extra_args=["--etcd-listen", "127.0.0.1:%d" % cls.port]
                            + QUIET)
        try:
            cls.server.start()
            wait_until(lambda: subprocess.run(
                [ETCDCTL, "--endpoints=http://127.0.0.1:%d" % cls.port, "endpoint", "health"],
                capture_output=True, timeout=30,
                env=dict(os.environ, ETCDCTL_API="3")).returncode == 0,
                what="etcd face healthy")
            for key, value in KEYS:
                put(cls.port, key, value)
            put(cls.port, *OVERWRITTEN)
            delete(cls.port, DELETED)
            wait_until(lambda: decoded(cls.server), what="every row decoded")
        except BaseException:
            cls.server.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def pg(self):
        return self.server.backend == "postgres"

    def hexkey(self):
        return "encode(key, 'hex')" if self.pg() else "lower(hex(key))"

    def rows(self, view, cols):
        """{key bytes: [columns]} of view, read with the database's own CLI."""
        got = {}
        for row in sql(self.server, "SELECT %s, %s FROM %s" % (self.hexkey(), cols, view)):
            got[bytes.fromhex(row[0])] = row[1:]
        return got

    def test_latest_decodes_every_shape(self):
        got = {k: parsed(v) for k, v in self.rows("sk_kv_latest", COLS).items()}
        self.assertEqual(got, {k: list(v) for k, v in EXPECTED.items()})

    def test_latest_is_the_newest_live_version(self):
        got = self.rows("sk_kv_latest", "version, create_rev < rev, lease")
        self.assertNotIn(DELETED, got)
        cfg = got[OVERWRITTEN[0]]
        self.assertEqual(cfg[0], "2")
        self.assertIn(cfg[1], ("1", "t"))
        self.assertEqual(got[b"/registry/pods/default/web"][0], "1")

    def test_latest_values_are_the_bytes(self):
        hexval = "encode(value_bytes, 'hex')" if self.pg() else "lower(hex(value_bytes))"
        got = self.rows("sk_kv_latest", hexval)
        self.assertEqual(bytes.fromhex(got[b"/registry/pods/default/web"][0]), PROTO)
        self.assertEqual(bytes.fromhex(got[NOT_UTF8_KEY][0]), PROTO)
        self.assertEqual(bytes.fromhex(got[b"/registry/configmaps/default/odd"][0]), b"{\xff}")

    def test_value_json_is_queryable(self):
        size = ("doc->'spec'->>'size'" if self.pg() else "json_extract(doc, '$.spec.size')")
        rows = sql(self.server, "SELECT namespace, name, %s FROM sk_kv_latest "
                   "WHERE \"group\" = 'example.com' AND resource = 'widgets'" % size)
        self.assertEqual(rows, [["default", "w1", "3"]])
        # a built-in kind stored as protobuf, queried by its decoded fields
        color = ("doc->'data'->>'color'" if self.pg() else "json_extract(doc, '$.data.color')")
        rows = sql(self.server, "SELECT name, %s FROM sk_kv_latest WHERE resource = 'configmaps'"
                   " AND kind = 'ConfigMap' AND encoding = 'protobuf'" % color)
        self.assertEqual(rows, [["pb", "blue"]])

    def test_history_keeps_overwrites_and_tombstones(self):
        deleted = "CASE WHEN deleted THEN 1 ELSE 0 END"
        rows = sql(self.server, "SELECT %s, version, %s FROM sk_kv_history ORDER BY rev, sub"
                   % (self.hexkey(), deleted))
        by_key = {}
        for hexkey, version, dead in rows:
            by_key.setdefault(bytes.fromhex(hexkey), []).append((version, dead))
        self.assertEqual(by_key[OVERWRITTEN[0]], [("1", "0"), ("2", "0")])
        self.assertEqual(by_key[DELETED], [("1", "0"), ("0", "1")])
        self.assertEqual(len(rows), len(KEYS) + 2)
        # Tombstones and older versions decode as the live ones do.
        got = sql(self.server, "SELECT %s FROM sk_kv_history WHERE %s ORDER BY rev"
                  % (COLS, "key_text = '/registry/secrets/default/gone'"))
        # a tombstone has its key decoded, and no value
        self.assertEqual(got, [["/registry/secrets/default/gone", N, "secrets", "default", "gone",
                                "protobuf", "Thing", "v1", N],
                               ["/registry/secrets/default/gone", N, "secrets", "default", "gone",
                                N, N, N, N]])

    def test_latest_reads_the_flag_not_the_index(self):
        """sk_kv_latest is a filter on sk_kv's superseded flag: no per-row
        probe of sk_kv_key, whose plan the statistics could choose."""
        if self.pg():
            plan = "\n".join(r[0] for r in sql(self.server, "EXPLAIN SELECT * FROM sk_kv_latest"))
        else:
            plan = "\n".join("|".join(r) for r in sql(
                self.server, "EXPLAIN QUERY PLAN SELECT * FROM sk_kv_latest"))
        self.assertNotIn("sk_kv_key", plan)
        self.assertEqual(superseded_mismatches(self.server), [])

    def test_readme_queries_read_an_index(self):
        """Every SQL example of README.md for this backend runs, and its plan
        reaches sk_history, sk_kv and sk_ttl through an index, never a scan
        of the table: through the key index (whose entries carry the flags
        the views filter on, on SQLite: its migration 0012) when it reads sk_objects or
        sk_kv_latest. The planner has no statistics here; PostgreSQL is told
        to avoid sequential scans, so that a scan in the plan means no index
        applies (its tables are too small here for the cost to decide).
        bench/views.py times the same queries at 100,000 objects."""
        mine = [q for backend, q in examples() if backend == self.server.backend]
        self.assertGreaterEqual(len(mine), 4)
        for q in mine:
            with self.subTest(q):
                if self.pg():
                    plan = [r[0] for r in sql(self.server,
                                              "SET enable_seqscan = off; EXPLAIN " + q)]
                    scans = [line for line in plan if re.search(r"Seq Scan on sk_", line)]
                else:
                    plan = ["|".join(r) for r in sql(self.server, "EXPLAIN QUERY PLAN " + q)]
                    scans = [line for line in plan
                             if re.search(r"\bSCAN (h|k|sk_history|sk_kv|sk_ttl)\b", line)]
                self.assertEqual(scans, [], "\n".join(plan))
                for view, indexes in (("sk_objects", ("sk_history_key",)),
                                      ("sk_kv_latest", ("sk_kv_key", "sk_kv_doc_object"))):
                    if view in q:
                        self.assertTrue(any(i in "\n".join(plan) for i in indexes),
                                        "\n".join(plan))
                sql(self.server, q)
        # the etcd examples find what they name
        by_prefix = [q for q in mine if "sk_kv_latest" in q and "/registry/pods/default/" in q]
        for q in by_prefix:
            self.assertIn("web", [r[0] for r in sql(self.server, q)])
        widgets = [q for q in mine if "/registry/example.com/widgets/default/" in q]
        self.assertTrue(widgets)
        for q in widgets:
            self.assertEqual([r[0] for r in sql(self.server, q)], ["w1"])


def etcdctl(port, *args, input=None):
    p = subprocess.run([ETCDCTL, "--endpoints=http://127.0.0.1:%d" % port] + list(args),
                       input=input, capture_output=True, timeout=60,
                       env=dict(os.environ, ETCDCTL_API="3"))
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p.stdout


def configmap(name, value):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"v": value}}


@unittest.skipUnless(ETCDCTL, "etcdctl not installed (Debian etcd-client)")
class CurrentFlags(unittest.TestCase):

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.port = free_port()
        cls.server = Server(cls.__name__, extra_args=["--etcd-listen", "127.0.0.1:%d" % cls.port,
                                                      "--compact-interval", "0"] + QUIET)
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def pg(self):
        return self.server.backend == "postgres"

    def req(self, method, path, body=None, status=(200, 201)):
        r = self.server.request(method, path, body)
        self.assertIn(r.status, status, (method, path, r.body[:300]))
        return r

    def cm_path(self, ns, name=""):
        return "/api/v1/namespaces/%s/configmaps%s" % (ns, "/" + name if name else "")

    def namespace(self, ns):
        self.req("POST", "/api/v1/namespaces",
                 {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})

    def assert_views_are_the_truth(self):
        self.assertEqual(superseded_mismatches(self.server), [])
        # every row decoded, and (after a compaction) no doc left of a row it removed
        wait_until(lambda: decoded(self.server), what="every row decoded")
        self.assertEqual(sql(self.server, "SELECT count(*) FROM sk_kv_doc d WHERE NOT EXISTS"
                             " (SELECT 1 FROM sk_kv k WHERE k.rev = d.rev AND k.sub = d.sub)"),
                         [["0"]])
        # the views against what the API serves
        live = sorted(r[0] for r in sql(self.server, "SELECT namespace || '/' || name FROM"
                                        " sk_objects WHERE resource = 'configmaps'"
                                        " AND namespace LIKE 'flags-%'"))
        served = []
        for ns in ("flags-a", "flags-b"):
            r = self.server.request("GET", self.cm_path(ns))
            if r.status == 200:
                served += ["%s/%s" % (ns, i["metadata"]["name"]) for i in r.json()["items"]]
        self.assertEqual(live, sorted(served))
        keys = sorted(r[0] for r in sql(self.server, "SELECT key_text FROM sk_kv_latest"
                                        " WHERE key_text LIKE '/flags/%'"))
        got = etcdctl(self.port, "get", "--prefix", "--keys-only", "/flags/").split()
        self.assertEqual(keys, sorted(k.decode() for k in got))

    def hammer(self, ns, name, writers=8, each=15):
        """Updates of one object from many clients at once, so that group
        commit puts several versions of it in one batch (a client that lost
        the race gets 409: sqlkube's writer checks each against the last)."""
        statuses = []

        def run(w):
            for i in range(each):
                r = self.server.request("PUT", self.cm_path(ns, name),
                                        configmap(name, "%d-%d" % (w, i)))
                statuses.append(r.status)
        threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(set(statuses) - {200, 409}, set())
        self.assertGreater(statuses.count(200), each)

    def write_everything(self, tag):
        """Every kind of write on both faces; returns nothing, leaves some of
        each key shape live and some deleted."""
        for ns in ("flags-a", "flags-b"):
            if self.server.request("GET", "/api/v1/namespaces/" + ns).status == 404:
                self.namespace(ns)
        for i in range(5):
            self.req("POST", self.cm_path("flags-a"), configmap("c%s%d" % (tag, i), "0"))
        self.req("PUT", self.cm_path("flags-a", "c%s0" % tag), configmap("c%s0" % tag, "1"))
        self.req("PUT", self.cm_path("flags-a", "c%s0" % tag), configmap("c%s0" % tag, "2"))
        self.req("DELETE", self.cm_path("flags-a", "c%s1" % tag))
        self.req("DELETE", self.cm_path("flags-a", "c%s2" % tag))
        self.req("POST", self.cm_path("flags-a"), configmap("c%s2" % tag, "again"))
        self.hammer("flags-a", "c%s3" % tag)
        # etcd face: put, overwrite, delete, re-put, a transaction, many at once
        etcdctl(self.port, "put", "/flags/%s/x" % tag, "1")
        etcdctl(self.port, "put", "/flags/%s/x" % tag, "2")
        etcdctl(self.port, "put", "/flags/%s/y" % tag, "1")
        etcdctl(self.port, "del", "/flags/%s/y" % tag)
        etcdctl(self.port, "put", "/flags/%s/z" % tag, "1")
        etcdctl(self.port, "del", "/flags/%s/z" % tag)
        etcdctl(self.port, "put", "/flags/%s/z" % tag, "again")
        etcdctl(self.port, "txn", input=("\n\nput /flags/%s/x 3\nput /flags/%s/t 1\n"
                                         "del /flags/%s/y\n\n" % (tag, tag, tag)).encode())
        procs = [subprocess.Popen([ETCDCTL, "--endpoints=http://127.0.0.1:%d" % self.port, "put",
                                   "/flags/%s/x" % tag, str(i)], stdout=subprocess.DEVNULL,
                                  env=dict(os.environ, ETCDCTL_API="3")) for i in range(8)]
        for p in procs:
            self.assertEqual(p.wait(timeout=60), 0)

    def test_a_flags_follow_every_write(self):
        self.write_everything("w")
        self.assert_views_are_the_truth()
        # a namespace's cascade deletes its objects through the writer
        for i in range(3):
            self.req("POST", self.cm_path("flags-b"), configmap("gone%d" % i, "0"))
        self.req("DELETE", "/api/v1/namespaces/flags-b")
        wait_until(lambda: self.server.request("GET", "/api/v1/namespaces/flags-b").status == 404,
                   timeout=30, what="namespace flags-b to go")
        self.assert_views_are_the_truth()

    def test_b_flags_survive_compaction(self):
        self.write_everything("c")
        self.server.compact(retain=0)
        self.assert_views_are_the_truth()
        # writes after compaction flag the rows it kept
        self.write_everything("d")
        self.req("PUT", self.cm_path("flags-a", "cc0"), configmap("cc0", "after"))
        self.req("DELETE", self.cm_path("flags-a", "cc4"))
        self.req("POST", self.cm_path("flags-a"), configmap("cc1", "back"))
        etcdctl(self.port, "del", "/flags/c/x")
        etcdctl(self.port, "put", "/flags/c/y", "back")
        self.assert_views_are_the_truth()
        self.server.compact(retain=0)
        self.assert_views_are_the_truth()

    def test_c_migration_from_0010_backfills(self):
        self.write_everything("m")
        # (a restart rewrites the identity Lease: compare what the test wrote)
        objects = ("SELECT resource, namespace, name, resource_version FROM sk_objects"
                   " WHERE namespace LIKE 'flags-%'")
        keys = "SELECT key_text, rev FROM sk_kv_latest WHERE key_text LIKE '/flags/%'"
        wait_until(lambda: decoded(self.server), what="every row decoded")
        before = sorted(sql(self.server, objects))
        before_kv = sorted(sql(self.server, keys))
        self.server.stop()
        # The database as migration 0010 left it: no flags, no decoded table,
        # and the views 0008 and 0009 made (read from their files).
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "migrations",
                            "postgres" if self.pg() else "sqlite")
        with open(os.path.join(root, "0008_etcd_kv_views.sql")) as f:
            kv_views = f.read()
        objects_view = objects_view_0009(self.server)
        undecoded = (" DROP TRIGGER sk_kv_doc_compacted ON sk_kv;"
                     " DROP FUNCTION sk_kv_doc_compacted();" if self.pg()
                     else " DROP TRIGGER sk_kv_doc_compacted;")
        sql(self.server, "DROP VIEW sk_objects; DROP VIEW sk_kv_latest; DROP VIEW sk_kv_history;"
                         " DROP TABLE sk_kv_doc;" + undecoded +
                         " DROP INDEX sk_history_key; CREATE INDEX sk_history_key ON sk_history"
                         " (resource, namespace, name, rev);"
                         " ALTER TABLE sk_history DROP COLUMN superseded;"
                         " ALTER TABLE sk_kv DROP COLUMN superseded;"
                         " DELETE FROM sk_migrations WHERE version >= 11; "
                         + objects_view + kv_views +
                         " CREATE VIEW my_configmaps AS SELECT namespace, name FROM sk_objects"
                         " WHERE resource = 'configmaps';"
                         " CREATE VIEW my_keys AS SELECT key_text FROM sk_kv_latest;")
        self.assertEqual(sql(self.server, "SELECT max(version) FROM sk_migrations"), [["10"]])
        self.server.start()
        newest = max(int(f[:4]) for f in os.listdir(root) if f.endswith(".sql"))
        self.assertEqual(sql(self.server, "SELECT max(version) FROM sk_migrations"),
                         [[str(newest)]])
        self.assertEqual(superseded_mismatches(self.server), [])
        # the follower decodes the rows that were there before the table
        wait_until(lambda: decoded(self.server), what="the old rows decoded")
        self.assertEqual(sorted(sql(self.server, objects)), before)
        self.assertEqual(sorted(sql(self.server, keys)), before_kv)
        # the views people built on the old ones still answer, from the new ones
        mine = sorted(r[1] for r in sql(self.server, "SELECT * FROM my_configmaps"
                                                     " WHERE namespace = 'flags-a'"))
        self.assertEqual(mine, sorted(r[2] for r in before
                                      if r[0] == "configmaps" and r[1] == "flags-a"))
        self.assertEqual(sorted(r[0] for r in sql(self.server, "SELECT * FROM my_keys"
                                                              " WHERE key_text LIKE '/flags/%'")),
                         sorted(r[0] for r in before_kv))
        # and the writes after it keep the flags
        self.write_everything("n")
        self.assert_views_are_the_truth()

    def test_d_consistency_check_reports_wrong_flags(self):
        """The consistency check (GET /debug/consistency, and every interval)
        counts wrong flags per resource; one set by hand on a live object's
        newest row shows, and goes once it is put right."""
        self.req("POST", self.cm_path("flags-a"), configmap("broken", "0"))
        report = self.server.request("GET", "/debug/consistency").body.decode()
        self.assertIn("configmaps: superseded flags: 0 wrong", report)
        newest = ("(SELECT max(rev) FROM sk_history WHERE resource = 'configmaps'"
                  " AND namespace = 'flags-a' AND name = 'broken')")
        set_to = "true" if self.pg() else "1"
        sql(self.server, "UPDATE sk_history SET superseded = %s WHERE rev = %s" % (set_to, newest))
        self.assertEqual(len(superseded_mismatches(self.server)), 1)
        report = self.server.request("GET", "/debug/consistency").body.decode()
        self.assertIn("configmaps: superseded flags: 1 wrong", report)
        self.assertIn("secrets: superseded flags: 0 wrong", report)
        self.assertIn("wrong superseded flag", self.server.log_tail())
        sql(self.server, "UPDATE sk_history SET superseded = %s WHERE rev = %s"
            % ("false" if self.pg() else "0", newest))
        report = self.server.request("GET", "/debug/consistency").body.decode()
        self.assertIn("configmaps: superseded flags: 0 wrong", report)


if __name__ == "__main__":
    unittest.main()
