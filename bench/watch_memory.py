"""watch_memory.py - the server's RSS per open watch.

    python3 bench/watch_memory.py BINARY

Starts `BINARY serve` (plain HTTP, SQLite in a temp dir), opens 50 watches
to warm up, then 1,000 more plain-HTTP watches of ConfigMaps (raw sockets,
each read up to the end of its response head), and prints the RSS growth
per watcher; then creates one 1 KiB ConfigMap (every watcher gets its
event) and prints it again. Needs `ulimit -n` above 1,100.
"""
import socket, subprocess, sys, tempfile, time, urllib.request, os
binary = sys.argv[1]
d = tempfile.mkdtemp(prefix="wm-")
port = 20000 + os.getpid() % 20000
p = subprocess.Popen([binary, "serve", "--plain-http", "--listen", "127.0.0.1:%d" % port, "--data-dir", d],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
def rss():
    for l in open("/proc/%d/status" % p.pid):
        if l.startswith("VmRSS"):
            return int(l.split()[1])
for _ in range(100):
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port).read(); break
    except Exception: time.sleep(0.1)
path = "/api/v1/namespaces/default/configmaps?watch=true"
def one():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n" % path).encode())
    return s
warm = [one() for _ in range(50)]
time.sleep(1)
r0 = rss()
socks = [one() for _ in range(1000)]
for s in socks:
    s.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(4096)
time.sleep(1)
r1 = rss()
# one event each, then idle again
body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m"},"data":{"k":"' + b"x" * 1000 + b'"}}'
urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%d/api/v1/namespaces/default/configmaps" % port, data=body, headers={"Content-Type": "application/json"})).read()
time.sleep(2)
r2 = rss()
print("%s: RSS per watcher after the head %.1f KiB, after one 1 KiB event %.1f KiB" % (binary, (r1 - r0) / 1000, (r2 - r0) / 1000))
p.terminate(); p.wait()
