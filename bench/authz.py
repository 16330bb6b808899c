#!/usr/bin/python3
"""Authorization and TLS benchmark (issue 19): what RBAC, TLS handshakes and
10,000 role bindings cost, against the same server in AlwaysAllow mode.

One run starts two fresh `sqlkube serve` (SQLite, HTTPS with the generated
CA) one after the other: --authorization-mode=RBAC and AlwaysAllow. In each,
an admin (a certificate in system:masters) creates namespace `bench`, one
ConfigMap, a Role allowing `get configmaps` there and a RoleBinding of it to
the user `bench-user` (a client certificate CN=bench-user signed by the
server's CA, no groups), plus --bindings unrelated RoleBindings (other
users, 10 namespaces). Then, as bench-user:

  * keep-alive: --threads threads, each on one HTTPS keep-alive connection,
    GET the ConfigMap back to back for --seconds: requests/s, p50, p99;
  * handshake: one thread, a new TLS connection (full handshake, no session
    resumption: Python's http.client offers none) per GET, against one
    thread on one keep-alive connection: ms per request each way, and bare
    handshakes/s (connect + TLS handshake + close, no request);
  * creating the --bindings RoleBindings (8 threads): seconds, per mode
    (under RBAC every request after an RBAC write rebuilds the policy);
  * memory: VmRSS of the RBAC server after the bootstrap policy (one
    authorized request made), and of an RBAC server started on the
    AlwaysAllow server's data dir once that holds --rss-bindings
    RoleBindings (created there: no policy to rebuild at every write), one
    authorized request later (the policy built).

The client runs on the same machine (Python threads: one core at most for
the client), so requests/s are a floor for the server; compare the two
modes with each other rather than with other benchmarks.

Usage: bench/authz.py --bin build/sqlkube [--threads 4] [--seconds 10]
                      [--bindings 1000] [--rss-bindings 10000]
Prints markdown tables. Needs /usr/bin/python3 with `cryptography` (as the
e2e tests do) for the client certificates.
"""

import argparse
import datetime
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time

from benchlib import Client, cpu_seconds, free_port

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

NS = "bench"
CM = "/api/v1/namespaces/%s/configmaps/target" % NS
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def client_cert(data_dir, cn, orgs=()):
    """A client certificate for cn (O orgs) signed by the server's CA, as
    files in data_dir; returns (cert_path, key_path)."""
    with open(os.path.join(data_dir, "ca.crt"), "rb") as f:
        ca = x509.load_pem_x509_certificate(f.read())
    with open(os.path.join(data_dir, "ca.key"), "rb") as f:
        ca_key = serialization.load_pem_private_key(f.read(), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]
                     + [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = (os.path.join(data_dir, cn + ".crt"), os.path.join(data_dir, cn + ".key"))
    with open(paths[0], "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(paths[1], "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return paths


def vmrss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pct(sorted_vals, p):
    return sorted_vals[min(len(sorted_vals) - 1, int(len(sorted_vals) * p))]


class Server:
    def __init__(self, binary, mode, data_dir=None, extra_args=()):
        self.dir = data_dir or tempfile.mkdtemp(prefix="sk-authz-")
        self.port = free_port()
        self.log = open(os.path.join(self.dir, "server.log"), "a")
        self.proc = subprocess.Popen(
            [binary, "serve", "--listen", "127.0.0.1:%d" % self.port, "--data-dir", self.dir,
             "--authorization-mode", mode] + list(extra_args),
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while not os.path.exists(os.path.join(self.dir, "kubeconfig")):
            if time.time() > deadline or self.proc.poll() is not None:
                raise SystemExit("server did not start: see %s/server.log" % self.dir)
            time.sleep(0.1)
        ca = os.path.join(self.dir, "ca.crt")
        self.admin = self.context(ca, client_cert(self.dir, "bench-admin", ["system:masters"]))
        self.user = self.context(ca, client_cert(self.dir, "bench-user"))
        while True:
            try:
                if Client(self.port, self.admin).req("GET", "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise SystemExit("server not ready: see %s/server.log" % self.dir)
            time.sleep(0.2)

    @staticmethod
    def context(ca, cert):
        ctx = ssl.create_default_context(cafile=ca)
        ctx.load_cert_chain(*cert)
        return ctx

    def stop(self, keep=False):
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self.log.close()
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def must(st, body, want):
    if st != want:
        raise SystemExit("want %d, got %d: %s" % (want, st, body[:300]))


def binding(name, user, role):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}]}


def setup(srv, bindings):
    c = Client(srv.port, srv.admin)
    for i in range(10):
        must(*c.req("POST", "/api/v1/namespaces", {"metadata": {"name": "other-%d" % i}}), 201)
    must(*c.req("POST", "/api/v1/namespaces", {"metadata": {"name": NS}}), 201)
    must(*c.req("POST", "/api/v1/namespaces/%s/configmaps" % NS,
                {"metadata": {"name": "target"}, "data": {"k": "v" * 100}}), 201)
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}
    must(*c.req("POST", RBAC + "/namespaces/%s/roles" % NS, role), 201)
    must(*c.req("POST", RBAC + "/namespaces/%s/rolebindings" % NS,
                binding("bench-user", "bench-user", "cm-reader")), 201)
    t0 = time.perf_counter()
    add_bindings(srv, 0, bindings)
    return time.perf_counter() - t0


