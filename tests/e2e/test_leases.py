"""LEASES: apiserver identity leases (KEP-1965), TTL garbage collection, health
checks and leader election over ordinary Leases.

Every `sqlkube serve` holds a coordination.k8s.io/v1 Lease in kube-system
named kube-apiserver-<base32(sha256(hostname))[:16 bytes]>, labelled
k8s.io/component=kube-apiserver and kubernetes.io/hostname=<hostname>, with a
holderIdentity new at every start and a renewTime refreshed every
--identity-lease-renew-interval seconds. A collector on every instance deletes
expired identity Leases (renewTime + leaseDurationSeconds) and core/v1 Events
(--event-ttl seconds after their last write) through the normal write path, so
watchers see DELETED, with the object's resourceVersion as precondition.
Expiry times live in the table sk_ttl(resource, namespace, name, rev,
expires_at_ms), written with the object, so a restart neither forgets nor
extends them. Checked here with raw HTTP, watches, kubectl, plain SQL on the
database (sqlite3 / psql), restarts and SIGKILL, two instances on one
PostgreSQL, and two competing leader electors written with the Python client.

Why: identity leases and event expiry are what controllers and operators see
of a running apiserver; a lease that is never collected or collected while
renewed, an event that outlives its TTL after a restart, or a double delete
across instances are silent bugs that only an end-to-end run exposes.
"""

import base64
import datetime
import hashlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, HERE)

from server import CONFIG, Server, ServerTestCase, describe, sql, wait_until  # noqa: E402
from test_watch import WatchStream  # noqa: E402

KUBE_SYSTEM = "kube-system"
COMPONENT_LABEL = "k8s.io/component"
HOSTNAME_LABEL = "kubernetes.io/hostname"
IDENTITY_SELECTOR = COMPONENT_LABEL + "=kube-apiserver"
MERGE = {"Content-Type": "application/merge-patch+json"}
MICROTIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
HOLDER_RE = re.compile(r"^kube-apiserver-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}"
                       r"-[0-9a-f]{12}$")
IDENTITY_CHECKS = ("[+]ping ok", "[+]log ok", "[+]storage ok",
                   "[+]poststarthook/start-kube-apiserver-identity-lease-controller ok",
                   "[+]poststarthook/start-kube-apiserver-identity-lease-garbage-collector ok")


# --- helpers -----------------------------------------------------------------

def identity_lease_name(hostname):
    digest = hashlib.sha256(hostname.encode()).digest()[:16]
    return "kube-apiserver-" + base64.b32encode(digest).decode().rstrip("=").lower()


def identity_args(hostname=None, duration=3, renew=1, event_ttl=None):
    args = []
    if hostname is not None:
        args += ["--identity-hostname", hostname]
    if duration is not None:
        args += ["--identity-lease-duration", str(duration)]
    if renew is not None:
        args += ["--identity-lease-renew-interval", str(renew)]
    if event_ttl is not None:
        args += ["--event-ttl", str(event_ttl)]
    return args


def microtime(ts):
    """A MicroTime string ("2006-01-02T15:04:05.000000Z") for a Unix time."""
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(s):
    """Unix time of a MicroTime / RFC 3339 string."""
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def leases_path(ns, name=""):
    return "/apis/coordination.k8s.io/v1/namespaces/%s/leases%s" % (ns, "/" + name if name else "")


def events_path(ns, name=""):
    return "/api/v1/namespaces/%s/events%s" % (ns, "/" + name if name else "")


def lease_body(name, ns, holder, renew_ts, duration, labels=None):
    meta = {"name": name, "namespace": ns}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration,
                     "acquireTime": microtime(renew_ts), "renewTime": microtime(renew_ts)}}


def event_body(name, ns, message):
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": ns},
            "involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "name": "ttl-target",
                               "namespace": ns},
            "reason": "E2eTTL", "message": message, "type": "Normal", "count": 1}


def get_obj(server, path):
    """The object at path, or None on 404."""
    r = server.request("GET", path)
    if r.status == 404:
        return None
    assert r.status == 200, "GET %s -> %r" % (path, r)
    return r.json()


def identity_leases(server):
    """Name -> Lease for every kube-system lease labelled k8s.io/component=kube-apiserver."""
    r = server.request("GET", leases_path(KUBE_SYSTEM) + "?labelSelector="
                       + urllib.parse.quote(IDENTITY_SELECTOR))
    assert r.status == 200, r
    return {i["metadata"]["name"]: i for i in r.json()["items"]}


def list_rv(server, path):
    r = server.request("GET", path + "?limit=1")
    assert r.status == 200, r
    return r.json()["metadata"]["resourceVersion"]


