"""The etcd v3 face (`serve --etcd-listen`) answers etcdctl as etcd 3.4 does.

Each test runs the same etcdctl (ETCDCTL_API=3) commands against sqlkube's
etcd face and against a real etcd 3.4 (Debian's etcd-server) started in a
temp dir on 127.0.0.1 by the same test class, and compares what etcdctl
prints: put/get with --prefix, --from-key, --limit, --rev, --keys-only, --sort-by
(etcdctl 3.4 has no --count-only: the store suite covers count_only);
del --prev-kv; txn with compares (success and failure, create-if-absent);
compaction and then reads below it; errors (compacted, future revision,
duplicate key and too many operations in a txn, key not found, request too
large); `alarm list` and `alarm disarm` (none active); `member list` of a one-member cluster (same fields, the member's
ID the headers' member_id); leases: grant (minimum and maximum TTL), put --lease and --ignore-lease,
a re-put detaching a key, timetolive --keys, list, keep-alive --once (the
LeaseKeepAlive stream), revoke deleting the keys
at one revision, a lease of unknown id, and a 2 s lease expiring its keys at
one revision. Lease ids are random on both, so they are compared by order
of grant.

Without a reference to compare with: `etcdctl check perf --auto-compact`
passes (60 s of 150 puts a second from 50 clients, then its prefix deleted
and compacted); `etcdctl lease keep-alive` keeps a
3 s lease alive for 6 s, then it expires; a lease keeps its clock across a
sqlkube restart (its expiry is stored), and on PostgreSQL a lease expires
exactly once with two instances, and two instances are two members.

The two stores start at different revisions (sqlkube's REST face has
written its default namespaces), so revisions are compared relative to the
revision each store reports just before a scenario; JSON output is compared
after that shift, without the member and cluster ids. Background writers of
the REST face (identity lease renewals, compaction) are switched off so
they take no revision in the middle of a scenario.

Also: both faces take revisions from one counter and the REST watch replays
across etcd revisions; on PostgreSQL, two sqlkube processes serve one
keyspace (a compare-and-swap decided across them, concurrent puts on both
taking one revision each with no gap).

TLS (EtcdTLS): with certificates made by openssl, etcdctl on https://
endpoints with a client certificate puts, gets and watches; without a
client certificate (or one of another CA), or over cleartext, it fails; bad
files refuse to start. Its certificates come from scripts/etcd-pki.sh, as do
EtcdForKubeApiserver's, which runs docs/etcd-for-kube-apiserver.md's
recipe as written: the script, the etcd flags, etcdctl with the client
certificate, the SQL over sk_kv_latest.
"""

import base64
import contextlib
import json
import os
import re
import shlex
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import CONFIG, REPO_ROOT, Server, free_port, sql, wait_until  # noqa: E402

ETCDCTL = shutil.which("etcdctl")
ETCD = shutil.which("etcd")


def b64(s):
    return base64.b64encode(s.encode()).decode()


class Etcd:
    """A one-member etcd 3.4 in a temp dir, the reference; restored first
    from a snapshot file (`etcdctl snapshot restore`) if one is given."""

    def __init__(self, restore_from=None):
        self.dir = tempfile.mkdtemp(prefix="sk-etcd-ref.")
        self.port, peer = free_port(), free_port()
        client = "http://127.0.0.1:%d" % self.port
        peer_url = "http://127.0.0.1:%d" % peer
        self.log = open(os.path.join(self.dir, "etcd.log"), "wb")
        if restore_from:
            subprocess.run([ETCDCTL, "snapshot", "restore", restore_from, "--data-dir",
                            os.path.join(self.dir, "data"), "--name", "ref",
                            "--initial-cluster", "ref=" + peer_url,
                            "--initial-advertise-peer-urls", peer_url],
                           env=dict(os.environ, ETCDCTL_API="3"), stdout=self.log,
                           stderr=subprocess.STDOUT, check=True, timeout=120)
        self.proc = subprocess.Popen(
            [ETCD, "--name", "ref", "--data-dir", os.path.join(self.dir, "data"),
             "--listen-client-urls", client, "--advertise-client-urls", client,
             "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
             "--initial-cluster", "ref=" + peer_url],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def healthy_reference(restore_from=None):
    """A reference Etcd (restored from a snapshot file if one is given) that
    answers `endpoint health`. Its ports come from
    free_port(), which another process may take before etcd binds them (etcd
    then exits): such a start is retried on fresh ports. A start that stays
    unhealthy fails with the tail of etcd's log, which stop() deletes."""
    for attempt in range(3):
        ref = Etcd(restore_from)
        deadline = time.monotonic() + 30
        while ref.proc.poll() is None and time.monotonic() < deadline:
            if ctl(ref.port, "endpoint", "health")[0] == 0:
                return ref
            time.sleep(0.2)
        ref.log.flush()
        with open(os.path.join(ref.dir, "etcd.log"), "rb") as f:
            tail = f.read()[-2000:].decode(errors="replace")
        exited = ref.proc.poll() is not None
        ref.stop()
        if not exited:
            break  # running but unhealthy: fresh ports would not help
    raise AssertionError("the reference etcd did not become healthy (attempt %d); its log "
                         "ends:\n%s" % (attempt + 1, tail))


def ctl(port, *args, input=None):
    """Runs etcdctl against 127.0.0.1:port: (exit status, stdout, stderr's last line)."""
    p = subprocess.run([ETCDCTL, "--endpoints=http://127.0.0.1:%d" % port,
                        "--command-timeout=20s"] + list(args),
                       input=input, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, ETCDCTL_API="3"))
    lines = [l for l in p.stderr.splitlines() if l.strip() and not l.startswith("{")]
    return p.returncode, p.stdout, lines[-1] if lines else ""


def status_of(port):
    rc, out, err = ctl(port, "endpoint", "status", "-w", "json")
    assert rc == 0, "port %d: %s" % (port, err)
    return json.loads(out)[0]["Status"]


def current_rev(port):
    rc, out, err = ctl(port, "get", "sk-no-such-key", "-w", "json")
    assert rc == 0, "port %d: %s" % (port, err)
    return json.loads(out)["header"]["revision"]


def watch(port, args, steps, settle=1.0, write_port=None):
    """Runs `etcdctl watch args` (it runs until killed) while the steps
    (etcdctl argument lists, or (args, stdin)) run one by one (against
    write_port if given): (exit status,
    what the watch printed, stderr's last line). A watch the server ends
    (compaction) exits by itself."""
    p = subprocess.Popen([ETCDCTL, "--endpoints=http://127.0.0.1:%d" % port, "watch"] + args,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, ETCDCTL_API="3"))
    try:
        time.sleep(settle)
        for step in steps:
            sargs, stdin = step if isinstance(step, tuple) else (step, None)
            rc, out, err = ctl(write_port or port, *sargs, input=stdin)
            assert rc == 0, (sargs, err)
        time.sleep(settle)
    finally:
        if p.poll() is None:
            p.terminate()
        out, err = p.communicate(timeout=10)
    lines = [l for l in err.splitlines() if l.strip()]
    return (p.returncode if p.returncode >= 0 else "killed"), out, lines[-1] if lines else ""


def big_value(i):
    """The i-th of the ~90 KB values that make a Range reply of megabytes."""
    return ("value %02d " % i) * 10000


REV_FIELDS = ("revision", "create_revision", "mod_revision", "CompactRevision")
# The REST face's background writers (identity lease renewals, compaction)
# off, so they take no revision in the middle of a scenario.
QUIET = ["--compact-interval", "0", "--identity-lease-duration", "86400",
         "--identity-lease-renew-interval", "86400"]


def shift(obj, base):
    """obj with revisions made relative to base and member identity dropped."""
    if isinstance(obj, list):
        return [shift(v, base) for v in obj]
    if not isinstance(obj, dict):
        return obj
    out = {}
    for k, v in obj.items():
        if k in ("cluster_id", "member_id", "raft_term"):
            continue
        if k in REV_FIELDS and isinstance(v, int) and v > 0:
            v -= base
        out[k] = shift(v, base)
    return out


@contextlib.contextmanager
def two_instances(test, name, extra_a=(), extra_b=()):
    """Two sqlkube processes with the etcd face on one PostgreSQL, started:
    yields (a, port of a, b, port of b) and cleans both up after. Skips the
    test on SQLite, which one process owns."""
    if CONFIG.backend != "postgres":
        test.skipTest("needs a shared PostgreSQL")
    pa, pb = free_port(), free_port()
    a = Server(name + "-a", extra_args=["--etcd-listen", "127.0.0.1:%d" % pa] + list(extra_a)
               + QUIET)
    b = Server(name + "-b", db_url=a.db_url,
               extra_args=["--etcd-listen", "127.0.0.1:%d" % pb] + list(extra_b) + QUIET)
    try:
        a.start()
        b.start()
        yield a, pa, b, pb
    finally:
        b.cleanup()
        a.cleanup()


