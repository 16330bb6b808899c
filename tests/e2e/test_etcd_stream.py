"""The etcd face's Watch stream at the HTTP/2 and protobuf level, with a
small hand-written client (etcdctl 3.4 neither asks for progress nor reads
slowly): what only a raw client can steer.

- one stream, many watches: ids chosen by the server (from 0) and by the
  client, a duplicate id refused as etcd refuses it, cancel, NOPUT and
  NODELETE filters, an empty range refused;
- requests cut across DATA frames anywhere, and several in one frame;
- progress: a WatchProgressRequest answered with watch_id -1 and the
  current revision; progress_notify responses on an idle watch
  (--etcd-watch-progress-interval 1);
- backpressure: a stream whose client grants no flow-control window stalls
  alone (another stream on the same connection keeps receiving), its
  watcher falls behind the bounded send queue, and once the client reads
  again every event arrives from the store's history, in order, with no
  gap and no duplicate.
"""

import os
import shutil
import socket
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from pbcodec import fields, varint  # noqa: E402
from server import Server, free_port  # noqa: E402

ETCDCTL = shutil.which("etcdctl")
WATCH = b"/etcdserverpb.Watch/Watch"

# ---- protobuf, just what WatchRequest / WatchResponse need -------------------


def pb_int(num, v):
    return varint(num << 3) + varint(v)


def pb_bytes(num, b):
    return varint(num << 3 | 2) + varint(len(b)) + b


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def create(key, end=b"", start=0, progress=False, filters=(), prev_kv=False, watch_id=0):
    body = pb_bytes(1, key) + (pb_bytes(2, end) if end else b"") + pb_int(3, start)
    body += pb_int(4, int(progress)) + b"".join(pb_int(5, f) for f in filters)
    body += pb_int(6, int(prev_kv)) + pb_int(7, watch_id)
    return pb_bytes(1, body)


def cancel(watch_id):
    return pb_bytes(2, pb_int(1, watch_id))


PROGRESS = pb_bytes(3, b"")


class Resp:
    """A decoded WatchResponse."""

    def __init__(self, raw):
        f = fields(raw)
        self.rev = fields(f[1][0]).get(3, [0])[0] if 1 in f else 0
        self.id = signed(f.get(2, [0])[0])
        self.created = bool(f.get(3, [0])[0])
        self.canceled = bool(f.get(4, [0])[0])
        self.compact = f.get(5, [0])[0]
        self.reason = f.get(6, [b""])[0].decode()
        self.events = []
        for e in f.get(11, []):
            e = fields(e)
            kv = fields(e[2][0])
            self.events.append((e.get(1, [0])[0], kv[1][0], kv.get(3, [0])[0],
                                kv.get(5, [b""])[0]))

    def __repr__(self):
        return "Resp(id=%d rev=%d created=%s canceled=%s reason=%r events=%d)" % (
            self.id, self.rev, self.created, self.canceled, self.reason, len(self.events))


# ---- HTTP/2, a client of just enough of it ------------------------------------

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST, SETTINGS, PING, GOAWAY, WINDOW = 0, 1, 3, 4, 6, 7, 8


def frame(ftype, flags, sid, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) \
        + payload


def literal(name, value):
    """HPACK: a literal header field without indexing, new name, no Huffman."""
    assert len(name) < 127 and len(value) < 127
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


