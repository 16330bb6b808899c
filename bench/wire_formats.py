#!/usr/bin/python3
"""Issue 44: one page of ConfigMaps in every wire format client-go asks for.

For each binary given (--bin NAME=PATH, e.g. main's build and this tree's),
one run starts a fresh `sqlkube serve` (SQLite, HTTPS as served by default,
the admin a client certificate signed by the server's CA), creates --items
ConfigMaps of ~--size bytes of data each in namespace `bench`, and LISTs the
namespace's ConfigMaps (?limit=--items, so one page holds them all) with
each Accept header:

  json      application/json
  protobuf  application/vnd.kubernetes.protobuf
  table     application/json;as=Table;v=v1;g=meta.k8s.io        (kubectl get)
  partial   application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io
  partial-protobuf  client-go's metadata client: application/vnd.kubernetes.protobuf;
            as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, then the JSON clause

The requests are made by curl (one process, one keep-alive HTTPS connection
for all of them: `--next` keeps the connection), so the client's own cost is
small and the same for every format. The first request of each format is
reported apart ("first": it pays what is made once per object version, such
as the protobuf message kept with each cached object); then --reps requests
per format, interleaved (json, protobuf, table, partial, json, ...) so that
drift on a shared machine hits every format alike: reply bytes and the
median time curl reports (request sent to last byte). Then, per format, a
block of --reps requests alone and the server's CPU over it (user + system
of every thread, /proc) divided by --reps: the clock ticks are 10 ms, so
--reps 100 or more for that column.

Usage: bench/wire_formats.py --bin before=/tmp/sqlkube-main --bin after=build/sqlkube
                             [--items 500] [--size 1024] [--reps 15]
Prints a markdown table. Needs curl and python3-cryptography (the client
certificate).
"""

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess

from authz import Server, client_cert
from benchlib import cpu_seconds

NS = "bench"
FORMATS = [
    ("json", "application/json"),
    ("protobuf", "application/vnd.kubernetes.protobuf"),
    ("table", "application/json;as=Table;v=v1;g=meta.k8s.io"),
    ("partial", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"),
    ("partial-protobuf",
     "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
     "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"),
]


def load(conn, items, size):
    def post(path, body):
        conn.request("POST", path, body=json.dumps(body),
                     headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        if r.status not in (201, 409):
            raise SystemExit("POST %s: HTTP %d" % (path, r.status))
    post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": NS}})
    value = "x" * size
    for i in range(items):
        post("/api/v1/namespaces/%s/configmaps" % NS, {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cm-%05d" % i, "labels": {"app": "bench", "i": str(i)}},
            "data": {"value": value}})


def curl(srv, cert, path, accepts):
    """One curl process, one connection: GET path once per Accept in
    accepts, in order; [(bytes, seconds, content type)]."""
    url = "https://127.0.0.1:%d%s" % (srv.port, path)
    args = ["curl"]
    for i, accept in enumerate(accepts):
        if i:
            args.append("--next")
        args += ["-sS", "-o", "/dev/null", "--cacert", os.path.join(srv.dir, "ca.crt"),
                 "--cert", cert[0], "--key", cert[1], "-H", "Accept: " + accept,
                 "-w", "%{http_code} %{size_download} %{time_total} %{content_type}\n", url]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split("\n")
    res = []
    for line in out[:len(accepts)]:
        code, size, secs, ctype = line.split(" ", 3)
        if code != "200":
            raise SystemExit("GET %s: HTTP %s" % (path, code))
        res.append((int(size), float(secs), ctype))
    return res


def run(binary, items, size, reps):
    srv = Server(binary, "AlwaysAllow")
    try:
        conn = http.client.HTTPSConnection("127.0.0.1", srv.port, timeout=120, context=srv.admin)
        load(conn, items, size)
        conn.close()
        cert = client_cert(srv.dir, "bench-curl", ["system:masters"])
        path = "/api/v1/namespaces/%s/configmaps?limit=%d" % (NS, items)
        accepts = [accept for _, accept in FORMATS]
        out = {}
        for (name, _), (n, secs, ctype) in zip(FORMATS, curl(srv, cert, path, accepts)):
            out[name] = {"bytes": n, "first_ms": secs * 1e3, "type": ctype, "wall": []}
        for i, (n, secs, _) in enumerate(curl(srv, cert, path, accepts * reps)):
            out[FORMATS[i % len(FORMATS)][0]]["wall"].append(secs)
        for name, accept in FORMATS:
            cpu0 = cpu_seconds(srv.proc.pid)
            curl(srv, cert, path, [accept] * reps)
            out[name]["cpu"] = cpu_seconds(srv.proc.pid) - cpu0
        return out
    finally:
        srv.stop()
        shutil.rmtree(srv.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", action="append", required=True, help="NAME=PATH, repeatable")
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=15)
    a = ap.parse_args()
    print("| binary | format | bytes | first request ms | median ms (%d requests) |"
          " server CPU ms per request | Content-Type |" % a.reps)
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for spec in a.bin:
        label, path = spec.split("=", 1)
        res = run(os.path.abspath(path), a.items, a.size, a.reps)
        for name, _ in FORMATS:
            r = res[name]
            print("| %s | %s | %d | %.1f | %.2f | %.2f | `%s` |" % (
                label, name, r["bytes"], r["first_ms"], statistics.median(r["wall"]) * 1e3,
                r["cpu"] / a.reps * 1e3, r["type"]))


if __name__ == "__main__":
    main()