@unittest.skipUnless(ETCDCTL and ETCD, "etcdctl and etcd (Debian etcd-client, etcd-server) needed")
class EtcdFace(unittest.TestCase):

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.etcd_port = free_port()
        cls.server = Server(cls.__name__, extra_args=[
            "--etcd-listen", "127.0.0.1:%d" % cls.etcd_port] + QUIET)
        cls.ref = None
        try:
            cls.server.start()
            cls.ref = healthy_reference()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.ref is not None:
            cls.ref.stop()
        cls.server.cleanup()

    def both(self, steps):
        """Runs steps (each (args, stdin) or a callable base -> (args, stdin))
        on both stores; asserts every step answered alike. Returns sqlkube's
        answers and its base revision."""
        answers = {}
        for name, port in (("sqlkube", self.etcd_port), ("etcd", self.ref.port)):
            base = current_rev(port)
            got = []
            for step in steps:
                args, stdin = step(base) if callable(step) else step
                rc, out, err = ctl(port, *args, input=stdin)
                if "-w" in args and rc == 0 and out.strip():
                    out = shift(json.loads(out), base)
                elif args[0] == "compaction" and rc == 0:
                    out = "compacted revision %d\n" % (int(out.split()[-1]) - base)
                got.append((args, rc, out, err))
            answers[name] = (got, base)
        for mine, ref in zip(answers["sqlkube"][0], answers["etcd"][0]):
            self.assertEqual(mine[1:], ref[1:], "etcdctl %s" % " ".join(mine[0]))
            # A step both fail must fail on the server's side, not etcdctl's.
            if ref[1] != 0:
                self.assertIn("etcdserver:", ref[3], "etcdctl %s" % " ".join(ref[0]))
        return answers["sqlkube"]

    def test_put_get_ranges(self):
        got, _ = self.both([
            (["put", "/g/a", "1"], None),
            (["put", "/g/b", "2"], None),
            (["put", "/g/c", "3"], None),
            (["put", "/g/a", "11"], None),
            (["put", "/h", "x"], None),
            (["get", "/g/", "--prefix", "-w", "json"], None),
            (["get", "/g/", "--prefix"], None),
            (["get", "/g/", "--prefix", "--limit", "2", "-w", "json"], None),
            (["get", "/g/", "--prefix", "--limit", "1", "--keys-only", "-w", "json"], None),
            (["get", "/g/", "--prefix", "--keys-only"], None),
            (["get", "/g/b", "--from-key", "-w", "json"], None),
            (["get", "/g/c", "/h", "-w", "json"], None),
            (["get", "/g/a", "-w", "json"], None),
            (["get", "/g/", "--prefix", "--sort-by=MODIFY", "--order=DESCEND"], None),
            lambda base: (["get", "/g/a", "--rev=%d" % (base + 1), "-w", "json"], None),
            lambda base: (["get", "/g/", "--prefix", "--rev=%d" % (base + 2), "-w", "json"], None),
            lambda base: (["get", "/g/a", "--rev=%d" % (base + 1000)], None),
            (["put", "/g/a", "--ignore-value", "-w", "json"], None),
            (["put", "/g/missing", "--ignore-value"], None),
            (["del", "--prev-kv", "/g/b", "-w", "json"], None),
            (["del", "/g/b"], None),
            (["del", "--prev-kv", "/g/", "--prefix"], None),
            (["get", "/g/", "--prefix", "--limit", "1", "--keys-only", "-w", "json"], None),
            (["put", "/g/a", "again", "-w", "json"], None),
            # etcd's 1.5 MiB request limit (etcdctl reads a value from stdin)
            (["put", "/g/big"], "x" * 1600000),
            (["put", "/g/big", "-w", "json"], "y" * 1572000),
            (["del", "/g/big"], None),
            (["get", "/g/a", "-w", "json"], None),
        ] + [
            # A reply of megabytes: sqlkube packs it from the rows into
            # pieces of growing size, values split across them and across
            # HTTP/2 frames.
            (["put", "/m/%02d" % i], big_value(i)) for i in range(24)
        ] + [
            (["get", "/m/", "--prefix", "-w", "json"], None),
            (["get", "/m/", "--prefix", "--limit", "9", "-w", "json"], None),
            (["get", "/m/05", "/m/20", "-w", "json"], None),
        ])
        # Not only equal to etcd: what etcd says, spelled out for the key steps.
        outs = {" ".join(a): out for a, rc, out, err in got}
        self.assertEqual(outs["get /g/ --prefix"], "/g/a\n11\n/g/b\n2\n/g/c\n3\n")
        limited = outs["get /g/ --prefix --limit 2 -w json"]
        self.assertEqual((limited["count"], limited.get("more"), len(limited["kvs"])), (3, True, 2))
        future = [g for g in got if g[0][-1].startswith("--rev=") and g[1] != 0]
        self.assertIn("required revision is a future revision", future[0][3])
        missing = [g for g in got if g[0][1] == "/g/missing"][0]
        self.assertIn("etcdserver: key not found", missing[3])
        big = [g for g in got if g[0][:2] == ["put", "/g/big"]]
        self.assertIn("etcdserver: request is too large", big[0][3])
        self.assertEqual(big[1][1], 0)
        whole = outs["get /m/ --prefix -w json"]
        self.assertEqual([base64.b64decode(kv["value"]).decode() for kv in whole["kvs"]],
                         [big_value(i) for i in range(24)])
        page = outs["get /m/ --prefix --limit 9 -w json"]
        self.assertEqual((page["count"], page.get("more"), len(page["kvs"])), (24, True, 9))

    def test_txn(self):
        got, _ = self.both([
            (["put", "/t/a", "1"], None),
            (["put", "/t/b", "2"], None),
            # success branch, with a get after the put it runs
            (["txn", "-w", "json"], 'value("/t/a") = "1"\nmod("/t/b") > "0"\n\n'
                                    'put /t/a 10\nget /t/a\n\nget /t/b\n\n'),
            # failure branch
            (["txn", "-w", "json"], 'version("/t/a") > "5"\n\nput /t/a 99\n\n'
                                    'get /t/ --prefix\ndel /t/b\n\n'),
            # create if absent, as kube-apiserver does, twice
            (["txn", "-w", "json"], 'mod("/t/new") = "0"\n\nput /t/new x\n\n\n'),
            (["txn", "-w", "json"], 'mod("/t/new") = "0"\n\nput /t/new y\n\nget /t/new\n\n'),
            (["txn", "-i"], 'create("/t/new") > "0"\n\nget /t/new\n\n\n'),
            (["txn"], '\nput /t/x 1\nput /t/x 2\n\n\n'),
            (["txn"], '\n' + "".join("put /t/k%d v\n" % i for i in range(129)) + '\n\n'),
            (["txn"], '\n' + "".join("put /t/k%d v\n" % i for i in range(128)) + '\n\n'),
            (["get", "/t/k", "--prefix", "--limit", "1", "--keys-only", "-w", "json"], None),
            # a Range in a Txn is sorted, filtered and cut as a lone one
            (["put", "/t/k7", "newest"], None),
            (["txn", "-w", "json"], '\nget /t/k --prefix --sort-by=MODIFY --order=DESCEND '
                                    '--limit=2 --keys-only\n\n\n'),
            (["txn"], '\nput /t/a 5\ndel /t/ --prefix\n\n\n'),
        ])
        outs = [(rc, out, err) for a, rc, out, err in got]
        self.assertTrue(outs[2][1]["succeeded"])
        self.assertNotIn("succeeded", outs[3][1])
        self.assertIn("duplicate key given in txn request", outs[7][2])
        self.assertIn("too many operations in txn request", outs[8][2])
        self.assertEqual(outs[10][1]["count"], 128)
        # The 128 puts took one revision, as in etcd.
        self.assertEqual(outs[10][1]["header"]["revision"], outs[5][1]["header"]["revision"] + 1)
        ranged = outs[12][1]["responses"][0]["Response"]["ResponseRange"]
        self.assertEqual((len(ranged["kvs"]), ranged.get("more"), ranged["count"]), (2, True, 128))
        self.assertEqual(base64.b64decode(ranged["kvs"][0]["key"]), b"/t/k7")

    def test_compaction(self):
        got, base = self.both([
            (["put", "/c/k", "1"], None),
            (["put", "/c/k", "2"], None),
            (["put", "/c/k", "3"], None),
            lambda base: (["compaction", str(base + 2)], None),
            lambda base: (["get", "/c/k", "--rev=%d" % (base + 1)], None),
            lambda base: (["get", "/c/k", "--rev=%d" % (base + 2), "-w", "json"], None),
            (["get", "/c/k", "-w", "json"], None),
            lambda base: (["compaction", str(base + 2)], None),
            lambda base: (["compaction", str(base + 100)], None),
        ])
        self.assertEqual(got[3][2], "compacted revision 2\n")
        self.assertIn("required revision has been compacted", got[4][3])
        self.assertEqual(got[5][2]["kvs"][0]["value"], b64("2"))
        self.assertIn("required revision has been compacted", got[7][3])
        self.assertIn("required revision is a future revision", got[8][3])

    def test_faces_share_one_history(self):
        """Writes through both faces take revisions from one counter, and the
        REST watch (fed by the store's history) replays across the etcd
        revisions without a gap error."""
        srv = self.server
        cm = lambda name: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        start = current_rev(self.etcd_port)
        revs = []
        for i in range(3):
            rc, out, err = ctl(self.etcd_port, "put", "/shared/%d" % i, "v", "-w", "json")
            self.assertEqual(rc, 0, err)
            revs.append(json.loads(out)["header"]["revision"])
            r = srv.request("POST", "/api/v1/namespaces/default/configmaps", cm("shared-%d" % i))
            self.assertEqual(r.status, 201, r)
            revs.append(int(r.json()["metadata"]["resourceVersion"]))
        self.assertEqual(revs, list(range(start + 1, start + 7)))
        r = srv.request("GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1"
                        "&resourceVersion=%d" % start)
        self.assertEqual(r.status, 200, r)
        events = [json.loads(l) for l in r.body.decode().splitlines() if l.strip()]
        self.assertEqual([(e["type"], int(e["object"]["metadata"]["resourceVersion"]))
                          for e in events], [("ADDED", start + 2), ("ADDED", start + 4),
                                             ("ADDED", start + 6)])
        self.assertNotRegex(srv.log_tail(), "missing from the store's history|feed gave revision")
        # Only sqlkube holds these keys: leave no trace for the compared scenarios.
        self.assertEqual(ctl(self.etcd_port, "del", "--prefix", "/shared/")[1], "3\n")

    def watch_both(self, args, steps):
        """Runs watch() on both stores (args may be a callable base -> args)
        and asserts etcdctl printed the same; returns sqlkube's result."""
        got = {}
        for name, port in (("sqlkube", self.etcd_port), ("etcd", self.ref.port)):
            base = current_rev(port)
            rc, out, err = watch(port, args(base) if callable(args) else args, steps)
            if "json" in (args(base) if callable(args) else args):
                out = [shift(json.loads(l), base) for l in out.splitlines() if l.strip()]
            got[name] = (rc, out, err)
        self.assertEqual(got["sqlkube"], got["etcd"])
        return got["sqlkube"]

    def test_watch_prefix_events(self):
        """A prefix watch sees puts, deletes (tombstones) and a transaction's
        writes, in order, one response per revision, nothing outside it."""
        steps = [["put", "/w/a", "1"], ["put", "/w/b", "2"], ["put", "/wx", "out"],
                 ["put", "/w/a", "3"], ["del", "/w/a"],
                 (["txn"], '\nput /w/c x\nput /w/d y\ndel /w/b\n\n\n'),
                 ["del", "--prefix", "/w/"], ["del", "/wx"]]
        rc, out, err = self.watch_both(["--prefix", "/w/"], steps)
        self.assertEqual(out, "PUT\n/w/a\n1\nPUT\n/w/b\n2\nPUT\n/w/a\n3\nDELETE\n/w/a\n\n"
                              "PUT\n/w/c\nx\nPUT\n/w/d\ny\nDELETE\n/w/b\n\n"
                              "DELETE\n/w/c\n\nDELETE\n/w/d\n\n")
        # The responses themselves (revisions relative to the start, headers,
        # tombstones with their mod_revision), as etcd sends them.
        rc, out, err = self.watch_both(["--prefix", "/w/", "-w", "json"], steps)
        self.assertEqual([[e["kv"].get("mod_revision") for e in r["Events"]] for r in out],
                         [[1], [2], [4], [5], [6, 6, 6], [7, 7]])
        self.assertEqual(out[3]["Events"][0], {"type": 1, "kv": {"key": b64("/w/a"),
                                                                 "mod_revision": 5}})

    def test_watch_prev_kv_and_one_key(self):
        steps = [["put", "/pk", "1"], ["put", "/pk", "2"], ["put", "/pk2", "no"], ["del", "/pk"],
                 ["put", "/pk", "3"], ["del", "/pk2"]]
        rc, out, err = self.watch_both(["--prev-kv", "/pk", "-w", "json"], steps)
        self.assertEqual([(e.get("type", 0), (e.get("prev_kv") or {}).get("value"))
                          for r in out for e in r["Events"]],
                         [(0, None), (0, b64("1")), (1, b64("2")), (0, None)])

    def test_watch_from_history(self):
        """--rev replays from the store's history, then follows; a start
        revision in the future waits for it."""
        setup = [["put", "/r/a", "1"], ["put", "/r/b", "2"], ["put", "/r/a", "3"]]
        for port in (self.etcd_port, self.ref.port):
            for step in setup:
                self.assertEqual(ctl(port, *step)[0], 0)
        rc, out, err = self.watch_both(lambda base: ["--prefix", "/r/", "--rev=%d" % (base - 1)],
                                       [["put", "/r/c", "4"], ["del", "/r/a"]])
        self.assertEqual(out, "PUT\n/r/b\n2\nPUT\n/r/a\n3\nPUT\n/r/c\n4\nDELETE\n/r/a\n\n")
        rc, out, err = self.watch_both(
            lambda base: ["--prefix", "/r/", "--rev=%d" % (base + 2), "-w", "json"],
            [["put", "/r/x", "1"], ["put", "/r/y", "2"], ["put", "/r/z", "3"]])
        self.assertEqual([r["Events"][0]["kv"]["key"] for r in out], [b64("/r/y"), b64("/r/z")])
        for port in (self.etcd_port, self.ref.port):
            self.assertEqual(ctl(port, "del", "--prefix", "/r/")[0], 0)

    def test_watch_history_in_one_response(self):
        """A watch started in the past gets the history it missed in one
        response (etcd batches an "unsynced" watch's events), then each live
        revision in its own."""
        for port in (self.etcd_port, self.ref.port):
            for step in [["put", "/rh/a", "1"], ["put", "/rh/b", "2"], ["put", "/rh/a", "3"]]:
                self.assertEqual(ctl(port, *step)[0], 0)
        rc, out, err = self.watch_both(
            lambda base: ["--prefix", "/rh/", "--rev=%d" % (base - 2), "-w", "json"],
            [["put", "/rh/c", "4"], ["del", "/rh/b"]])
        self.assertEqual([(r["Header"]["revision"], [e["kv"]["mod_revision"] for e in r["Events"]])
                          for r in out], [(0, [-2, -1, 0]), (1, [1]), (2, [2])])
        for port in (self.etcd_port, self.ref.port):
            self.assertEqual(ctl(port, "del", "--prefix", "/rh/")[0], 0)

    def test_watch_compacted(self):
        """A start revision below the compacted one: the watch is canceled
        with the compact revision, and etcdctl exits saying so."""
        for port in (self.etcd_port, self.ref.port):
            base = current_rev(port)
            for v in "123":
                self.assertEqual(ctl(port, "put", "/cw", v)[0], 0)
            self.assertEqual(ctl(port, "compaction", str(base + 2))[0], 0)
        rc, out, err = self.watch_both(lambda base: ["/cw", "--rev=%d" % (base - 2)], [])
        self.assertEqual((rc, out, err), (5, "", "Error: watch is canceled by the server"))
        rc, out, err = self.watch_both(
            lambda base: ["/cw", "--rev=%d" % (base - 2), "-w", "json"], [])
        self.assertEqual((out[-1]["Canceled"], out[-1]["CompactRevision"]), (True, -1))
        # From the compact revision itself it is served.
        rc, out, err = self.watch_both(lambda base: ["/cw", "--rev=%d" % (base - 1)], [])
        self.assertEqual((rc, out), ("killed", "PUT\n/cw\n2\nPUT\n/cw\n3\n"))

    def test_status_and_unserved(self):
        rc, out, err = ctl(self.etcd_port, "endpoint", "status", "-w", "json")
        self.assertEqual(rc, 0, err)
        status = json.loads(out)[0]["Status"]
        self.assertTrue(status["version"].startswith("3.5."), status)
        self.assertGreater(int(status["dbSize"]), 0, status)
        self.assertEqual(status["header"]["revision"], current_rev(self.etcd_port))
        self.assertEqual(status["leader"], status["header"]["member_id"])
        # Cluster serves MemberList only: the others are Unimplemented, as
        # from a gRPC server without those methods.
        rc, out, err = ctl(self.etcd_port, "member", "remove", "1")
        self.assertNotEqual(rc, 0)
        self.assertIn("unknown method MemberRemove for service etcdserverpb.Cluster", err)

    def test_alarms(self):
        """No alarm is active on either, and disarming finds none; health
        checks list the alarms after their read. The answer carries a header,
        as etcd 3.5 fills it (3.4 sends none)."""
        self.both([(["alarm", "list"], None), (["alarm", "disarm"], None)])
        rc, out, err = ctl(self.etcd_port, "alarm", "list", "-w", "json")
        self.assertEqual(rc, 0, err)
        got = json.loads(out)
        self.assertNotIn("alarms", got)
        self.assertEqual(got["header"]["revision"], current_rev(self.etcd_port))
        self.assertEqual(got["header"]["member_id"],
                         status_of(self.etcd_port)["header"]["member_id"])

    def test_member_list_one_member(self):
        """Alone on its store, sqlkube is a one-member cluster shaped as
        etcd's: the member's ID is every header's member_id (and Status's
        leader), its clientURLs the etcd URL; it has no peer URLs (no raft)."""
        lists = {}
        for name, port in (("sqlkube", self.etcd_port), ("etcd", self.ref.port)):
            rc, out, err = ctl(port, "member", "list", "-w", "json")
            self.assertEqual(rc, 0, err)
            lists[name] = json.loads(out)
            rc, out, err = ctl(port, "endpoint", "status", "-w", "json")
            status = json.loads(out)[0]["Status"]
            got = lists[name]
            self.assertEqual(len(got["members"]), 1, got)
            member = got["members"][0]
            self.assertEqual(member["ID"], got["header"]["member_id"], name)
            self.assertEqual(member["ID"], status["header"]["member_id"], name)
            self.assertEqual(member["ID"], status["leader"], name)
            self.assertEqual(member["clientURLs"], ["http://127.0.0.1:%d" % port], name)
        mine, ref = lists["sqlkube"], lists["etcd"]
        self.assertEqual(set(mine["header"]) - {"revision"}, set(ref["header"]) - {"revision"})
        self.assertEqual(set(mine["members"][0]), set(ref["members"][0]) - {"peerURLs"})
        self.assertEqual(mine["members"][0]["name"], socket.gethostname())
        self.assertEqual(mine["header"]["cluster_id"], status_of(self.etcd_port)["header"]["cluster_id"])
        rc, out, err = ctl(self.etcd_port, "member", "list")
        self.assertEqual(out, "%x, started, %s, , http://127.0.0.1:%d, false\n"
                         % (mine["members"][0]["ID"], socket.gethostname(), self.etcd_port))

    def lease_scenario(self, port):
        """grant/put --lease/timetolive --keys/list/revoke on one store, its
        answers normalised: lease ids by their order of grant, revisions
        relative to the start, remaining TTLs checked and dropped."""
        base = current_rev(port)
        ids = {}
        out = []

        def named(v):
            if isinstance(v, dict):
                return {k: named(x) for k, x in v.items()}
            if isinstance(v, list):
                return [named(x) for x in v]
            return ids.get(v, v) if isinstance(v, int) else v

        def run(*args, input=None):
            rc, o, err = ctl(port, *args, input=input)
            if "-w" in args and rc == 0:
                o = named(shift(json.loads(o), base))
            for lid, name in ids.items():  # etcdctl prints ids as %016x
                args = [a.replace("%x" % lid, name) for a in args]
                if isinstance(o, str):
                    o = o.replace("%016x" % lid, name).replace("%x" % lid, name)
            out.append((args, rc, o, err))
            return rc, o, err

        def grant(ttl):
            rc, o, err = ctl(port, "lease", "grant", str(ttl), "-w", "json")
            self.assertEqual(rc, 0, err)
            g = json.loads(o)
            ids[g["ID"]] = "L%d" % len(ids)
            out.append((["grant", ttl], g["TTL"], shift({k: v for k, v in g.items() if k != "ID"},
                                                         base)))
            return "%x" % g["ID"]

        granted = time.monotonic()
        l0 = grant(100)
        grant(1)  # below the minimum TTL: raised to it (then left to expire, unused)
        l2 = grant(100)
        run("put", "/l/a", "1", "--lease=" + l0)
        run("put", "/l/b", "2", "--lease=" + l0)
        run("put", "/l/c", "3")
        run("put", "/l/d", "4", "--lease=" + l2)
        run("get", "/l/", "--prefix", "-w", "json")
        run("put", "/l/b", "22", "--ignore-lease")  # keeps L0
        run("put", "/l/a", "11")                    # detaches from L0
        run("put", "/l/x", "1", "--lease=123456789abc")
        run("put", "/l/x", "1", "--lease=" + l0, "--ignore-lease")
        run("get", "/l/", "--prefix", "-w", "json")
        rc, o, err = run("lease", "timetolive", l0, "--keys", "-w", "json")
        self.assertEqual(rc, 0, err)
        # The clock runs from the grant: what the etcdctl calls since took
        # (seconds on a loaded machine), and a second of rounding.
        elapsed = time.monotonic() - granted
        self.assertTrue(100 - elapsed - 2 <= o.pop("ttl") <= 100, (o, elapsed))
        run("lease", "timetolive", l2, "-w", "json")[1].pop("ttl")
        run("lease", "keep-alive", "--once", l0)  # the LeaseKeepAlive stream, one exchange
        run("lease", "keep-alive", "--once", "123456789abc")
        rc, o, err = run("lease", "list")  # L1 may have expired by now
        out[-1] = (out[-1][0], rc, sorted(set(o.splitlines()) & {"L0", "L2"}), err)
        before = current_rev(port)
        run("lease", "revoke", l0)
        out.append(("revoke took", current_rev(port) - before))
        run("get", "/l/", "--prefix", "-w", "json")
        run("lease", "revoke", l0)
        run("lease", "timetolive", l0)
        run("lease", "timetolive", l0, "-w", "json")
        run("lease", "revoke", l2)
        run("lease", "grant", "9000000001")
        run("del", "/l/", "--prefix")
        return out

    def test_leases(self):
        mine = self.lease_scenario(self.etcd_port)
        ref = self.lease_scenario(self.ref.port)
        self.assertEqual(mine, ref)
        # What etcd says, spelled out for the key steps.
        said = {" ".join(map(str, s[0])): s for s in mine if isinstance(s[0], list)}
        self.assertEqual(said["grant 1"][1], 2)
        self.assertEqual(said["lease list"][2], ["L0", "L2"])
        self.assertEqual(said["lease keep-alive --once L0"][2], "lease L0 keepalived with TTL(100)\n")
        self.assertIn("etcdserver: requested lease not found",
                      said["lease keep-alive --once 123456789abc"][3])
        self.assertEqual(said["lease timetolive L0 --keys -w json"][2]["keys"], [b64("/l/b")])
        self.assertIn("etcdserver: requested lease not found",
                      said["put /l/x 1 --lease=123456789abc"][3])
        self.assertIn("revoke took", [s[0] for s in mine])
        self.assertEqual([s[1] for s in mine if s[0] == "revoke took"], [1])
        self.assertIn("etcdserver: too large lease TTL", said["lease grant 9000000001"][3])
        self.assertEqual(said["lease timetolive L0"][2], "lease L0 already expired\n")

    def expire_scenario(self, port):
        """A lease of 2 s with three keys: (revisions the expiry took, seconds
        it took, what is left)."""
        rc, o, err = ctl(port, "lease", "grant", "2", "-w", "json")
        self.assertEqual(rc, 0, err)
        lid_num = json.loads(o)["ID"]
        lid = "%x" % lid_num
        for k in ("a", "b", "c"):
            self.assertEqual(ctl(port, "put", "/e/" + k, k, "--lease=" + lid)[0], 0)
        ctl(port, "put", "/e/z", "no lease")
        before, start = current_rev(port), time.monotonic()
        deadline = start + 15
        while ctl(port, "get", "/e/a", "--keys-only")[1].strip():
            self.assertLess(time.monotonic(), deadline, "the lease did not expire")
            time.sleep(0.2)
        took = time.monotonic() - start
        time.sleep(1.5)  # no second delete comes
        left = ctl(port, "get", "/e/", "--prefix", "--keys-only")[1]
        gone = ctl(port, "lease", "timetolive", lid)[1].replace("%016x" % lid_num, "L")
        ctl(port, "del", "/e/", "--prefix")
        return current_rev(port) - before - 1, took, left, gone

    def test_lease_expiry(self):
        mine = self.expire_scenario(self.etcd_port)
        ref = self.expire_scenario(self.ref.port)
        self.assertEqual((mine[0], mine[2], mine[3]), (ref[0], ref[2], ref[3]))
        self.assertEqual(mine[0], 1)  # the three keys went at one revision
        self.assertEqual(mine[2], "/e/z\n\n")
        self.assertEqual(mine[3], "lease L already expired\n")
        self.assertLess(mine[1], 4.5)

    def test_lease_keepalive_stream(self):
        """`etcdctl lease keep-alive` (one LeaseKeepAlive stream, a request
        every TTL/3) keeps a 3 s lease and its key alive well past 3 s; once
        it stops, the lease expires."""
        port = self.etcd_port
        rc, o, err = ctl(port, "lease", "grant", "3", "-w", "json")
        self.assertEqual(rc, 0, err)
        lid = "%x" % json.loads(o)["ID"]
        self.assertEqual(ctl(port, "put", "/k/a", "v", "--lease=" + lid)[0], 0)
        p = subprocess.Popen([ETCDCTL, "--endpoints=http://127.0.0.1:%d" % port, "lease",
                              "keep-alive", lid], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True,
                             env=dict(os.environ, ETCDCTL_API="3"))
        try:
            time.sleep(6)
            self.assertEqual(ctl(port, "get", "/k/a", "--keys-only")[1], "/k/a\n\n")
        finally:
            p.terminate()
            out = p.communicate(timeout=10)[0]
        self.assertGreaterEqual(out.count("keepalived with TTL(3)"), 2, out)
        deadline = time.monotonic() + 10
        while ctl(port, "get", "/k/a", "--keys-only")[1].strip():
            self.assertLess(time.monotonic(), deadline, "the lease did not expire")
            time.sleep(0.2)

    def test_lease_survives_restart(self):
        """A lease's expiry is stored: a restart neither forgets it nor
        restarts its clock."""
        port = free_port()
        srv = Server("etcd-restart", extra_args=["--etcd-listen", "127.0.0.1:%d" % port] + QUIET)
        try:
            srv.start()
            rc, o, err = ctl(port, "lease", "grant", "10", "-w", "json")
            self.assertEqual(rc, 0, err)
            granted = time.monotonic()
            lid = "%x" % json.loads(o)["ID"]
            self.assertEqual(ctl(port, "put", "/r/k", "v", "--lease=" + lid)[0], 0)
            time.sleep(3)
            srv.restart()
            rc, o, err = ctl(port, "lease", "timetolive", lid, "--keys", "-w", "json")
            self.assertEqual(rc, 0, err)
            ttl = json.loads(o)
            left = 10 - (time.monotonic() - granted)
            self.assertEqual((ttl["granted-ttl"], ttl["keys"]), (10, [b64("/r/k")]))
            self.assertLessEqual(ttl["ttl"], int(left) + 1, ttl)  # not reset to 10
            self.assertLess(ttl["ttl"], 8, ttl)
            deadline = time.monotonic() + 15
            while ctl(port, "get", "/r/k", "--keys-only")[1].strip():
                self.assertLess(time.monotonic(), deadline, "the lease did not expire")
                time.sleep(0.2)
            self.assertGreater(time.monotonic() - granted, 9)
        finally:
            srv.cleanup()

    def test_max_request_bytes_flag(self):
        """--etcd-max-request-bytes moves etcd's write limit, and the gRPC
        receive limit with it (512 KiB above, as etcd sets it)."""
        port = free_port()
        srv = Server("etcd-max-bytes", extra_args=["--etcd-listen", "127.0.0.1:%d" % port,
                                                   "--etcd-max-request-bytes", "4096"] + QUIET)
        try:
            srv.start()
            self.assertEqual(ctl(port, "put", "/m/small", input="x" * 3900)[0], 0)
            rc, _, err = ctl(port, "put", "/m/big", input="x" * 5000)
            self.assertNotEqual(rc, 0)
            self.assertIn("etcdserver: request is too large", err)
            rc, _, err = ctl(port, "put", "/m/huge", input="x" * (4096 + 600 * 1024))
            self.assertNotEqual(rc, 0)
            self.assertIn("received message larger than max", err)
            # Reads may be as large as the gRPC limit allows.
            rc, out, err = ctl(port, "get", "/m/small", "--print-value-only")
            self.assertEqual((rc, out.strip()), (0, "x" * 3900), err)
        finally:
            srv.cleanup()