def ttl_rows(server, kind, ns, name):
    """sk_ttl rows (resource, rev, expires_at_ms) for one object; kind is 'lease' or 'event'."""
    rows = sql(server, "SELECT resource, rev, expires_at_ms FROM sk_ttl WHERE namespace = '%s'"
               " AND name = '%s' AND resource LIKE '%%%s%%'" % (ns, name, kind))
    return [(r[0], int(r[1]), int(r[2])) for r in rows]


def poll_until_gone(server, path, deadline, interval=0.05):
    """Poll GET path until 404; returns (time first seen gone, time last seen present)."""
    last_present = None
    while True:
        now = time.time()
        r = server.request("GET", path)
        if r.status == 404:
            return now, last_present
        assert r.status == 200, r
        last_present = now
        if now > deadline:
            raise AssertionError("%s still present %.1fs past the deadline" % (path, now - deadline))
        time.sleep(interval)


def deleted_events(events, name):
    return [e for e in events if e["type"] == "DELETED" and e["object"]["metadata"]["name"] == name]


# --- identity lease ------------------------------------------------------------

class IdentityLease(ServerTestCase, unittest.TestCase):
    """One server, --identity-hostname set, renew every 1 s, duration 3 s."""

    HOST = "e2e-identity-alpha.example.test"
    DURATION = 3

    @classmethod
    def setUpClass(cls):
        cls.server = Server("IdentityLease", extra_args=identity_args(cls.HOST, cls.DURATION, 1))
        cls.server.start()

    def lease(self):
        name = identity_lease_name(self.HOST)
        # Present at /readyz 200, or at the latest one renew interval later.
        return wait_until(lambda: get_obj(self.server, leases_path(KUBE_SYSTEM, name)),
                          timeout=3, interval=0.05, what="identity lease %s" % name)

    def test_name_labels_and_spec(self):
        lease = self.lease()
        self.assertEqual(lease["metadata"]["name"], identity_lease_name(self.HOST))
        self.assertEqual(lease["metadata"]["namespace"], KUBE_SYSTEM)
        labels = lease["metadata"].get("labels") or {}
        self.assertEqual(labels.get(COMPONENT_LABEL), "kube-apiserver", labels)
        self.assertEqual(labels.get(HOSTNAME_LABEL), self.HOST, labels)
        spec = lease["spec"]
        self.assertRegex(spec.get("holderIdentity", ""), HOLDER_RE)
        self.assertEqual(spec.get("leaseDurationSeconds"), self.DURATION)
        for f in ("renewTime", "acquireTime"):
            self.assertRegex(spec.get(f, ""), MICROTIME_RE, "spec.%s" % f)
        self.assertLess(abs(parse_time(spec["renewTime"]) - time.time()), 3.0,
                        "renewTime should be about now: %s" % spec["renewTime"])
        self.assertLessEqual(parse_time(spec["acquireTime"]), parse_time(spec["renewTime"]))
        # Only this server's identity lease carries the label on a fresh database.
        self.assertEqual(list(identity_leases(self.server)), [identity_lease_name(self.HOST)])

    def test_kubectl_lists_identity_lease(self):
        lease = self.lease()
        name = lease["metadata"]["name"]
        s = self.server
        p = s.kubectl("get", "leases", "-n", KUBE_SYSTEM, "-l", IDENTITY_SELECTOR, "-o", "name")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertEqual(p.stdout.split(), ["lease.coordination.k8s.io/" + name], describe(p))
        p = s.kubectl("get", "leases", "-n", KUBE_SYSTEM, "-l", IDENTITY_SELECTOR)
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertIn(name, p.stdout)
        self.assertIn(lease["spec"]["holderIdentity"], p.stdout)  # the HOLDER column
        p = s.kubectl("get", "leases", "-n", KUBE_SYSTEM, "-l", HOSTNAME_LABEL + "=" + self.HOST,
                      "-o", "name")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertEqual(p.stdout.split(), ["lease.coordination.k8s.io/" + name], describe(p))

    def test_renew_time_advances_and_ttl_row_tracks_it(self):
        first = self.lease()
        time.sleep(2.5)
        second = self.lease()
        r0, r1 = parse_time(first["spec"]["renewTime"]), parse_time(second["spec"]["renewTime"])
        self.assertGreaterEqual(r1 - r0, 1.0, "renewTime did not advance over 2.5 s with a 1 s "
                                "renew interval: %s -> %s" % (first["spec"]["renewTime"],
                                                             second["spec"]["renewTime"]))
        self.assertEqual(first["spec"]["holderIdentity"], second["spec"]["holderIdentity"])
        self.assertGreater(int(second["metadata"]["resourceVersion"]),
                           int(first["metadata"]["resourceVersion"]))
        # A consistent snapshot: the lease did not change while sk_ttl was read.
        name = identity_lease_name(self.HOST)
        for _ in range(30):
            before = self.lease()
            rows = ttl_rows(self.server, "lease", KUBE_SYSTEM, name)
            after = self.lease()
            if before["metadata"]["resourceVersion"] == after["metadata"]["resourceVersion"]:
                break
        else:
            self.fail("the lease changed during every sk_ttl read")
        self.assertEqual(len(rows), 1, "one sk_ttl row per expiring object: %r" % rows)
        resource, rev, expires_ms = rows[0]
        self.assertEqual(rev, int(before["metadata"]["resourceVersion"]),
                         "sk_ttl.rev vs the lease's resourceVersion (row %r)" % (rows[0],))
        want_ms = parse_time(before["spec"]["renewTime"]) * 1000 + self.DURATION * 1000
        self.assertLess(abs(expires_ms - want_ms), 500,
                        "sk_ttl.expires_at_ms %d vs renewTime %s + %d s = %d"
                        % (expires_ms, before["spec"]["renewTime"], self.DURATION, want_ms))


