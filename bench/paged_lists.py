#!/usr/bin/python3
"""Issues 44 and 39 (item 4): listing ConfigMaps, paged and whole, from
sqlkube's REST face (from the cache, and at an exact past revision) and
from its etcd face, against etcd 3.4 ranging the same keys as
kube-apiserver does, in one run, at several list sizes; wall time per pass
and the server's memory before and at its peak during the pass.

  * sqlkube: a fresh `sqlkube serve --etcd-listen` on SQLite, then (with
    --pg-url) one on a new PostgreSQL database, each with its own fresh
    etcd beside it and stopped before the next starts (at 256k objects of
    10 KiB each process holds gigabytes), HTTPS as served, the
    admin a client certificate signed by the server's CA. ConfigMaps with a
    --size-byte data value are created in namespace `bench` over HTTPS by
    build/writebench (--clients keep-alive connections, `--count`), every
    create a durable write through the REST API, as a user's would be.
    --sizes are reached in turn by growing one data set: size k's creates
    are the difference from size k-1, named `c<k>-...` (writebench's
    --prefix).
  * etcd 3.4 (/usr/bin/etcd, its own data dir, fresh, --quota-backend-bytes
    8 GiB) gets the same objects under the keys kube-apiserver stores them
    at, /registry/configmaps/bench/NAME, and as the bytes it stores: kube's
    protobuf envelope (`k8s\\0` + runtime.Unknown{typeMeta, raw}). They are
    taken from sqlkube: one untimed protobuf paging pass, each item of a
    page wrapped in the envelope, which a sample of GETs with Accept
    application/vnd.kubernetes.protobuf must return byte for byte (kube
    also clears resourceVersion before it stores an object: these values
    keep theirs, a few bytes each). Loaded by bench/etcdload's bulkput
    (Txns of 128 puts, in parallel); each sqlkube's etcd face gets the same
    records the same way (its etcd keyspace, sk_kv, is apart from the REST
    objects, so its Range reads these).

At each size, once the server (and PostgreSQL) has gone idle after the
loads (up to --settle s: the etcd face's rows are decoded to sk_kv_doc
after they are put), the first protobuf pass over the REST face is timed
and reported apart: it pays the protobuf encoding of each object version
created since the last size, made once and kept (api/pbwire.h); later
passes copy the kept bytes.

Then --reps rounds, each one pass per target in a rotated order, every
pass a Go client (bench/etcdload) over one connection made before the
clock starts:
  * etcd, Range: etcdload's `pages` mode (the clientv3 of kube-apiserver's
    etcd3 store: Get from the last key + "\\0" to the prefix end, limit
    --limit, the first page's revision for the rest), and one unpaged Get
    of the whole prefix (`-limit 0`, as kube-apiserver reads a LIST
    without a limit). gRPC caps one message at 2 GiB (the Go client's
    default receive limit, etcd's send limit): an unpaged Range over more
    would fail, after the server built it in memory, so it is not run and
    reported so.
  * sqlkube's REST face over HTTPS (etcdload's `rest-pages` mode,
    restlist.go: Go's net/http with the admin's client certificate; each
    reply streamed through one buffer, its continue token read from its
    head and the object names picked out as it passes, every name checked
    once after the clock): from the cache (no resourceVersion),
    ?limit=--limit following the continue tokens, and unpaged, Accept
    protobuf and JSON; and at an exact revision
    (resourceVersion=N&resourceVersionMatch=Exact, N the revision after the
    size's creates, which the etcd-face loads then moved past: a past
    revision, served from the watch cache's snapshots or SQL), paged and
    unpaged, protobuf.
  * sqlkube's etcd face: the same Range passes as etcd's.
Per pass: wall time, reply bytes, the server's CPU (user + system of every
thread, /proc; for PostgreSQL its processes' too; etcdload's client not
counted), and the server process's
memory (benchlib.RssPeak): RSS before the pass and its peak during it
(VmHWM, reset at the start), and the anonymous part of each (RssAnon, the
heap; etcd's RSS also counts the pages of its mmapped bbolt file that a
pass touches). PostgreSQL's own processes are not in the memory figures.
"x etcd" is etcd's wall time for the same kind of list (paged or unpaged)
over the row's (above 1: faster than etcd), per round, the median of the
rounds.

Usage: bench/paged_lists.py --bin build/sqlkube --writebench build/writebench
                            [--sizes 100000] [--size 1024] [--clients 16]
                            [--limit 500] [--reps 3] [--pg-url URL]
                            [--settle 300]
Prints markdown tables as it goes: per backend the loading steps, and per
size one table with etcd's rows. Needs python3-cryptography (the
client certificate).
"""