class H2:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        # The connection's window wide open: streams are throttled one by one.
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0, b"") +
                          frame(WINDOW, 0, 0, struct.pack(">I", (1 << 31) - 1 - 65535)))
        self.buf = b""
        self.next_sid = 1
        self.body, self.msgs, self.auto, self.ended = {}, {}, {}, set()

    def close(self):
        self.sock.close()

    def open(self, auto=True):
        """A Watch stream; auto: grant window for whatever arrives."""
        sid, self.next_sid = self.next_sid, self.next_sid + 2
        block = b"".join(literal(n, v) for n, v in (
            (b":method", b"POST"), (b":scheme", b"http"), (b":path", WATCH),
            (b":authority", b"127.0.0.1"), (b"content-type", b"application/grpc"),
            (b"te", b"trailers")))
        self.sock.sendall(frame(HEADERS, 0x4, sid, block))
        self.body[sid], self.msgs[sid], self.auto[sid] = b"", [], auto
        return sid

    def send(self, sid, *msgs, cuts=()):
        """The messages framed, in one run of bytes sent as DATA frames cut
        at the given offsets."""
        data = b"".join(b"\x00" + struct.pack(">I", len(m)) + m for m in msgs)
        bounds = [0] + list(cuts) + [len(data)]
        for a, b in zip(bounds, bounds[1:]):
            self.sock.sendall(frame(DATA, 0, sid, data[a:b]))

    def grant(self, sid, n=(1 << 30)):
        self.auto[sid] = True
        self.sock.sendall(frame(WINDOW, 0, sid, struct.pack(">I", n)))

    def pump(self, seconds):
        self.sock.settimeout(seconds)
        try:
            chunk = self.sock.recv(1 << 20)
        except socket.timeout:
            return
        if not chunk:
            raise AssertionError("the server closed the connection")
        self.buf += chunk
        while len(self.buf) >= 9:
            n = struct.unpack(">I", b"\0" + self.buf[:3])[0]
            if len(self.buf) < 9 + n:
                break
            ftype, flags, sid = self.buf[3], self.buf[4], struct.unpack(">I", self.buf[5:9])[0]
            payload, self.buf = self.buf[9:9 + n], self.buf[9 + n:]
            if ftype == SETTINGS and not flags & 1:
                self.sock.sendall(frame(SETTINGS, 1, 0, b""))
            elif ftype == PING and not flags & 1:
                self.sock.sendall(frame(PING, 1, 0, payload))
            elif ftype == DATA:
                self.body[sid] += payload
                while len(self.body[sid]) >= 5:
                    m = struct.unpack(">I", self.body[sid][1:5])[0]
                    if len(self.body[sid]) < 5 + m:
                        break
                    self.msgs[sid].append(Resp(self.body[sid][5:5 + m]))
                    self.body[sid] = self.body[sid][5 + m:]
                if self.auto[sid] and n:
                    self.sock.sendall(frame(WINDOW, 0, sid, struct.pack(">I", n)))
            if ftype in (HEADERS, DATA, RST) and (flags & 1 or ftype == RST):
                self.ended.add(sid)
            if ftype == GOAWAY:
                raise AssertionError("GOAWAY from the server")

    def wait(self, sid, count, timeout=10):
        """Waits until stream sid has at least count responses; returns them."""
        deadline = time.monotonic() + timeout
        while len(self.msgs[sid]) < count and time.monotonic() < deadline:
            self.pump(0.1)
        return self.msgs[sid]


