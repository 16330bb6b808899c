"""Test harness: start, probe and stop real sqlkube server processes.

Used by the end-to-end suite (tests/e2e/) to run the built `sqlkube serve`
binary the way a user would: a temp data dir, a free 127.0.0.1 port, an
optional PostgreSQL database, its stdout/stderr captured to a log file that
is shown when a test fails. It also wraps kubectl (always with the
server's own kubeconfig and a private discovery cache, so a port reused by an
earlier run can never serve stale discovery) and raw HTTP requests.

Configuration is process-global (CONFIG) and set by tests/e2e/run.py:
  CONFIG.binary   path of the sqlkube binary (env SQLKUBE_BIN, default
                  build/sqlkube in the repo)
  CONFIG.backend  "sqlite" or "postgres"
  CONFIG.pg_url   server URL of a running PostgreSQL (postgres backend only);
                  every server start gets a fresh database from pg_create_db
                  (tests/support/pg.sh).
  CONFIG.work_dir root for data dirs and logs of this run

Servers start with --plain-http (trusted, unauthenticated HTTP on 127.0.0.1)
unless a test asks for TLS: Server(tls=True), or `server_tls = True` on a
ServerTestCase class. A TLS server's request() speaks HTTPS with the CA and
the admin client certificate of the kubeconfig sqlkube wrote (client_cert=
False: none), and kubectl uses that kubeconfig as is.

Stdlib only; run with /usr/bin/python3.
"""

import base64
import http.client
import itertools
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.parse

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PG_SH = os.path.join(REPO_ROOT, "tests", "support", "pg.sh")
KUBECTL = os.environ.get("KUBECTL", "/usr/bin/kubectl")

READY_TIMEOUT = 20.0
STOP_GRACE = 5.0
KUBECTL_TIMEOUT = 90.0
HTTP_TIMEOUT = 30.0


class Config:
    def __init__(self):
        self.binary = os.environ.get("SQLKUBE_BIN", os.path.join(REPO_ROOT, "build", "sqlkube"))
        self.backend = "sqlite"
        self.pg_url = os.environ.get("SK_PG_URL")
        self.work_dir = None
        self.keep = False

    def ensure_work_dir(self):
        if self.work_dir is None:
            self.work_dir = tempfile.mkdtemp(prefix="sqlkube-e2e-")
        return self.work_dir


CONFIG = Config()
# Every server started in this process, most recent last (for log reporting).
STARTED = []
_counter = itertools.count(1)


class HarnessError(Exception):
    pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_env():
    env = dict(os.environ)
    if CONFIG.pg_url:
        env["SK_PG_URL"] = CONFIG.pg_url
        if not env.get("SK_PG_PORT"):
            port = urllib.parse.urlsplit(CONFIG.pg_url).port
            if port:
                env["SK_PG_PORT"] = str(port)
    return env


def create_pg_database(name):
    """A fresh PostgreSQL database; returns its URL.

    Uses pg_create_db from tests/support/pg.sh (the project's contract); if
    that file or function is unavailable, falls back to CREATE DATABASE via
    psql on CONFIG.pg_url.
    """
    if not CONFIG.pg_url:
        raise HarnessError("postgres backend selected but no PostgreSQL URL (--pg-url / SK_PG_URL)")
    if os.path.exists(PG_SH):
        p = subprocess.run(
            ["bash", "-c", 'source "$1" >/dev/null && pg_create_db "$2"', "bash", PG_SH, name],
            env=_pg_env(), capture_output=True, text=True, timeout=60)
        out = p.stdout.strip().splitlines()
        if p.returncode == 0 and out and out[-1].startswith("postgres"):
            return out[-1].strip()
        raise HarnessError("pg_create_db %s failed (rc=%d): %s %s"
                           % (name, p.returncode, p.stdout, p.stderr))
    parts = urllib.parse.urlsplit(CONFIG.pg_url)
    p = subprocess.run(["psql", CONFIG.pg_url, "-v", "ON_ERROR_STOP=1", "-qc",
                        'CREATE DATABASE "%s"' % name],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise HarnessError("CREATE DATABASE %s failed: %s" % (name, p.stderr))
    return urllib.parse.urlunsplit(parts._replace(path="/" + name))


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self):
        return "<HTTP %s %r>" % (self.status, self.body[:500])


