"""Writes whose COMMIT outcome the server could not hear, and a database
that is down (PostgreSQL only: the faults are PostgreSQL's).

AmbiguousCommits: CAS writers (PUT with the resourceVersion they last read,
each write carrying a unique marker in data), a creator and deleter of
objects of their own, and a watch that resumes from the last revision it
saw, all while another thread cuts every sqlkube connection
(pg_terminate_backend) about once a second. A connection cut after COMMIT
reached the server but before its answer came back leaves the write's
outcome unknown to the writer; the server must find it out before it
answers. Afterwards every answer is checked against sk_history, read with
psql: no 4xx for a write whose marker (or tombstone) is stored, every 2xx
write stored at the revision it was answered with, and the watch saw every
stored revision once, in order. The server's
sqlkube_store_commits_resolved_total says how many ambiguous commits it
met and what it found.

DatabaseDown: PostgreSQL stopped (pg_ctl stop) -> reads and writes answer
503 ServiceUnavailable with a Retry-After header (client-go retries those),
and the same server serves both again once PostgreSQL is back.

StartedBeforeDatabase: sqlkube started while its PostgreSQL is down stays
up and waits for it (capped exponential backoff, each attempt logged with
its reason): /livez 200, /readyz 500 naming the reason, every other request
503 with Retry-After; SIGTERM while it waits exits 0. Once PostgreSQL is
started it is ready within the backoff cap plus slack, and serves writes.
ConfigurationErrors: what waiting cannot fix (an SQLite file that cannot be
opened, a URL libpq cannot parse) still exits 1 at once, saying why.

Why: a client takes 409 as "not applied" and 404 on delete as "already
gone"; answering those for a write that is stored makes it apply its change
twice (a lost update). A 5xx with Retry-After is the only honest answer to
an outcome that cannot be known.
"""

import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import CONFIG, PG_SH, Server, free_port, metric, sql, wait_until  # noqa: E402

NS = "faults"
CAS_WRITERS = 4
FAULT_SECONDS = 16
KILL_EVERY = 0.9
# The server's wait between attempts to reach its database: 0.1 s doubling
# to this cap (README, PostgreSQL).
STORE_RETRY_CAP = 5.0
# What starting the rest may take on top once the database answers
# (migrations of a new database, the ASan build, a busy machine).
READY_SLACK = 10.0

postgres_only = unittest.skipUnless(CONFIG.backend == "postgres", "PostgreSQL faults")


def cm(name, marker):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NS}, "data": {"marker": marker}}


def path(name=""):
    return "/api/v1/namespaces/%s/configmaps%s" % (NS, "/" + name if name else "")


def psql(url, query):
    return subprocess.run(["psql", url, "-X", "-q", "-A", "-t", "-c", query],
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)


