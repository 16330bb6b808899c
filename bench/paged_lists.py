#!/usr/bin/python3
"""Issue 44: paging through 100,000 ConfigMaps, sqlkube (protobuf and JSON)
against etcd 3.4 ranging the same keys as kube-apiserver does, in one run.

  * sqlkube: a fresh `sqlkube serve` (SQLite; with --pg-url also one on a
    new PostgreSQL database next to it), HTTPS as served, the admin a client
    certificate signed by the server's CA. --objects ConfigMaps with a
    --size-byte data value are created in namespace `bench` over HTTPS by
    build/writebench (--clients keep-alive connections, `--count`), every
    create a durable write through the REST API, as a user's would be.
  * etcd 3.4 (/usr/bin/etcd, its own data dir, fresh) gets the same objects
    under the keys kube-apiserver stores them at,
    /registry/configmaps/bench/NAME, and as the bytes it stores: kube's
    protobuf envelope (`k8s\\0` + runtime.Unknown{typeMeta, raw}). They are
    taken from sqlkube: one untimed protobuf paging pass, each item of a
    page wrapped in the envelope, which a sample of GETs with Accept
    application/vnd.kubernetes.protobuf must return byte for byte (kube
    also clears resourceVersion before it stores an object: these values
    keep theirs, a few bytes each). Loaded by bench/etcdload's bulkput
    (Txns of 128 puts, in parallel).

Once the servers (and PostgreSQL) have gone idle after the creates, and
after one untimed JSON pass per sqlkube (the client's heap: the first
~140 MB of replies it holds page-fault in), each sqlkube's first protobuf
pass is timed and reported apart: it pays each object version's protobuf encoding, made once
and kept (api/pbwire.h); later passes copy the kept bytes.

Then --reps rounds, each one pass per target in a rotated order: etcd ranged
by bench/etcdload's `pages` mode (kube-apiserver's etcd3 store: Get from the
last key + "\\0" to the prefix end, limit --limit, the first page's revision
for the rest, over one gRPC connection), and each sqlkube LISTed with
?limit=--limit following the continue tokens, Accept protobuf and Accept
JSON, over one keep-alive HTTPS connection (Python's http.client; each page
read whole, its continue token found, nothing else decoded while the clock
runs; after the pass every page is decoded to check the items: --objects,
each once). Per pass: total wall time, pages, reply bytes, and the server's
CPU (user + system of every thread, /proc; for PostgreSQL its processes'
too) and this client's own CPU over it. "x etcd" is etcd's wall time over
the row's (above 1: faster than etcd), per round, the median of the rounds.

Usage: bench/paged_lists.py --bin build/sqlkube --writebench build/writebench
                            [--objects 100000] [--size 1024] [--clients 16]
                            [--limit 500] [--reps 3] [--pg-url URL]
Prints markdown tables. Needs python3-cryptography (the client certificate).
"""

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse

from authz import Server
from benchlib import (cpu_seconds, create_database, drop_database, postgres_cpu_seconds,
                      postmaster_pid)
from etcd_side_by_side import build_etcdload, load, start_etcd, wait_up
from pbcodec import fields as pb_fields, read_varint as pb_varint, varint  # tests/support

NS = "bench"
CMS = "/api/v1/namespaces/%s/configmaps" % NS
PREFIX = "/registry/configmaps/%s/" % NS
PROTOBUF = "application/vnd.kubernetes.protobuf"
# kube's storage envelope around a ConfigMap: runtime.Unknown with TypeMeta
# {apiVersion v1, kind ConfigMap}, raw, and empty contentEncoding and
# contentType, as kube's protobuf serializer writes it.
TYPEMETA = b"\n\x0f\n\x02v1\x12\tConfigMap"
CONTINUE_JSON = re.compile(rb'"continue":"([^"]*)"')


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


def pb_continue(body):
    """The continue token of a protobuf list reply, decoding only what comes
    before the items: the envelope's head and the list's metadata (field 1,
    written first)."""
    i, raw_at = 4, None
    while raw_at is None:
        tag, i = pb_varint(body, i)
        n, i = pb_varint(body, i)
        if tag >> 3 == 2:
            raw_at = i
        else:
            i += n
    tag, i = pb_varint(body, raw_at)
    if tag != 0x0A:  # no metadata: no token
        return ""
    n, i = pb_varint(body, i)
    return pb_fields(body[i:i + n]).get(3, [b""])[0].decode()


def item_name(item):
    meta = pb_fields(pb_fields(item)[1][0])
    return meta[1][0].decode()