ETCD_PKI = os.path.join(REPO_ROOT, "scripts", "etcd-pki.sh")


def make_pki(d, *addresses):
    """scripts/etcd-pki.sh run into d (a CA; a server certificate for
    127.0.0.1, localhost and addresses; a client certificate): {name: path}.
    The one way the tests make etcd certificates, the how-to's."""
    subprocess.run([ETCD_PKI, d] + list(addresses), check=True, capture_output=True,
                   timeout=60)
    return {n: os.path.join(d, n) for n in ("ca.crt", "ca.key", "server.crt", "server.key",
                                            "client.crt", "client.key")}


@unittest.skipUnless(ETCDCTL, "etcdctl (Debian etcd-client) needed")
class EtcdTLS(unittest.TestCase):
    """--etcd-cert-file/--etcd-key-file/--etcd-trusted-ca-file: etcdctl on
    https:// endpoints with a client certificate works (unary and a watch);
    without one, with one the trusted CA did not sign, or over cleartext, it
    does not; bad files refuse to start."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="sk-etcd-tls.")
        cls.pki = make_pki(cls.dir)
        cls.port = free_port()
        cls.server = Server(cls.__name__, extra_args=[
            "--etcd-listen", "127.0.0.1:%d" % cls.port,
            "--etcd-cert-file", cls.pki["server.crt"], "--etcd-key-file", cls.pki["server.key"],
            "--etcd-trusted-ca-file", cls.pki["ca.crt"]] + QUIET)
        try:
            cls.server.start()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def etcdctl(self, *args, client_cert=True, scheme="https", popen=False, input=None):
        cmd = [ETCDCTL, "--endpoints=%s://127.0.0.1:%d" % (scheme, self.port),
               "--cacert", self.pki["ca.crt"]]
        if client_cert is True:
            cmd += ["--cert", self.pki["client.crt"], "--key", self.pki["client.key"]]
        elif client_cert:
            cmd += ["--cert", client_cert[0], "--key", client_cert[1]]
        cmd += list(args)
        env = dict(os.environ, ETCDCTL_API="3")
        if popen:
            return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env=env)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env,
                              input=input)

    def test_put_get_watch(self):
        p = self.etcdctl("put", "/tls/a", "one")
        self.assertEqual((p.returncode, p.stdout), (0, "OK\n"), p.stderr)
        p = self.etcdctl("get", "/tls/a")
        self.assertEqual((p.returncode, p.stdout), (0, "/tls/a\none\n"), p.stderr)
        w = self.etcdctl("watch", "--prefix", "/tls/w", popen=True)
        try:
            time.sleep(1)
            for i in range(3):
                p = self.etcdctl("put", "/tls/w%d" % i, "v%d" % i)
                self.assertEqual(p.returncode, 0, p.stderr)
            time.sleep(1)
        finally:
            w.terminate()
            out, err = w.communicate(timeout=10)
        self.assertEqual(out, "".join("PUT\n/tls/w%d\nv%d\n" % (i, i) for i in range(3)), err)

    def test_reply_of_megabytes(self):
        """Over TLS a reply is copied into the session's records: a Range
        of 2 MB, in pieces of the packed reply, comes out whole and in order."""
        for i in range(24):
            p = self.etcdctl("put", "/tls/m/%02d" % i, input=big_value(i))
            self.assertEqual(p.returncode, 0, p.stderr)
        p = self.etcdctl("get", "/tls/m/", "--prefix", "-w", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        got = json.loads(p.stdout)
        self.assertEqual([base64.b64decode(kv["value"]).decode() for kv in got["kvs"]],
                         [big_value(i) for i in range(24)])
        self.assertEqual(got["count"], 24)

    def test_refused(self):
        p = self.etcdctl("--dial-timeout=3s", "--command-timeout=5s", "get", "/tls/a",
                         client_cert=False)
        self.assertNotEqual(p.returncode, 0, "no client certificate: " + p.stdout)
        p = self.etcdctl("--dial-timeout=3s", "--command-timeout=5s", "get", "/tls/a",
                         client_cert=False, scheme="http")
        self.assertNotEqual(p.returncode, 0, "cleartext on the TLS port: " + p.stdout)
        rogue = (os.path.join(self.dir, "rogue.crt"), os.path.join(self.dir, "rogue.key"))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=sk-rogue", "-keyout", rogue[1], "-out", rogue[0]],
                       check=True, capture_output=True, timeout=60)
        p = self.etcdctl("--dial-timeout=3s", "--command-timeout=5s", "get", "/tls/a",
                         client_cert=rogue)
        self.assertNotEqual(p.returncode, 0, "a client certificate of another CA: " + p.stdout)
        self.assertEqual(self.etcdctl("get", "/tls/a").returncode, 0,
                         "the server still serves after the refused connections")

    def test_bad_files_refuse_to_start(self):
        missing = os.path.join(self.dir, "missing.pem")
        for flags, says in (
                (["--etcd-cert-file", missing, "--etcd-key-file", self.pki["server.key"]],
                 "--etcd-cert-file"),
                (["--etcd-cert-file", self.pki["server.crt"], "--etcd-key-file",
                  self.pki["server.key"], "--etcd-trusted-ca-file", missing],
                 "--etcd-trusted-ca-file"),
                (["--etcd-cert-file", self.pki["server.crt"]], "go together")):
            data = tempfile.mkdtemp(dir=self.dir)
            p = subprocess.run([CONFIG.binary, "serve", "--plain-http", "--data-dir", data,
                                "--db", "sqlite:" + os.path.join(data, "db"),
                                "--listen", "127.0.0.1:%d" % free_port(),
                                "--etcd-listen", "127.0.0.1:%d" % free_port()] + flags,
                               capture_output=True, text=True, timeout=60)
            self.assertNotEqual(p.returncode, 0, flags)
            self.assertIn(says, p.stderr, flags)

    def test_missing_client_certificate_gets_an_alert(self):
        # The handshake itself refuses, with TLS's "certificate required"
        # alert, as etcd's Go TLS does: the client learns why at once.
        ctx = ssl.create_default_context(cafile=self.pki["ca.crt"])
        ctx.set_alpn_protocols(["h2"])
        start = time.monotonic()
        with self.assertRaises(ssl.SSLError) as refused:
            with socket.create_connection(("127.0.0.1", self.port), timeout=10) as raw:
                with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    tls.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
                    tls.recv(1)
        self.assertIn("CERTIFICATE_REQUIRED", str(refused.exception).upper().replace(" ", "_"))
        self.assertLess(time.monotonic() - start, 2.0)

    def test_off_loopback_needs_client_auth(self):
        # 192.0.2.1 (TEST-NET-1) is never this host's: a start that passes the
        # check fails at bind instead, so nothing is served off loopback here.
        addr = "192.0.2.1:%d" % free_port()
        cert = ["--etcd-cert-file", self.pki["server.crt"], "--etcd-key-file",
                self.pki["server.key"]]
        refused = "refusing to serve the etcd API on %s, which is not a loopback address" % addr
        for flags, says in (
                ([], refused),
                (cert, refused),
                (cert + ["--etcd-trusted-ca-file", self.pki["ca.crt"]], "cannot listen on"),
                (["--etcd-allow-unauthenticated"], "cannot listen on")):
            data = tempfile.mkdtemp(dir=self.dir)
            p = subprocess.run([CONFIG.binary, "serve", "--plain-http", "--data-dir", data,
                                "--db", "sqlite:" + os.path.join(data, "db"),
                                "--listen", "127.0.0.1:%d" % free_port(),
                                "--etcd-listen", addr] + flags + QUIET,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 1, (flags, p.stderr))
            self.assertIn(says, p.stderr, flags)
            if says == refused:
                self.assertIn("--etcd-trusted-ca-file", p.stderr)
                self.assertIn("--etcd-allow-unauthenticated", p.stderr)


HOWTO = os.path.join(REPO_ROOT, "docs", "etcd-for-kube-apiserver.md")


def howto_blocks():
    """The how-to's ```sh blocks, each a list of commands (continued lines
    joined, trailing comments dropped)."""
    with open(HOWTO) as f:
        text = f.read()
    blocks = []
    for body in re.findall(r"```sh\n(.*?)```", text, re.S):
        cmds = [re.sub(r"\s+#\s.*$", "", line).strip()
                for line in body.replace("\\\n", " ").splitlines()]
        blocks.append([c for c in cmds if c])
    return blocks


def howto_block(first):
    """The how-to's ```sh block whose first command starts with first."""
    for block in howto_blocks():
        if block and block[0].startswith(first):
            return block
    raise AssertionError("%s has no sh block starting %r" % (HOWTO, first))