class IdentityLeaseRestart(ServerTestCase, unittest.TestCase):
    """Restarts keep the lease name (hash of the hostname) and change holderIdentity."""

    HOST = "e2e-identity-restart"

    @classmethod
    def setUpClass(cls):
        cls.server = Server("IdentityLeaseRestart", extra_args=identity_args(cls.HOST, 3, 1))
        cls.server.start()

    def current(self, not_holder=None):
        name = identity_lease_name(self.HOST)

        def probe():
            l = get_obj(self.server, leases_path(KUBE_SYSTEM, name))
            if l and l["spec"].get("holderIdentity") != not_holder:
                return l
            return None
        return wait_until(probe, timeout=3, interval=0.05,
                          what="identity lease %s held by a new holder" % name)

    def test_restart_keeps_name_new_holder(self):
        s = self.server
        holders = [self.current()["spec"]["holderIdentity"]]
        for crash in (False, True):
            with self.subTest(crash=crash):
                s.restart(crash=crash)
                lease = self.current(not_holder=holders[-1])
                self.assertEqual(lease["metadata"]["name"], identity_lease_name(self.HOST))
                self.assertRegex(lease["spec"]["holderIdentity"], HOLDER_RE)
                self.assertNotIn(lease["spec"]["holderIdentity"], holders)
                holders.append(lease["spec"]["holderIdentity"])
                self.assertEqual(lease["metadata"]["labels"].get(HOSTNAME_LABEL), self.HOST)
                self.assertEqual(list(identity_leases(s)), [identity_lease_name(self.HOST)],
                                 "still exactly one identity lease after a restart")
                r0 = parse_time(lease["spec"]["renewTime"])
                wait_until(lambda: parse_time(self.current()["spec"]["renewTime"]) >= r0 + 1.0,
                           timeout=4, what="renewals after the restart")


# --- garbage collection ------------------------------------------------------------

