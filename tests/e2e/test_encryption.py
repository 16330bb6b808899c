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
python3-cryptography / python3-nacl as kube's format.

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

from server import CONFIG, Server, describe, sql  # noqa: E402

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
        """The stored bytes of aescbc, aesgcm (16- and 32-byte keys) and
        secretbox are what python3-cryptography and python3-nacl decrypt as
        kube's format."""
        cbc = lambda value, key, etcd_key: aescbc_open(value, key)  # noqa: E731
        box = lambda value, key, etcd_key: secretbox_open(value, key)  # noqa: E731
        cases = [("aescbc", KEY1[:24], cbc), ("aesgcm", KEY1[:16], aesgcm_open),
                 ("aesgcm", KEY1, aesgcm_open), ("secretbox", KEY1, box)]
        for i, (provider, key, open_) in enumerate(cases):
            name = "p%d" % i
            self.write_config(config(("k%d" % i, key), provider=provider))
            self.server.restart()
            password = "pw-" + secrets.token_hex(12)
            self.kubectl_ok("create", "secret", "generic", name,
                            "--from-literal=password=" + password)
            self.assertEqual(self.secret_value(name), password)
            (value,) = self.stored("secrets", name)
            prefix = "k8s:enc:%s:v1:k%d:" % (provider, i)
            self.assertTrue(value.startswith(prefix), value[:60])
            obj = json.loads(open_(value[len(prefix):], key, "/registry/secrets/default/" + name))
            self.assertEqual(base64.b64decode(obj["data"]["password"]).decode(), password)

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