class Server:
    """One sqlkube process (restartable on the same data dir and database)."""

    def __init__(self, name="server", db_url=None, extra_args=(), env=None, tls=False,
                 flush_to_disk=True):
        """flush_to_disk False (with no db_url): a store whose commits do not
        wait on this machine's disk, for tests that judge sqlkube's own
        latency: SQLite on tmpfs, or PostgreSQL with synchronous_commit off
        for this server's sessions (bench/README.md, "check perf and the
        disk")."""
        root = CONFIG.ensure_work_dir()
        self.tls = tls
        # Watches end within a second of SIGTERM (well inside STOP_GRACE).
        self.extra_args = (["--watch-grace", "1"] + ([] if tls else ["--plain-http"])
                           + list(extra_args))
        self.env = env
        n = next(_counter)
        self.name = "%s-%d" % (re.sub(r"[^A-Za-z0-9_]+", "_", name), n)
        self.data_dir = os.path.join(root, self.name)
        os.makedirs(self.data_dir)
        self.cache_dir = os.path.join(self.data_dir, "kubectl-cache")
        self.backend = CONFIG.backend
        self.db_url = db_url
        self.tmpfs_dir = None
        if self.db_url is None and self.backend == "postgres":
            dbname = ("e2e_%d_%d_%s" % (os.getpid(), n, os.urandom(3).hex())).lower()
            self.db_url = create_pg_database(dbname)
            if not flush_to_disk:
                parts = urllib.parse.urlsplit(self.db_url)
                query = "options=-c%20synchronous_commit%3Doff"
                self.db_url = urllib.parse.urlunsplit(parts._replace(
                    query=parts.query + "&" + query if parts.query else query))
        elif self.db_url is None and not flush_to_disk:
            self.tmpfs_dir = tempfile.mkdtemp(prefix="sqlkube-%s-" % self.name, dir="/dev/shm")
            self.db_url = "sqlite:" + os.path.join(self.tmpfs_dir, "sqlkube.db")
        self.proc = None
        self.port = None
        self.log_path = None
        self.log_paths = []
        self._log_file = None
        self.starts = 0

    # --- lifecycle -------------------------------------------------------

    @property
    def kubeconfig(self):
        return os.path.join(self.data_dir, "kubeconfig")

    @property
    def base_url(self):
        return "%s://127.0.0.1:%d" % ("https" if self.tls else "http", self.port)

    def kubeconfig_pem(self, key):
        """A PEM the kubeconfig carries (certificate-authority-data,
        client-certificate-data, client-key-data), written to a file in the
        data dir; returns its path, or None if the kubeconfig has none."""
        with open(self.kubeconfig) as f:
            m = re.search(r"^\s*%s: (\S+)$" % re.escape(key), f.read(), re.M)
        if not m:
            return None
        path = os.path.join(self.data_dir, "harness-%s.pem" % key)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(base64.b64decode(m.group(1)))
        return path

    def ssl_context(self, client_cert=True):
        """An SSL context trusting the kubeconfig's CA, with its admin client
        certificate unless client_cert is False (or a (cert, key) pair)."""
        ctx = ssl.create_default_context(cafile=self.kubeconfig_pem("certificate-authority-data"))
        if client_cert is True:
            ctx.load_cert_chain(self.kubeconfig_pem("client-certificate-data"),
                                self.kubeconfig_pem("client-key-data"))
        elif client_cert:
            ctx.load_cert_chain(*client_cert)
        return ctx

    def command(self):
        if not os.access(CONFIG.binary, os.X_OK):
            raise HarnessError("sqlkube binary not found or not executable: %s" % CONFIG.binary)
        cmd = [CONFIG.binary, "serve", "--listen", "127.0.0.1:%d" % self.port,
               "--data-dir", self.data_dir]
        if self.db_url:
            cmd += ["--db", self.db_url]
        return cmd + self.extra_args

    def store_url(self):
        """The --db URL of this server's store, for the sqlkube CLI."""
        return self.db_url or "sqlite:" + os.path.join(self.data_dir, "sqlkube.db")

    def compact(self, retain=0):
        """Runs `sqlkube compact` on this server's store from another process
        (as another instance would); returns its stdout, raises if it fails."""
        p = subprocess.run([CONFIG.binary, "compact", "--db", self.store_url(), "--retain",
                            str(retain)], capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise HarnessError("sqlkube compact failed: %s" % p.stderr)
        return p.stdout

    def start(self, wait="/readyz"):
        """Start the process and wait for `wait` (a health path) to answer
        200: "/livez" for a server whose store is not up yet. Retries on a
        lost port race."""
        if self.proc is not None:
            raise HarnessError("server already running")
        for attempt in range(3):
            self.port = free_port()
            self.starts += 1
            self.log_path = os.path.join(self.data_dir, "server-%d.log" % self.starts)
            self.log_paths.append(self.log_path)
            self._log_file = open(self.log_path, "wb")
            cmd = self.command()
            self._log_file.write(("# %s\n" % " ".join(cmd)).encode())
            self._log_file.flush()
            env = dict(os.environ, **self.env) if self.env else None
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log_file,
                                         stderr=subprocess.STDOUT, cwd=self.data_dir,
                                         start_new_session=True, env=env)
            if not STARTED or STARTED[-1] is not self:
                STARTED.append(self)
            try:
                self.wait_ready(path=wait)
                return self
            except HarnessError:
                exited = self.proc.poll() is not None
                log = self.log_tail(4000)
                self.stop()
                if exited and re.search(r"address already in use|EADDRINUSE", log, re.I) and attempt < 2:
                    continue
                raise
        raise HarnessError("could not start server")

    def wait_ready(self, timeout=READY_TIMEOUT, path="/readyz"):
        deadline = time.monotonic() + timeout
        last = "no attempt"
        while time.monotonic() < deadline:
            rc = self.proc.poll()
            if rc is not None:
                raise HarnessError("sqlkube exited with status %s before becoming ready; log %s:\n%s"
                                   % (rc, self.log_path, self.log_tail()))
            try:
                if self.tls and not os.path.exists(self.kubeconfig):
                    raise OSError("no kubeconfig yet")
                r = self.request("GET", path, timeout=2)
                if r.status == 200:
                    if not os.path.exists(self.kubeconfig):
                        last = "%s 200 but %s not written" % (path, self.kubeconfig)
                    else:
                        return
                else:
                    last = "%s -> %s %r" % (path, r.status, r.body[:200])
            except OSError as e:
                last = "%s -> %s" % (path, e)
            time.sleep(0.05)
        raise HarnessError("sqlkube not ready within %.0fs (%s); log %s:\n%s"
                           % (timeout, last, self.log_path, self.log_tail()))

    def _close_log(self):
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def stop(self):
        """SIGTERM, then SIGKILL after STOP_GRACE seconds. Returns the exit status."""
        if self.proc is None:
            return None
        rc = self.proc.poll()
        if rc is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                rc = self.proc.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                rc = self.proc.wait(timeout=10)
                with open(self.log_path, "ab") as f:
                    f.write(b"# harness: no exit within %.0fs of SIGTERM, sent SIGKILL\n" % STOP_GRACE)
        self.proc = None
        self._close_log()
        return rc

    def kill(self):
        """SIGKILL (simulated crash)."""
        if self.proc is None:
            return None
        self.proc.kill()
        rc = self.proc.wait(timeout=10)
        self.proc = None
        self._close_log()
        return rc

    def restart(self, crash=False):
        if crash:
            self.kill()
        else:
            self.stop()
        return self.start()

    def cleanup(self):
        self.stop()
        if not CONFIG.keep:
            shutil.rmtree(os.path.join(self.data_dir, "kubectl-cache"), ignore_errors=True)
            if self.tmpfs_dir:
                shutil.rmtree(self.tmpfs_dir, ignore_errors=True)

    def log_tail(self, max_chars=6000):
        parts = []
        for p in self.log_paths:
            try:
                with open(p, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            parts.append("==> %s <==\n%s" % (p, data[-max_chars:].decode("utf-8", "replace")))
        return "\n".join(parts)

    # --- clients -----------------------------------------------------------

    def request(self, method, path, body=None, headers=None, timeout=HTTP_TIMEOUT,
                client_cert=True):
        """Raw HTTP(S) request; body may be bytes, str or a JSON-able object.
        client_cert: as ssl_context's (TLS servers only).

        Returns a Response for any status (never raises for 4xx/5xx).
        """
        hdrs = dict(headers or {})
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            hdrs.setdefault("Content-Type", "application/json")
        if isinstance(body, str):
            body = body.encode("utf-8")
        hdrs.setdefault("Accept", "application/json")
        if self.tls:
            conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                               context=self.ssl_context(client_cert))
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            send_error = None
            try:
                conn.request(method, path, body=body, headers=hdrs)
            except (BrokenPipeError, ConnectionResetError) as e:
                # The server may answer (e.g. 413) before reading the whole
                # body; try to read the response it sent anyway.
                send_error = e
            try:
                r = conn.getresponse()
                data = r.read()
            except (OSError, http.client.HTTPException) as e:
                if send_error is not None:
                    raise OSError("sending request failed (%s) and no response could be read (%s)"
                                  % (send_error, e))
                raise
            return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
        finally:
            conn.close()

    def kubectl(self, *args, input=None, timeout=KUBECTL_TIMEOUT):
        """Run kubectl against this server; returns CompletedProcess (text)."""
        cmd = [KUBECTL, "--kubeconfig", self.kubeconfig, "--cache-dir", self.cache_dir,
               "--request-timeout=30s"] + list(args)
        env = dict(os.environ)
        env.pop("KUBECONFIG", None)
        env["HOME"] = self.data_dir  # keep ~/.kube out of the picture
        p = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout,
                           env=env)
        p.cmdline = " ".join(cmd[5:])
        return p