class LeaseGarbageCollection(ServerTestCase, unittest.TestCase):

    HOST = "e2e-gc-host"

    @classmethod
    def setUpClass(cls):
        cls.server = Server("LeaseGC", extra_args=identity_args(cls.HOST, 3, 1))
        cls.server.start()

    def create(self, ns, name, renew_ts, duration, labels=None, holder="e2e-holder"):
        r = self.server.request("POST", leases_path(ns),
                                lease_body(name, ns, holder, renew_ts, duration, labels))
        self.assertEqual(r.status, 201, r)
        return r.json()

    def test_expired_identity_lease_deleted_others_kept(self):
        s = self.server
        own = identity_lease_name(self.HOST)
        wait_until(lambda: get_obj(s, leases_path(KUBE_SYSTEM, own)), timeout=3, what="own lease")
        ws = WatchStream(s, leases_path(KUBE_SYSTEM) + "?watch=true&resourceVersion="
                         + list_rv(s, leases_path(KUBE_SYSTEM)))
        wsd = WatchStream(s, leases_path("default") + "?watch=true&resourceVersion="
                          + list_rv(s, leases_path("default")))
        try:
            old = time.time() - 10
            label = {COMPONENT_LABEL: "kube-apiserver", HOSTNAME_LABEL: "e2e-dead-host"}
            stale = self.create(KUBE_SYSTEM, "kube-apiserver-e2e-stale", old, 1, label)
            t_created = time.time()
            # Not collected: no component label; label but outside kube-system; another label.
            self.create(KUBE_SYSTEM, "plain-old", old, 1)
            self.create(KUBE_SYSTEM, "other-component", old, 1, {COMPONENT_LABEL: "kube-scheduler"})
            self.create("default", "labelled-in-default", old, 1, label)
            ev = ws.wait_for(lambda ev: deleted_events(ev, "kube-apiserver-e2e-stale"), timeout=5,
                             what="DELETED for the expired identity lease")
            self.assertLess(time.time() - t_created, 5.5)
            d = deleted_events(ev, "kube-apiserver-e2e-stale")[0]
            self.assertEqual(d["object"]["spec"]["holderIdentity"], "e2e-holder")
            self.assertGreaterEqual(int(d["object"]["metadata"]["resourceVersion"]),
                                    int(stale["metadata"]["resourceVersion"]))
            self.assertIsNone(get_obj(s, leases_path(KUBE_SYSTEM, "kube-apiserver-e2e-stale")))
            time.sleep(2.5)  # two more collector rounds
            for ns, name in ((KUBE_SYSTEM, "plain-old"), (KUBE_SYSTEM, "other-component"),
                             ("default", "labelled-in-default"), (KUBE_SYSTEM, own)):
                with self.subTest(lease=name):
                    self.assertIsNotNone(get_obj(s, leases_path(ns, name)),
                                         "%s/%s must not be garbage-collected" % (ns, name))
            with ws.lock:
                events = list(ws.events)
            with wsd.lock:
                events_default = list(wsd.events)
            self.assertEqual(len(deleted_events(events, "kube-apiserver-e2e-stale")), 1, events)
            self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in events
                              if e["type"] == "DELETED"],
                             [("DELETED", "kube-apiserver-e2e-stale")])
            self.assertEqual([e["type"] for e in events_default], ["ADDED"])
            # Leases that never expire have no sk_ttl row ("one row per object that expires").
            self.assertEqual(ttl_rows(s, "lease", KUBE_SYSTEM, "plain-old"), [])
            self.assertEqual(ttl_rows(s, "lease", "default", "labelled-in-default"), [])
        finally:
            ws.close()
            wsd.close()

    def test_renewed_lease_survives_then_expires(self):
        s = self.server
        name, duration = "kube-apiserver-e2e-renewed", 2
        label = {COMPONENT_LABEL: "kube-apiserver", HOSTNAME_LABEL: "e2e-renewing-host"}
        ws = WatchStream(s, leases_path(KUBE_SYSTEM) + "?watch=true&resourceVersion="
                         + list_rv(s, leases_path(KUBE_SYSTEM)))
        try:
            lease = self.create(KUBE_SYSTEM, name, time.time(), duration, label)
            end = time.time() + 2.5 * duration
            renewals = 0
            while time.time() < end:
                time.sleep(0.4)
                lease["spec"]["renewTime"] = microtime(time.time())
                r = s.request("PUT", leases_path(KUBE_SYSTEM, name), lease)
                self.assertEqual(r.status, 200, "renewal %d of a live lease: %r" % (renewals, r))
                lease = r.json()
                renewals += 1
            last_renew = parse_time(lease["spec"]["renewTime"])
            with ws.lock:
                self.assertEqual(deleted_events(ws.events, name), [],
                                 "a lease renewed within its duration was collected")
            gone, _ = poll_until_gone(s, leases_path(KUBE_SYSTEM, name),
                                      deadline=last_renew + duration + 3)
            self.assertGreaterEqual(gone, last_renew + duration - 0.05,
                                    "collected before renewTime + leaseDurationSeconds")
            ev = ws.wait_for(lambda ev: deleted_events(ev, name), timeout=5, what="DELETED")
            self.assertEqual(len(deleted_events(ev, name)), 1)
        finally:
            ws.close()


