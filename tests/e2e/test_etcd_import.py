"""`sqlkube import --etcd-snapshot FILE` moves a real etcd 3.4's keyspace into
an empty store with every revision intact (issue 38, item 2).

A reference etcd 3.4 (Debian's etcd-server) takes kube-style traffic: creates
and updates of many keys (several leaf pages and a branch page in bbolt), a
value larger than a page (overflow pages), deletes, transactions writing
several keys at one revision, a lease with a key, the compare-and-swap of
kube's compaction key, a compaction, and writes after it. `etcdctl snapshot
save` writes the file; it is imported into a fresh store, and sqlkube is
started with its etcd face. Then, with etcdctl against both:
- every key, value, create/mod revision, version and lease is etcd's, now
  and at every revision from the compaction on; below it both answer that the
  revision has been compacted;
- before sqlkube starts, the store's revision and compaction are etcd's; once
  it serves, the REST face's own start-up writes (default namespaces, RBAC,
  its identity Lease) take the revisions right after etcd's, in sk_history,
  and the etcd keyspace has no row above etcd's revision;
- `etcdctl watch --rev=R` for R just after the compaction prints exactly
  what etcd's prints (no compaction error), and the next put takes the
  current revision + 1;
- `etcdctl endpoint hashkv` (etcd's hash over every row) agrees at every
  revision from the compaction on;
- the lease exists with its key attached; the consistency check and the
  superseded flags are clean.
Then the way back (issue 38, item 3): `etcdctl snapshot save` against
sqlkube's etcd face, `etcdctl snapshot status` of that file (bbolt's own
consistency check passes; the revision is etcd's), and `etcdctl snapshot
restore` into a new etcd 3.4, which then serves the reference's keys,
values, revisions, compaction, hash and lease.
A truncated snapshot, a damaged one (its SHA-256 no longer matching), and one
without the SHA-256 whose meta pages are broken are each refused with a
clear message, leaving the store as it was (a later import into it works);
an import into a store that is not empty is refused.
"""

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import CONFIG, Server, free_port, sql, superseded_mismatches  # noqa: E402
from test_etcd import ETCD, ETCDCTL, QUIET, ctl, current_rev, healthy_reference, make_pki, watch  # noqa: E402,E501


def import_snapshot(server, path):
    return subprocess.run([CONFIG.binary, "import", "--etcd-snapshot", path, "--db",
                           server.store_url()], capture_output=True, text=True, timeout=300)


def kvs_at(port, rev=None):
    """(exit status, kvs or error line) of every key at rev (None: now)."""
    args = ["get", "", "--from-key", "-w", "json"] + (["--rev=%d" % rev] if rev else [])
    rc, out, err = ctl(port, *args)
    return (rc, json.loads(out).get("kvs", [])) if rc == 0 else (rc, err)


def hashkv(port, rev):
    """etcd's hash of the keyspace at rev and the compaction, or the error."""
    rc, out, err = ctl(port, "endpoint", "hashkv", "-w", "json", "--rev=%d" % rev)
    if rc != 0:
        return "error", err
    got = json.loads(out)[0]["HashKV"]
    return got["hash"], got["compact_revision"]


