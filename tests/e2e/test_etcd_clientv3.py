"""The etcd face answers the Go clientv3 (kube-apiserver's etcd client) as
etcd 3.4 does.

tests/etcd/kubeshapes, a Go program built here in GOPATH mode
(GO111MODULE=off) against Debian's golang-etcd-server-dev, replays the call
shapes of kube-apiserver's etcd3 store: create as Txn(ModRevision==0 ->
Put), update and delete as Txn(ModRevision==R -> write, else Get) with
current and stale R, paged Range with key+"\\x00" continuation at the first
page's revision, Count and count-only Range, reads at past and future
revisions, a watch from RV+1 with prev_kv and a progress request, a lease
whose keys are deleted in one revision when it expires (as Events' are),
TimeToLive and revoke of an unknown lease, 32 concurrent writers on one key
(puts with prev_kv, puts mixed with deletes, GuaranteedUpdate's CAS-else-Get
increments: several land in one group commit, and etcd's invariants must
hold), and the compactor's compact_rev_key Version CAS, Compact, then reads and watches
below it. kube 1.34/1.35's additions: counting with a keys-only range (with
and without a limit), and a watch on compact_rev_key, asking for a leader,
whose event's value is parsed as the compacted revision. A revision larger
than etcd's response limit, watched with and without `fragment`. It prints one line per call with revisions
relative to where it started; the same run against a real etcd 3.4 (Debian
etcd-server) in the same test must print the same lines.

On PostgreSQL it also runs against two sqlkube instances sharing one
database, given to clientv3 as two endpoints: its round-robin balancer
spreads the calls over both, so every compare-and-swap and every
read-your-write crosses instances, and the answers must still be etcd's.
"""

import json
import os
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from gobuild import go_build  # noqa: E402
from server import CONFIG, Server, free_port  # noqa: E402
from test_etcd import ETCD, QUIET, healthy_reference, two_instances  # noqa: E402

GO = shutil.which("go")
CLIENTV3 = "/usr/share/gocode/src/go.etcd.io/etcd/clientv3"
SOURCE = os.path.join(HERE, "..", "etcd", "kubeshapes")
SECTIONS = "kv,watch,lease,compact,fragment,batch"


def build():
    """Builds kubeshapes next to the sqlkube binary; returns its path."""
    return go_build(SOURCE, os.path.dirname(os.path.abspath(CONFIG.binary)), "kubeshapes")


def shapes(binary, endpoints, prefix, sections=SECTIONS):
    p = subprocess.run([binary, "-endpoint", endpoints, "-prefix", prefix,
                        "-sections", sections], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout.splitlines()


@unittest.skipUnless(GO and ETCD and os.path.isdir(CLIENTV3),
                     "go, etcd and clientv3 (Debian golang-go, etcd-server, "
                     "golang-etcd-server-dev) needed")
class KubeShapes(unittest.TestCase):

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.binary = build()
        cls.ref = healthy_reference()
        cls.want = shapes(cls.binary, "127.0.0.1:%d" % cls.ref.port, "/registry/")
        cls.ref.stop()

    def test_reference_ran_every_shape(self):
        steps = [line.split(" {")[0] for line in self.want]
        self.assertIn("update pods/ns1/b", steps)
        self.assertIn("get below the compaction", steps)
        self.assertIn('batch puts one key {"final_as_serial":true,"violation":""}', self.want)
        self.assertIn('batch cas increments {"final":{"mod_is_last":true,"value":"32",'
                      '"version":33},"violation":""}', self.want)
        self.assertIn('get below the compaction {"err":"etcdserver: mvcc: required revision '
                      'has been compacted"}', self.want)
        # kube 1.34/1.35's shapes: keys-only counting, the compact key watched and parsed
        self.assertIn("count pods keys only", steps)
        self.assertIn("keys only with a limit", steps)
        counted = [line for line in self.want if line.startswith("count pods keys only ")]
        self.assertIn('"count":5', counted[0])
        self.assertIn('"value_bytes":0', counted[0])
        watched = [line for line in self.want if line.startswith("compact key watched ")]
        self.assertRegex(watched[0], r'"parse_err":"","type":"PUT"')
        # a revision past etcd's response limit: whole for a watch that did
        # not ask for fragments, in parts (all but the last marked) for one
        # that did, and clientv3 puts the parts back together
        raw = json.loads([line for line in self.want
                          if line.startswith("fragment raw watch ")][0].split(" ", 3)[3])
        self.assertEqual(raw["whole"], [{"events": 2200, "fragment": False,
                                         "all_deletes_with_prev": True}])
        parts = raw["fragmented"]
        self.assertGreaterEqual(len(parts), 2)
        self.assertEqual([p["fragment"] for p in parts], [True] * (len(parts) - 1) + [False])
        self.assertEqual(sum(p["events"] for p in parts), 2200)
        self.assertTrue(all(p["all_deletes_with_prev"] for p in parts))
        self.assertIn('fragment clientv3 {"err":"","events":2200}', self.want)

    def test_same_answers_as_etcd(self):
        port = free_port()
        srv = Server("kubeshapes", extra_args=["--etcd-listen", "127.0.0.1:%d" % port] + QUIET)
        try:
            srv.start()
            got = shapes(self.binary, "127.0.0.1:%d" % port, "/registry/")
        finally:
            srv.cleanup()
        self.assertEqual(got, self.want)

    def test_two_instances_one_keyspace(self):
        with two_instances(self, "kubeshapes") as (a, pa, b, pb):
            got = shapes(self.binary, "127.0.0.1:%d,127.0.0.1:%d" % (pa, pb), "/registry/")
        self.assertEqual(got, self.want)


if __name__ == "__main__":
    unittest.main()
