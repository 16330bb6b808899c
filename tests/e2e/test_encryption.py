"""ENCRYPTION: Secrets encrypted at rest (`serve --encryption-provider-config`,
kube's EncryptionConfiguration, issue 47), on both backends.

With aescbc configured for secrets, `kubectl create secret generic` leaves
neither the value nor its base64 in sk_history.value (read with sqlite3 /
psql, and in the SQLite main file and WAL as bytes), the row carries kube's
prefix k8s:enc:aescbc:v1:key1: followed by base64 of kube's bytes, which
python3-cryptography decrypts independently; kubectl reads the Secret back;
a ConfigMap stays plain JSON. After a restart whose config puts a new key
first and the old one second, old Secrets still read, new writes use the new
key, and `kubectl replace` of every Secret moves them all to it. Restarted
with no key that reads them, a Secret is a 500 while ConfigMaps still work;
a bad config stops the start with kube's message. Each provider's stored bytes
(aescbc, aesgcm with 16- and 32-byte keys, secretbox) are decrypted by
python3-cryptography / python3-nacl as kube's format, and bytes they make in
kube's format read back through sqlkube. On PostgreSQL, two instances go
through kube's rotation one restart at a time, each reading what either
wrote at every step. `sqlkube reencrypt`, run beside the live server, does
the rewrite step in place: it rewrites and counts exactly what the first key
did not write (an Event keeping its expiry), names an object no key reads
and exits 1, loses none of the updates made while it runs, and moves rows
back to plain text with identity first; after it the old key can go.

Why: a database file, backup or replica must not hand out the cluster's
passwords, while everything else stays readable with SQL.
"""

import base64
import json
import os
import re
import secrets
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from server import CONFIG, Server, describe, sql, wait_until  # noqa: E402

# Secrets the reencrypt test writes before its rotations.
N_REENCRYPT = 120

from cryptography.hazmat.primitives import padding  # noqa: E402
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes  # noqa: E402
from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402
import nacl.secret  # noqa: E402

KEY1 = bytes(range(32))
KEY2 = bytes(range(100, 132))
KEY3 = bytes(range(200, 232))


def config(*keys, provider="aescbc", identity=True, identity_first=False,
           resources="secrets"):
    """An EncryptionConfiguration for resources (secrets) with keys
    [(name, bytes)], identity last, first or not at all."""
    lines = ["apiVersion: apiserver.config.k8s.io/v1",
             "kind: EncryptionConfiguration",
             "resources:",
             "- resources: [%s]" % resources,
             "  providers:"]
    if identity_first:
        lines.append("  - identity: {}")
    lines += ["  - %s:" % provider,
              "      keys:"]
    for name, key in keys:
        lines += ["      - name: %s" % name,
                  "        secret: %s" % base64.b64encode(key).decode()]
    if identity and not identity_first:
        lines.append("  - identity: {}")
    return "\n".join(lines) + "\n"


def aescbc_open(stored, key):
    """kube's aescbc value (after its prefix: base64 of IV + ciphertext),
    decrypted by python3-cryptography."""
    raw = base64.b64decode(stored)
    dec = Cipher(algorithms.AES(key), modes.CBC(raw[:16])).decryptor()
    padded = dec.update(raw[16:]) + dec.finalize()
    unpad = padding.PKCS7(128).unpadder()
    return unpad.update(padded) + unpad.finalize()


def aesgcm_open(stored, key, etcd_key):
    """kube's aesgcm value: 12-byte nonce, ciphertext and tag, bound to the
    object's etcd key."""
    raw = base64.b64decode(stored)
    return AESGCM(key).decrypt(raw[:12], raw[12:], etcd_key.encode())


def secretbox_open(stored, key):
    """kube's secretbox value: 24-byte nonce and the box."""
    return nacl.secret.SecretBox(key).decrypt(base64.b64decode(stored))


def aescbc_seal(plain, key, etcd_key):
    """kube's aescbc bytes for plain, made by python3-cryptography."""
    iv = os.urandom(16)
    pad = padding.PKCS7(128).padder()
    enc = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    padded = pad.update(plain) + pad.finalize()
    return base64.b64encode(iv + enc.update(padded) + enc.finalize()).decode()