class EventTTL(ServerTestCase, unittest.TestCase):
    """core/v1 Events expire --event-ttl seconds after their last write, across restarts."""

    TTL = 6

    @classmethod
    def setUpClass(cls):
        cls.server = Server("EventTTL", extra_args=identity_args(event_ttl=cls.TTL))
        cls.server.start()

    def ttl_row(self, name, rv):
        rows = ttl_rows(self.server, "event", "default", name)
        self.assertEqual(len(rows), 1, "one sk_ttl row for event %s: %r" % (name, rows))
        self.assertEqual(rows[0][1], int(rv), "sk_ttl.rev vs the event's resourceVersion")
        return rows[0][2]

    def test_event_expires_on_time_across_restart(self):
        s, name = self.server, "ttl-restart"
        t0 = time.time()
        r = s.request("POST", events_path("default"), event_body(name, "default", "created"))
        t0_after = time.time()
        self.assertEqual(r.status, 201, r)
        exp_ms = self.ttl_row(name, r.json()["metadata"]["resourceVersion"])
        self.assertGreaterEqual(exp_ms, (t0 + self.TTL) * 1000 - 50)
        self.assertLessEqual(exp_ms, (t0_after + self.TTL) * 1000 + 50)
        s.stop()
        time.sleep(max(0.0, t0 + 3.5 - time.time()))
        t_restart = time.time()
        s.start()
        self.assertLess(time.time(), t0 + self.TTL - 0.5,
                        "the restart took too long for the still-present check")
        self.assertIsNotNone(get_obj(s, events_path("default", name)),
                             "the event vanished at the restart, before its TTL")
        self.assertEqual(self.ttl_row(name, r.json()["metadata"]["resourceVersion"]), exp_ms,
                         "a restart must neither forget nor change the stored expiry")
        gone, _ = poll_until_gone(s, events_path("default", name), deadline=t0_after + self.TTL + 3)
        self.assertGreaterEqual(gone, exp_ms / 1000.0 - 0.05, "collected before its expiry")
        self.assertLess(gone, t_restart + self.TTL,
                        "gone only after restart + ttl: the restart extended the expiry")

    def test_updated_event_lives_until_last_write_plus_ttl(self):
        s, name = self.server, "ttl-updated"
        r = s.request("POST", "/api/v1/namespaces/default/configmaps",
                      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ttl-keep"},
                       "data": {"k": "v"}})
        self.assertEqual(r.status, 201, r)
        ws = WatchStream(s, events_path("default") + "?watch=true&resourceVersion="
                         + list_rv(s, events_path("default")))
        try:
            t0 = time.time()
            r = s.request("POST", events_path("default"), event_body(name, "default", "first"))
            self.assertEqual(r.status, 201, r)
            time.sleep(max(0.0, t0 + 3 - time.time()))
            t1 = time.time()
            r = s.request("PATCH", events_path("default", name),
                          {"message": "second", "count": 2}, headers=MERGE)
            t1_after = time.time()
            self.assertEqual(r.status, 200, r)
            exp_ms = self.ttl_row(name, r.json()["metadata"]["resourceVersion"])
            self.assertGreaterEqual(exp_ms, (t1 + self.TTL) * 1000 - 50,
                                    "the expiry must move to last write + ttl")
            self.assertLessEqual(exp_ms, (t1_after + self.TTL) * 1000 + 50)
            # Past the first write's expiry (plus a collector round): still there.
            time.sleep(max(0.0, t0 + self.TTL + 1.5 - time.time()))
            got = get_obj(s, events_path("default", name))
            self.assertIsNotNone(got, "collected at first write + ttl although updated since")
            self.assertEqual(got["message"], "second")
            gone, _ = poll_until_gone(s, events_path("default", name),
                                      deadline=t1_after + self.TTL + 3)
            self.assertGreaterEqual(gone, exp_ms / 1000.0 - 0.05, "collected before its expiry")
            ev = ws.wait_for(lambda ev: deleted_events(ev, name), timeout=5,
                             what="DELETED for the expired event")
            self.assertEqual([e["type"] for e in ev if e["object"]["metadata"]["name"] == name],
                             ["ADDED", "MODIFIED", "DELETED"])
        finally:
            ws.close()
        # Other kinds never expire.
        self.assertIsNotNone(get_obj(s, "/api/v1/namespaces/default/configmaps/ttl-keep"))
        self.assertEqual(sql(s, "SELECT count(*) FROM sk_ttl WHERE name = 'ttl-keep'"), [["0"]])


# --- health ---------------------------------------------------------------------