@unittest.skipUnless(ETCDCTL, "etcdctl (Debian etcd-client) needed")
class WatchStream(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.port = free_port()
        cls.server = Server(cls.__name__, extra_args=[
            "--etcd-listen", "127.0.0.1:%d" % cls.port, "--etcd-watch-progress-interval", "1",
            # no background writer takes a revision in the middle of a test
            "--compact-interval", "0", "--identity-lease-duration", "86400",
            "--identity-lease-renew-interval", "86400"])
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def setUp(self):
        self.h2 = H2(self.port)

    def tearDown(self):
        self.h2.close()

    def ctl(self, *args, input=None):
        p = subprocess.run([ETCDCTL, "--endpoints=http://127.0.0.1:%d" % self.port] + list(args),
                           input=input, capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, ETCDCTL_API="3"))
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def rev(self):
        out = self.ctl("get", "sk-no-such-key", "-w", "fields")
        return int([l for l in out.splitlines() if l.startswith('"Revision"')][0].split(":")[1])

    def test_many_watches_on_one_stream(self):
        h, sid = self.h2, self.h2.open()
        rev = self.rev()
        # Two creates in one run cut inside the first one's prefix and body.
        h.send(sid, create(b"/s/a"), create(b"/s/", b"/s0"), cuts=(3, 9))
        got = h.wait(sid, 2)
        self.assertEqual([(r.id, r.created, r.canceled, r.rev) for r in got[:2]],
                         [(0, True, False, rev), (1, True, False, rev)])
        h.send(sid, create(b"/s/", b"/s0", filters=(0,), watch_id=7))    # NOPUT
        h.send(sid, create(b"/s/", b"/s0", filters=(1,), watch_id=8))    # NODELETE
        h.send(sid, create(b"/s/", watch_id=7))                        # duplicate
        h.send(sid, create(b"/s/b", b"/s/a"))                           # empty range
        got = h.wait(sid, 6)
        self.assertEqual([(r.id, r.created, r.canceled, r.reason) for r in got[2:6]], [
            (7, True, False, ""), (8, True, False, ""),
            (-1, True, True, "mvcc: duplicate watch ID provided on the WatchStream"),
            (-1, True, True, "mvcc: watcher range is empty")])
        self.ctl("put", "/s/a", "1")
        self.ctl("put", "/s/b", "2")
        self.ctl("del", "/s/a")
        got = h.wait(sid, 6 + 8)[6:]
        seen = sorted((r.id, r.rev, [(t, k) for t, k, m, v in r.events]) for r in got)
        self.assertEqual(seen, [
            (0, rev + 1, [(0, b"/s/a")]), (0, rev + 3, [(1, b"/s/a")]),
            (1, rev + 1, [(0, b"/s/a")]), (1, rev + 2, [(0, b"/s/b")]),
            (1, rev + 3, [(1, b"/s/a")]),
            (7, rev + 3, [(1, b"/s/a")]),
            (8, rev + 1, [(0, b"/s/a")]), (8, rev + 2, [(0, b"/s/b")])])
        # Cancel: a canceled response, then nothing more for that watch.
        h.send(sid, cancel(1), cancel(99))
        got = h.wait(sid, 15)
        self.assertEqual([(r.id, r.canceled) for r in got[14:]], [(1, True)])
        self.ctl("put", "/s/b", "3")
        got = h.wait(sid, 16 + 1, timeout=2)
        self.assertEqual(sorted(r.id for r in got[15:]), [8])  # not 1 any more

    def test_progress(self):
        h, sid = self.h2, self.h2.open()
        h.send(sid, create(b"/p/idle", progress=True), create(b"/p/other"))
        h.wait(sid, 2)
        self.ctl("put", "/p/x", "1")
        rev = self.rev()
        h.send(sid, PROGRESS)
        deadline = time.monotonic() + 5
        while not any(r.id == -1 for r in h.msgs[sid]) and time.monotonic() < deadline:
            h.pump(0.1)
        answers = [r for r in h.msgs[sid] if r.id == -1]
        self.assertEqual([(r.rev, r.events, r.created, r.canceled) for r in answers],
                         [(rev, [], False, False)])
        # progress_notify: the idle watch 0 gets empty responses about every
        # second (with the revision caught up to; one may predate the put);
        # watch 1, which did not ask, none.
        start = len(h.msgs[sid])
        h.wait(sid, start + 2, timeout=4)
        notes = [r for r in h.msgs[sid][2:] if r.id != -1]
        self.assertGreaterEqual(len(h.msgs[sid]), start + 2)
        self.assertEqual({(r.id, len(r.events)) for r in notes}, {(0, 0)})
        self.assertEqual([r.rev for r in h.msgs[sid][start:]], [rev] * (len(h.msgs[sid]) - start))
        self.assertEqual(sorted(r.rev for r in notes), [r.rev for r in notes])

    def test_slow_stream_falls_back_to_history(self):
        """A stream granting no window stalls alone; its watcher, past the
        bounded queue, is served again from the store once it reads."""
        h = self.h2
        slow, fast = h.open(auto=False), h.open()
        h.send(slow, create(b"/big/", b"/big0"))
        h.send(fast, create(b"/tick"))
        h.wait(slow, 1)
        h.wait(fast, 1)
        rev = self.rev()
        value = "x" * 10000
        txns = 6  # 6 x 100 x 10 kB: more than the 4 MiB send queue
        for t in range(txns):
            ops = "".join("put /big/%d-%03d %s\n" % (t, i, value) for i in range(100))
            self.ctl("txn", input="\n" + ops + "\n\n")
            self.ctl("put", "/tick", str(t))
        # The fast stream got every tick while the slow one was stalled.
        got = h.wait(fast, 1 + txns)
        self.assertEqual([r.rev for r in got[1:]], [rev + 2 * t + 2 for t in range(txns)])
        self.assertLess(sum(len(r.events) for r in h.msgs[slow]), 600)
        h.grant(slow)
        deadline = time.monotonic() + 30
        while sum(len(r.events) for r in h.msgs[slow]) < 600 and time.monotonic() < deadline:
            h.pump(0.2)
        got = h.msgs[slow][1:]
        # A response per transaction (each is about the budget of one); a
        # response that ends a catch-up span may carry the span's end in its
        # header, as etcd's batches carry its current revision.
        self.assertEqual(len(got), txns)
        for t, r in enumerate(got):
            self.assertEqual([k for _, k, _, _ in r.events],
                             [b"/big/%d-%03d" % (t, i) for i in range(100)])
            self.assertEqual({(m, len(v)) for _, _, m, v in r.events},
                             {(rev + 2 * t + 1, 10000)})
            self.assertTrue(rev + 2 * t + 1 <= r.rev <= rev + 2 * txns, r.rev)
        self.assertNotIn(slow, h.ended)

    def test_watch_behind_gets_revisions_coalesced(self):
        """A watch that fell behind (passed over while its stream could not
        take data) gets what it missed in few responses, each of whole
        revisions, its header at or past its last event and not past the
        store, its keys and values within about 1 MiB unless one revision is
        more, every event once and in order. (The 100 x 10 kB transactions
        sit just under that budget: a response holds one of them.)"""
        h = self.h2
        slow = h.open(auto=False)
        h.send(slow, create(b"/co/", b"/co0"))
        h.wait(slow, 1)
        rev = self.rev()
        value = "x" * 10000
        for t in range(5):  # 5 x 100 x 10 kB: more than the 4 MiB send queue
            ops = "".join("put /co/big/%d-%03d %s\n" % (t, i, value) for i in range(100))
            self.ctl("txn", input="\n" + ops + "\n\n")
        for i in range(10):
            self.ctl("put", "/co/small/%d" % i, str(i))
        h.grant(slow)
        deadline = time.monotonic() + 30
        while sum(len(r.events) for r in h.msgs[slow]) < 510 and time.monotonic() < deadline:
            h.pump(0.2)
        got = h.msgs[slow][1:]
        events = [e for r in got for e in r.events]
        self.assertEqual([m for _, _, m, _ in events],
                         [rev + 1 + t for t in range(5) for _ in range(100)] +
                         [rev + 6 + i for i in range(10)])
        for r in got:
            self.assertGreaterEqual(r.rev, r.events[-1][2])
            self.assertLessEqual(r.rev, rev + 15)
            revs = {m for _, _, m, _ in r.events}
            self.assertTrue(len(revs) == 1 or
                            sum(len(k) + len(v) for _, k, _, v in r.events) <= 1 << 20)
        small = [r for r in got if any(k.startswith(b"/co/small/") for _, k, _, _ in r.events)]
        self.assertLess(len(small), 10)
        self.ctl("del", "--prefix", "/co/")


if __name__ == "__main__":
    unittest.main()
