#!/usr/bin/python3
"""Server-side apply benchmark: what managedFields cost.

1. Latency and server CPU: a ~1 KiB ConfigMap with 10 managers on it (each
   applied one of its ten ~90-byte keys). Then, interleaved in blocks, one
   of them re-applies its key with a new value (PATCH
   application/apply-patch+yaml, fieldManager=mgr-0, force=true: the PUTs
   take the key over, as controllers re-asserting do), and a plain client
   PUTs the object as it read it with that key changed (no
   resourceVersion: an unconditional update, managedFields sent back as
   kubectl replace does). Every request writes a new revision. Reports p50
   and p99 latency and the server's CPU per request (utime+stime of
   /proc/PID/stat over the block, divided by its requests).
2. Stored size: a Deployment, a ConfigMap and a Service written by
   `kubectl create`, `kubectl apply` (client-side: it adds the
   last-applied-configuration annotation) and `kubectl apply --server-side`;
   the live row's value length in sk_history (sqlite3 on the data dir's
   sqlkube.db), with and without its managedFields (the row's JSON text
   less the bytes of the "managedFields" member).
3. Stored size on disk: --disk N objects of each kind written each way
   (one kubectl call per List of N), then, in an online backup of the
   database per kind and way holding only those N objects, the pages
   SQLite uses for them (sk_history and its key index, from the dbstat
   table, after VACUUM) with their managedFields and again
   after json_remove() took them out of every row. This is what a row
   costs the store: its value plus its key columns, index entries and
   page slack, which the value-only ratio above leaves out.

Usage: bench/apply.py --bin build/sqlkube [--n 2000] [--disk 300]
Needs kubectl and sqlite3 on PATH. Stdlib only.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from benchlib import cpu_seconds, free_port, Client

NS_PATH = "/api/v1/namespaces/default/configmaps"
MANAGERS = 10
class Raw(Client):
    def send(self, method, path, body, ctype):
        self.conn.request(method, path, body=body,
                          headers={"Content-Type": ctype, "User-Agent": "bench/1.0"})
        r = self.conn.getresponse()
        return r.status, r.read()


def cm_body(data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bench"}, "data": data}


def value(i, n):
    return ("%06d-%02d-" % (n, i)) + "v" * 80


def measure(pid, fn, n):
    lat = []
    c0 = cpu_seconds(pid)
    for k in range(n):
        t0 = time.perf_counter()
        fn(k)
        lat.append(time.perf_counter() - t0)
    cpu = cpu_seconds(pid) - c0
    return lat, cpu


def latency_and_cpu(port, pid, n, blocks):
    c = Raw(port)
    for i in range(MANAGERS):
        st, body = c.send("PATCH", NS_PATH + "/bench?fieldManager=mgr-%d" % i,
                          json.dumps(cm_body({"key-%d" % i: value(i, 0)})),
                          "application/apply-patch+yaml")
        assert st in (200, 201), body
    obj = json.loads(c.req("GET", NS_PATH + "/bench")[1])
    assert len(obj["metadata"]["managedFields"]) == MANAGERS
    size = len(json.dumps(obj, separators=(",", ":")))
    bare = len(json.dumps(dict(obj, metadata={k: v for k, v in obj["metadata"].items()
                                              if k != "managedFields"}),
                          separators=(",", ":")))
    seq = [0]

    def apply(_):
        seq[0] += 1
        st, body = c.send("PATCH", NS_PATH + "/bench?fieldManager=mgr-0&force=true",
                          json.dumps(cm_body({"key-0": value(0, seq[0])})),
                          "application/apply-patch+yaml")
        assert st == 200, body

    def put(_):
        seq[0] += 1
        obj["data"]["key-0"] = value(0, seq[0])
        obj["metadata"].pop("resourceVersion", None)
        st, body = c.send("PUT", NS_PATH + "/bench", json.dumps(obj), "application/json")
        assert st == 200, body
        # the next PUT sends what this one stored back, as a client would
        obj["metadata"]["managedFields"] = json.loads(body)["metadata"]["managedFields"]

    for f in (apply, put):  # warm-up
        measure(pid, f, 50)
    res = {"apply": ([], 0.0), "put": ([], 0.0)}
    for _ in range(blocks):
        for name, f in (("apply", apply), ("put", put)):
            lat, cpu = measure(pid, f, n // blocks)
            res[name] = (res[name][0] + lat, res[name][1] + cpu)
    after = json.loads(c.req("GET", NS_PATH + "/bench")[1])
    assert len(after["metadata"]["managedFields"]) >= MANAGERS, after["metadata"]
    return size, bare, res


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


SAMPLES = {
    "deployment": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                   "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}},
                                         "spec": {"containers": [{
                                             "name": "web", "image": "nginx:1.27",
                                             "ports": [{"containerPort": 80}],
                                             "env": [{"name": "MODE", "value": "prod"}]}]}}}},
    "configmap": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "conf"},
                  "data": {"a.properties": "x=1\ny=2\n", "b": "hello", "c": "world"}},
    "service": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                "spec": {"selector": {"app": "web"},
                         "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}},
}


def stored_sizes(port, data_dir, workdir):
    rows = []
    for how, args in (("create", ["create"]), ("apply", ["apply"]),
                      ("apply --server-side", ["apply", "--server-side"])):
        for kind, obj in SAMPLES.items():
            o = json.loads(json.dumps(obj))
            o["metadata"]["name"] += "-" + how.split()[-1].strip("-")
            path = os.path.join(workdir, "o.json")
            with open(path, "w") as f:
                json.dump(o, f)
            subprocess.run(["kubectl", "-s", "http://127.0.0.1:%d" % port, "-n", "default"]
                           + args + ["-f", path], check=True, capture_output=True)
            res = {"deployment": "deployments", "configmap": "configmaps",
                   "service": "services"}[kind]
            q = ("SELECT object FROM sk_objects WHERE name = '%s' AND resource IN ('%s', '%s.apps')"
                 % (o["metadata"]["name"], res, res))
            val = subprocess.run(["sqlite3", os.path.join(data_dir, "sqlkube.db"), q],
                                 check=True, capture_output=True).stdout.rstrip(b"\n")
            if not val:
                raise SystemExit("no row for %s: %s" % (o["metadata"]["name"], q))
            stored = json.loads(val)
            mf = stored["metadata"].get("managedFields")
            member = len(b',"managedFields":') + len(json.dumps(
                mf, separators=(",", ":"), ensure_ascii=False).encode()) if mf else 0
            rows.append((kind, how, len(val), len(val) - member))
    return rows


def sql(db, q):
    return subprocess.run(["sqlite3", db, q], check=True, capture_output=True,
                          text=True).stdout.strip()


def disk_sizes(port, data_dir, workdir, n):
    ways = (("create", ["create"]), ("apply", ["apply"]),
            ("apply --server-side", ["apply", "--server-side"]))
    groups = []
    for how, args in ways:
        for kind, obj in SAMPLES.items():
            ns = "disk-%s-%s" % (kind, how.split()[-1].strip("-"))
            items = []
            for i in range(n):
                o = json.loads(json.dumps(obj))
                o["metadata"]["name"] = "%s-%d" % (o["metadata"]["name"], i)
                items.append(o)
            path = os.path.join(workdir, "list.json")
            with open(path, "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
            kubectl = ["kubectl", "-s", "http://127.0.0.1:%d" % port]
            subprocess.run(kubectl + ["create", "namespace", ns], check=True, capture_output=True)
            subprocess.run(kubectl + ["-n", ns] + args + ["-f", path], check=True,
                           capture_output=True)
            res = {"deployment": "deployments.apps", "configmap": "configmaps",
                   "service": "services"}[kind]
            mine = "namespace = '%s' AND resource = '%s' AND name GLOB '%s-*'" % (
                ns, res, obj["metadata"]["name"])
            groups.append((kind, how, ns, mine))
    snap = os.path.join(workdir, "snap.db")
    sql(os.path.join(data_dir, "sqlkube.db"), ".backup '%s'" % snap)
    pages = ("SELECT SUM(pgsize) FROM dbstat "
             "WHERE name IN ('sk_history', 'sk_history_key')")
    rows = []
    for kind, how, ns, mine in groups:
        db = os.path.join(workdir, "group.db")
        shutil.copyfile(snap, db)
        sql(db, "DELETE FROM sk_history WHERE NOT (%s); VACUUM;" % mine)
        count = int(sql(db, "SELECT COUNT(*) FROM sk_objects"))
        if count != n:
            raise SystemExit("%s: %d current rows, wanted %d" % (ns, count, n))
        with_mf = int(sql(db, pages))
        sql(db, "UPDATE sk_history SET value = json_remove(value, '$.metadata.managedFields'); "
                "VACUUM;")
        rows.append((kind, how, with_mf / n, int(sql(db, pages)) / n))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--n", type=int, default=2000, help="requests of each kind")
    ap.add_argument("--blocks", type=int, default=10)
    ap.add_argument("--disk", type=int, default=300, help="objects per kind for the on-disk size")
    a = ap.parse_args()
    data_dir = tempfile.mkdtemp(prefix="sk-abench-")
    port = free_port()
    log = open(os.path.join(data_dir, "server.log"), "w")
    proc = subprocess.Popen([a.bin, "serve", "--plain-http", "--listen", "127.0.0.1:%d" % port,
                             "--data-dir", data_dir], stdout=log, stderr=subprocess.STDOUT)
    try:
        t0 = time.monotonic()
        while True:
            try:
                if Client(port).req("GET", "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() - t0 > 60:
                raise SystemExit("server did not start: see %s/server.log" % data_dir)
            time.sleep(0.05)
        size, bare, res = latency_and_cpu(port, proc.pid, a.n, a.blocks)
        print("ConfigMap of %d bytes (%d with the managedFields of its %d managers), "
              "%d requests each, interleaved in %d blocks" % (bare, size, MANAGERS, a.n, a.blocks))
        print("%-28s %9s %9s %14s" % ("", "p50 ms", "p99 ms", "CPU ms/req"))
        for name, label in (("apply", "apply (apply-patch+yaml)"), ("put", "PUT update")):
            lat, cpu = res[name]
            print("%-28s %9.3f %9.3f %14.3f" % (label, pct(lat, 0.5) * 1e3, pct(lat, 0.99) * 1e3,
                                                cpu / len(lat) * 1e3))
        print()
        print("%-12s %-22s %10s %16s %8s" % ("kind", "written by kubectl", "stored B",
                                             "w/o managedF. B", "ratio"))
        for kind, how, with_mf, without in stored_sizes(port, data_dir, data_dir):
            print("%-12s %-22s %10d %16d %8.2f" % (kind, how, with_mf, without, with_mf / without))
        print()
        print("on disk, bytes per object (%d objects of each: value, key columns, "
              "index entries, page slack)" % a.disk)
        print("%-12s %-22s %10s %16s %8s" % ("kind", "written by kubectl", "on disk B",
                                             "w/o managedF. B", "ratio"))
        for kind, how, with_mf, without in disk_sizes(port, data_dir, data_dir, a.disk):
            print("%-12s %-22s %10.0f %16.0f %8.2f" % (kind, how, with_mf, without,
                                                       with_mf / without))
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
