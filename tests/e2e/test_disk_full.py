"""SQLite on a full filesystem: the answer says the disk is full, reads go
on, /readyz says why, writes resume once space is freed, nothing is lost.

A real small filesystem (tmpfs, mounted for the test; skipped where this
process may not mount) holds the database; a filler file takes the rest of
its space. Writes until one is refused record every acknowledged name, so
the check after a restart covers exactly what the server promised.

Why: a full disk reached clients as 500 "storage error: internal error",
/readyz said ok, and the first write's failed COMMIT was taken for a lost
connection (503) whose new connection could not even open the file.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from server import CONFIG, Server, wait_until  # noqa: E402

CMS = "/api/v1/namespaces/default/configmaps"
FS_BYTES = 24 * 1024 * 1024


def cm(name, size):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"blob": "x" * size}}


class DiskFull(unittest.TestCase):

    def setUp(self):
        if CONFIG.backend != "sqlite":
            self.skipTest("SQLite's own file: PostgreSQL's disk is the server's")
        self.mnt = tempfile.mkdtemp(prefix="sqlkube-full-")
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d" % FS_BYTES, "tmpfs", self.mnt],
                           capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            os.rmdir(self.mnt)
            self.skipTest("cannot mount a small filesystem here: %s" % p.stderr.strip())
        self.server = Server("DiskFull", extra_args=[
            "--db", "sqlite:" + os.path.join(self.mnt, "sqlkube.db"),
            "--compact-interval", "0"])
        self.server.start()

    def tearDown(self):
        srv = getattr(self, "server", None)
        if srv is not None:
            srv.cleanup()
        if getattr(self, "mnt", None) and os.path.isdir(self.mnt):
            subprocess.run(["umount", self.mnt], capture_output=True, timeout=30)
            shutil.rmtree(self.mnt, ignore_errors=True)

    def fill(self, leave):
        """A filler file taking all but about `leave` bytes."""
        st = os.statvfs(self.mnt)
        free = st.f_bavail * st.f_frsize
        path = os.path.join(self.mnt, "filler")
        with open(path, "wb") as f:
            chunk = b"\0" * (1 << 20)
            left = max(0, free - leave)
            while left > 0:
                f.write(chunk[:min(left, len(chunk))])
                left -= min(left, len(chunk))
        return path

    def test_full_disk(self):
        srv = self.server
        filler = self.fill(leave=256 * 1024)
        acked, refused = [], None
        for i in range(400):
            r = srv.request("POST", CMS, cm("c%d" % i, 8 * 1024))
            if r.status == 201:
                acked.append("c%d" % i)
                continue
            refused = r
            break
        self.assertIsNotNone(refused, "the filesystem never filled")
        self.assertEqual(refused.status, 500, refused)
        st = refused.json()
        self.assertEqual(st["reason"], "InternalError")
        self.assertIn("full", st["message"])
        self.assertNotIn("internal error", st["message"])
        # a second refused write says the same, and reads go on
        r = srv.request("POST", CMS, cm("again", 8 * 1024))
        self.assertEqual((r.status, "full" in r.json()["message"]), (500, True), r)
        if acked:
            self.assertEqual(srv.request("GET", CMS + "/" + acked[0]).status, 200)
        listed = [i["metadata"]["name"] for i in srv.request("GET", CMS).json()["items"]]
        self.assertEqual(sorted(listed), sorted(acked))
        ready = srv.request("GET", "/readyz?verbose")
        self.assertEqual(ready.status, 500, ready)
        self.assertIn(b"[-]storage-space failed: the database or its disk is full", ready.body)
        self.assertEqual(srv.request("GET", "/livez").status, 200)
        # space freed: writes resume, /readyz passes again
        os.unlink(filler)
        wait_until(lambda: srv.request("POST", CMS, cm("after", 1024)).status == 201, timeout=10,
                   interval=0.2, what="a write once space is freed")
        acked.append("after")
        self.assertEqual(srv.request("GET", "/readyz").status, 200)
        # nothing acknowledged is lost, and the file is whole, after a restart
        srv.restart()
        listed = [i["metadata"]["name"] for i in srv.request("GET", CMS).json()["items"]]
        self.assertEqual(sorted(listed), sorted(acked))
        srv.stop()
        p = subprocess.run(["sqlite3", os.path.join(self.mnt, "sqlkube.db"),
                            "PRAGMA integrity_check"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.stdout.strip(), "ok", p.stderr)


if __name__ == "__main__":
    unittest.main()