def describe(p):
    """Human-readable summary of a kubectl CompletedProcess for assertion messages."""
    return "kubectl %s\n  exit=%s\n  stdout=%r\n  stderr=%r" % (
        getattr(p, "cmdline", p.args), p.returncode, p.stdout[-3000:], p.stderr[-3000:])


def sql(server, query):
    """Rows (lists of strings) of a query run on server's database with the
    plain database CLI (sqlite3 or psql), as a person inspecting it would."""
    if server.backend == "postgres":
        cmd = ["psql", server.db_url, "-X", "-A", "-t", "-F", "|", "-v", "ON_ERROR_STOP=1",
               "-c", query]
    else:
        cmd = ["sqlite3", "-cmd", ".timeout 5000", "-separator", "|",
               os.path.join(server.data_dir, "sqlkube.db"), query]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, "%s failed (rc=%d): %s" % (cmd[0], p.returncode, p.stderr)
    return [line.split("|") for line in p.stdout.splitlines() if line.strip()]


def objects_view_0009(server):
    """The CREATE VIEW statement of sk_objects as migration 0009 made it on
    server's backend (read from migrations/), for tests that rewind a
    database to before migration 0011."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "migrations",
                        server.backend, "0009_history_is_current.sql")
    with open(path) as f:
        return re.search(r"CREATE (?:OR REPLACE )?VIEW sk_objects AS.*?;", f.read(), re.S).group(0)


def superseded_mismatches(server):
    """Rows of sk_history and sk_kv whose superseded flag (migration 0011)
    disagrees with what the views worked out before it, by an anti-join:
    whether a newer row of the same key exists. [] when every flag is right
    (EXISTS is 0/1 in SQLite and a boolean in PostgreSQL, as the flag is)."""
    return sql(server,
               "SELECT 'sk_history', rev, superseded FROM sk_history h WHERE superseded <> EXISTS"
               " (SELECT 1 FROM sk_history n WHERE n.resource = h.resource AND n.namespace ="
               " h.namespace AND n.name = h.name AND n.rev > h.rev)"
               " UNION ALL SELECT 'sk_kv', rev, superseded FROM sk_kv k WHERE superseded <> EXISTS"
               " (SELECT 1 FROM sk_kv n WHERE n.key = k.key AND n.rev > k.rev)")


def metric(server, name):
    """The value of an unlabelled (or fully labelled) series in the server's /metrics."""
    r = server.request("GET", "/metrics")
    assert r.status == 200, r
    for line in r.body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError("no series %s in /metrics" % name)