class Health(ServerTestCase, unittest.TestCase):
    """Default flags: health checks, default hostname and lease duration."""

    def verbose(self, path, passed):
        r = self.server.request("GET", path + "?verbose", headers={"Accept": "*/*"})
        self.assertEqual(r.status, 200, r)
        lines = [l.strip() for l in r.body.decode().splitlines() if l.strip()]
        self.assertEqual(lines[-1] if lines else None, passed, r.body.decode())
        for check in IDENTITY_CHECKS:
            self.assertIn(check, lines[:-1], "%s?verbose lacks %r:\n%s"
                          % (path, check, r.body.decode()))
        for l in lines[:-1]:
            self.assertRegex(l, r"^\[\+\][\w./-]+ ok$", "%s?verbose:\n%s" % (path, r.body.decode()))

    def test_healthz_verbose(self):
        self.verbose("/healthz", "healthz check passed")

    def test_readyz_verbose(self):
        self.verbose("/readyz", "readyz check passed")

    def test_default_hostname_and_duration(self):
        host = socket.gethostname()
        name = identity_lease_name(host)
        lease = wait_until(lambda: get_obj(self.server, leases_path(KUBE_SYSTEM, name)),
                           timeout=12, what="identity lease for gethostname() %r" % host)
        self.assertEqual(lease["metadata"]["labels"].get(HOSTNAME_LABEL), host)
        self.assertEqual(lease["spec"].get("leaseDurationSeconds"), 3600)
        rows = ttl_rows(self.server, "lease", KUBE_SYSTEM, name)
        self.assertEqual(len(rows), 1, rows)

    def test_help_lists_flags(self):
        p = subprocess.run([CONFIG.binary, "--help"], capture_output=True, text=True, timeout=30)
        out = p.stdout + p.stderr
        for flag in ("--identity-hostname", "--identity-lease-duration",
                     "--identity-lease-renew-interval", "--event-ttl"):
            self.assertIn(flag, out)


# --- several instances on one PostgreSQL ------------------------------------------

class IdentityAcrossInstances(unittest.TestCase):

    def setUp(self):
        if CONFIG.backend != "postgres":
            self.skipTest("needs a shared PostgreSQL")
        self.servers = []

    def tearDown(self):
        for s in reversed(self.servers):
            s.cleanup()

    def pair(self, args_a, args_b):
        a = Server("ident-a", extra_args=args_a)
        self.servers.append(a)
        b = Server("ident-b", db_url=a.db_url, extra_args=args_b)
        self.servers.append(b)
        a.start()
        b.start()
        return a, b

    def test_both_leases_visible_and_dead_instance_collected_once(self):
        # The victim has a short lease; the survivor a long one, so only the victim's expires.
        a, b = self.pair(identity_args("e2e-host-a", 2, 1), identity_args("e2e-host-b", 10, 1))
        na, nb = identity_lease_name("e2e-host-a"), identity_lease_name("e2e-host-b")
        for s in (a, b):
            got = wait_until(lambda: (lambda l: l if set(l) == {na, nb} else None)(
                identity_leases(s)), timeout=5, what="both identity leases via %s" % s.name)
            self.assertEqual(got[na]["metadata"]["labels"][HOSTNAME_LABEL], "e2e-host-a")
            self.assertEqual(got[nb]["metadata"]["labels"][HOSTNAME_LABEL], "e2e-host-b")
            self.assertNotEqual(got[na]["spec"]["holderIdentity"], got[nb]["spec"]["holderIdentity"])
        ws = WatchStream(b, leases_path(KUBE_SYSTEM) + "?watch=true&resourceVersion="
                         + list_rv(b, leases_path(KUBE_SYSTEM)))
        try:
            # Both collectors see an expired lease; it is deleted exactly once.
            label = {COMPONENT_LABEL: "kube-apiserver", HOSTNAME_LABEL: "e2e-gone"}
            r = a.request("POST", leases_path(KUBE_SYSTEM),
                          lease_body("kube-apiserver-e2e-shared", KUBE_SYSTEM, "x",
                                     time.time() - 10, 1, label))
            self.assertEqual(r.status, 201, r)
            ws.wait_for(lambda ev: deleted_events(ev, "kube-apiserver-e2e-shared"), timeout=5,
                        what="DELETED of the expired shared lease")

            a.kill()  # no shutdown hook can touch its lease
            victim = get_obj(b, leases_path(KUBE_SYSTEM, na))
            self.assertIsNotNone(victim, "the killed instance's lease vanished at once")
            last_renew = parse_time(victim["spec"]["renewTime"])
            ws.wait_for(lambda ev: deleted_events(ev, na),
                        timeout=max(1.0, last_renew + 2 + 4 - time.time()),
                        what="DELETED of the killed instance's lease on the survivor")
            time.sleep(2.5)  # more collector rounds: no second delete, no resurrection
            with ws.lock:
                events = list(ws.events)
            self.assertEqual(len(deleted_events(events, "kube-apiserver-e2e-shared")), 1)
            self.assertEqual(len(deleted_events(events, na)), 1, events)
            self.assertEqual(deleted_events(events, nb), [], "the survivor's own lease was deleted")
            after = [e["type"] for e in events if e["object"]["metadata"]["name"] == na]
            self.assertEqual(after[-1], "DELETED", after)
            self.assertIsNone(get_obj(b, leases_path(KUBE_SYSTEM, na)))
            own = get_obj(b, leases_path(KUBE_SYSTEM, nb))
            self.assertIsNotNone(own)
            self.assertGreater(parse_time(own["spec"]["renewTime"]), time.time() - 3)
            self.assertEqual(list(identity_leases(b)), [nb])
        finally:
            ws.close()

    def test_leader_election_across_instances(self):
        a, b = self.pair([], [])
        run_election(self, a, b, "le-cross")


