"""docker/compose.yaml's topology, checked and run as processes.

ComposeFile parses docker/compose.yaml (python3-yaml; no container engine
is needed) and asserts the topology: PostgreSQL, a one-shot `pki` service
running docker/pki.sh into a shared volume, and two sqlkube instances on the
one database with the same key files (read-only), each listening on the
port it is published on (127.0.0.1 only), with a /readyz healthcheck over
HTTPS, and the image carrying what the file runs (sqlkube-pki, curl); the
project named sqlkube (volumes sqlkube_pgdata, ..., as the README names
them); the README copying kubeconfigs (private keys) to ~/.kube/, not into
the tree. PkiScript: pki.sh leaves its directory 0700 even when it existed
0755 (as compose's volume mount point does) and its files 0600.

TwoInstances is the process twin (PostgreSQL only): docker/pki.sh makes the
key material into a temp dir, and two `sqlkube serve` processes start on one
database with the flags of the compose file's instances (/pki mapped to
that dir). Checked: an object written through one is read through the
other (kubectl, one kubeconfig per instance); a watch on instance 2 sees a
write on instance 1; a list continue token of one is accepted by the other
(its signing secret lives in the database); creates through both at once
(their group commits interleave in one revision sequence, each instance's
feed taking its own batches from memory and the other's from SQL) reach a
watch on each instance all, in revision order, once; each instance holds its own
identity Lease; the admin certificate either
kubeconfig carries is accepted by both; the compose healthcheck command
passes against both; a user the shared CA certifies is denied by RBAC on
both with kube's message; a ServiceAccount token issued by one is accepted
by the other (once the --service-account-* flags exist in the binary); the
README's `docker compose exec -T postgres psql ... -c QUERY` queries run on
the test database and show the README's demo ConfigMap.
"""

import http.client
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from server import CONFIG, KUBECTL, REPO_ROOT, Server, describe, wait_until  # noqa: E402

import test_tls_auth as tls  # noqa: E402  (make_cert, load_ca)
from test_watch import WatchStream  # noqa: E402

try:
    import yaml
except ImportError:  # python3-yaml
    yaml = None

DOCKER = os.path.join(REPO_ROOT, "docker")
INSTANCES = ("sqlkube-1", "sqlkube-2")
# The key files every instance must name alike, by flag.
SHARED_FILES = {
    "--tls-cert-file": "/pki/apiserver.crt",
    "--tls-private-key-file": "/pki/apiserver.key",
    "--client-ca-file": "/pki/ca.crt",
    "--client-ca-key-file": "/pki/ca.key",
    "--service-account-signing-key-file": "/pki/sa.key",
    "--service-account-key-file": "/pki/sa.pub",
}


def readme_commands(prefix):
    """The commands of docker/README.md's ```sh blocks that start with prefix."""
    with open(os.path.join(DOCKER, "README.md")) as f:
        text = f.read()
    lines = "\n".join(re.findall(r"```sh\n(.*?)```", text, re.S)).splitlines()
    return [l.strip() for l in lines if l.strip().startswith(prefix)]


PSQL_IN_COMPOSE = "docker compose exec -T postgres psql -U sqlkube -d sqlkube -c "


def load_compose():
    with open(os.path.join(DOCKER, "compose.yaml")) as f:
        return yaml.safe_load(f)


def flags(command):
    """A compose command list of --flag=value items as {flag: value}."""
    out = {}
    for item in command:
        name, eq, value = item.partition("=")
        assert name.startswith("--") and eq, "not --flag=value: %r" % item
        out[name] = value
    return out