def aesgcm_seal(plain, key, etcd_key):
    nonce = os.urandom(12)
    return base64.b64encode(nonce + AESGCM(key).encrypt(nonce, plain, etcd_key.encode())).decode()


def secretbox_seal(plain, key, etcd_key):
    return base64.b64encode(bytes(nacl.secret.SecretBox(key).encrypt(plain))).decode()


class EncryptionTest(unittest.TestCase):
    def setUp(self):
        self.dir = os.path.join(CONFIG.ensure_work_dir(), "enc-%s" % secrets.token_hex(4))
        os.makedirs(self.dir)
        self.config_path = os.path.join(self.dir, "encryption.yaml")
        self.write_config(config(("key1", KEY1)))
        self.server = Server("encryption",
                             extra_args=["--encryption-provider-config", self.config_path])
        self.server.start()

    def tearDown(self):
        self.server.cleanup()

    def write_config(self, text):
        with open(self.config_path, "w") as f:
            f.write(text)

    def kubectl_ok(self, *args, input=None):
        p = self.server.kubectl(*args, input=input)
        self.assertEqual(p.returncode, 0, describe(p))
        return p.stdout

    def stored(self, resource, name):
        """Every stored version of default/name, oldest first."""
        return [r[0] for r in sql(self.server, "SELECT value FROM sk_history WHERE resource = "
                                  "'%s' AND namespace = 'default' AND name = '%s' ORDER BY rev"
                                  % (resource, name))]

    def secret_value(self, name):
        obj = json.loads(self.kubectl_ok("get", "secret", name, "-o", "json"))
        return base64.b64decode(obj["data"]["password"]).decode()

    def assert_nowhere_in_database(self, needles):
        rows = sql(self.server, "SELECT value FROM sk_history")
        for needle in needles:
            for (value,) in rows:
                self.assertNotIn(needle, value)
        if self.server.backend == "sqlite":
            for suffix in ("", "-wal"):
                path = os.path.join(self.server.data_dir, "sqlkube.db" + suffix)
                if os.path.exists(path):
                    with open(path, "rb") as f:
                        data = f.read()
                    for needle in needles:
                        self.assertNotIn(needle.encode(), data, path)

    def test_secret_encrypted_configmap_plain_rotation(self):
        password = "pw-" + secrets.token_hex(12)
        self.kubectl_ok("create", "secret", "generic", "s", "--from-literal=password=" + password)
        plain = "plain-" + secrets.token_hex(8)
        self.kubectl_ok("create", "configmap", "c", "--from-literal=k=" + plain)
        self.assertEqual(self.secret_value("s"), password)

        # at rest: kube's prefix and bytes, neither the value nor its base64
        b64 = base64.b64encode(password.encode()).decode()
        self.assert_nowhere_in_database([password, b64])
        (value,) = self.stored("secrets", "s")
        prefix = "k8s:enc:aescbc:v1:key1:"
        self.assertTrue(value.startswith(prefix), value[:60])
        obj = json.loads(aescbc_open(value[len(prefix):], KEY1))
        self.assertEqual(obj["metadata"]["name"], "s")
        self.assertEqual(obj["data"]["password"], b64)
        # everything else stays readable with SQL
        (cm,) = self.stored("configmaps", "c")
        self.assertEqual(json.loads(cm)["data"]["k"], plain)
        # the view for people: the Secret as such (no object, the key that
        # wrote it), the ConfigMap as before; on PostgreSQL the object
        # column is jsonb, which a ciphertext failed to cast to
        view = sql(self.server, "SELECT resource, name, object IS NULL, encrypted_with "
                                "FROM sk_objects WHERE namespace = 'default' "
                                "AND resource IN ('configmaps', 'secrets') ORDER BY resource, name")
        no, yes = ("f", "t") if self.server.backend == "postgres" else ("0", "1")
        self.assertEqual(view, [["configmaps", "c", no, ""],
                                ["secrets", "s", yes, "k8s:enc:aescbc:v1:key1"]])
        (doc,) = sql(self.server, "SELECT object FROM sk_objects WHERE resource = 'configmaps' "
                                  "AND name = 'c'")[0]
        self.assertEqual(json.loads(doc)["data"]["k"], plain)

        # rotation: a new key first, the old one second; restart
        self.write_config(config(("key2", KEY2), ("key1", KEY1)))
        self.server.restart()
        self.assertEqual(self.secret_value("s"), password)
        self.kubectl_ok("create", "secret", "generic", "t", "--from-literal=password=t" + password)
        self.assertTrue(self.stored("secrets", "t")[-1].startswith("k8s:enc:aescbc:v1:key2:"))
        self.assertTrue(self.stored("secrets", "s")[-1].startswith("k8s:enc:aescbc:v1:key1:"))
        # rewrite every Secret, as kube's documentation says
        listed = self.kubectl_ok("get", "secrets", "-o", "json")
        self.kubectl_ok("replace", "-f", "-", input=listed)
        self.assertTrue(self.stored("secrets", "s")[-1].startswith("k8s:enc:aescbc:v1:key2:"))
        # the old key can go
        self.write_config(config(("key2", KEY2)))
        self.server.restart()
        self.assertEqual(self.secret_value("s"), password)
        self.assertEqual(self.secret_value("t"), "t" + password)

        # no key that reads them: Secrets fail (the log names object and key), ConfigMaps do not
        rv = json.loads(self.kubectl_ok("get", "secret", "s", "-o", "json"))["metadata"][
            "resourceVersion"]
        self.write_config(config(("key3", KEY3), provider="aesgcm", identity=False))
        self.server.restart()
        p = self.server.kubectl("get", "secret", "s", "-o", "json")
        self.assertNotEqual(p.returncode, 0, describe(p))
        self.assertIn("cannot be decoded", p.stderr)
        r = self.server.request("GET", "/api/v1/namespaces/default/secrets/s")
        self.assertEqual(r.status, 500, r)
        self.assertIn('cannot read secrets default/s at revision %s: no matching prefix found: '
                      'the value was written by "k8s:enc:aescbc:v1:key2:"' % rv,
                      self.server.log_tail(20000))
        self.assertEqual(json.loads(self.kubectl_ok("get", "configmap", "c", "-o", "json"))
                         ["data"]["k"], plain)

    def test_each_provider_read_by_another_implementation(self):
        """Both ways, for aescbc, aesgcm (16- and 32-byte keys) and secretbox:
        sqlkube's stored bytes are what python3-cryptography and
        python3-nacl decrypt as kube's format, and bytes they make in kube's
        format (as a kube-apiserver would have written them) read back
        through sqlkube."""
        cbc = lambda value, key, etcd_key: aescbc_open(value, key)  # noqa: E731
        box = lambda value, key, etcd_key: secretbox_open(value, key)  # noqa: E731
        cases = [("aescbc", KEY1[:24], cbc, aescbc_seal),
                 ("aesgcm", KEY1[:16], aesgcm_open, aesgcm_seal),
                 ("aesgcm", KEY1, aesgcm_open, aesgcm_seal),
                 ("secretbox", KEY1, box, secretbox_seal)]
        for i, (provider, key, open_, seal) in enumerate(cases):
            name = "p%d" % i
            etcd_key = "/registry/secrets/default/" + name
            self.write_config(config(("k%d" % i, key), provider=provider))
            self.server.restart()
            password = "pw-" + secrets.token_hex(12)
            self.kubectl_ok("create", "secret", "generic", name,
                            "--from-literal=password=" + password)
            self.assertEqual(self.secret_value(name), password)
            (value,) = self.stored("secrets", name)
            prefix = "k8s:enc:%s:v1:k%d:" % (provider, i)
            self.assertTrue(value.startswith(prefix), value[:60])
            obj = json.loads(open_(value[len(prefix):], key, etcd_key))
            self.assertEqual(base64.b64decode(obj["data"]["password"]).decode(), password)

            # the other way: another password, sealed by the other implementation
            other = "other-" + secrets.token_hex(8)
            obj["data"]["password"] = base64.b64encode(other.encode()).decode()
            sealed = prefix + seal(json.dumps(obj).encode(), key, etcd_key)
            self.server.stop()
            sql(self.server, "UPDATE sk_history SET value = '%s' WHERE resource = 'secrets' "
                "AND namespace = 'default' AND name = '%s'" % (sealed, name))
            self.server.start()
            self.assertEqual(self.secret_value(name), other)

    def test_two_instances_through_a_rotation(self):
        """kube's rotation, instance by instance, on two sqlkube processes
        sharing one PostgreSQL: at every step each reads what either wrote."""
        if self.server.backend != "postgres":
            self.skipTest("needs a shared PostgreSQL")
        b_config = os.path.join(self.dir, "encryption-b.yaml")
        with open(b_config, "w") as f:
            f.write(config(("key1", KEY1)))
        b = Server("encryption-b", db_url=self.server.db_url,
                   extra_args=["--encryption-provider-config", b_config])
        servers = {"a": self.server, "b": b}
        written = {}

        def write(on, name):
            password = "pw-%s-%s" % (name, secrets.token_hex(6))
            r = servers[on].request("POST", "/api/v1/namespaces/default/secrets", {
                "apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
                "data": {"password": base64.b64encode(password.encode()).decode()}})
            self.assertEqual(r.status, 201, r)
            written[name] = password

        def read(on, name):
            r = servers[on].request("GET", "/api/v1/namespaces/default/secrets/" + name)
            if r.status != 200:
                return None
            return base64.b64decode(r.json()["data"]["password"]).decode()

        def all_read(step):
            for on in servers:
                for name, password in written.items():
                    got = wait_until(lambda: read(on, name), timeout=20,
                                     what="%s reading %s (%s)" % (on, name, step))
                    self.assertEqual(got, password, "%s reading %s (%s)" % (on, name, step))

        def configure(on, *keys):
            path = self.config_path if on == "a" else b_config
            with open(path, "w") as f:
                f.write(config(*keys))
            servers[on].restart()

        try:
            b.start()
            write("a", "s1")
            all_read("one key")
            # 1: the new key, second, on every instance
            configure("a", ("key1", KEY1), ("key2", KEY2))
            write("b", "s2")
            all_read("a has key2 second")
            configure("b", ("key1", KEY1), ("key2", KEY2))
            # 2: the new key first, one instance at a time
            configure("a", ("key2", KEY2), ("key1", KEY1))
            write("a", "s3")
            write("b", "s4")
            all_read("a writes with key2, b with key1")
            self.assertTrue(self.stored("secrets", "s3")[-1].startswith("k8s:enc:aescbc:v1:key2:"))
            self.assertTrue(self.stored("secrets", "s4")[-1].startswith("k8s:enc:aescbc:v1:key1:"))
            configure("b", ("key2", KEY2), ("key1", KEY1))
            # 3: every Secret rewritten (through b), 4: the old key gone everywhere
            listed = b.kubectl("get", "secrets", "-o", "json")
            self.assertEqual(listed.returncode, 0, describe(listed))
            p = b.kubectl("replace", "-f", "-", input=listed.stdout)
            self.assertEqual(p.returncode, 0, describe(p))
            for name in written:
                self.assertTrue(self.stored("secrets", name)[-1].startswith(
                    "k8s:enc:aescbc:v1:key2:"), name)
            configure("a", ("key2", KEY2))
            configure("b", ("key2", KEY2))
            all_read("key1 removed")
        finally:
            b.cleanup()

    def reencrypt(self, *args):
        """`sqlkube reencrypt` on the server's store from another process,
        beside the running server; (exit status, stdout, stderr)."""
        p = subprocess.run([CONFIG.binary, "reencrypt", "--db", self.server.store_url(),
                            "--encryption-provider-config", self.config_path] + list(args),
                           capture_output=True, text=True, timeout=300)
        return p.returncode, p.stdout, p.stderr

    def counts(self, out, resource="secrets"):
        m = re.search(r"^%s: (\d+) rewritten, (\d+) skipped, (\d+) failed$" % resource, out,
                      re.M)
        self.assertIsNotNone(m, out)
        return tuple(int(g) for g in m.groups())

    def encrypted_with(self, resource="secrets"):
        """name -> encrypted_with of sk_objects, for people's SQL."""
        return {name: w for name, w in sql(self.server, "SELECT name, encrypted_with FROM "
                                           "sk_objects WHERE resource = '%s'" % resource)}

    def put_secret(self, name, password, labels=None):
        r = self.server.request("POST", "/api/v1/namespaces/default/secrets", {
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "labels": labels or {}},
            "data": {"password": base64.b64encode(password.encode()).decode()}})
        self.assertEqual(r.status, 201, r)

    def all_secrets(self):
        """name -> (password, resourceVersion) as the server lists them."""
        r = self.server.request("GET", "/api/v1/namespaces/default/secrets")
        self.assertEqual(r.status, 200, r)
        return {i["metadata"]["name"]: (base64.b64decode(i["data"]["password"]).decode(),
                                        i["metadata"]["resourceVersion"])
                for i in r.json()["items"]}

    def test_reencrypt_command_rotates_in_place(self):
        """kube's rotation with `sqlkube reencrypt` as the rewrite step, run
        beside the live server: it rewrites exactly the objects the first
        key did not write (an Event's expiry kept), counts them, names an
        object no key reads and exits 1 leaving it as it was; updates made
        while it runs are not lost; the server's cache follows its
        revisions; then the old key goes and everything reads; the reverse
        (identity first) decrypts every row."""
        passwords = {}
        self.write_config(config(("key1", KEY1), resources="secrets, events"))
        self.server.restart()
        for i in range(N_REENCRYPT):
            name = "r%03d" % i
            passwords[name] = "pw-%d-%s" % (i, secrets.token_hex(4))
            self.put_secret(name, passwords[name])
        r = self.server.request("POST", "/api/v1/namespaces/default/events", {
            "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
            "involvedObject": {"kind": "Secret", "namespace": "default", "name": "r000"},
            "reason": "Test", "message": "m"})
        self.assertEqual(r.status, 201, r)
        (ttl_before,) = sql(self.server, "SELECT rev, expires_at_ms FROM sk_ttl WHERE "
                                         "resource = 'events' AND name = 'e'")
        # a Secret sealed with a key no configuration has
        self.put_secret("bad", "lost")
        ((bad_rev,),) = sql(self.server, "SELECT rev FROM sk_history WHERE "
                                         "resource = 'secrets' AND name = 'bad'")
        self.server.stop()
        sealed = "k8s:enc:aescbc:v1:gone:" + aescbc_seal(b"{}", KEY3, "")
        sql(self.server, "UPDATE sk_history SET value = '%s' WHERE rev = %s" % (sealed, bad_rev))

        # 1: key2 first; one Secret written with it already
        self.write_config(config(("key2", KEY2), ("key1", KEY1), resources="secrets, events"))
        self.server.start()
        passwords["new"] = "pw-new"
        self.put_secret("new", passwords["new"])
        rc, out, err = self.reencrypt()
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(self.counts(out), (N_REENCRYPT, 1, 1))
        self.assertEqual(self.counts(out, "events"), (1, 0, 0))
        self.assertIn("secrets default/bad (revision %s): " % bad_rev, err)
        self.assertIn("k8s:enc:aescbc:v1:gone:", err)
        # nothing written for it
        self.assertEqual(sql(self.server, "SELECT rev, value FROM sk_history WHERE "
                             "resource = 'secrets' AND name = 'bad'"), [[bad_rev, sealed]])
        withs = self.encrypted_with()
        self.assertEqual(withs.pop("bad"), "k8s:enc:aescbc:v1:gone")
        self.assertEqual(set(withs.values()), {"k8s:enc:aescbc:v1:key2"})
        self.assertEqual(len(withs), N_REENCRYPT + 1)
        self.assertEqual(self.encrypted_with("events"), {"e": "k8s:enc:aescbc:v1:key2"})
        # the Event's expiry moved to its new revision, its time kept
        (e_rev,) = sql(self.server, "SELECT resource_version FROM sk_objects WHERE "
                                    "resource = 'events' AND name = 'e'")[0]
        self.assertNotEqual(e_rev, ttl_before[0])
        self.assertEqual(sql(self.server, "SELECT rev, expires_at_ms FROM sk_ttl WHERE "
                                          "resource = 'events' AND name = 'e'"),
                         [[e_rev, ttl_before[1]]])
        # the server's cache follows the new revisions; lists leave out
        # what no key reads, and a delete of it still works
        revs = {n: rv for n, rv in sql(self.server, "SELECT name, resource_version FROM "
                                       "sk_objects WHERE resource = 'secrets' AND "
                                       "name <> 'bad'")}
        wait_until(lambda: {n: rv for n, (_, rv) in self.all_secrets().items()} == revs,
                   what="the server listing the rewritten revisions")
        self.assertEqual(self.server.request(
            "DELETE", "/api/v1/namespaces/default/secrets/bad").status, 200)
        # a second pass finds nothing to do
        rc, out, err = self.reencrypt()
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(self.counts(out), (0, N_REENCRYPT + 1, 0))
        self.assertIn("total: 0 rewritten, %d skipped, 0 failed" % (N_REENCRYPT + 2), out)

        # 2: key3 first, with updates going on while the command runs
        self.write_config(config(("key3", KEY3), ("key2", KEY2), resources="secrets, events"))
        self.server.restart()
        stop = threading.Event()
        updated = {}
        failures = []
        during = []  # updates acknowledged while the command ran
        running = [0.0, float("inf")]

        def update():
            i = 0
            while not stop.is_set() or i < 30:
                name = "r%03d" % (i * 7 % N_REENCRYPT)
                value = "upd-%d" % i
                r = self.server.request(
                    "PATCH", "/api/v1/namespaces/default/secrets/" + name,
                    {"data": {"password": base64.b64encode(value.encode()).decode()}},
                    headers={"Content-Type": "application/merge-patch+json"})
                if r.status != 200:
                    failures.append(r)
                    return
                updated[name] = value
                if running[0] <= time.monotonic() <= running[1]:
                    during.append(name)
                i += 1

        t = threading.Thread(target=update)
        t.start()
        wait_until(lambda: len(updated) >= 3, what="updates going on")
        try:
            running[0] = time.monotonic()
            rc, out, err = self.reencrypt("--resource", "secrets")
            running[1] = time.monotonic()
        finally:
            stop.set()
            t.join()
        self.assertEqual(failures, [])
        self.assertGreater(len(during), 0, "no update overlapped the command")
        self.assertEqual(rc, 0, out + err)
        rewritten, skipped, failed = self.counts(out)
        self.assertEqual(rewritten + skipped, N_REENCRYPT + 1)
        self.assertNotIn("events:", out)  # --resource secrets only
        rc, out, err = self.reencrypt("--resource", "events")
        self.assertEqual((rc, self.counts(out, "events")), (0, (1, 0, 0)), out + err)
        passwords.update(updated)
        self.assertEqual(set(self.encrypted_with().values()), {"k8s:enc:aescbc:v1:key3"})

        # 3: the old keys go: everything still reads
        self.write_config(config(("key3", KEY3), resources="secrets, events"))
        self.server.restart()
        self.assertEqual({n: pw for n, (pw, _) in self.all_secrets().items()}, passwords)
        r = self.server.request("GET", "/api/v1/namespaces/default/events/e")
        self.assertEqual(r.status, 200, r)

        # 4: the reverse: identity first decrypts every row
        self.write_config(config(("key3", KEY3), identity_first=True,
                                 resources="secrets, events"))
        self.server.restart()
        rc, out, err = self.reencrypt()
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(self.counts(out), (N_REENCRYPT + 1, 0, 0))
        self.assertEqual(set(self.encrypted_with().values()), {""})
        (value,) = self.stored("secrets", "new")[-1:]
        self.assertEqual(json.loads(value)["metadata"]["name"], "new")
        self.assertEqual({n: pw for n, (pw, _) in self.all_secrets().items()}, passwords)

    def test_reencrypt_refuses_what_the_file_does_not_encrypt(self):
        rc, out, err = self.reencrypt("--resource", "configmaps")
        self.assertEqual(rc, 1)
        self.assertIn("--resource configmaps: %s names no provider for it" % self.config_path,
                      err)

    def test_bad_config_stops_the_start(self):
        self.server.stop()
        self.write_config(config(("key1", b"short")))
        p = subprocess.run(self.server.command(), capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("invalid --encryption-provider-config %s: error while parsing file: "
                      "resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "
                      "\"REDACTED\": secret is not of the expected length, got 5, expected one "
                      "of [16 24 32]" % self.config_path, p.stderr)


if __name__ == "__main__":
    unittest.main()