# --- leader election over ordinary Leases -------------------------------------------

def _now_dt():
    t = datetime.datetime.now(datetime.timezone.utc)
    # The client serializes datetimes with isoformat(), which drops a zero
    # fraction; MicroTime wants six digits.
    return t if t.microsecond else t.replace(microsecond=1)


class Elector(threading.Thread):
    """client-go style leader election on one Lease with the kubernetes Python client."""

    def __init__(self, ident, kubeconfig, name, ns="default", duration=2, retry=0.2,
                 barrier=None):
        super().__init__(daemon=True)
        from kubernetes import client, config
        self.k = client
        self.api_client = config.new_client_from_config(config_file=kubeconfig)
        self.api = client.CoordinationV1Api(self.api_client)
        self.me, self.lease_name, self.ns = ident, name, ns
        self.duration, self.retry, self.barrier = duration, retry, barrier
        self.stopping = threading.Event()
        self.paused = threading.Event()
        self.step_lock = threading.Lock()
        self.leader_until = 0.0  # the renewTime it last wrote + duration
        self.last_renew = None
        self.conflicts = 0
        self.acquired = 0
        self.renewals = 0
        self.errors = []

    def is_leader(self, now=None):
        return (now or time.time()) < self.leader_until

    def _won(self, t):
        self.last_renew = t.timestamp()
        self.leader_until = self.last_renew + self.duration

    def step(self):
        from kubernetes.client.rest import ApiException
        k = self.k
        t = _now_dt()
        try:
            lease = self.api.read_namespaced_lease(self.lease_name, self.ns)
        except ApiException as e:
            if e.status != 404:
                raise
            body = k.V1Lease(metadata=k.V1ObjectMeta(name=self.lease_name),
                             spec=k.V1LeaseSpec(holder_identity=self.me,
                                                lease_duration_seconds=self.duration,
                                                acquire_time=t, renew_time=t,
                                                lease_transitions=0))
            try:
                self.api.create_namespaced_lease(self.ns, body)
            except ApiException as e:
                if e.status != 409:
                    raise
                self.conflicts += 1
                return
            self.acquired += 1
            self._won(t)
            return
        spec = lease.spec
        if spec.holder_identity == self.me:
            spec.renew_time = t
            try:
                self.api.replace_namespaced_lease(self.lease_name, self.ns, lease)
            except ApiException as e:
                if e.status != 409:
                    raise
                self.conflicts += 1
                self.leader_until = 0.0
                return
            self.renewals += 1
            self._won(t)
            return
        self.leader_until = 0.0
        renew = spec.renew_time.timestamp() if spec.renew_time else 0.0
        duration = spec.lease_duration_seconds or self.duration
        if spec.holder_identity and renew + duration >= t.timestamp():
            return  # held and not expired
        spec.holder_identity = self.me
        spec.acquire_time = t
        spec.renew_time = t
        spec.lease_duration_seconds = self.duration
        spec.lease_transitions = (spec.lease_transitions or 0) + 1
        try:
            self.api.replace_namespaced_lease(self.lease_name, self.ns, lease)
        except ApiException as e:
            if e.status != 409:
                raise
            self.conflicts += 1
            return
        self.acquired += 1
        self._won(t)

    def run(self):
        if self.barrier is not None:
            self.barrier.wait(10)
        while not self.stopping.is_set():
            with self.step_lock:
                if not self.paused.is_set():
                    try:
                        self.step()
                    except Exception as e:  # noqa: BLE001 - reported by the test
                        self.errors.append(repr(e))
            self.stopping.wait(self.retry)

    def pause(self):
        """Stop renewing; returns once no step is in flight."""
        self.paused.set()
        with self.step_lock:
            pass

    def stop(self):
        self.stopping.set()
        self.join(10)
        self.api_client.close()


