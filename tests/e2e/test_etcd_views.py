"""The views sk_kv_latest and sk_kv_history (migration 0008) keep the etcd
keyspace inspectable with plain SQL.

etcdctl writes keys in the shapes kube-apiserver uses (namespaced,
cluster-scoped, group-prefixed, a custom resource with a JSON value,
protobuf values with kube's k8s\\0 prefix, the renamed services/specs,
services/endpoints and minions prefixes, compact_rev_key), an overwritten
key, a deleted key, a valid non-ASCII UTF-8 key and a key that is not UTF-8;
then the sqlite3 / psql CLI reads the views and every decoded column is
checked, on whichever backend the suite runs. Also: the latest-per-key
selection probes the (key, rev) index (the query plan names sk_kv_key).
"""

import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import Server, free_port, sql, wait_until  # noqa: E402
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
OVERWRITTEN = (b"/registry/configmaps/default/cfg", b'{"v":2}')
DELETED = b"/registry/secrets/default/gone"

N = "<null>"
# key -> (key_text, group, resource, namespace, name, encoding, value_json)
EXPECTED = {
    b"/registry/pods/default/web":
        ("/registry/pods/default/web", N, "pods", "default", "web", "protobuf", N),
    b"/registry/namespaces/team-a":
        ("/registry/namespaces/team-a", N, "namespaces", N, "team-a", "protobuf", N),
    b"/registry/apiregistration.k8s.io/apiservices/v1.apps":
        ("/registry/apiregistration.k8s.io/apiservices/v1.apps", "apiregistration.k8s.io",
         "apiservices", N, "v1.apps", "json", '{"kind":"APIService"}'),
    b"/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com":
        ("/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com",
         "apiextensions.k8s.io", "customresourcedefinitions", N, "widgets.example.com",
         "protobuf", N),
    b"/registry/example.com/widgets/default/w1":
        ("/registry/example.com/widgets/default/w1", "example.com", "widgets", "default", "w1",
         "json", CR_JSON.decode()),
    b"/registry/example.com/clusterwidgets/cw1":
        ("/registry/example.com/clusterwidgets/cw1", "example.com", "clusterwidgets", N, "cw1",
         "json", CR_JSON.decode()),
    b"/registry/services/specs/default/kubernetes":
        ("/registry/services/specs/default/kubernetes", N, "services", "default", "kubernetes",
         "protobuf", N),
    b"/registry/services/endpoints/default/kubernetes":
        ("/registry/services/endpoints/default/kubernetes", N, "endpoints", "default",
         "kubernetes", "protobuf", N),
    b"/registry/minions/node-1":
        ("/registry/minions/node-1", N, "nodes", N, "node-1", "protobuf", N),
    b"/registry/masterleases/10.0.0.1":
        ("/registry/masterleases/10.0.0.1", N, "masterleases", N, "10.0.0.1", "protobuf", N),
    b"/registry/clusterroles/syst\xc3\xa8me":
        ("/registry/clusterroles/syst\u00e8me", N, "clusterroles", N, "syst\u00e8me", "protobuf",
         N),
    b"/registry/secrets/default/s1":
        ("/registry/secrets/default/s1", N, "secrets", "default", "s1", "bytes", N),
    b"/registry/configmaps/default/cfg":
        ("/registry/configmaps/default/cfg", N, "configmaps", "default", "cfg", "json",
         '{"v":2}'),
    # Starts like JSON but is not UTF-8 text.
    b"/registry/configmaps/default/odd":
        ("/registry/configmaps/default/odd", N, "configmaps", "default", "odd", "bytes", N),
    # Not kube's layout: an empty segment, one segment too many.
    b"/registry/pods//x": ("/registry/pods//x", N, N, N, N, "protobuf", N),
    b"/registry/a/b/c/d": ("/registry/a/b/c/d", N, N, N, N, "protobuf", N),
    b"compact_rev_key": ("compact_rev_key", N, N, N, N, "bytes", N),
    NOT_UTF8_KEY: (N, N, N, N, N, "protobuf", N),
}

COLS = ("coalesce(key_text, '<null>'), coalesce(\"group\", '<null>'), "
        "coalesce(resource, '<null>'), coalesce(namespace, '<null>'), coalesce(name, '<null>'), "
        "encoding, coalesce(value_json, '<null>')")


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
        got = self.rows("sk_kv_latest", COLS)
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
        size = ("(value_json::jsonb)->'spec'->>'size'" if self.pg()
                else "json_extract(value_json, '$.spec.size')")
        rows = sql(self.server, "SELECT namespace, name, %s FROM sk_kv_latest "
                   "WHERE \"group\" = 'example.com' AND resource = 'widgets'" % size)
        self.assertEqual(rows, [["default", "w1", "3"]])

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
        self.assertEqual(got, [["/registry/secrets/default/gone", N, "secrets", "default", "gone",
                                "protobuf", N],
                               ["/registry/secrets/default/gone", N, "secrets", "default", "gone",
                                "bytes", N]])

    def test_latest_probes_the_key_rev_index(self):
        if self.pg():
            plan = "\n".join(r[0] for r in sql(self.server, "EXPLAIN SELECT * FROM sk_kv_latest"))
            self.assertIn("Index Only Scan using sk_kv_key", plan)
        else:
            plan = "\n".join("|".join(r) for r in sql(
                self.server, "EXPLAIN QUERY PLAN SELECT * FROM sk_kv_latest"))
            self.assertIn("USING COVERING INDEX sk_kv_key (key=? AND rev>?)", plan)


if __name__ == "__main__":
    unittest.main()
