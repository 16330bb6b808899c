"""What the Python benchmarks share: a free loopback port, a process's CPU
time so far, its peak memory over a stretch of work (RssPeak), fresh PostgreSQL databases through psql, a JSON client on
one keep-alive HTTP connection (HTTPS when given an ssl context), and the
protobuf wire format's fields. Stdlib only."""

import http.client
import json
import os
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid, tid=None):
    """The process's (or, given tid, that thread's) user + system CPU time
    so far, in seconds."""
    path = "/proc/%d/stat" % pid if tid is None else "/proc/%d/task/%s/stat" % (pid, tid)
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_kb(pid):
    """(VmRSS, RssAnon, VmHWM) of pid, in KiB."""
    got = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "VmHWM"):
                got[name] = int(value.split()[0])
    return got["VmRSS"], got["RssAnon"], got["VmHWM"]


class RssPeak:
    """A process's memory over a with-block: before (VmRSS and RssAnon at
    the start) and peak (the most during it), in KiB. The peak RSS is the
    kernel's high-water mark, reset at the start (writing 5 to
    /proc/PID/clear_refs), so no spike between samples is missed; the
    anonymous part (heap, not the file pages an mmapped database brings
    in) has no high-water mark, so a thread samples it every `every`
    seconds."""

    def __init__(self, pid, every=0.005):
        self.pid, self.every = pid, every
        self._stop = threading.Event()

    def __enter__(self):
        self.rss0, self.anon0, _ = _rss_kb(self.pid)
        with open("/proc/%d/clear_refs" % self.pid, "w") as f:
            f.write("5")
        self.anon_peak = self.anon0
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(self.every):
            self.anon_peak = max(self.anon_peak, _rss_kb(self.pid)[1])

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        rss, anon, hwm = _rss_kb(self.pid)
        self.rss_peak = max(hwm, rss)
        self.anon_peak = max(self.anon_peak, anon)
        return False


def store_counters(port, tls=None):
    """(commits, writer round trips) from sqlkube's /metrics on
    127.0.0.1:port (sqlkube_store_commits_total and
    sqlkube_store_writer_round_trips_total), over HTTPS when tls is (CA
    file, bearer token)."""
    headers, context = {}, None
    if tls:
        headers["Authorization"] = "Bearer " + tls[1]
        context = ssl.create_default_context(cafile=tls[0])
    req = urllib.request.Request("%s://127.0.0.1:%d/metrics" % ("https" if tls else "http", port),
                                 headers=headers)
    with urllib.request.urlopen(req, timeout=30, context=context) as r:
        text = r.read().decode()
    got = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in ("sqlkube_store_commits_total", "sqlkube_store_writer_round_trips_total"):
            got[name] = int(float(value))
    return got["sqlkube_store_commits_total"], got["sqlkube_store_writer_round_trips_total"]


def make_namespace(port, name, tls=None):
    """Creates Namespace name on 127.0.0.1:port, once the server answers (409,
    made by an earlier run, is fine): over plain HTTP, or over HTTPS when tls
    is (CA file, bearer token)."""
    body = json.dumps({"apiVersion": "v1", "kind": "Namespace",
                       "metadata": {"name": name}}).encode()
    headers = {"Content-Type": "application/json"}
    context = None
    if tls:
        headers["Authorization"] = "Bearer " + tls[1]
    req = urllib.request.Request("%s://127.0.0.1:%d/api/v1/namespaces"
                                 % ("https" if tls else "http", port), data=body,
                                 method="POST", headers=headers)
    for _ in range(100):
        try:
            if tls and context is None and os.path.exists(tls[0]):
                context = ssl.create_default_context(cafile=tls[0])
            if tls and context is None:
                raise OSError("no CA yet")
            urllib.request.urlopen(req, timeout=30, context=context).close()
            return
        except urllib.error.HTTPError as e:
            if e.code == 409:
                return
            raise SystemExit("creating namespace %s: HTTP %d" % (name, e.code))
        except OSError:
            time.sleep(0.1)  # not listening yet
    raise SystemExit("the server on port %d did not come up" % port)


def psql(url, sql):
    """Runs sql on url; its output, unaligned and without headers. Raises
    CalledProcessError (with psql's stderr) if it fails."""
    return subprocess.run(["psql", url, "-X", "-Atq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                          capture_output=True, text=True, check=True).stdout.strip()


def create_database(pg_url, name, query=""):
    """Creates database name on pg_url's cluster; returns its URL, with
    query (e.g. "options=...") as its query string."""
    psql(pg_url, 'CREATE DATABASE "%s"' % name)
    return urllib.parse.urlunsplit(urllib.parse.urlsplit(pg_url)._replace(path="/" + name,
                                                                           query=query))


def drop_database(pg_url, name):
    """Drops database name on pg_url's cluster, closing its sessions."""
    psql(pg_url, 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)


def postmaster_pid(db_url):
    """The PID of the postmaster serving db_url, from its data directory's
    postmaster.pid (`SHOW data_directory` needs a superuser or
    pg_read_all_settings, and the file must be readable: a local cluster
    such as tests/support/pg.sh starts). Fails loudly otherwise."""
    out = subprocess.run(["psql", db_url, "-Atc", "SHOW data_directory"], capture_output=True,
                         text=True, check=True)
    with open(os.path.join(out.stdout.strip(), "postmaster.pid")) as f:
        return int(f.readline())


def postmaster_children(postmaster):
    """The PIDs of the postmaster's children alive now."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == postmaster:
                    out.append(int(d))
        except (OSError, ValueError):
            pass  # ended meanwhile
    return out


def postgres_cpu_seconds(postmaster):
    """CPU seconds so far of the postmaster's children: those alive now,
    and, through the postmaster's own cutime/cstime, every one it has
    reaped (backends and autovacuum workers come and go)."""
    with open("/proc/%d/stat" % postmaster) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    total = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
    for pid in postmaster_children(postmaster):
        try:
            total += cpu_seconds(pid)
        except OSError:
            pass  # ended meanwhile: counted once the postmaster reaps it
    return total


class Client:
    def __init__(self, port, context=None):
        if context is not None:
            self.conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=60,
                                                    context=context)
        else:
            self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def req(self, method, path, body=None):
        data = json.dumps(body) if body is not None else None
        self.conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        r = self.conn.getresponse()
        return r.status, r.read()