class Faults:
    """Runs the fault threads against one server, recording every answer."""

    def __init__(self, srv, rv0):
        self.srv = srv
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.puts = []     # (marker, status, rv or None)
        self.creates = []  # (name, marker, status, rv or None)
        self.deletes = []  # (name, status, rv or None)
        self.events = []   # watch events (type, rv, name, marker)
        self.kills = 0
        self.watch_rv = rv0
        self.errors = []

    def request(self, method, p, body=None):
        """(status, parsed body); status 0 for a transport failure."""
        try:
            r = self.srv.request(method, p, body=body, timeout=30)
        except (OSError, http.client.HTTPException):
            return 0, None
        try:
            return r.status, r.json()
        except ValueError:
            return r.status, None

    def note(self, what, row):
        with self.lock:
            getattr(self, what).append(row)

    def cas_writer(self, w):
        name, n, obj = "cas-%d" % w, 0, None
        while not self.stop.is_set():
            if obj is None:
                st, obj = self.request("GET", path(name))
                if st != 200:
                    obj = None
                    time.sleep(0.05)
                    continue
            n += 1
            marker = "w%d-%d" % (w, n)
            obj["data"] = {"marker": marker}
            st, body = self.request("PUT", path(name), obj)
            rv = body["metadata"]["resourceVersion"] if st == 200 else None
            self.note("puts", (marker, st, rv))
            obj = body if st == 200 else None

    def creator(self):
        n = 0
        while not self.stop.is_set():
            n += 1
            name, marker = "made-%d" % n, "c-%d" % n
            st, body = self.request("POST", path(), cm(name, marker))
            self.note("creates", (name, marker, st,
                                  body["metadata"]["resourceVersion"] if st == 201 else None))
            if st != 201:
                continue
            # Each object is deleted once, by this thread alone: a 404 can
            # only be the delete's own earlier commit answered wrongly.
            st, body = self.request("DELETE", path(name))
            rv = body.get("metadata", {}).get("resourceVersion") if st == 200 and body else None
            self.note("deletes", (name, st, rv))

    def killer(self):
        deadline = time.monotonic() + FAULT_SECONDS
        while time.monotonic() < deadline:
            time.sleep(KILL_EVERY)
            p = psql(self.srv.db_url, "SELECT count(pg_terminate_backend(pid)) FROM"
                     " pg_stat_activity WHERE datname = current_database()"
                     " AND pid <> pg_backend_pid()")
            if p.returncode == 0:
                self.kills += 1
        self.stop.set()

    def watcher(self):
        """A watch that resumes from the last revision it saw, as an informer's."""
        while True:
            done = self.stop.is_set()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=30)
                conn.request("GET", path() + "?watch=true&allowWatchBookmarks=true"
                             "&timeoutSeconds=%d&resourceVersion=%s"
                             % (3 if done else 2, self.watch_rv))
                resp = conn.getresponse()
                if resp.status != 200:
                    self.errors.append("watch answered %d" % resp.status)
                    resp.read()
                    time.sleep(0.2)
                    continue
                for line in resp:
                    if not line.strip():
                        continue
                    ev = json.loads(line)
                    md = ev["object"]["metadata"]
                    if ev["type"] == "ERROR":
                        self.errors.append("watch error %r" % ev["object"])
                        break
                    self.watch_rv = md["resourceVersion"]
                    if ev["type"] != "BOOKMARK":
                        self.note("events", (ev["type"], int(md["resourceVersion"]), md["name"],
                                             ev["object"].get("data", {}).get("marker")))
            except (OSError, http.client.HTTPException, ValueError):
                time.sleep(0.1)
            finally:
                conn.close()
            if done:
                return