@unittest.skipUnless(yaml, "python3-yaml needed")
class ComposeFile(unittest.TestCase):

    def setUp(self):
        self.doc = load_compose()
        self.services = self.doc["services"]

    def test_project_name(self):
        # Volumes sqlkube_pgdata, ... wherever the file is run from; the
        # README names them so.
        self.assertEqual(self.doc["name"], "sqlkube")
        with open(os.path.join(DOCKER, "README.md")) as f:
            text = f.read()
        for vol in self.doc["volumes"]:
            self.assertIn("sqlkube_" + vol, text)
        self.assertNotRegex(text, r"volume `pgdata`|the `pki` volume")

    def test_kubeconfigs_copied_out_of_the_tree(self):
        """The README's copies of a kubeconfig (a private key) land in
        ~/.kube/, not in the working directory (the repository's docker/)."""
        cps = readme_commands("docker compose cp ") + readme_commands("docker cp ")
        self.assertEqual(len(cps), 3, cps)
        for cmd in cps:
            argv = shlex.split(cmd.split("#")[0])
            self.assertTrue(argv[-1].startswith("~/.kube/"), cmd)
            self.assertTrue(argv[-1].endswith(".kubeconfig"), cmd)
        with open(os.path.join(REPO_ROOT, ".gitignore")) as f:
            self.assertIn("*.kubeconfig", f.read().split())

    def test_services_and_volumes(self):
        self.assertEqual(set(self.services), {"postgres", "pki"} | set(INSTANCES))
        self.assertEqual(set(self.doc["volumes"]),
                         {"pgdata", "pki"} | {n + "-data" for n in INSTANCES})
        pg = self.services["postgres"]
        self.assertNotIn("ports", pg, "PostgreSQL stays unpublished")
        self.assertIn("pg_isready", " ".join(pg["healthcheck"]["test"]))
        pki = self.services["pki"]
        self.assertEqual(pki["entrypoint"][:2], ["sqlkube-pki", "/pki"])
        # The serving certificate names both instances.
        self.assertEqual(set(pki["entrypoint"][2:]), set(INSTANCES))
        self.assertEqual(pki["volumes"], ["pki:/pki"])
        self.assertEqual(pki["restart"], "no")

    def test_instances(self):
        ports, commons = set(), []
        for name in INSTANCES:
            svc = self.services[name]
            self.assertEqual(svc["image"], self.services["pki"]["image"])
            self.assertEqual(svc["hostname"], name)
            self.assertEqual(svc["depends_on"], {
                "postgres": {"condition": "service_healthy"},
                "pki": {"condition": "service_completed_successfully"}})
            f = flags(svc["command"])
            port = f.pop("--listen").split(":")[-1]
            # Published on loopback only, on the port it listens on (its
            # kubeconfig names that port).
            self.assertEqual(f"0.0.0.0:{port}", flags(svc["command"])["--listen"])
            self.assertEqual(svc["ports"], ["127.0.0.1:%s:%s" % (port, port)])
            ports.add(port)
            self.assertTrue(f["--db"].startswith("postgres://") and "@postgres:5432/" in f["--db"])
            for flag, path in SHARED_FILES.items():
                self.assertEqual(f.get(flag), path, "%s %s" % (name, flag))
            self.assertEqual(sorted(svc["volumes"]), sorted(["pki:/pki:ro", name + "-data:/data"]))
            check = svc["healthcheck"]["test"]
            self.assertEqual(check[:2], ["CMD", "curl"])
            self.assertEqual(check[-1], "https://127.0.0.1:%s/readyz" % port)
            for opt, path in (("--cacert", "/pki/ca.crt"), ("--cert", "/pki/healthcheck.crt"),
                              ("--key", "/pki/healthcheck.key")):
                self.assertEqual(check[check.index(opt) + 1], path)
            self.assertIn("-fsS", check, "curl fails on an HTTP error status")
            commons.append(f)
        self.assertEqual(len(ports), len(INSTANCES), "one port per instance")
        self.assertEqual(commons[0], commons[1], "the instances differ only in --listen")

    def test_image_has_what_compose_runs(self):
        with open(os.path.join(DOCKER, "Dockerfile")) as f:
            text = f.read()
        self.assertIn("docker/pki.sh /usr/local/bin/sqlkube-pki", text)
        for pkg in ("curl", "openssl"):
            self.assertRegex(text, r"\b%s\b" % pkg)
        self.assertIn("/data /pki", text, "/pki owned by the server's user")


