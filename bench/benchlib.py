"""What the Python benchmarks share: a free loopback port, a process's CPU
time so far, and a JSON client on one keep-alive HTTP connection (HTTPS when
given an ssl context). Stdlib only."""

import http.client
import json
import os
import socket


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