@postgres_only
class AmbiguousCommits(unittest.TestCase):

    def test_every_answer_matches_what_is_stored(self):
        srv = Server("AmbiguousCommits")
        self.addCleanup(srv.cleanup)
        srv.start()
        r = srv.request("POST", "/api/v1/namespaces",
                        body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        self.assertEqual(r.status, 201, r)
        for w in range(CAS_WRITERS):
            r = srv.request("POST", path(), body=cm("cas-%d" % w, "w%d-0" % w))
            self.assertEqual(r.status, 201, r)
        rv0 = srv.request("GET", path()).json()["metadata"]["resourceVersion"]

        f = Faults(srv, rv0)
        threads = [threading.Thread(target=f.cas_writer, args=(w,)) for w in range(CAS_WRITERS)]
        threads += [threading.Thread(target=f.creator), threading.Thread(target=f.killer)]
        watcher = threading.Thread(target=f.watcher)
        for t in threads + [watcher]:
            t.start()
        for t in threads:
            t.join(FAULT_SECONDS + 120)
        # The last writes are in; the watch catches up, then ends.
        wait_until(lambda: srv.request("GET", path()).status == 200, what="reads after faults")
        watcher.join(60)
        self.assertFalse(watcher.is_alive(), "the watch did not end")

        stored = {}  # marker -> (rev, deleted)
        tombstones = {}  # name -> rev
        revs = []
        for rev, name, deleted, marker in sql(
                srv, "SELECT rev, name, deleted, value::json->'data'->>'marker' FROM sk_history"
                     " WHERE namespace = '%s' AND resource LIKE '%%configmaps' AND rev > %s"
                     " ORDER BY rev" % (NS, rv0)):
            revs.append(int(rev))
            if deleted == "t":
                tombstones[name] = int(rev)
            else:
                stored[marker] = int(rev)

        bad, lost = [], []
        for marker, st, rv in f.puts:
            if 400 <= st < 500 and marker in stored:
                bad.append("PUT %s answered %d but stored at %d" % (marker, st, stored[marker]))
            if st == 200 and stored.get(marker) != int(rv):
                lost.append("PUT %s answered 200 at %s, stored at %s" % (marker, rv,
                                                                          stored.get(marker)))
        for name, marker, st, rv in f.creates:
            if 400 <= st < 500 and marker in stored:
                bad.append("create %s answered %d but stored at %d" % (name, st, stored[marker]))
            if st == 201 and stored.get(marker) != int(rv):
                lost.append("create %s answered 201 at %s, stored at %s" % (name, rv,
                                                                             stored.get(marker)))
        for name, st, rv in f.deletes:
            if 400 <= st < 500 and name in tombstones:
                bad.append("delete %s answered %d but its tombstone is at %d"
                           % (name, st, tombstones[name]))
            if st == 200 and name not in tombstones:
                lost.append("delete %s answered 200, no tombstone" % name)

        statuses = {}
        for row in f.puts + f.creates + f.deletes:
            st = row[-2]
            statuses[st] = statuses.get(st, 0) + 1
        resolved = {}
        for o in ("committed", "not_committed", "unknown"):
            try:
                resolved[o] = metric(srv, 'sqlkube_store_commits_resolved_total{outcome="%s"}' % o)
            except AssertionError:  # a server without the counter
                pass
        print("\n  %d kills; %d PUTs, %d creates, %d deletes; answers %r; ambiguous commits"
              " resolved %r; 4xx for a stored write: %d; acknowledged but not stored: %d"
              % (f.kills, len(f.puts), len(f.creates), len(f.deletes), statuses, resolved,
                 len(bad), len(lost)), file=sys.stderr)
        self.assertGreaterEqual(f.kills, FAULT_SECONDS // 2, "the faults did not run")
        self.assertGreater(statuses.get(200, 0), 50, "too few writes got through to judge")
        self.assertEqual(bad, [], "a definite 4xx for a write that is stored")
        self.assertEqual(lost, [], "an acknowledged write that is not stored")

        seen = [rev for _, rev, _, _ in f.events]
        self.assertEqual(f.errors, [])
        self.assertEqual(seen, sorted(set(seen)), "watch revisions out of order or repeated")
        self.assertEqual(seen, revs, "the watch missed stored revisions (or saw unstored ones)")


def pg_ctl(action):
    """Stops or starts the test PostgreSQL through tests/support/pg.sh."""
    p = subprocess.run(["bash", "-c", 'source "$1" && pg_%s' % action, "bash", PG_SH],
                       capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, "pg_%s: %s %s" % (action, p.stdout, p.stderr)


@postgres_only
@unittest.skipUnless(os.environ.get("SK_PG_DIR"), "needs the PostgreSQL of tests/support/pg.sh")
class DatabaseDown(unittest.TestCase):

    def test_503_with_retry_after_then_recovers(self):
        srv = Server("DatabaseDown")
        self.addCleanup(srv.cleanup)
        srv.start()
        r = srv.request("POST", "/api/v1/namespaces",
                        body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        self.assertEqual(r.status, 201, r)
        obj = srv.request("POST", path(), body=cm("kept", "k")).json()

        pg_ctl("halt")
        try:
            obj["data"] = {"marker": "while-down"}
            for method, p, body in (("GET", path("kept"), None), ("GET", path(), None),
                                    ("POST", path(), cm("new", "n")),
                                    ("PUT", path("kept"), obj),
                                    ("DELETE", path("kept"), None)):
                with self.subTest(method=method, path=p):
                    r = srv.request(method, p, body=body)
                    self.assertEqual(r.status, 503, r)
                    self.assertEqual(r.json()["reason"], "ServiceUnavailable")
                    self.assertGreaterEqual(int(r.headers.get("retry-after", "0")), 1, r.headers)
        finally:
            pg_ctl("resume")

        r = wait_until(lambda: (lambda r: r if r.status == 200 else None)(
            srv.request("PUT", path("kept"), body=obj)), what="writes after the restart")
        self.assertEqual(r.json()["data"], {"marker": "while-down"})
        self.assertEqual(srv.request("GET", path("kept")).json()["data"], {"marker": "while-down"})


@postgres_only
@unittest.skipUnless(os.environ.get("SK_PG_DIR"), "needs the PostgreSQL of tests/support/pg.sh")
class StartedBeforeDatabase(unittest.TestCase):

    def assert_unavailable(self, r):
        self.assertEqual(r.status, 503, r)
        self.assertEqual(r.json()["reason"], "ServiceUnavailable", r)
        self.assertGreaterEqual(int(r.headers.get("retry-after", "0")), 1, r.headers)

    def test_waits_for_the_database_then_serves(self):
        srv = Server("StartedBeforeDatabase")  # its database is made while PostgreSQL is up
        self.addCleanup(srv.cleanup)
        early = Server("StoppedWhileWaiting")
        self.addCleanup(early.cleanup)
        where = "127.0.0.1:%d" % urllib.parse.urlsplit(srv.db_url).port
        pg_ctl("halt")
        try:
            srv.start(wait="/livez")
            early.start(wait="/livez")
            # Long enough for the waits to reach the cap (0.1 + ... + 3.2 s).
            time.sleep(7.5)
            self.assertIsNone(srv.proc.poll(), "sqlkube exited while PostgreSQL was down")
            self.assertEqual(srv.request("GET", "/livez").status, 200)
            r = srv.request("GET", "/readyz?verbose")
            self.assertEqual(r.status, 500, r)
            self.assertRegex(r.body.decode(), r"\[-\]storage failed: cannot connect to PostgreSQL"
                             r" at %s: [Cc]onnection refused\n" % re.escape(where))
            self.assertEqual(srv.request("GET", "/readyz").status, 500)
            self.assert_unavailable(srv.request("GET", "/api/v1/namespaces"))
            self.assert_unavailable(srv.request(
                "POST", "/api/v1/namespaces",
                body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
            self.assert_unavailable(srv.request("GET", "/metrics"))

            # SIGTERM while waiting: a clean exit, at once.
            t0 = time.monotonic()
            self.assertEqual(early.stop(), 0, early.log_tail())
            self.assertLess(time.monotonic() - t0, 3.0, "SIGTERM took long to end the wait")
            with open(early.log_path) as f:
                self.assertIn("received SIGTERM, shutting down", f.read())

            with open(srv.log_path) as f:
                log = f.read()
            attempts = re.findall(r"the store is not up \(attempt (\d+)\): cannot connect to"
                                  r" PostgreSQL at %s: [Cc]onnection refused; trying again in"
                                  r" ([0-9.]+) s" % re.escape(where), log)
            self.assertGreaterEqual(len(attempts), 6, log)
            self.assertEqual([int(a) for a, _ in attempts], list(range(1, len(attempts) + 1)))
            waits = [float(w) for _, w in attempts]
            self.assertEqual(waits[:6], [0.1, 0.2, 0.4, 0.8, 1.6, 3.2], log)
            self.assertEqual(set(waits[6:]), {STORE_RETRY_CAP}, log)
        finally:
            pg_ctl("resume")
        t0 = time.monotonic()
        srv.wait_ready(timeout=STORE_RETRY_CAP + READY_SLACK)
        print("\n  ready %.1f s after PostgreSQL started" % (time.monotonic() - t0),
              file=sys.stderr)
        with open(srv.log_path) as f:
            self.assertRegex(f.read(), r"the store is up \(attempt \d+\)")
        r = srv.request("POST", "/api/v1/namespaces",
                        body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        self.assertEqual(r.status, 201, r)
        r = srv.request("POST", path(), body=cm("late", "l"))
        self.assertEqual(r.status, 201, r)
        r = srv.request("GET", path("late"))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["data"], {"marker": "l"})


class ConfigurationErrors(unittest.TestCase):
    """Nothing to wait for: exit 1 at once, one line saying why."""

    def serve(self, db):
        data = os.path.join(CONFIG.ensure_work_dir(), "ConfigurationErrors-%d" % free_port())
        t0 = time.monotonic()
        p = subprocess.run([CONFIG.binary, "serve", "--plain-http", "--listen",
                            "127.0.0.1:%d" % free_port(), "--data-dir", data, "--db", db],
                           capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        return p, time.monotonic() - t0

    def test_sqlite_file_that_cannot_be_opened(self):
        p, took = self.serve("sqlite:/nonexistent-dir/sub/sqlkube.db")
        self.assertEqual(p.returncode, 1, p)
        self.assertRegex(p.stderr, r"sqlkube: cannot open SQLite database /nonexistent-dir/")
        self.assertNotIn("the store is not up", p.stderr)
        self.assertLess(took, 10.0)

    def test_malformed_postgres_url(self):
        p, took = self.serve("postgres://127.0.0.1:5432/db?nosuchoption=1")
        self.assertEqual(p.returncode, 1, p)
        self.assertRegex(p.stderr, r"sqlkube: invalid PostgreSQL URL: .*nosuchoption")
        self.assertNotIn("the store is not up", p.stderr)
        self.assertLess(took, 10.0)


if __name__ == "__main__":
    unittest.main()
