"""CPU time and sendto() calls per write, of the server and of PostgreSQL.

usage: bench/cpu_per_write.py PG_URL POSTMASTER_PID ROUNDS etcd|rest LABEL=BINARY...
  (ETCDLOAD and WRITEBENCH name the load generators: bench/etcdload built by
  bench/etcd_side_by_side.py, build/writebench)

For each round and each binary, in the order given (so runs interleave): a
fresh database on the cluster of PG_URL, `sqlkube serve --db` on it, then
5 s of 32 clients: etcd puts of 1 KiB (etcdload) or REST creates of 1 KiB
ConfigMaps (writebench). Prints one JSON line per run: the server's and
PostgreSQL's (every child of the postmaster, those it reaped meanwhile
included) CPU µs per write from /proc/PID/stat, and their sendto() calls per write from `perf stat -e
syscalls:sys_enter_sendto` (the server's include its replies; PostgreSQL
backends send once per statement round trip, plus the change feed's reads).
"""
import json, os, signal, socket, subprocess, sys, tempfile, time, shutil
from benchlib import (cpu_seconds, create_database, free_port, postgres_cpu_seconds,
                      postmaster_children)
url, pm, rounds, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
bins = [a.split("=", 1) for a in sys.argv[5:]]
ETCDLOAD = os.environ.get("ETCDLOAD", "etcdload")
WRITEBENCH = os.environ.get("WRITEBENCH", "build/writebench")
rows = []
for r in range(rounds):
    for label, binary in bins:
        name = "m%d%s%d" % (r, label, os.getpid())
        db = create_database(url, name)
        d = tempfile.mkdtemp(prefix="sk-pgw-")
        port, rest = free_port(), free_port()
        srv = subprocess.Popen([binary, "serve", "--plain-http", "--listen", "127.0.0.1:%d" % rest,
                                "--data-dir", d, "--etcd-listen", "127.0.0.1:%d" % port, "--db", db],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), 0.2).close(); break
                except OSError:
                    time.sleep(0.1)
            time.sleep(2)
            if mode == "rest":
                subprocess.run(["curl", "-s", "-o", "/dev/null", "-H", "Content-Type: application/json", "-d",
                                '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}}',
                                "http://127.0.0.1:%d/api/v1/namespaces" % rest], check=True)
            kids = postmaster_children(pm)
            perf_s = subprocess.Popen(["perf", "stat", "-x,", "-e", "syscalls:sys_enter_sendto", "-p", str(srv.pid)],
                                      stderr=subprocess.PIPE, text=True)
            perf_p = subprocess.Popen(["perf", "stat", "-x,", "-e", "syscalls:sys_enter_sendto", "-p",
                                       ",".join(map(str, kids))], stderr=subprocess.PIPE, text=True)
            time.sleep(0.3)
            s0, p0 = cpu_seconds(srv.pid), postgres_cpu_seconds(pm)
            if mode == "etcd":
                cmd = [ETCDLOAD, "-endpoint", "127.0.0.1:%d" % port, "-mode", "put",
                       "-clients", "32", "-seconds", "5"]
            else:
                cmd = [WRITEBENCH, "--url", "http://127.0.0.1:%d" % rest,
                       "--namespace", "bench", "--clients", "32", "--seconds", "5", "--size", "1024"]
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            s1, p1 = cpu_seconds(srv.pid), postgres_cpu_seconds(pm)
            for p in (perf_s, perf_p):
                p.send_signal(signal.SIGINT)
            sends = []
            for p in (perf_s, perf_p):
                err = p.communicate(timeout=30)[1]
                sends.append(int(next(l for l in err.splitlines() if "sendto" in l).split(",")[0]))
            res = json.loads(out.stdout.strip().splitlines()[-1])
            n = res["ok"]
            row = dict(label=label, round=r, writes=n, rate=round(res.get("puts_per_s", res.get("creates_per_s"))),
                       server_us=round((s1 - s0) * 1e6 / n), pg_us=round((p1 - p0) * 1e6 / n),
                       server_sendto=round(sends[0] / n, 3), pg_sendto=round(sends[1] / n, 3), p50=res.get("p50_ms"), p99=res.get("p99_ms"), failed=res.get("failed"))
            print(json.dumps(row), flush=True)
        finally:
            srv.send_signal(signal.SIGTERM)
            try: srv.wait(timeout=20)
            except subprocess.TimeoutExpired: srv.kill(); srv.wait()
            shutil.rmtree(d, ignore_errors=True)