def pairs(argv):
    """--flag value pairs as {flag: value}."""
    assert len(argv) % 2 == 0 and all(a.startswith("--") for a in argv[::2]), argv
    return dict(zip(argv[::2], argv[1::2]))


@unittest.skipUnless(ETCDCTL and shutil.which("openssl"),
                     "etcdctl (Debian etcd-client) and openssl needed")
class EtcdForKubeApiserver(unittest.TestCase):
    """docs/etcd-for-kube-apiserver.md as written: "Try it on one machine"
    runs scripts/etcd-pki.sh, serves with the etcd flags shown, then runs the
    etcdctl commands shown with the client certificate (the port is the only
    change) and the SQL queries over sk_kv_latest; section 1's script and
    openssl checks run as shown (their /etc path moved into a temp dir); the
    flags the kube-apiserver, k3s and sqlkube sections name go together."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="sk-etcd-howto.")
        cls.server = None
        try:
            # Commands run from cls.dir as from the repository root: scripts/
            # is the repository's; data/ becomes the server's data dir below.
            os.symlink(os.path.join(REPO_ROOT, "scripts"), os.path.join(cls.dir, "scripts"))
            block = howto_block("scripts/etcd-pki.sh etcd-pki")
            cls.pki_out = cls.sh(block[0])
            serve = shlex.split(block[1])
            assert serve[:2] == ["build/sqlkube", "serve"], serve
            cls.serve_flags = pairs(serve[2:])
            flags = dict(cls.serve_flags)
            assert flags.pop("--data-dir") == "./data", cls.serve_flags  # the harness's
            cls.port = free_port()
            assert flags["--etcd-listen"] == "127.0.0.1:2379", flags
            flags["--etcd-listen"] = "127.0.0.1:%d" % cls.port
            args = []
            for k, v in flags.items():
                args += [k, v if k == "--etcd-listen" else os.path.join(cls.dir, v)]
            cls.server = Server(cls.__name__, extra_args=args)
            cls.server.start()
            os.symlink(cls.server.data_dir, os.path.join(cls.dir, "data"))
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.server is not None:
            cls.server.cleanup()
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def sh(cls, cmd, ok=True):
        """cmd run by bash in cls.dir, as a shell user would: its stdout, or
        the CompletedProcess if ok is False."""
        p = subprocess.run(["bash", "-c", cmd], cwd=cls.dir, capture_output=True, text=True,
                           timeout=60, env=dict(os.environ, ETCDCTL_API="3"))
        if not ok:
            return p
        assert p.returncode == 0, "%s: exit %d\n%s" % (cmd, p.returncode, p.stderr[-2000:])
        return p.stdout

    def etcdctl_lines(self):
        block = howto_block("export ETCDCTL_API=3")
        self.assertEqual(block[0], "export ETCDCTL_API=3")
        prefix = ("etcdctl --endpoints=https://127.0.0.1:2379 --cacert etcd-pki/ca.crt "
                  "--cert etcd-pki/client.crt --key etcd-pki/client.key ")
        for line in block[1:]:
            self.assertTrue(line.startswith(prefix), line)
        return {line[len(prefix):]: line.replace("127.0.0.1:2379", "127.0.0.1:%d" % self.port)
                for line in block[1:]}

    def test_pki(self):
        d = os.path.join(self.dir, "etcd-pki")
        self.assertEqual(os.stat(d).st_mode & 0o777, 0o700)
        for name in ("ca", "server", "client"):
            for ext in ("crt", "key"):
                self.assertEqual(os.stat(os.path.join(d, name + "." + ext)).st_mode & 0o777,
                                 0o600, name + "." + ext)
        # Section 1, its /etc/sqlkube/etcd-pki moved into the temp dir.
        block = howto_block("scripts/etcd-pki.sh /etc/sqlkube/etcd-pki ")
        self.assertEqual(len(block), 1, block)
        other = os.path.join(self.dir, "other")
        self.sh(block[0].replace("/etc/sqlkube/etcd-pki", other))
        checks = howto_block("openssl verify ")
        out = self.sh(checks[0].replace("/etc/sqlkube/etcd-pki", other))
        self.assertEqual(out, "%s/server.crt: OK\n%s/client.crt: OK\n" % (other, other))
        out = self.sh(checks[1].replace("/etc/sqlkube/etcd-pki", other))
        self.assertIn("IP Address:127.0.0.1, DNS:localhost, IP Address:10.0.0.5, "
                      "DNS:etcd.internal.example", out)
        self.assertIn("TLS Web Server Authentication", out)
        self.assertNotIn("Client", out)
        out = self.sh("openssl x509 -in %s/client.crt -noout -ext extendedKeyUsage" % other)
        self.assertIn("TLS Web Client Authentication", out)
        # Files that exist are kept.
        with open(os.path.join(other, "server.crt")) as f:
            before = f.read()
        self.sh(block[0].replace("/etc/sqlkube/etcd-pki", other))
        with open(os.path.join(other, "server.crt")) as f:
            self.assertEqual(f.read(), before)

    def test_etcdctl_as_documented(self):
        lines = self.etcdctl_lines()
        self.assertEqual(list(lines), ["endpoint status", "endpoint health", "member list",
                                       "put /registry/configmaps/default/demo hello",
                                       "get --prefix /registry --keys-only | head"])
        url = "https://127.0.0.1:%d" % self.port
        out = self.sh(lines["endpoint status"])
        self.assertRegex(out, r"^%s, ([0-9a-f]+), 3\.5\.\d+, [^,]+, true, false, 1, (\d+), \2, \n$"
                         % re.escape(url))
        member = re.match(r"^%s, ([0-9a-f]+)," % re.escape(url), out).group(1)
        # etcdctl 3.4 prints its health verdict on stderr.
        p = self.sh(lines["endpoint health"], ok=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout + p.stderr,
                         r"(?m)^%s is healthy: successfully committed proposal" % re.escape(url))
        self.assertEqual(self.sh(lines["member list"]),
                         "%s, started, %s, , %s, false\n" % (member, socket.gethostname(), url))
        self.assertEqual(self.sh(lines["put /registry/configmaps/default/demo hello"]), "OK\n")
        out = self.sh(lines["get --prefix /registry --keys-only | head"])
        self.assertIn("/registry/configmaps/default/demo\n", out)
        # Without the client certificate, the handshake refuses.
        p = self.sh(lines["endpoint health"].replace(
            " --cert etcd-pki/client.crt --key etcd-pki/client.key", "")
            .replace("etcdctl ", "etcdctl --dial-timeout=3s --command-timeout=5s ", 1), ok=False)
        self.assertNotEqual(p.returncode, 0, p.stdout)

    def test_sql_as_documented(self):
        self.sh(self.etcdctl_lines()["put /registry/configmaps/default/demo hello"])
        block = howto_block("sqlite3 data/sqlkube.db ")
        self.assertEqual(len(block), 2, block)
        def run(line):
            if CONFIG.backend == "sqlite":
                return self.sh(line)
            argv = shlex.split(line)  # the doc's psql "$DB" -c form of the same query
            return self.sh("psql %s -X -A -t -c %s" % (shlex.quote(self.server.db_url),
                                                      shlex.quote(argv[2])))
        # the server decodes each key for SQL moments after its commit
        wait_until(lambda: "configmaps|1\n" in run(block[0]), what="the put decoded")
        outs = [run(line) for line in block]
        self.assertIn("configmaps|1\n", outs[0])
        self.assertRegex(outs[1], r"^default\|demo\|\d+\|bytes\n$")

    def test_flags_go_together(self):
        """The how-to's sqlkube, kube-apiserver and k3s sections name the
        files etcd-pki.sh makes, each for its role, and one address."""
        sq = howto_block("sqlkube serve ")
        self.assertEqual(len(sq), 1, sq)
        sq = pairs(shlex.split(sq[0])[2:])
        self.assertEqual(set(sq), set(self.serve_flags))
        d = "/etc/sqlkube/etcd-pki/"
        self.assertEqual((sq["--etcd-cert-file"], sq["--etcd-key-file"],
                          sq["--etcd-trusted-ca-file"]),
                         (d + "server.crt", d + "server.key", d + "ca.crt"))
        addr = sq["--etcd-listen"]
        for first, names in (("kube-apiserver ", ("--etcd-servers", "--etcd-cafile",
                                                  "--etcd-certfile", "--etcd-keyfile")),
                             ("k3s server ", ("--datastore-endpoint", "--datastore-cafile",
                                              "--datastore-certfile", "--datastore-keyfile"))):
            block = howto_block(first)
            self.assertEqual(len(block), 1, block)
            argv = [a for a in shlex.split(block[0])[1:] if a not in ("server", "...")]
            f = dict(a.split("=", 1) for a in argv)
            self.assertEqual(list(f), list(names), first)
            url, ca, cert, key = (f[n] for n in names)
            self.assertEqual(url, "https://" + addr, first)
            self.assertEqual([os.path.basename(x) for x in (ca, cert, key)],
                             ["ca.crt", "client.crt", "client.key"], first)
        # The address the client dials is one the certificate names.
        self.assertIn(addr.split(":")[0], howto_block("scripts/etcd-pki.sh /etc/")[0].split())


@unittest.skipUnless(ETCDCTL, "etcdctl (Debian etcd-client) needed")
@unittest.skipUnless(ETCDCTL and ETCD, "etcdctl and etcd (Debian etcd-client, etcd-server) needed")
class EtcdHashKV(unittest.TestCase):
    """`etcdctl endpoint hashkv` gives etcd 3.4's hash: a fresh sqlkube and a
    fresh etcd are brought to one revision (etcd's filler writes compacted
    away on both), get the same writes (puts, a multi-op txn, deletes), and
    must hash alike at the current and past revisions, before and after a
    compaction that keeps some keys' old versions."""

    def hashkv(self, port, rev=None):
        args = ["endpoint", "hashkv", "-w", "json"] + (["--rev=%d" % rev] if rev else [])
        rc, out, err = ctl(port, *args)
        if rc != 0:
            return ("error", err)
        got = json.loads(out)[0]["HashKV"]
        return (got["hash"], got["compact_revision"], got["header"]["revision"])

    def test_same_hash_as_etcd(self):
        port = free_port()
        srv = Server("hashkv", extra_args=["--etcd-listen", "127.0.0.1:%d" % port] + QUIET)
        ref = None
        try:
            srv.start()
            ref = healthy_reference()
            start = current_rev(port)
            # etcd starts at revision 1; sqlkube's bootstrap took some: fill
            # etcd up to the same revision with a key deleted at the end
            while current_rev(ref.port) < start - 1:
                self.assertEqual(ctl(ref.port, "put", "filler", "x")[0], 0)
            self.assertEqual(ctl(ref.port, "del", "filler")[0], 0)
            self.assertEqual(current_rev(ref.port), start)
            for p in (port, ref.port):
                self.assertEqual(ctl(p, "compaction", "--physical", str(start))[0], 0)
            steps = [["put", "/h/a", "1"], ["put", "/h/b", "2"], ["put", "/h/c", "3"],
                     ("txn", 'mod("/h/a") > "0"\n\nput /h/a 10\nput /h/d 4\ndel /h/c\n\n\n'),
                     ["put", "/h/b", "20"], ["del", "/h/d"], ["put", "/h/e", ""],
                     ["put", "/h/a", "100"]]
            for step in steps:
                for p in (port, ref.port):
                    if isinstance(step, tuple):
                        rc, out, err = ctl(p, step[0], input=step[1])
                    else:
                        rc, out, err = ctl(p, *step)
                    self.assertEqual(rc, 0, (step, err))
            now = current_rev(port)
            self.assertEqual(now, current_rev(ref.port))
            checks = [None, start + 2, start + 4, now - 1]
            for rev in checks:
                self.assertEqual(self.hashkv(port, rev), self.hashkv(ref.port, rev), rev)
            mine = self.hashkv(port)
            self.assertEqual(mine[1:], (start, now))
            # a compaction in the middle: /h/b's version at start+2 stays below it
            for p in (port, ref.port):
                self.assertEqual(ctl(p, "compaction", "--physical", str(start + 4))[0], 0)
            for rev in (None, start + 5, now - 1):
                self.assertEqual(self.hashkv(port, rev), self.hashkv(ref.port, rev), rev)
            self.assertIn("required revision has been compacted",
                          self.hashkv(port, start + 3)[1])
            self.assertEqual(self.hashkv(port, start + 3), self.hashkv(ref.port, start + 3))
            self.assertIn("future revision", self.hashkv(port, now + 5)[1])
            # the hash says something: another value, another hash
            self.assertEqual(ctl(port, "put", "/h/a", "other")[0], 0)
            self.assertNotEqual(self.hashkv(port)[0], mine[0])
        finally:
            if ref is not None:
                ref.stop()
            srv.cleanup()