@unittest.skipUnless(shutil.which("openssl"), "openssl needed")
class PkiScript(unittest.TestCase):
    """pki.sh makes its directory readable by its owner only, as its header
    says, also when the directory exists already with a wider mode (compose's
    volume mount point is 0755), and its private files 0600."""

    def test_modes(self):
        parent = tempfile.mkdtemp(prefix="sk-pki-mode.")
        try:
            d = os.path.join(parent, "pki")
            os.mkdir(d)
            os.chmod(d, 0o755)
            subprocess.run([os.path.join(DOCKER, "pki.sh"), d, "sqlkube-1"], check=True,
                           capture_output=True, timeout=120)
            self.assertEqual(stat.S_IMODE(os.stat(d).st_mode), 0o700)
            names = sorted(os.listdir(d))
            self.assertEqual(names, sorted(["ca.crt", "ca.key", "apiserver.crt", "apiserver.key",
                                            "healthcheck.crt", "healthcheck.key", "sa.key",
                                            "sa.pub"]))
            for name in names:
                self.assertEqual(stat.S_IMODE(os.stat(os.path.join(d, name)).st_mode), 0o600,
                                 name)
        finally:
            shutil.rmtree(parent, ignore_errors=True)


@unittest.skipUnless(yaml and shutil.which("openssl") and shutil.which("curl"),
                     "python3-yaml, openssl and curl needed")
