"""What the Python benchmarks share: a free loopback port, and a JSON client
on one keep-alive HTTP connection (HTTPS when given an ssl context). Stdlib
only."""

import http.client
import json
import socket


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
