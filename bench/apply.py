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

Usage: bench/apply.py --bin build/sqlkube [--n 2000]
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
from benchlib import free_port, Client

NS_PATH = "/api/v1/namespaces/default/configmaps"
MANAGERS = 10
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


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
            q = ("SELECT h.value FROM sk_current c JOIN sk_history h ON h.rev = c.rev "
                 "WHERE c.name = '%s' AND c.resource IN ('%s', '%s.apps')" % (o["metadata"]["name"], res, res))
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--n", type=int, default=2000, help="requests of each kind")
    ap.add_argument("--blocks", type=int, default=10)
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
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