@unittest.skipUnless(ETCDCTL and ETCD, "etcdctl and etcd (Debian etcd-client, etcd-server) needed")
class EtcdDefragment(unittest.TestCase):
    """`etcdctl defrag` answers as etcd's does, and on SQLite the pages a
    compaction freed are back with the file system afterwards."""

    def test_defrag(self):
        port = free_port()
        srv = Server("defrag", extra_args=["--etcd-listen", "127.0.0.1:%d" % port] + QUIET)
        ref = None
        try:
            srv.start()
            ref = healthy_reference()
            outs = []
            for p in (port, ref.port):
                for i in range(20):
                    self.assertEqual(ctl(p, "put", "/d/k%d" % i, "v" * 20000)[0], 0)
                self.assertEqual(ctl(p, "del", "/d/", "--prefix")[0], 0)
                self.assertEqual(ctl(p, "compaction", "--physical", str(current_rev(p)))[0], 0)
                rc, out, err = ctl(p, "defrag")
                self.assertEqual(rc, 0, err)
                outs.append(out.replace(str(p), "PORT"))
            self.assertEqual(outs[0], outs[1])
            self.assertEqual(outs[0], "Finished defragmenting etcd member[http://127.0.0.1:PORT]\n")
            if srv.backend == "sqlite":
                self.assertEqual(sql(srv, "PRAGMA freelist_count"), [["0"]])
            # the store goes on: a write and a read after it
            self.assertEqual(ctl(port, "put", "/d/after", "1")[0], 0)
            self.assertEqual(ctl(port, "get", "/d/after", "--print-value-only")[1], "1\n")
        finally:
            if ref is not None:
                ref.stop()
            srv.cleanup()