import argparse
import http.client
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import types
import urllib.parse

from authz import Server
from benchlib import (RssPeak, cpu_seconds, create_database, drop_database, free_port,
                      postgres_cpu_seconds, postmaster_pid)
from etcd_side_by_side import build_etcdload, start_etcd, wait_up
from pbcodec import fields as pb_fields, varint  # tests/support

NS = "bench"
CMS = "/api/v1/namespaces/%s/configmaps" % NS
PREFIX = "/registry/configmaps/%s/" % NS
PROTOBUF = "application/vnd.kubernetes.protobuf"
JSON = "application/json"
# kube's storage envelope around a ConfigMap: runtime.Unknown with TypeMeta
# {apiVersion v1, kind ConfigMap}, raw, and empty contentEncoding and
# contentType, as kube's protobuf serializer writes it.
TYPEMETA = b"\n\x0f\n\x02v1\x12\tConfigMap"


# The most one gRPC message may carry: the Go client's default receive
# limit and etcd's send limit (math.MaxInt32).
GRPC_MAX = (1 << 31) - 1


def envelope(item):
    return b"k8s\x00" + TYPEMETA + b"\x12" + varint(len(item)) + item + b"\x1a\x00\x22\x00"


def pb_list(body):
    """A protobuf list reply: (continue token, [item bytes])."""
    if body[:4] != b"k8s\x00":
        raise SystemExit("not a protobuf envelope: %r" % body[:16])
    raw = pb_fields(body[4:])[2][0]
    lst = pb_fields(raw)
    meta = pb_fields(lst[1][0]) if 1 in lst else {}
    token = meta.get(3, [b""])[0].decode()
    return token, lst.get(2, [])


def item_name(item):
    meta = pb_fields(pb_fields(item)[1][0])
    return meta[1][0].decode()


class Rest:
    """One sqlkube target: its server (with the etcd face), and a
    keep-alive HTTPS connection."""

    def __init__(self, label, binary, db_url=None, postmaster=None):
        self.label, self.postmaster = label, postmaster
        self.etcd = types.SimpleNamespace(port=free_port())
        extra = ["--etcd-listen", "127.0.0.1:%d" % self.etcd.port]
        self.srv = Server(binary, "AlwaysAllow", extra_args=extra + (["--db", db_url]
                                                                      if db_url else []))
        self.conn = http.client.HTTPSConnection("127.0.0.1", self.srv.port, timeout=900,
                                                context=self.srv.admin)
        self.objects = 0

    def get(self, path, accept):
        # the server closes a connection left idle (as this one is during
        # the creates): a GET that finds it closed goes again on a new one
        for again in (False, True):
            try:
                self.conn.request("GET", path, headers={"Accept": accept})
                r = self.conn.getresponse()
                break
            except (http.client.RemoteDisconnected, ConnectionError):
                self.conn.close()
                if again:
                    raise
        body = r.read()
        if r.status != 200:
            raise SystemExit("GET %s: HTTP %d %r" % (path, r.status, body[:300]))
        return body

    def cpu(self):
        s = cpu_seconds(self.srv.proc.pid)
        return s + postgres_cpu_seconds(self.postmaster) if self.postmaster else s

    def fill(self, writebench, objects, size, clients, prefix):
        if not self.objects:
            self._namespace()
        d = self.srv.dir
        t0 = time.perf_counter()
        out = subprocess.run([writebench, "--url", "https://127.0.0.1:%d" % self.srv.port,
                              "--namespace", NS, "--clients", str(clients), "--seconds", "3600",
                              "--count", str(objects), "--size", str(size), "--prefix", prefix,
                              "--cacert", os.path.join(d, "ca.crt"),
                              "--cert", os.path.join(d, "bench-admin.crt"),
                              "--key", os.path.join(d, "bench-admin.key")],
                             capture_output=True, text=True, timeout=3600)
        secs = time.perf_counter() - t0
        if out.returncode != 0:
            raise SystemExit("writebench failed: %s" % out.stderr[-2000:])
        r = json.loads(out.stdout.strip().splitlines()[-1])
        if r["ok"] != objects or r["failed"]:
            raise SystemExit("%s: %d created, %d failed of %d" % (self.label, r["ok"],
                                                                 r["failed"], objects))
        self.objects += objects
        return secs

    def revision(self):
        """The list's resourceVersion now."""
        return json.loads(self.get(CMS + "?limit=1", JSON))["metadata"]["resourceVersion"]

    def _namespace(self):
        self.conn.request("POST", "/api/v1/namespaces", body=json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
            headers={"Content-Type": "application/json"})
        r = self.conn.getresponse()
        r.read()
        if r.status != 201:
            raise SystemExit("creating namespace %s: HTTP %d" % (NS, r.status))

    def stop(self):
        self.conn.close()
        self.srv.stop()