def run_election(tc, server_a, server_b, lease_name, duration=2):
    """Two electors (on server_a and server_b) compete for default/<lease_name>."""
    path = leases_path("default", lease_name)
    barrier = threading.Barrier(2)
    electors = [Elector("elector-a", server_a.kubeconfig, lease_name, duration=duration,
                        barrier=barrier),
                Elector("elector-b", server_b.kubeconfig, lease_name, duration=duration,
                        barrier=barrier)]
    by_id = {e.me: e for e in electors}

    def sample():
        lease = get_obj(server_a, path)
        now = time.time()
        leaders = [e.me for e in electors if e.is_leader(now)]
        return (lease["spec"].get("holderIdentity") if lease else None), leaders, lease

    try:
        for e in electors:
            e.start()
        wait_until(lambda: any(e.is_leader() for e in electors), timeout=5, what="a leader")
        holders, renews = set(), []
        end = time.time() + 2 * duration
        while time.time() < end:
            holder, leaders, lease = sample()
            tc.assertIn(holder, by_id, "holder %r is not an elector" % holder)
            tc.assertLessEqual(len(leaders), 1, "two electors act as leader: %r" % leaders)
            tc.assertEqual(leaders, [holder], "exactly one leader, and it is the holder")
            holders.add(holder)
            renews.append(parse_time(lease["spec"]["renewTime"]))
            time.sleep(0.1)
        tc.assertEqual(len(holders), 1, "leadership flapped while the holder renewed: %r" % holders)
        tc.assertGreater(renews[-1] - renews[0], duration, "the holder did not keep renewing")
        leader = by_id[holders.pop()]
        other = [e for e in electors if e is not leader][0]
        before = get_obj(server_a, path)

        leader.pause()
        last_renew = leader.last_renew
        deadline = last_renew + duration + 2

        def taken_over():
            holder, leaders, lease = sample()
            tc.assertLessEqual(len(leaders), 1, "two electors act as leader: %r" % leaders)
            return lease if holder == other.me else None
        after = wait_until(taken_over, timeout=max(0.5, deadline - time.time()), interval=0.05,
                           what="%s to take over after %s stopped renewing"
                           % (other.me, leader.me))
        tc.assertLessEqual(time.time(), deadline + 0.5)
        tc.assertGreaterEqual(parse_time(after["spec"]["acquireTime"]),
                              last_renew + duration - 0.01, "taken over before the lease expired")
        tc.assertEqual(after["spec"].get("leaseTransitions", 0),
                       before["spec"].get("leaseTransitions", 0) + 1)
        tc.assertFalse(leader.is_leader())
        # The new holder keeps it.
        end = time.time() + 1.5
        while time.time() < end:
            holder, leaders, _ = sample()
            tc.assertEqual((holder, leaders), (other.me, [other.me]))
            time.sleep(0.1)
    finally:
        for e in electors:
            e.stop()
    conflicts = sum(e.conflicts for e in electors)
    sys.stderr.write("\n[%s %s] leader election: %d conflicts (409), acquisitions %r, "
                     "renewals %r\n" % (CONFIG.backend, lease_name, conflicts,
                                        [e.acquired for e in electors],
                                        [e.renewals for e in electors]))
    for e in electors:
        tc.assertEqual(e.errors, [], "%s saw errors other than 409" % e.me)
    tc.assertEqual(sum(e.acquired for e in electors), 2, "one initial acquisition + one takeover")
    # An ordinary (unlabelled) lease is never collected, expired or not.
    time.sleep(duration + 2)
    tc.assertIsNotNone(get_obj(server_a, path), "an expired ordinary Lease was collected")
    return conflicts


class LeaderElection(ServerTestCase, unittest.TestCase):

    def test_resource_version_preconditions(self):
        s = self.server
        body = lease_body("le-raw", "default", "one", time.time(), 5)
        r = s.request("POST", leases_path("default"), body)
        self.assertEqual(r.status, 201, r)
        v1 = r.json()
        self.assertEqual(s.request("POST", leases_path("default"), body).status, 409)
        upd = dict(v1, spec=dict(v1["spec"], holderIdentity="two", renewTime=microtime(time.time())))
        r = s.request("PUT", leases_path("default", "le-raw"), upd)
        self.assertEqual(r.status, 200, r)
        self.assertGreater(int(r.json()["metadata"]["resourceVersion"]),
                           int(v1["metadata"]["resourceVersion"]))
        stale = dict(v1, spec=dict(v1["spec"], holderIdentity="three"))
        r = s.request("PUT", leases_path("default", "le-raw"), stale)
        self.assertEqual(r.status, 409, r)
        self.assertEqual(r.json().get("reason"), "Conflict", r)
        self.assertEqual(get_obj(s, leases_path("default", "le-raw"))["spec"]["holderIdentity"], "two")

    def test_two_electors(self):
        run_election(self, self.server, self.server, "le-test")


if __name__ == "__main__":
    unittest.main()