def traffic(port):
    """kube-style writes into the etcd at port; returns the compaction's revision."""
    def run(*args, input=None):
        rc, out, err = ctl(port, *args, input=input)
        assert rc == 0, (args, err)
        return out
    pad = "x" * 400
    for batch in range(3):  # 300 keys of ~420 bytes: several leaf pages, a branch page
        run("txn", input="\n" + "".join("put /registry/configmaps/ns%d/cm%03d %s%d\n"
                                        % (batch, i, pad, i) for i in range(100)) + "\n\n")
    run("put", "/registry/secrets/default/big", "B" * 20000)  # overflow pages
    for i in range(5):
        run("put", "/registry/pods/default/p%d" % i, "created-%d" % i)
    run("put", "/registry/pods/default/p1", "updated")
    run("put", "/registry/pods/default/p1", "updated-again")
    run("del", "/registry/pods/default/p2")
    # kube's update and delete shapes, and a txn writing three keys at one revision
    mod = json.loads(run("get", "/registry/pods/default/p3", "-w", "json"))["kvs"][0]
    run("txn", input='mod("/registry/pods/default/p3") = "%d"\n\nput /registry/pods/default/p3 '
        'v2\n\nget /registry/pods/default/p3\n\n' % mod["mod_revision"])
    run("txn", input="\nput /registry/events/default/e1 a\nput /registry/events/default/e2 b\n"
        "del /registry/pods/default/p4\n\n\n")
    lease = run("lease", "grant", "3600").split()[1]
    run("put", "--lease=" + lease, "/registry/masterleases/10.0.0.1", "ip")
    run("txn", input='version("compact_rev_key") = "0"\n\nput compact_rev_key 1\n\n'
        'get compact_rev_key\n\n')
    compact = current_rev(port) - 2
    run("compaction", str(compact))
    run("put", "/registry/pods/default/p0", "after-compaction")
    run("del", "/registry/configmaps/ns1/cm007")
    run("txn", input="\nput /registry/pods/default/p5 new\nput /registry/pods/default/p0 again"
        "\n\n\n")
    run("put", "/registry/pods/default/p2", "recreated")
    return compact


