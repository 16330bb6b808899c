"""WATCH on the wire: the bytes of a watch response, sent by the streamer.

A watch's body is sent by threads of its own (src/http/streamer.c), not by
libmicrohttpd's event loops, which only hand the connection over. These
tests read raw sockets, plain and TLS, to check what a client receives: the
head, HTTP/1.1 chunked framing (or an unframed body for HTTP/1.0), the end
of the body at timeoutSeconds followed by the connection's close; that a
client closing its socket releases its watch at once; and that a server
stops promptly while watchers that stopped reading hold full sockets.
"""

import json
import os
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import Server, ServerTestCase, metric, wait_until  # noqa: E402

NS = "default"
BASE = "/api/v1/namespaces/%s/configmaps" % NS


def raw_connect(server):
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    if server.tls:
        sock = server.ssl_context().wrap_socket(sock, server_hostname="127.0.0.1")
    return sock


def send_get(sock, path, version="HTTP/1.1"):
    sock.sendall(("GET %s %s\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n"
                  % (path, version)).encode())


def read_head(sock):
    """Reads up to the end of the response head; returns (status line,
    {lower-case name: value}, bytes of the body already read)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError("connection closed inside the head: %r" % data)
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return lines[0], fields, rest


def read_to_eof(sock, data, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, "no end of the body within %ds" % timeout
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def dechunk(body):
    """The payload of an HTTP/1.1 chunked body; asserts the framing is exact
    and ends with the last chunk and nothing after it."""
    out = b""
    while True:
        line, sep, body = body.partition(b"\r\n")
        assert sep, "a chunk size line without its CRLF"
        size = int(line, 16)
        if size == 0:
            assert body == b"\r\n", "bytes after the last chunk: %r" % body[:80]
            return out
        assert body[size:size + 2] == b"\r\n", "a chunk not followed by CRLF"
        out += body[:size]
        body = body[size + 2:]


def events(payload):
    return [json.loads(line) for line in payload.split(b"\n") if line.strip()]


class WatchTransport(ServerTestCase, unittest.TestCase):
    server_tls = False

    def rv_now(self):
        r = self.server.request("GET", BASE + "?limit=1")
        self.assertEqual(r.status, 200, r)
        return int(r.json()["metadata"]["resourceVersion"])

    def create(self, name, data="v"):
        r = self.server.request("POST", BASE, {"apiVersion": "v1", "kind": "ConfigMap",
                                               "metadata": {"name": name}, "data": {"k": data}})
        self.assertEqual(r.status, 201, r)

    def watch_ends_with(self, version):
        tag = "%s-%s" % ("tls" if self.server.tls else "plain", version[-1])
        rv = self.rv_now()
        sock = raw_connect(self.server)
        try:
            send_get(sock, BASE + "?watch=true&timeoutSeconds=5&resourceVersion=%d" % rv, version)
            status, fields, rest = read_head(sock)
            names = ["%s-%d" % (tag, i) for i in range(3)]
            for n in names:
                self.create(n)
            started = time.monotonic()
            body = read_to_eof(sock, rest)
            # The body ended at timeoutSeconds, not at once nor at a stall.
            self.assertLess(time.monotonic() - started, 15)
        finally:
            sock.close()
        self.assertEqual(status, "HTTP/1.1 200 OK")
        self.assertEqual(fields.get("content-type"), "application/json")
        self.assertEqual(fields.get("connection"), "close")
        self.assertTrue(fields.get("audit-id"), fields)
        return fields, body, names

    def test_http11_watch_is_chunked_and_ends_with_the_last_chunk(self):
        fields, body, names = self.watch_ends_with("HTTP/1.1")
        self.assertEqual(fields.get("transfer-encoding"), "chunked")
        evs = events(dechunk(body))
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in evs],
                         [("ADDED", n) for n in names])

    def test_http10_watch_is_unframed_and_ends_with_the_close(self):
        fields, body, names = self.watch_ends_with("HTTP/1.0")
        self.assertNotIn("transfer-encoding", fields)
        evs = events(body)
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in evs],
                         [("ADDED", n) for n in names])

    def test_closed_clients_release_their_watches_at_once(self):
        base = metric(self.server, "apiserver_registered_watchers")
        socks = []
        try:
            for _ in range(20):
                s = raw_connect(self.server)
                send_get(s, BASE + "?watch=true")
                read_head(s)
                socks.append(s)
            wait_until(lambda: metric(self.server, "apiserver_registered_watchers") >= base + 20,
                       timeout=10, what="20 watches registered")
        finally:
            for s in socks:
                s.close()
        # Noticed from the socket (epoll), not at a later send or the hub's
        # once-a-second tick.
        started = time.monotonic()
        wait_until(lambda: metric(self.server, "apiserver_registered_watchers") <= base,
                   timeout=10, interval=0.05, what="the closed watches released")
        self.assertLess(time.monotonic() - started, 1.0)


class WatchTransportTLS(WatchTransport):
    server_tls = True


class WatchTransportStop(unittest.TestCase):
    """A server stops within its grace while watchers that stopped reading
    have full sockets and bytes waiting in the streamer; and after hundreds
    of watches ended at once (each connection handed back to MHD, closed,
    and its context freed) it still serves and exits cleanly."""

    def test_many_watches_ending_at_once(self):
        server = Server("WatchTransportEnds")
        server.start()
        try:
            errors = []

            def watcher():
                try:
                    for _ in range(4):
                        s = raw_connect(server)
                        try:
                            send_get(s, BASE + "?watch=true&timeoutSeconds=1")
                            status, _, rest = read_head(s)
                            assert status == "HTTP/1.1 200 OK", status
                            assert dechunk(read_to_eof(s, rest)) == b""
                        finally:
                            s.close()
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(e)

            threads = [threading.Thread(target=watcher) for _ in range(50)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            self.assertEqual(errors, [])
            self.assertEqual(server.request("GET", "/readyz").status, 200)
            self.assertEqual(server.stop(), 0)
        finally:
            server.cleanup()

    def test_stop_with_stalled_watchers(self):
        server = Server("WatchTransportStop")
        server.start()
        socks = []
        try:
            r = server.request("GET", BASE + "?limit=1")
            rv = int(r.json()["metadata"]["resourceVersion"])
            for _ in range(3):
                s = raw_connect(server)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                send_get(s, BASE + "?watch=true&resourceVersion=%d" % rv)
                read_head(s)
                socks.append(s)
            big = "x" * 100000
            for i in range(80):  # 8 MB to each watcher: more than the sockets hold
                r = server.request("POST", BASE, {"apiVersion": "v1", "kind": "ConfigMap",
                                                  "metadata": {"name": "big-%d" % i},
                                                  "data": {"k": big}})
                self.assertEqual(r.status, 201, r)
            started = time.monotonic()
            rc = server.stop()
            self.assertEqual(rc, 0)
            self.assertLess(time.monotonic() - started, 4.0)
        finally:
            for s in socks:
                s.close()
            server.cleanup()


if __name__ == "__main__":
    unittest.main()