def wait_until(fn, timeout=20.0, interval=0.1, what="condition"):
    """Poll fn() until it returns a truthy value; returns it or raises AssertionError."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.0fs waiting for %s (last: %r)"
                                 % (timeout, what, last))
        time.sleep(interval)


class ServerTestCase:
    """Mixin for unittest.TestCase: one fresh server per test class.

    Put it before unittest.TestCase in the bases. The server is available as
    cls.server / self.server.
    """

    server = None
    server_name = None
    server_tls = False
    server_args = ()

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.server = Server(cls.server_name or cls.__name__, extra_args=cls.server_args,
                            tls=cls.server_tls)
        try:
            cls.server.start()
        except BaseException:
            cls.server.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.server is not None:
            cls.server.cleanup()
        super().tearDownClass()


class AuditedServerTestCase(ServerTestCase):
    """ServerTestCase whose server writes kube's audit log to cls.audit_log
    (a fresh file), read back with audit_events."""

    @classmethod
    def setUpClass(cls):
        cls.audit_log = os.path.join(CONFIG.ensure_work_dir(),
                                     "%s-audit-%d.log" % (cls.__name__, os.getpid()))
        if os.path.exists(cls.audit_log):
            os.unlink(cls.audit_log)
        cls.server_args = list(cls.server_args) + ["--audit-log-path", cls.audit_log]
        super().setUpClass()

    def audit_events(self, r):
        """The audit events of response r (by its Audit-Id), once its ResponseComplete is in."""
        aid = r.headers.get("audit-id")
        self.assertTrue(aid, r.headers)

        def got():
            with open(self.audit_log) as f:
                evs = [e for e in map(json.loads, f) if e["auditID"] == aid]
            return evs if evs and evs[-1]["stage"] == "ResponseComplete" else None
        return wait_until(got, timeout=10, what="audit events of %s" % aid)