@unittest.skipUnless(ETCDCTL and ETCD, "etcdctl and etcd (Debian etcd-client, etcd-server) needed")
class EtcdSnapshotImport(unittest.TestCase):

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sk-etcd-import.")
        cls.ref = healthy_reference()
        cls.server = None
        try:
            cls.compact = traffic(cls.ref.port)
            cls.rev = current_rev(cls.ref.port)
            cls.snap = os.path.join(cls.tmp, "snap.db")
            rc, out, err = ctl(cls.ref.port, "snapshot", "save", cls.snap)
            assert rc == 0, err
            cls.etcd_port = free_port()
            cls.server = Server(cls.__name__, extra_args=[
                "--etcd-listen", "127.0.0.1:%d" % cls.etcd_port] + QUIET)
            cls.imported = import_snapshot(cls.server, cls.snap)
            cls.before_start = sql(cls.server, "SELECT rev, compact_rev FROM sk_revision")
            cls.server.start()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.server is not None:
            cls.server.cleanup()
        cls.ref.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_a_import_reports_what_it_did(self):
        self.assertEqual(self.imported.returncode, 0, self.imported.stderr)
        self.assertIn("revision %d, compacted at %d" % (self.rev, self.compact),
                      self.imported.stdout)
        # stderr is no terminal here: no progress lines
        self.assertEqual(self.imported.stderr, "")
        self.assertEqual(self.before_start, [[str(self.rev), str(self.compact)]])

    def test_b_keys_values_and_revisions_are_etcds(self):
        mine, ref = kvs_at(self.etcd_port), kvs_at(self.ref.port)
        self.assertEqual(mine[0], 0, mine)
        self.assertGreater(len(ref[1]), 300)
        self.assertEqual(mine, ref)
        for rev in range(self.compact, self.rev + 1):
            self.assertEqual(kvs_at(self.etcd_port, rev), kvs_at(self.ref.port, rev), rev)
        below = kvs_at(self.etcd_port, self.compact - 1)
        self.assertEqual(below, kvs_at(self.ref.port, self.compact - 1))
        self.assertIn("required revision has been compacted", below[1])

    def test_c_revisions_continue_from_etcds(self):
        # The REST face's own start-up writes came right after etcd's revision
        # and are all of sk_history; sk_kv holds etcd's rows only.
        now = current_rev(self.etcd_port)
        rest = sql(self.server, "SELECT count(*), min(rev), max(rev) FROM sk_history")[0]
        self.assertEqual(int(rest[0]), now - self.rev)
        if int(rest[0]):
            self.assertEqual((int(rest[1]), int(rest[2])), (self.rev + 1, now))
        self.assertEqual(sql(self.server, "SELECT max(rev) FROM sk_kv"), [[str(self.rev)]])
        rc, out, err = ctl(self.etcd_port, "put", "/registry/pods/default/next", "n", "-w", "json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["header"]["revision"], now + 1)
        kv = json.loads(ctl(self.etcd_port, "get", "/registry/pods/default/next", "-w",
                            "json")[1])["kvs"][0]
        self.assertEqual((kv["create_revision"], kv["mod_revision"]), (now + 1, now + 1))
        ctl(self.etcd_port, "del", "/registry/pods/default/next")
        # the same on etcd, so that watches from before show the same events
        for args in (("put", "/registry/pods/default/next", "n"),
                     ("del", "/registry/pods/default/next")):
            self.assertEqual(ctl(self.ref.port, *args)[0], 0)

    def test_d_watch_from_before_the_import_continues(self):
        args = ["--rev=%d" % (self.compact + 1), "--prefix", "/registry/pods/", "--prev-kv"]
        mine = watch(self.etcd_port, args, [], settle=1.5)
        ref = watch(self.ref.port, args, [], settle=1.5)
        self.assertEqual(mine, ref)
        self.assertIn("after-compaction", mine[1])
        self.assertNotIn("compacted", mine[2])
        # from the compaction itself too, as etcd allows; below it, both refuse
        at = ["--rev=%d" % self.compact, "--prefix", "/registry/"]
        self.assertEqual(watch(self.etcd_port, at, [], settle=1.5)[1],
                         watch(self.ref.port, at, [], settle=1.5)[1])

    def test_e_lease_and_its_key(self):
        rc, out, err = ctl(self.ref.port, "lease", "list")
        lease = out.split()[-1]
        rc, out, err = ctl(self.etcd_port, "lease", "timetolive", lease, "--keys", "-w", "json")
        self.assertEqual(rc, 0, err)
        ttl = json.loads(out)
        self.assertEqual(ttl["granted-ttl"], 3600)
        self.assertGreater(ttl["ttl"], 3500)
        self.assertEqual(ttl["keys"], ["L3JlZ2lzdHJ5L21hc3RlcmxlYXNlcy8xMC4wLjAuMQ=="])

    def test_f_consistency_is_clean(self):
        report = self.server.request("GET", "/debug/consistency").body.decode()
        self.assertNotIn("MISMATCH", report)
        self.assertEqual(superseded_mismatches(self.server), [])
        # every key's newest row, and only it, is unflagged
        latest = int(sql(self.server, "SELECT count(*) FROM sk_kv_latest")[0][0])
        live = len(kvs_at(self.etcd_port)[1])
        self.assertEqual(latest, live)

    def test_g_import_into_a_store_that_is_not_empty_is_refused(self):
        before = current_rev(self.etcd_port)
        p = import_snapshot(self.server, self.snap)
        self.assertEqual(p.returncode, 1)
        self.assertIn("the store is not empty", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertEqual(current_rev(self.etcd_port), before)

    def test_c2_same_hash_as_etcd(self):
        """etcd's own hash of the keyspace (HashKV, every row with its revision,
        tombstones included) agrees at each revision from the compaction on:
        the rows are etcd's, byte for byte."""
        for rev in range(self.compact, self.rev + 1):
            self.assertEqual(hashkv(self.etcd_port, rev), hashkv(self.ref.port, rev), rev)
        self.assertNotEqual(hashkv(self.etcd_port, self.rev)[0], "error")

    def test_i_snapshot_of_sqlkube_restores_into_etcd(self):
        mine = os.path.join(self.tmp, "from-sqlkube.db")
        rc, out, err = ctl(self.etcd_port, "snapshot", "save", mine)
        self.assertEqual(rc, 0, err)
        rc, out, err = ctl(self.etcd_port, "snapshot", "status", mine, "-w", "json")
        self.assertEqual(rc, 0, err)  # bbolt's tx.Check() found nothing
        status = json.loads(out)
        # the newest row of the keyspace (test_c's delete, whose revision
        # came after the REST face's start-up writes)
        self.assertEqual(status["revision"],
                         int(sql(self.server, "SELECT max(rev) FROM sk_kv")[0][0]))
        restored = healthy_reference(restore_from=mine)
        try:
            now = kvs_at(restored.port)
            self.assertEqual(now[0], 0, now)
            self.assertGreater(len(now[1]), 300)
            self.assertEqual(now, kvs_at(self.ref.port))
            for rev in range(self.compact, self.rev + 1):
                a, b = kvs_at(restored.port, rev), kvs_at(self.ref.port, rev)
                if a != b:
                    def brief(x):
                        return x if x[0] else [(base64.b64decode(k["key"]), k["mod_revision"])
                                               for k in x[1]]
                    self.assertEqual(brief(a), brief(b), rev)
                self.assertEqual(a, b, rev)
                self.assertEqual(hashkv(restored.port, rev), hashkv(self.ref.port, rev), rev)
            self.assertNotEqual(hashkv(restored.port, self.rev)[0], "error")
            below = kvs_at(restored.port, self.compact - 1)
            self.assertIn("required revision has been compacted", below[1])
            lease = ctl(self.ref.port, "lease", "list")[1].split()[-1]
            rc, out, err = ctl(restored.port, "lease", "timetolive", lease, "--keys", "-w",
                               "json")
            self.assertEqual(rc, 0, err)
            ttl = json.loads(out)
            self.assertEqual(ttl["granted-ttl"], 3600)
            self.assertEqual(ttl["keys"], ["L3JlZ2lzdHJ5L21hc3RlcmxlYXNlcy8xMC4wLjAuMQ=="])
        finally:
            restored.stop()

    def test_h_bad_snapshots_are_refused_and_leave_the_store_empty(self):
        with open(self.snap, "rb") as f:
            good = f.read()
        self.assertEqual(len(good) % 512, 32)  # etcdctl appended its SHA-256
        plain = good[:-32]
        page = 4096
        broken_metas = bytearray(plain)
        for meta in (0, page):  # each meta page's root page id, under its checksum
            broken_metas[meta + 16 + 16] ^= 0x5a
        cases = [
            ("truncated", good[:len(good) // 2], "truncated"),
            ("damaged", good[:30000] + bytes([good[30000] ^ 1]) + good[30001:],
             "SHA-256 does not match"),
            ("metas", bytes(broken_metas), "checksum does not match"),
        ]
        target = Server(self.__class__.__name__ + "-bad")
        try:
            for name, data, why in cases:
                path = os.path.join(self.tmp, name + ".db")
                with open(path, "wb") as f:
                    f.write(data)
                p = import_snapshot(target, path)
                self.assertEqual(p.returncode, 1, name)
                self.assertIn(why, p.stderr, name)
                self.assertIn("nothing was imported", p.stderr, name)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            # the store is still empty: a good snapshot goes in
            path = os.path.join(self.tmp, "plain.db")
            with open(path, "wb") as f:
                f.write(plain)
            p = import_snapshot(target, path)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("no SHA-256 appended", p.stdout)
            self.assertEqual(sql(target, "SELECT rev FROM sk_revision"), [[str(self.rev)]])
        finally:
            target.cleanup()


def import_live(server, endpoint, *flags):
    """`sqlkube import --from-etcd endpoint` into server's store, running."""
    return subprocess.Popen([CONFIG.binary, "import", "--from-etcd", endpoint, "--db",
                             server.store_url()] + list(flags),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def more_traffic(port):
    """Writes made while the import follows: every kind of row, a lease
    granted, renewed and revoked, a compaction. Returns the lease kept."""
    def run(*args, input=None):
        rc, out, err = ctl(port, *args, input=input)
        assert rc == 0, (args, err)
        return out
    for i in range(40):
        run("put", "/registry/configmaps/live/cm%02d" % i, "v%d" % i)
    run("txn", input="\nput /registry/pods/live/a 1\nput /registry/pods/live/b 2\n"
        "del /registry/configmaps/live/cm03\n\n\n")
    kept = run("lease", "grant", "1200").split()[1]
    run("put", "--lease=" + kept, "/registry/events/live/e1", "event")
    gone = run("lease", "grant", "1200").split()[1]
    run("put", "--lease=" + gone, "/registry/events/live/e2", "event")
    run("lease", "revoke", gone)  # deletes e2 at a revision of its own
    compacted = current_rev(port) - 5
    run("compaction", str(compacted))
    for i in range(10):
        run("put", "/registry/configmaps/live/cm%02d" % i, "again-%d" % i)
    run("del", "/registry/configmaps/live/", "--prefix")
    return kept, compacted


def store_rev(server):
    return int(sql(server, "SELECT rev FROM sk_revision")[0][0])


@unittest.skipUnless(ETCDCTL and ETCD, "etcdctl and etcd (Debian etcd-client, etcd-server) needed")
class EtcdLiveImport(unittest.TestCase):
    """`sqlkube import --from-etcd` (issue 38, item 2): a live etcd 3.4's
    keyspace, read through its own Snapshot call, then followed through its
    Watch while kube-style writes go on (puts, a transaction, leases, a
    lease revoked, a compaction, a prefix delete), until SIGTERM. Then the
    store is etcd's at every revision from the first compaction on (keys,
    values, create/mod revisions, versions, etcd's own hash), a watch from
    before the import prints what etcd's prints, and the leases are etcd's
    with their keys. --until-synced stops by itself at etcd's revision."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.ref = healthy_reference()
        cls.servers = []
        try:
            cls.compact = traffic(cls.ref.port)
            cls.etcd_port = free_port()
            cls.server = cls.new_server("", ["--etcd-listen", "127.0.0.1:%d" % cls.etcd_port])
            endpoint = "http://127.0.0.1:%d" % cls.ref.port
            cls.proc = import_live(cls.server, endpoint)
            cls.first = cls.proc.stdout.readline()
            cls.caught = cls.proc.stdout.readline()
            cls.kept, cls.compacted = more_traffic(cls.ref.port)
            cls.rev = current_rev(cls.ref.port)
            deadline = time.monotonic() + 30
            while store_rev(cls.server) < cls.rev and time.monotonic() < deadline:
                time.sleep(0.1)
            cls.proc.terminate()
            out, err = cls.proc.communicate(timeout=30)
            cls.last, cls.err = out, err
            cls.server.start()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def new_server(cls, suffix, args=()):
        server = Server(cls.__name__ + suffix, extra_args=list(args) + QUIET)
        cls.servers.append(server)
        return server

    @classmethod
    def tearDownClass(cls):
        for server in cls.servers:
            server.cleanup()
        cls.ref.stop()

    def test_a_it_said_what_it_did(self):
        self.assertEqual(self.proc.returncode, 0, self.err)
        self.assertRegex(self.first, r"^imported the snapshot of http://127\.0\.0\.1:\d+: \d+ "
                         r"rows .*compacted at %d" % self.compact)
        self.assertRegex(self.caught, r"^caught up with .* at revision \d+; following it")
        self.assertRegex(self.last, r"^followed .* to %d: \d+ rows in \d+ commits; 2 leases "
                         r"\(stopped by a signal\)" % self.rev)
        self.assertEqual(self.err, "")

    def test_b_every_revision_is_etcds(self):
        mine, ref = kvs_at(self.etcd_port), kvs_at(self.ref.port)
        self.assertEqual(mine[0], 0, mine)
        self.assertEqual(mine, ref)
        # every revision etcd still answers, the snapshot's and the
        # follow's; etcd's compaction during the follow is not in a watch,
        # so the store keeps the older ones until its own compaction runs
        for rev in range(self.compacted, self.rev + 1):
            self.assertEqual(kvs_at(self.etcd_port, rev), kvs_at(self.ref.port, rev), rev)
        self.assertEqual(kvs_at(self.etcd_port, self.compact)[0], 0)

    def test_c_a_watch_from_before_the_import_continues(self):
        args = ["--rev=%d" % self.compacted, "--prefix", "/registry/", "--prev-kv"]
        mine = watch(self.etcd_port, args, [], settle=1.5)
        ref = watch(self.ref.port, args, [], settle=1.5)
        self.assertEqual(mine[1], ref[1])
        self.assertIn("again-9", mine[1])
        self.assertNotIn("compacted", mine[2])

    def test_d_leases_are_etcds(self):
        rc, out, err = ctl(self.etcd_port, "lease", "timetolive", self.kept, "--keys", "-w", "json")
        self.assertEqual(rc, 0, err)
        ttl = json.loads(out)
        self.assertEqual(ttl["granted-ttl"], 1200)
        self.assertGreater(ttl["ttl"], 1100)
        self.assertEqual(ttl["keys"], ["L3JlZ2lzdHJ5L2V2ZW50cy9saXZlL2Ux"])  # .../live/e1
        self.assertEqual(sorted(ctl(self.etcd_port, "lease", "list")[1].split()[1:]),
                         sorted(ctl(self.ref.port, "lease", "list")[1].split()[1:]))

    def test_e_until_synced_stops_by_itself(self):
        target = self.new_server("-synced")
        p = import_live(target, "127.0.0.1:%d" % self.ref.port, "--until-synced")
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        now = current_rev(self.ref.port)
        self.assertIn("from revision %d to %d: 0 rows in 0 commits; 2 leases; in sync" % (now, now),
                      out)
        self.assertEqual(store_rev(target), now)

    def test_f_an_unreachable_source_imports_nothing(self):
        target = self.new_server("-none")
        p = import_live(target, "127.0.0.1:%d" % free_port(), "--until-synced")
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot reach the etcd to import from", err)
        self.assertIn("nothing was imported", err)
        p = import_live(target, "127.0.0.1:%d" % self.ref.port, "--until-synced")
        self.assertEqual(p.communicate(timeout=60)[0].count("\n"), 3)
        self.assertEqual(p.returncode, 0)


@unittest.skipUnless(ETCDCTL, "etcdctl (Debian etcd-client) needed")
class EtcdLiveImportTLS(unittest.TestCase):
    """--from-etcd https://... with etcdctl's --cacert/--cert/--key, from an
    etcd API that requires client certificates (sqlkube's own etcd face,
    the one here that takes etcd's TLS flags): the import works with them,
    and without the client certificate, or trusting another CA, it is
    refused with the reason and imports nothing."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="sk-etcd-live-tls.")
        cls.pki = make_pki(os.path.join(cls.dir, "a"))
        cls.other = make_pki(os.path.join(cls.dir, "b"))
        cls.port = free_port()
        cls.source = Server(cls.__name__, extra_args=[
            "--etcd-listen", "127.0.0.1:%d" % cls.port,
            "--etcd-cert-file", cls.pki["server.crt"], "--etcd-key-file", cls.pki["server.key"],
            "--etcd-trusted-ca-file", cls.pki["ca.crt"]] + QUIET)
        cls.target = Server(cls.__name__ + "-target")
        try:
            cls.source.start()
            p = subprocess.run([ETCDCTL, "--endpoints=https://127.0.0.1:%d" % cls.port,
                                "--cacert", cls.pki["ca.crt"], "--cert", cls.pki["client.crt"],
                                "--key", cls.pki["client.key"], "put", "/tls/k", "v"],
                               capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, ETCDCTL_API="3"))
            assert p.returncode == 0, p.stderr
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.source.cleanup()
        cls.target.cleanup()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_import(self, *flags):
        p = import_live(self.target, "https://127.0.0.1:%d" % self.port, "--until-synced", *flags)
        out, err = p.communicate(timeout=60)
        return p.returncode, out, err

    def test_refused_then_imported(self):
        rc, out, err = self.run_import("--cacert", self.pki["ca.crt"])
        self.assertEqual(rc, 1)
        self.assertIn("nothing was imported", err)
        rc, out, err = self.run_import("--cacert", self.other["ca.crt"], "--cert",
                                       self.other["client.crt"], "--key", self.other["client.key"])
        self.assertEqual(rc, 1)
        self.assertIn("TLS: ", err)
        self.assertIn("nothing was imported", err)
        # the store is untouched: the import below needs it empty
        rc, out, err = self.run_import("--cacert", self.pki["ca.crt"], "--cert",
                                       self.pki["client.crt"], "--key", self.pki["client.key"])
        self.assertEqual(rc, 0, err)
        self.assertIn("in sync", out)
        self.assertEqual(sql(self.target, "SELECT count(*), max(length(key)), max(length(value)) "
                                          "FROM sk_kv"), [["1", "6", "1"]])  # /tls/k = v


if __name__ == "__main__":
    unittest.main()