def wait_idle(rests, limit_s=60):
    """Waits until the servers' CPU (PostgreSQL's included) stays under 5%
    of a core for a second, as it does once the loads' aftermath (WAL
    checkpoints, autovacuum, the etcd face's decoding follower) is over:
    the passes measure listing, not it. Returns the seconds waited."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        c0 = sum(r.cpu() for r in rests)
        time.sleep(1)
        if sum(r.cpu() for r in rests) - c0 < 0.05:
            break
    return time.perf_counter() - t0


def measured(pid, cpu, run):
    """run() under the memory and CPU meters of the server pid (cpu: its
    CPU seconds so far, a function); run's dict with s, server and the
    memory in KiB added, or {"error": message} when the pass failed."""
    c0 = cpu()
    try:
        with RssPeak(pid) as m:
            r = run()
    except PassFailed as e:
        return {"error": "failed: " + str(e)}
    r.update(server=cpu() - c0, rss0=m.rss0, rss_peak=m.rss_peak, anon0=m.anon0,
             anon_peak=m.anon_peak)
    return r


class PassFailed(Exception):
    pass


def rest_pass(etcdload, rest, accept, limit, exact=None):
    """One timed REST pass over rest's objects (etcdload's rest-pages mode),
    as a function of no arguments."""
    def run():
        d = rest.srv.dir
        cmd = [etcdload, "-mode", "rest-pages", "-url", "https://127.0.0.1:%d" % rest.srv.port,
               "-cacert", os.path.join(d, "ca.crt"), "-cert", os.path.join(d, "bench-admin.crt"),
               "-key", os.path.join(d, "bench-admin.key"), "-path", CMS, "-accept", accept,
               "-limit", str(limit)] + (["-rv", exact] if exact else [])
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if out.returncode != 0:
            raise SystemExit("etcdload rest-pages failed: %s" % out.stderr[-2000:])
        r = json.loads(out.stdout.strip().splitlines()[-1])
        if r["keys"] != rest.objects or r["distinct"] != rest.objects:
            raise SystemExit("a REST pass returned %d names, %d distinct, of %d"
                             % (r["keys"], r["distinct"], rest.objects))
        return {"s": r["seconds"], "bytes": r["bytes"]}
    return lambda: measured(rest.srv.proc.pid, rest.cpu, run)


def range_pass(etcdload, target, limit, objects, pid, cpu):
    """One timed Range pass (etcdload's pages mode) over target's keys."""
    def run():
        out = subprocess.run([etcdload, "-endpoint", "127.0.0.1:%d" % target.port, "-mode",
                              "pages", "-prefix", PREFIX, "-limit", str(limit), "-reps", "1"],
                             capture_output=True, text=True, timeout=900)
        if out.returncode != 0:
            raise PassFailed(out.stderr.strip().splitlines()[-1][-160:])
        r = json.loads(out.stdout.strip().splitlines()[-1])["passes"][0]
        if r["keys"] != objects():
            raise SystemExit("a Range pass read %d keys of %d" % (r["keys"], objects()))
        return {"s": r["seconds"], "bytes": r["value_bytes"]}
    return lambda: measured(pid, cpu, run)


def bulkput(etcdload, target, records, want):
    out = subprocess.run([etcdload, "-endpoint", "127.0.0.1:%d" % target.port, "-mode",
                          "bulkput", "-file", records, "-clients", "16", "-conns", "4"],
                         capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise SystemExit("etcdload bulkput failed: %s" % out.stderr[-2000:])
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if r["keys"] != want or r["failed"]:
        raise SystemExit("bulkput: %r" % r)
    return r


def etcd_records(rest, limit, prefix, objects, path):
    """Writes the etcd load file for rest's objects named prefix-...
    (objects of them); checks a sample of GETs against the envelopes made
    from the list items."""
    token, n, sample = None, 0, []
    with open(path, "wb") as f:
        while True:
            q = {"limit": limit}
            if token:
                q["continue"] = token
            token, items = pb_list(rest.get(CMS + "?" + urllib.parse.urlencode(q), PROTOBUF))
            for it in items:
                name = item_name(it)
                if not name.startswith(prefix + "-"):
                    continue
                key, value = (PREFIX + name).encode(), envelope(it)
                f.write(struct.pack(">I", len(key)) + key + struct.pack(">I", len(value)) + value)
                n += 1
                if n % (objects // 20 or 1) == 0:
                    sample.append((name, value))
            if not token:
                break
    if n != objects:
        raise SystemExit("collected %d objects of %d" % (n, objects))
    for name, value in sample:
        if rest.get(CMS + "/" + name, PROTOBUF) != value:
            raise SystemExit("GET %s in protobuf is not the list item in kube's envelope" % name)
    return len(sample)


def mb(kib):
    return "%.0f" % (kib / 1024)


def table(label, objects, rows, base):
    """One size's table for one sqlkube: rows are (kind, name, passes) with
    kind "paged" or "full" (base[kind]: etcd's passes of that kind)."""
    print()
    print("| %s, %d objects | list | wall s, each round | median s | x etcd | MB (replies;"
          " Range: values) | server CPU s | RSS MB before -> peak, each round | anon MB before"
          " -> peak, each round |"
          % (label, objects))
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind, name, ps in rows:
        bad = [p["error"] for p in ps if "error" in p]
        if bad:
            print("| %s | %s | %s | | | | | | |" % (name, kind, bad[0].replace("|", "/")))
            continue
        walls = [p["s"] for p in ps]
        etcd = [p.get("s") for p in base[kind]]
        if None in etcd:
            ratio = "-"
        elif len(walls) > 1:
            ratio = "%.2f" % statistics.median(b / w for b, w in zip(etcd, walls))
        else:
            ratio = "%.2f" % (statistics.median(etcd) / walls[0])
        print("| %s | %s | %s | %.2f | %s | %.1f | %.2f | %s | %s |" % (
            name, kind, " / ".join("%.2f" % w for w in walls), statistics.median(walls), ratio,
            ps[0]["bytes"] / 1e6, statistics.median(p["server"] for p in ps),
            " / ".join("%s -> %s" % (mb(p["rss0"]), mb(p["rss_peak"])) for p in ps),
            " / ".join("%s -> %s" % (mb(p["anon0"]), mb(p["anon_peak"])) for p in ps)))
    sys.stdout.flush()


def run_backend(a, binary, writebench, etcdload, work, label, db_url=None, postmaster=None):
    """Every size against one sqlkube and a fresh etcd beside it, both
    stopped after (the other backend runs after, not beside: at 256k
    objects of 10 KiB each server holds gigabytes)."""
    rest, etcd = None, None
    try:
        rest = Rest(label, binary, db_url, postmaster)
        etcd = start_etcd()
        wait_up(etcdload, etcd)
        have, data = 0, 0
        for k, n in enumerate(a.sizes):
            new, prefix = n - have, "c%d" % k
            disk = shutil.disk_usage(work)
            # every copy of the data: the load file, etcd's, and sqlkube's
            # objects, etcd-face rows and their decoded docs
            need = new * (a.size + 600) * 6
            print("| %s, size %d: disk free %.1f GB, this size's data about %.1f GB | | |"
                  % (label, n, disk.free / 1e9, need / 1e9), flush=True)
            if disk.free < need * 1.5:
                raise SystemExit("not enough disk for %d objects" % n)
            secs = rest.fill(writebench, new, a.size, a.clients, prefix)
            exact = rest.revision()
            print("| %s: %d creates over HTTPS (%d clients, %d bytes) | %.1f | %.0f creates/s |"
                  % (label, new, a.clients, a.size, secs, new / secs), flush=True)
            have = n
            print("| settling: until the server (and PostgreSQL) idle | %.1f | |"
                  % wait_idle([rest], a.settle), flush=True)
            cold = rest_pass(etcdload, rest, PROTOBUF, a.limit)()
            records = os.path.join(work, "records")
            checked = etcd_records(rest, a.limit, prefix, new, records)
            for name, target in (("etcd 3.4", etcd), (label + "'s etcd face", rest.etcd)):
                t0 = time.perf_counter()
                put = bulkput(etcdload, target, records, new)
                print("| %s: %d keys put (Txns of 128, 16 goroutines) | %.1f | %.0f value MB;"
                      " %d GETs matched the list items' envelopes |"
                      % (name, put["keys"], time.perf_counter() - t0, put["bytes"] / 1e6,
                         checked), flush=True)
            data += put["bytes"]
            os.unlink(records)
            print("| settling after the etcd loads (the etcd face's rows decoded) | %.1f | |"
                  % wait_idle([rest], a.settle), flush=True)

            def etcd_cpu():
                return cpu_seconds(etcd.proc.pid)

            def count():
                return n
            etcd_paged, etcd_full = ("paged", "etcd 3.4, Range"), ("full", "etcd 3.4, Range")
            face_paged = ("paged", label + ", etcd face Range")
            face_full = ("full", label + ", etcd face Range")
            passes = {  # (paged or full, row name): the pass, in the tables' order
                etcd_paged: range_pass(etcdload, etcd, a.limit, count, etcd.proc.pid, etcd_cpu),
                etcd_full: range_pass(etcdload, etcd, 0, count, etcd.proc.pid, etcd_cpu),
                ("paged", label + ", protobuf"): rest_pass(etcdload, rest, PROTOBUF, a.limit),
                ("paged", label + ", JSON"): rest_pass(etcdload, rest, JSON, a.limit),
                ("full", label + ", protobuf"): rest_pass(etcdload, rest, PROTOBUF, 0),
                ("full", label + ", JSON"): rest_pass(etcdload, rest, JSON, 0),
                ("paged", label + ", protobuf, exact revision"):
                    rest_pass(etcdload, rest, PROTOBUF, a.limit, exact),
                ("full", label + ", protobuf, exact revision"):
                    rest_pass(etcdload, rest, PROTOBUF, 0, exact),
                face_paged: range_pass(etcdload, rest.etcd, a.limit, count, rest.srv.proc.pid,
                                       rest.cpu),
                face_full: range_pass(etcdload, rest.etcd, 0, count, rest.srv.proc.pid, rest.cpu),
            }
            order, notes = list(passes), {}
            if data >= GRPC_MAX:
                for key in (etcd_full, face_full):
                    notes[key] = ("not run: one reply of %.1f GB, over gRPC's 2 GiB message limit"
                                  % (data / 1e9))
            run = [(key, fn) for key, fn in passes.items() if key not in notes]
            results = {key: [{"error": note}] for key, note in notes.items()}
            results.update((key, []) for key, _ in run)
            for rep in range(a.reps):
                j = rep % len(run)
                for key, fn in run[j:] + run[:j]:
                    results[key].append(fn())
            rows = [key + (results[key],) for key in order]
            rows.append(("paged", label + ", protobuf, first pass after the creates"
                         " (encodes the new versions)", [cold]))
            table(label, n, rows, {"paged": results[etcd_paged], "full": results[etcd_full]})
    finally:
        if rest:
            rest.stop()
        if etcd:
            etcd.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--writebench", default="build/writebench")
    ap.add_argument("--sizes", default="100000",
                    help="list sizes, comma-separated, ascending: one data set grown")
    ap.add_argument("--size", type=int, default=1024, help="each ConfigMap's data bytes")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--limit", type=int, default=500)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--settle", type=int, default=300,
                    help="at most this many seconds' wait for the server to idle")
    ap.add_argument("--pg-url", help="also a sqlkube on a new database of this cluster")
    a = ap.parse_args()
    a.sizes = [int(x) for x in a.sizes.split(",")]
    if a.sizes != sorted(set(a.sizes)) or a.sizes[0] < 1:
        raise SystemExit("--sizes must ascend")
    binary, writebench = os.path.abspath(a.bin), os.path.abspath(a.writebench)
    work = tempfile.mkdtemp(prefix="sk-paged-")
    etcdload = build_etcdload(work)
    pg_db = None
    try:
        print("| step | seconds | note |\n| --- | --- | --- |")
        run_backend(a, binary, writebench, etcdload, work, "sqlkube (SQLite)")
        if a.pg_url:
            pg_db = "sk_paged_%d" % os.getpid()
            url = create_database(a.pg_url, pg_db)
            print("\n| step | seconds | note |\n| --- | --- | --- |")
            run_backend(a, binary, writebench, etcdload, work, "sqlkube (PostgreSQL)", url,
                        postmaster_pid(url))
    finally:
        if pg_db:
            drop_database(a.pg_url, pg_db)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
