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
wrote at every step.

Why: a database file, backup or replica must not hand out the cluster's
passwords, while everything else stays readable with SQL.
"""

import base64
import json
import os
import secrets
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from server import CONFIG, Server, describe, sql, wait_until  # noqa: E402

from cryptography.hazmat.primitives import padding  # noqa: E402
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes  # noqa: E402
from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402
import nacl.secret  # noqa: E402

KEY1 = bytes(range(32))
KEY2 = bytes(range(100, 132))
KEY3 = bytes(range(200, 232))


def config(*keys, provider="aescbc", identity=True):
    """An EncryptionConfiguration for secrets with keys [(name, bytes)]."""
    lines = ["apiVersion: apiserver.config.k8s.io/v1",
             "kind: EncryptionConfiguration",
             "resources:",
             "- resources: [secrets]",
             "  providers:",
             "  - %s:" % provider,
             "      keys:"]
    for name, key in keys:
        lines += ["      - name: %s" % name,
                  "        secret: %s" % base64.b64encode(key).decode()]
    if identity:
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