class TwoInstances(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        if CONFIG.backend != "postgres":
            raise unittest.SkipTest("two instances share a PostgreSQL database")
        cls.pki = tempfile.mkdtemp(prefix="sk-twin-pki.")
        cls.servers = []
        services = load_compose()["services"]
        subprocess.run([os.path.join(DOCKER, "pki.sh"), cls.pki] + services["pki"]["entrypoint"][2:],
                       check=True, capture_output=True, timeout=120)
        try:
            db = None
            for name in INSTANCES:
                f = flags(services[name]["command"])
                del f["--listen"], f["--db"]  # the harness's: a free port, the test database
                args = ["%s=%s" % (k, v.replace("/pki/", cls.pki + "/")) for k, v in f.items()]
                # Its container's host name: one identity Lease per instance.
                args.append("--identity-hostname=" + services[name]["hostname"])
                srv = Server("twin-" + name, db_url=db, tls=True, extra_args=args)
                cls.servers.append(srv)
                srv.start()
                db = srv.db_url
            cls.checks = [services[name]["healthcheck"]["test"] for name in INSTANCES]
        except BaseException:
            cls.tearDownClass()
            raise
        cls.one, cls.two = cls.servers

    @classmethod
    def tearDownClass(cls):
        for srv in cls.servers:
            srv.cleanup()
        shutil.rmtree(cls.pki, ignore_errors=True)

    def ok(self, p):
        self.assertEqual(p.returncode, 0, describe(p))
        return p.stdout

    def test_object_written_on_one_read_on_two(self):
        self.ok(self.one.kubectl("create", "configmap", "twin-a", "--from-literal=k=one"))
        self.assertEqual(self.ok(self.two.kubectl("get", "configmap", "twin-a", "-o",
                                                  "jsonpath={.data.k}")), "one")
        self.ok(self.two.kubectl("patch", "configmap", "twin-a", "-p", '{"data":{"k":"two"}}'))
        self.assertEqual(self.ok(self.one.kubectl("get", "configmap", "twin-a", "-o",
                                                  "jsonpath={.data.k}")), "two")

    def test_watch_on_two_sees_write_on_one(self):
        self.ok(self.one.kubectl("create", "namespace", "twin-watch"))
        env = dict(os.environ, HOME=self.two.data_dir)
        env.pop("KUBECONFIG", None)
        w = subprocess.Popen([KUBECTL, "--kubeconfig", self.two.kubeconfig, "-n", "twin-watch",
                              "get", "configmaps", "--watch-only", "-o", "name"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(w.stdout), daemon=True)
        reader.start()
        try:
            time.sleep(1.5)  # the watch is established
            for i in range(3):
                self.ok(self.one.kubectl("-n", "twin-watch", "create", "configmap", "w%d" % i))
            wait_until(lambda: len(lines) >= 3, timeout=20, what="three watch events on 2")
        finally:
            w.terminate()
            w.wait(timeout=10)
            reader.join(timeout=10)
        self.assertEqual([l.strip() for l in lines[:3]],
                         ["configmap/w%d" % i for i in range(3)])

    def test_interleaved_writes_reach_both_watches(self):
        ns, writers, per = "twin-mix", 3, 25
        self.ok(self.one.kubectl("create", "namespace", ns))
        path = "/api/v1/namespaces/%s/configmaps" % ns
        r = self.two.request("GET", path)
        self.assertEqual(r.status, 200, r)
        rv = r.json()["metadata"]["resourceVersion"]
        streams = [WatchStream(srv, path + "?watch=1&resourceVersion=" + rv)
                   for srv in self.servers]
        errors = []

        def write(conn, prefix):
            # One keep-alive connection per writer (Server.request's SSL
            # set-up rewrites PEM files: not for concurrent threads).
            try:
                for i in range(per):
                    body = {"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "%s-%d" % (prefix, i)}, "data": {"k": "v"}}
                    conn.request("POST", path, body=json.dumps(body),
                                 headers={"Content-Type": "application/json"})
                    resp = conn.getresponse()
                    resp.read()
                    if resp.status != 201:
                        errors.append((prefix, i, resp.status))
            except Exception as e:  # reported below, not lost with the thread
                errors.append((prefix, repr(e)))
            finally:
                conn.close()

        threads = [threading.Thread(target=write, args=(
            http.client.HTTPSConnection("127.0.0.1", srv.port, timeout=60,
                                        context=srv.ssl_context()), "i%d-w%d" % (k, t)))
                   for k, srv in enumerate(self.servers) for t in range(writers)]
        want = sorted("i%d-w%d-%d" % (k, t, i) for k in range(2) for t in range(writers)
                      for i in range(per))
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
            self.assertEqual(errors, [])
            for srv, st in zip(self.servers, streams):
                self.assertEqual(st.status, 200)
                events = st.wait_for(lambda evs: len(evs) >= len(want), timeout=30,
                                     what="%d events on %s" % (len(want), srv.name))
                time.sleep(0.5)  # anything more would be a duplicate
                with st.lock:
                    events = list(st.events)
                self.assertEqual([e["type"] for e in events], ["ADDED"] * len(want), srv.name)
                self.assertEqual(sorted(e["object"]["metadata"]["name"] for e in events), want)
                rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
                self.assertEqual(rvs, sorted(set(rvs)), srv.name)
        finally:
            for st in streams:
                st.close()

    def list_page(self, srv, token=None):
        q = {"limit": "2"}
        if token:
            q["continue"] = token
        r = srv.request("GET", "/api/v1/namespaces/twin-pages/configmaps?"
                        + urllib.parse.urlencode(q))
        self.assertEqual(r.status, 200, r)
        body = r.json()
        return [i["metadata"]["name"] for i in body["items"]], body["metadata"].get("continue")

    def test_continue_token_moves_between_instances(self):
        self.ok(self.one.kubectl("create", "namespace", "twin-pages"))
        for i in range(5):
            self.ok(self.one.kubectl("-n", "twin-pages", "create", "configmap", "p%d" % i))
        names, token = self.list_page(self.one)
        self.assertEqual(names, ["p0", "p1"])
        # Written after the first page: a continued list stays at its snapshot.
        self.ok(self.two.kubectl("-n", "twin-pages", "create", "configmap", "p5"))
        names, token = self.list_page(self.two, token)
        self.assertEqual(names, ["p2", "p3"])
        names, token = self.list_page(self.one, token)
        self.assertEqual((names, token), (["p4"], None))
        # A forged token is refused on both alike.
        for srv in self.servers:
            r = srv.request("GET", "/api/v1/namespaces/twin-pages/configmaps?limit=2&continue=AAAA")
            self.assertEqual(r.status, 400, r)

    def test_each_instance_has_its_identity_lease(self):
        out = self.ok(self.two.kubectl(
            "-n", "kube-system", "get", "leases", "-l", "k8s.io/component=kube-apiserver",
            "-o", "jsonpath={.items[*].metadata.labels.kubernetes\\.io/hostname}"))
        self.assertEqual(sorted(out.split()), sorted(INSTANCES))

    def test_one_admin_certificate(self):
        for owner in self.servers:
            cert = (owner.kubeconfig_pem("client-certificate-data"),
                    owner.kubeconfig_pem("client-key-data"))
            for target in self.servers:
                r = target.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                   {"apiVersion": "authentication.k8s.io/v1",
                                    "kind": "SelfSubjectReview"}, client_cert=cert)
                self.assertEqual(r.status, 201, r)
                self.assertEqual(r.json()["status"]["userInfo"]["username"], "kubernetes-admin")
            # Each kubeconfig trusts the one shared CA.
            with open(owner.kubeconfig_pem("certificate-authority-data")) as a, \
                    open(os.path.join(self.pki, "ca.crt")) as b:
                self.assertEqual(a.read(), b.read())

    def test_readme_psql_queries(self):
        """docker/README.md's queries, run as written but for the connection
        (psql on this test's database rather than in the postgres container),
        after its kubectl step."""
        cmds = readme_commands(PSQL_IN_COMPOSE)
        self.assertEqual(len(cmds), 3, cmds)
        self.ok(self.one.kubectl("create", "configmap", "demo", "--from-literal=hello=world"))
        outs = []
        for cmd in cmds:
            argv = shlex.split(cmd)
            self.assertEqual(len(argv), len(shlex.split(PSQL_IN_COMPOSE)) + 1, cmd)
            p = subprocess.run(["psql", self.one.db_url, "-X", "-v", "ON_ERROR_STOP=1",
                                "-c", argv[-1]], capture_output=True, text=True, timeout=30,
                               stdin=subprocess.DEVNULL)
            self.assertEqual(p.returncode, 0, p.stderr)
            outs.append(p.stdout)
        self.assertRegex(outs[0], r"(?m)^ configmaps +\| +\d+$")
        self.assertRegex(outs[1], r'(?m)^ default +\| demo +\| +\d+ \| \{"hello": "world"\}$')
        self.assertIn("(10 rows)", outs[2])

    def test_compose_healthcheck_passes(self):
        for srv, check in zip(self.servers, self.checks):
            argv = [a.replace("/pki/", self.pki + "/") for a in check[1:]]
            argv[-1] = "https://127.0.0.1:%d/readyz" % srv.port
            p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)
            # Without the healthcheck certificate /readyz is 401: curl -f fails.
            i = argv.index("--cert")
            p = subprocess.run(argv[:i] + argv[i + 4:], capture_output=True, text=True,
                               timeout=30)
            self.assertEqual(p.returncode, 22, p.stderr)

    def test_rbac_denies_on_both(self):
        cert, key, _, _ = tls.make_cert(self.pki, "jane", "jane", ca=tls.load_ca(self.pki))
        for srv in self.servers:
            r = srv.request("GET", "/api/v1/namespaces/default/configmaps", client_cert=(cert, key))
            self.assertEqual(r.status, 403, r)
            self.assertEqual(r.json()["message"],
                             'configmaps is forbidden: User "jane" cannot list resource '
                             '"configmaps" in API group "" in the namespace "default"')

    def test_service_account_token_on_both(self):
        self.ok(self.one.kubectl("create", "serviceaccount", "twin-bot"))
        token = self.ok(self.one.kubectl("create", "token", "twin-bot")).strip()
        for srv in self.servers:
            r = srv.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                            {"apiVersion": "authentication.k8s.io/v1",
                             "kind": "SelfSubjectReview"},
                            headers={"Authorization": "Bearer " + token}, client_cert=False)
            self.assertEqual(r.status, 201, r)
            self.assertEqual(r.json()["status"]["userInfo"]["username"],
                             "system:serviceaccount:default:twin-bot")


if __name__ == "__main__":
    unittest.main()