class Rest:
    """One sqlkube target: its server, and a keep-alive HTTPS connection."""

    def __init__(self, label, binary, db_url=None, postmaster=None):
        self.label, self.postmaster = label, postmaster
        self.srv = Server(binary, "AlwaysAllow", extra_args=["--db", db_url] if db_url else [])
        self.conn = http.client.HTTPSConnection("127.0.0.1", self.srv.port, timeout=300,
                                                context=self.srv.admin)

    def get(self, path, accept):
        self.conn.request("GET", path, headers={"Accept": accept})
        r = self.conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise SystemExit("GET %s: HTTP %d %r" % (path, r.status, body[:300]))
        return body

    def cpu(self):
        s = cpu_seconds(self.srv.proc.pid)
        return s + postgres_cpu_seconds(self.postmaster) if self.postmaster else s

    def fill(self, writebench, objects, size, clients):
        self._namespace()
        d = self.srv.dir
        t0 = time.perf_counter()
        out = subprocess.run([writebench, "--url", "https://127.0.0.1:%d" % self.srv.port,
                              "--namespace", NS, "--clients", str(clients), "--seconds", "3600",
                              "--count", str(objects), "--size", str(size), "--prefix", "cm",
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
        return secs

    def _namespace(self):
        self.conn.request("POST", "/api/v1/namespaces", body=json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
            headers={"Content-Type": "application/json"})
        r = self.conn.getresponse()
        r.read()
        if r.status != 201:
            raise SystemExit("creating namespace %s: HTTP %d" % (NS, r.status))

    def pages(self, accept, limit):
        """One timed pass: every page's reply, read whole, following the
        continue tokens. (bodies, seconds, client CPU seconds)."""
        bodies, token = [], None
        t0, c0 = time.perf_counter(), time.process_time()
        while True:
            q = {"limit": limit}
            if token:
                q["continue"] = token
            body = self.get(CMS + "?" + urllib.parse.urlencode(q), accept)
            bodies.append(body)
            if accept == PROTOBUF:
                token = pb_continue(body)
            else:
                m = CONTINUE_JSON.search(body, 0, 4096)  # metadata comes before items
                token = m.group(1).decode() if m else None
            if not token:
                break
        return bodies, time.perf_counter() - t0, time.process_time() - c0

    def stop(self):
        self.conn.close()
        self.srv.stop()


def check_items(bodies, accept, objects):
    """Every object once across the pass's pages."""
    names = []
    for body in bodies:
        if accept == PROTOBUF:
            names += [item_name(it) for it in pb_list(body)[1]]
        else:
            names += [it["metadata"]["name"] for it in json.loads(body)["items"]]
    if len(names) != objects or len(set(names)) != objects:
        raise SystemExit("a pass returned %d items, %d distinct, of %d"
                         % (len(names), len(set(names)), objects))


def wait_idle(rests, limit_s=60):
    """Waits until the servers' CPU (PostgreSQL's included) stays under 5%
    of a core for a second, as it does once the creates' aftermath (WAL
    checkpoints, autovacuum) is over: the passes measure listing, not it.
    Returns the seconds waited."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        c0 = sum(r.cpu() for r in rests)
        time.sleep(1)
        if sum(r.cpu() for r in rests) - c0 < 0.05:
            break
    return time.perf_counter() - t0


def rest_pass(rest, accept, a):
    """One timed pass over rest's objects, as a function of no arguments."""
    def run():
        c0 = rest.cpu()
        bodies, secs, client = rest.pages(accept, a.limit)
        server = rest.cpu() - c0
        check_items(bodies, accept, a.objects)
        return {"s": secs, "pages": len(bodies), "bytes": sum(map(len, bodies)),
                "server": server, "client": client}
    return run


def etcd_records(rest, limit, objects, path):
    """Writes the etcd load file for rest's objects; checks a sample of
    GETs against the envelopes made from the list items."""
    token, n, sample = None, 0, []
    with open(path, "wb") as f:
        while True:
            q = {"limit": limit}
            if token:
                q["continue"] = token
            token, items = pb_list(rest.get(CMS + "?" + urllib.parse.urlencode(q), PROTOBUF))
            for it in items:
                name = item_name(it)
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--writebench", default="build/writebench")
    ap.add_argument("--objects", type=int, default=100000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--limit", type=int, default=500)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--pg-url", help="also a sqlkube on a new database of this cluster")
    a = ap.parse_args()
    binary, writebench = os.path.abspath(a.bin), os.path.abspath(a.writebench)
    work = tempfile.mkdtemp(prefix="sk-paged-")
    etcdload = build_etcdload(work)
    rests, etcd, pg_db = [], None, None
    try:
        print("| step | seconds | note |\n| --- | --- | --- |")
        rests.append(Rest("sqlkube (SQLite)", binary))
        if a.pg_url:
            pg_db = "sk_paged_%d" % os.getpid()
            url = create_database(a.pg_url, pg_db)
            rests.append(Rest("sqlkube (PostgreSQL)", binary, url, postmaster_pid(url)))
        for r in rests:
            secs = r.fill(writebench, a.objects, a.size, a.clients)
            print("| %s: %d creates over HTTPS (%d clients) | %.1f | %.0f creates/s |"
                  % (r.label, a.objects, a.clients, secs, a.objects / secs), flush=True)
        settled = wait_idle(rests)
        print("| settling: until the servers (and PostgreSQL) idle | %.1f | |" % settled,
              flush=True)
        for r in rests:
            # untimed: the client's first ~140 MB of replies page-fault in
            # (~0.2 s of its CPU), which would fall on the first timed pass
            r.pages("application/json", a.limit)
        cold = {}
        for r in rests:
            cold[r.label] = rest_pass(r, PROTOBUF, a)()
        records = os.path.join(work, "records")
        checked = etcd_records(rests[0], a.limit, a.objects, records)
        etcd = start_etcd()
        wait_up(etcdload, etcd)
        t0 = time.perf_counter()
        put = load(etcdload, etcd, "-mode", "bulkput", "-file", records, "-clients", "16",
                   "-conns", "4")
        if put["keys"] != a.objects or put["failed"]:
            raise SystemExit("etcd bulkput: %r" % put)
        print("| etcd 3.4: %d keys put (Txns of 128, 16 goroutines) | %.1f | %.0f value MB;"
              " %d GETs matched the list items' envelopes |"
              % (put["keys"], time.perf_counter() - t0, put["bytes"] / 1e6, checked), flush=True)

        def etcd_pass():
            c0 = cpu_seconds(etcd.proc.pid)
            r = load(etcdload, etcd, "-mode", "pages", "-prefix", PREFIX,
                     "-limit", str(a.limit), "-reps", "1")["passes"][0]
            if r["keys"] != a.objects:
                raise SystemExit("etcd pass read %d keys" % r["keys"])
            return {"s": r["seconds"], "pages": r["pages"], "bytes": r["value_bytes"],
                    "server": cpu_seconds(etcd.proc.pid) - c0, "client": None}

        passes = [("etcd 3.4, Range (kube-apiserver's paging)", etcd_pass)]
        for r in rests:
            passes += [(r.label + ", protobuf", rest_pass(r, PROTOBUF, a)),
                       (r.label + ", JSON", rest_pass(r, "application/json", a))]
        results = {name: [] for name, _ in passes}
        for rep in range(a.reps):
            k = rep % len(passes)
            for name, fn in passes[k:] + passes[:k]:
                results[name].append(fn())
        print()
        print("| %d objects, pages of %d | wall s, each round | median s | x etcd (median of"
              " rounds) | pages | MB (replies; etcd: values) | server CPU s | client CPU s |"
              % (a.objects, a.limit))
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        base = [p["s"] for p in results[passes[0][0]]]
        rows = [(name, results[name]) for name, _ in passes]
        rows += [(label + ", protobuf, first pass after the creates (encodes every version)",
                  [p]) for label, p in cold.items()]
        for name, ps in rows:
            walls = [p["s"] for p in ps]
            # each round's ratio to etcd's pass in that round; the first
            # pass (one) against etcd's median
            ratio = (statistics.median(b / w for b, w in zip(base, walls)) if len(walls) > 1
                     else statistics.median(base) / walls[0])
            client = [p["client"] for p in ps if p["client"] is not None]
            print("| %s | %s | %.2f | %.2f | %d | %.1f | %.2f | %s |" % (
                name, " / ".join("%.2f" % w for w in walls), statistics.median(walls), ratio,
                ps[0]["pages"], ps[0]["bytes"] / 1e6,
                statistics.median(p["server"] for p in ps),
                "%.2f" % statistics.median(client) if client else "(Go, not counted)"))
    finally:
        for r in rests:
            r.stop()
        if etcd:
            etcd.stop()
        if pg_db:
            drop_database(a.pg_url, pg_db)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