class EtcdAcrossInstances(unittest.TestCase):
    """Two sqlkube processes on one PostgreSQL serve one etcd keyspace: one
    revision counter, compare-and-swap decided across them, one HashKV."""

    def test_one_keyspace(self):
        with two_instances(self, "etcd") as (a, pa, b, pb):
            rc, out, err = ctl(pa, "put", "/m/k", "0", "-w", "json")
            self.assertEqual(rc, 0, err)
            rev = json.loads(out)["header"]["revision"]
            rc, out, err = ctl(pb, "get", "/m/k", "-w", "json")
            self.assertEqual((rc, json.loads(out)["kvs"][0]["mod_revision"]), (0, rev), err)
            cas = 'mod("/m/k") = "%d"\n\nput /m/k 1\n\n\n' % rev
            rc, out, err = ctl(pb, "txn", "-w", "json", input=cas)
            self.assertTrue(json.loads(out).get("succeeded"), out)
            rc, out, err = ctl(pa, "txn", "-w", "json", input=cas)  # stale: b wrote
            self.assertNotIn("succeeded", json.loads(out))
            # Concurrent writers on both: one revision each, no gap, no double.
            start = current_rev(pa)
            procs = [subprocess.Popen([ETCDCTL, "--endpoints=http://127.0.0.1:%d" % port, "put",
                                       "/m/p/%s%d" % (name, i), "v"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      env=dict(os.environ, ETCDCTL_API="3"))
                     for i in range(10) for name, port in (("a", pa), ("b", pb))]
            self.assertEqual([p.wait(timeout=60) for p in procs], [0] * 20)
            rc, out, err = ctl(pb, "get", "/m/p/", "--prefix", "-w", "json")
            got = json.loads(out)
            self.assertEqual(got["count"], 20)
            self.assertEqual(sorted(kv["mod_revision"] for kv in got["kvs"]),
                             list(range(start + 1, start + 21)))
            # `endpoint hashkv` agrees across the instances, now and at a past revision
            for rev in ([], ["--rev=%d" % (start + 5)]):
                hashes = []
                for port in (pa, pb):
                    rc, out, err = ctl(port, "endpoint", "hashkv", "-w", "json", *rev)
                    self.assertEqual(rc, 0, err)
                    hashes.append(json.loads(out)[0]["HashKV"]["hash"])
                self.assertEqual(hashes[0], hashes[1], rev)

    def test_watch_across_instances(self):
        """A watch on instance A sees the writes of instance B (the commit
        feed follows every process through LISTEN/NOTIFY), and a watch on B
        replays A's writes from history."""
        with two_instances(self, "etcdw") as (a, pa, b, pb):
            start = current_rev(pa)
            rc, out, err = watch(pa, ["--prefix", "/x/", "-w", "json"],
                                 [["put", "/x/1", "b"], ["del", "/x/1"]], write_port=pb)
            got = [(e.get("type", 0), e["kv"]["mod_revision"]) for r in map(json.loads, out.split())
                   for e in r["Events"]]
            self.assertEqual(got, [(0, start + 1), (1, start + 2)], out)
            rc, out, err = watch(pb, ["--prefix", "/x/", "--rev=%d" % (start + 1)], [])
            self.assertEqual(out, "PUT\n/x/1\nb\nDELETE\n/x/1\n\n")

    def test_member_list(self):
        """Both instances are members, listed alike by each (sorted by ID,
        as etcd lists them), each member's ID the member_id of that
        instance's headers. The roster is the instances' identity leases, so
        two instances on one host are told apart by --identity-hostname."""
        with two_instances(self, "member", ["--identity-hostname", "sk-member-a"],
                           ["--identity-hostname", "sk-member-b"]) as (a, pa, b, pb):
            ids = {port: status_of(port)["header"]["member_id"] for port in (pa, pb)}
            self.assertNotEqual(ids[pa], ids[pb])
            want = sorted([{"ID": ids[pa], "name": "sk-member-a",
                            "clientURLs": ["http://127.0.0.1:%d" % pa]},
                           {"ID": ids[pb], "name": "sk-member-b",
                            "clientURLs": ["http://127.0.0.1:%d" % pb]}], key=lambda m: m["ID"])
            for port in (pa, pb):
                rc, out, err = ctl(port, "member", "list", "-w", "json")
                self.assertEqual(rc, 0, err)
                got = json.loads(out)
                self.assertEqual(got["members"], want)
                self.assertEqual(got["header"]["member_id"], ids[port])
            # The roster follows restarts: b without the etcd face leaves it.
            b.stop()
            b.extra_args = [x for x in b.extra_args if x != "--etcd-listen" and
                            x != "127.0.0.1:%d" % pb]
            b.start()
            rc, out, err = ctl(pa, "member", "list", "-w", "json")
            self.assertEqual([m["name"] for m in json.loads(out)["members"]], ["sk-member-a"])

    def test_lease_expires_once(self):
        """A lease granted on one instance expires once: both instances'
        collectors see it due, the store lets exactly one delete its keys."""
        with two_instances(self, "lease") as (a, pa, b, pb):
            for rnd in range(3):
                rc, o, err = ctl(pa, "lease", "grant", "2", "-w", "json")
                self.assertEqual(rc, 0, err)
                lid = "%x" % json.loads(o)["ID"]
                for k in range(5):
                    rc, o, err = ctl(pa if k % 2 else pb, "put", "/o/%d/%d" % (rnd, k), "v",
                                     "--lease=" + lid)
                    self.assertEqual(rc, 0, err)
                self.assertIn("/o/%d/0" % rnd, ctl(pb, "lease", "timetolive", lid, "--keys")[1])
                before = current_rev(pb)
                deadline = time.monotonic() + 15
                while ctl(pb, "get", "/o/%d/" % rnd, "--prefix", "--keys-only")[1].strip():
                    self.assertLess(time.monotonic(), deadline, "the lease did not expire")
                    time.sleep(0.2)
                time.sleep(1.5)  # both collectors have passed since
                self.assertEqual(current_rev(pa), before + 1)  # one revision, one delete
                self.assertIn("already expired", ctl(pa, "lease", "timetolive", lid)[1])
                self.assertEqual(ctl(pb, "lease", "list")[1], "found 0 leases\n")
            self.assertNotRegex(a.log_tail() + b.log_tail(), "cannot expire")


@unittest.skipUnless(ETCDCTL, "etcdctl (Debian etcd-client) needed")
class EtcdCheckPerf(unittest.TestCase):

    def test_check_perf(self):
        """`etcdctl check perf` passes: its small load (50 clients putting
        150 keys a second for 60 s) must keep the rate, the slowest put under
        0.5 s and their spread under 0.1 s; it then deletes its prefix and,
        with --auto-compact, compacts at the last revision.

        Those latency limits are etcd's verdict on the hardware, and this
        shared machine's disk fails them on its own: fdatasync stalls of
        0.1-0.8 s a few times a minute, which stall etcd 3.4's puts up to
        0.87 s under this same load (bench/README.md, "check perf and the
        disk"). So the store's commits skip the disk flush here, SQLite on
        tmpfs and PostgreSQL with synchronous_commit off for this server's
        sessions, and the verdicts judge sqlkube's own latency. Durability
        across crashes is test_durability's."""
        port = free_port()
        srv = Server("checkperf", flush_to_disk=False,
                     extra_args=["--etcd-listen", "127.0.0.1:%d" % port] + QUIET)
        try:
            srv.start()
            p = subprocess.run([ETCDCTL, "--endpoints=http://127.0.0.1:%d" % port, "check",
                                "perf", "--auto-compact"], capture_output=True, text=True,
                               timeout=180, env=dict(os.environ, ETCDCTL_API="3"))
            # The progress bar redraws with carriage returns; keep the verdicts.
            verdicts = [l for l in (p.stdout + p.stderr).replace("\r", "\n").splitlines()
                        if l.startswith(("PASS", "FAIL", "Compacted with revision",
                                         "Slowest request", "Stddev"))]
            self.assertEqual(p.returncode, 0, verdicts or p.stderr[-2000:])
            self.assertEqual([l.split(":")[0].split(" ")[0] for l in verdicts],
                             ["Compacted", "PASS", "PASS", "PASS", "PASS"], verdicts)
            compacted = int(verdicts[0].split()[-1])
            self.assertEqual(current_rev(port), compacted)
            rc, out, err = ctl(port, "get", "/etcdctl-check-perf/", "--prefix", "-w", "json")
            self.assertEqual((rc, json.loads(out).get("count", 0)), (0, 0), err)
            rc, out, err = ctl(port, "get", "/etcdctl-check-perf/", "--prefix",
                               "--rev=%d" % (compacted - 1))
            self.assertEqual((rc, err),
                             (1, "Error: etcdserver: mvcc: required revision has been compacted"))
        finally:
            srv.cleanup()


if __name__ == "__main__":
    unittest.main()