def add_bindings(srv, start, end, threads=8):
    def worker(k):
        c = Client(srv.port, srv.admin)
        for i in range(start + k, end, threads):
            ns = "other-%d" % (i % 10)
            must(*c.req("POST", RBAC + "/namespaces/%s/rolebindings" % ns,
                        binding("rb-%05d" % i, "user-%05d" % i, "cm-reader")), 201)
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def user_get_ok(srv):
    deadline = time.time() + 30
    while time.time() < deadline:
        if Client(srv.port, srv.user).req("GET", CM)[0] == 200:
            return
        time.sleep(0.1)
    raise SystemExit("bench-user cannot read the ConfigMap")


def keepalive_load(srv, threads, seconds):
    lats, lock, errors = [], threading.Lock(), []
    stop_at = time.monotonic() + seconds

    def worker():
        c = Client(srv.port, srv.user)
        mine = []
        while time.monotonic() < stop_at:
            t0 = time.perf_counter()
            st, _ = c.req("GET", CM)
            mine.append(time.perf_counter() - t0)
            if st != 200:
                errors.append(st)
        with lock:
            lats.extend(mine)
    ts = [threading.Thread(target=worker) for _ in range(threads)]
    t0, c0 = time.monotonic(), cpu_seconds(srv.proc.pid)
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    elapsed = time.monotonic() - t0
    cpu = cpu_seconds(srv.proc.pid) - c0
    if errors:
        raise SystemExit("%d requests failed: %s" % (len(errors), errors[:5]))
    lats.sort()
    return (len(lats) / elapsed, pct(lats, 0.5) * 1e3, pct(lats, 0.99) * 1e3,
            cpu * 1e6 / len(lats))


def per_request_ms(srv, n, new_connection):
    """(wall ms, server CPU us) per GET, one thread."""
    c = Client(srv.port, srv.user)
    t0, c0 = time.perf_counter(), cpu_seconds(srv.proc.pid)
    for _ in range(n):
        if new_connection:
            c = Client(srv.port, srv.user)
        st, _ = c.req("GET", CM)
        if st != 200:
            raise SystemExit("GET failed: %d" % st)
        if new_connection:
            c.conn.close()
    return (time.perf_counter() - t0) / n * 1e3, (cpu_seconds(srv.proc.pid) - c0) * 1e6 / n


def handshakes(srv, n):
    """(handshakes/s, server CPU ms per handshake), one thread."""
    t0, c0 = time.perf_counter(), cpu_seconds(srv.proc.pid)
    for _ in range(n):
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as raw:
            with srv.user.wrap_socket(raw, server_hostname="localhost") as s:
                s.do_handshake()
    return n / (time.perf_counter() - t0), (cpu_seconds(srv.proc.pid) - c0) * 1e3 / n


def run_mode(binary, mode, args):
    """The load figures of one mode. AlwaysAllow also goes on to store
    --rss-bindings RoleBindings (fast: no policy to rebuild) and returns its
    data dir for the RSS measurement."""
    srv = Server(binary, mode)
    res = {"mode": mode}
    keep = False
    try:
        # one authorized request: the bootstrap policy is built (RBAC)
        must(*Client(srv.port, srv.admin).req("GET", "/api/v1/namespaces/default"), 200)
        time.sleep(1)
        res["rss_base"] = vmrss_kb(srv.proc.pid)
        res["create_s"] = setup(srv, args.bindings)
        user_get_ok(srv)
        keepalive_load(srv, args.threads, 2)  # warm-up
        res["rps"], res["p50"], res["p99"], res["cpu_us"] = keepalive_load(
            srv, args.threads, args.seconds)
        res["keepalive_ms"], res["keepalive_cpu_us"] = per_request_ms(srv, 500, False)
        res["newconn_ms"], res["newconn_cpu_us"] = per_request_ms(srv, 200, True)
        res["handshakes_s"], res["handshake_cpu_ms"] = handshakes(srv, 200)
        if mode == "AlwaysAllow":
            add_bindings(srv, args.bindings, args.rss_bindings)
            res["dir"] = srv.dir
            keep = True
    finally:
        srv.stop(keep)
    return res


def rss_with_bindings(binary, data_dir):
    """RBAC on the data dir holding the bindings: VmRSS once the policy is
    built (one authorized request), and one thread's GETs/s then."""
    srv = Server(binary, "RBAC", data_dir)
    try:
        user_get_ok(srv)
        time.sleep(1)
        user_get_ok(srv)
        rss = vmrss_kb(srv.proc.pid)
        c = Client(srv.port, srv.user)
        t0, n = time.perf_counter(), 0
        while time.perf_counter() - t0 < 3:
            must(*c.req("GET", CM), 200)
            n += 1
        return rss, n / (time.perf_counter() - t0)
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/sqlkube")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--bindings", type=int, default=1000)
    ap.add_argument("--rss-bindings", type=int, default=10000)
    args = ap.parse_args()
    rows = [run_mode(args.bin, m, args) for m in ("RBAC", "AlwaysAllow")]
    rss_10k, rps_10k = rss_with_bindings(args.bin, rows[1].pop("dir"))
    print("| mode | GETs/s (%d threads, keep-alive) | p50 ms | p99 ms | server CPU us/GET |"
          % args.threads)
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %.0f | %.2f | %.2f | %.0f |" % (r["mode"], r["rps"], r["p50"], r["p99"],
                                                   r["cpu_us"]))
    print()
    print("| mode | one thread: ms/GET keep-alive (server CPU us) | ms/GET, new TLS connection "
          "each (server CPU us) | bare handshakes/s (server CPU ms each) |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print("| %s | %.2f (%.0f) | %.2f (%.0f) | %.0f (%.2f) |" % (
            r["mode"], r["keepalive_ms"], r["keepalive_cpu_us"], r["newconn_ms"],
            r["newconn_cpu_us"], r["handshakes_s"], r["handshake_cpu_ms"]))
    print()
    print("| mode | %d RoleBindings created by 8 threads (s) |" % args.bindings)
    print("|---|---:|")
    for r in rows:
        print("| %s | %.1f |" % (r["mode"], r["create_s"]))
    print()
    print("| RoleBindings | RBAC server VmRSS (MiB) | one-thread GETs/s as bench-user |")
    print("|---|---:|---:|")
    print("| bootstrap only | %.1f | |" % (rows[0]["rss_base"] / 1024))
    print("| %d | %.1f | %.0f |" % (args.rss_bindings + 1, rss_10k / 1024, rps_10k))
    print()
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
