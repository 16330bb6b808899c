"""kubectl's everyday edits keep what they do not touch.

Each test starts from a Deployment (or a Service, a RoleBinding) with
something in every list a user edits (containers with ports, env, volume
mounts and resources, volumes, tolerations, labels, annotations), runs one
real kubectl workflow, and compares the whole object before and after: the
paths the command is meant to change must have changed as kube changes
them, and nothing else may differ (server-managed metadata aside). The
commands: set resources | serviceaccount | selector | subject, label,
annotate, scale, rollout pause | resume | restart (the object only: no
controller runs here), expose, create --save-config then apply, apply
--prune -l, replace, diff and edit with a scripted EDITOR.

Why: strategic merge once replaced every list it did not know, so kubectl
set image and apply silently dropped a container's ports and env; a test of
the changed field alone would not have seen it.
"""

import copy
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, HERE)

from server import ServerTestCase  # noqa: E402
from test_kubectl import KubectlMixin  # noqa: E402

# Written by the server on every write: not the command's doing.
MANAGED = {("metadata", "resourceVersion"), ("metadata", "generation"),
           ("metadata", "managedFields")}


def leaves(obj, path=()):
    """{path tuple: scalar} of obj, lists indexed by their merge key where
    the items are maps with a name, so a reordered list still compares."""
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(leaves(v, path + (k,)))
        if not obj:
            out[path] = {}
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            key = v.get("name", i) if isinstance(v, dict) else i
            out.update(leaves(v, path + (key,)))
        if not obj:
            out[path] = []
    else:
        out[path] = obj
    return out


def changed(before, after):
    """Paths whose value differs (present in one only included)."""
    a, b = leaves(before), leaves(after)
    return sorted({p for p in set(a) | set(b) if a.get(p, object()) != b.get(p, object())
                   and p[:2] not in MANAGED}, key=str)


def under(path, prefixes):
    return any(path[:len(p)] == p for p in prefixes)


class KubectlWorkflows(KubectlMixin, ServerTestCase, unittest.TestCase):

    def deployment(self, name):
        return {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default",
                         "labels": {"app": name, "tier": "web"},
                         "annotations": {"team": "a", "owner": "b"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                     "template": {
                         "metadata": {"labels": {"app": name},
                                      "annotations": {"prometheus.io/scrape": "true"}},
                         "spec": {
                             "containers": [
                                 {"name": "web", "image": "nginx:1.26",
                                  "ports": [{"containerPort": 80, "name": "http"},
                                            {"containerPort": 443, "name": "https"}],
                                  "env": [{"name": "A", "value": "1"},
                                          {"name": "B", "value": "2"}],
                                  "resources": {"requests": {"cpu": "100m"}},
                                  "volumeMounts": [{"name": "data", "mountPath": "/d"}]},
                                 {"name": "side", "image": "busybox:1",
                                  "args": ["sleep", "3600"]}],
                             "volumes": [{"name": "data", "emptyDir": {}},
                                         {"name": "cfg", "configMap": {"name": "cfg"}}],
                             "tolerations": [{"key": "k", "operator": "Exists",
                                              "effect": "NoSchedule"}]}}}}

    def make(self, obj):
        self.ok("create", "-f", self.write("%s.json" % obj["metadata"]["name"], obj))
        kind = obj["kind"].lower()
        return self.get_json(kind, obj["metadata"]["name"])

    def assertOnlyChanged(self, before, after, *prefixes):
        """Every difference lies under one of prefixes, and each prefix
        names at least one difference."""
        diff = changed(before, after)
        stray = [p for p in diff if not under(p, prefixes)]
        self.assertEqual(stray, [], "changed beyond %s: %s" % (prefixes, [
            (p, leaves(before).get(p), leaves(after).get(p)) for p in stray]))
        for p in prefixes:
            self.assertTrue(any(under(d, [p]) for d in diff), "%s did not change" % (p,))

    # --- set -------------------------------------------------------------------------

    def test_set_resources(self):
        before = self.make(self.deployment("res"))
        self.ok("set", "resources", "deployment/res", "-c", "web",
                "--limits=cpu=200m,memory=512Mi", "--requests=memory=256Mi")
        after = self.get_json("deployment", "res")
        web = ("spec", "template", "spec", "containers", "web", "resources")
        self.assertOnlyChanged(before, after, web + ("limits",), web + ("requests", "memory"))
        res = after["spec"]["template"]["spec"]["containers"][0]["resources"]
        self.assertEqual(res, {"limits": {"cpu": "200m", "memory": "512Mi"},
                               "requests": {"cpu": "100m", "memory": "256Mi"}})

    def test_set_serviceaccount(self):
        before = self.make(self.deployment("sa"))
        self.ok("set", "serviceaccount", "deployment/sa", "builder")
        after = self.get_json("deployment", "sa")
        spec = ("spec", "template", "spec")
        self.assertOnlyChanged(before, after, spec + ("serviceAccountName",),
                               spec + ("serviceAccount",))
        # kube's conversion writes the deprecated field alongside
        self.assertEqual(after["spec"]["template"]["spec"]["serviceAccountName"], "builder")
        self.assertEqual(after["spec"]["template"]["spec"]["serviceAccount"], "builder")

    def test_set_selector_on_a_service(self):
        svc = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "sel", "namespace": "default", "labels": {"a": "b"}},
               "spec": {"selector": {"app": "old", "tier": "web"},
                        "ports": [{"name": "http", "port": 80, "targetPort": 8080},
                                  {"name": "https", "port": 443}]}}
        before = self.make(svc)
        self.ok("set", "selector", "service/sel", "app=new")
        after = self.get_json("service", "sel")
        self.assertOnlyChanged(before, after, ("spec", "selector"))
        self.assertEqual(after["spec"]["selector"], {"app": "new"})

    def test_set_subject(self):
        rb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
              "metadata": {"name": "rb", "namespace": "default"},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                          "name": "view"},
              "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                            "name": "alice"}]}
        before = self.make(rb)
        self.ok("set", "subject", "rolebinding/rb", "--user=bob", "--serviceaccount=default:ci")
        after = self.get_json("rolebinding", "rb")
        self.assertOnlyChanged(before, after, ("subjects",))
        self.assertEqual([(s["kind"], s["name"]) for s in after["subjects"]],
                         [("User", "alice"), ("User", "bob"), ("ServiceAccount", "ci")])

    # --- label, annotate, scale, rollout --------------------------------------------------

    def test_label_annotate_scale(self):
        before = self.make(self.deployment("lab"))
        self.ok("label", "deployment/lab", "env=prod", "tier-")
        self.ok("annotate", "deployment/lab", "note=x", "owner-")
        self.ok("scale", "deployment/lab", "--replicas=5")
        after = self.get_json("deployment", "lab")
        self.assertOnlyChanged(before, after, ("metadata", "labels"),
                               ("metadata", "annotations"), ("spec", "replicas"))
        self.assertEqual(after["metadata"]["labels"], {"app": "lab", "env": "prod"})
        self.assertEqual(after["metadata"]["annotations"], {"team": "a", "note": "x"})
        self.assertEqual(after["spec"]["replicas"], 5)

    def test_rollout_pause_resume_restart(self):
        before = self.make(self.deployment("roll"))
        self.ok("rollout", "pause", "deployment/roll")
        paused = self.get_json("deployment", "roll")
        self.assertOnlyChanged(before, paused, ("spec", "paused"))
        self.assertIs(paused["spec"]["paused"], True)
        self.ok("rollout", "resume", "deployment/roll")
        resumed = self.get_json("deployment", "roll")
        self.assertEqual(changed(before, resumed), [])  # paused: false is omitted again
        self.ok("rollout", "restart", "deployment/roll")
        restarted = self.get_json("deployment", "roll")
        self.assertOnlyChanged(before, restarted, ("spec", "template", "metadata", "annotations",
                                                   "kubectl.kubernetes.io/restartedAt"))

    # --- expose, save-config, replace, diff, edit -----------------------------------------

    def test_expose(self):
        self.make(self.deployment("exp"))
        self.ok("expose", "deployment/exp", "--port=8080", "--target-port=80", "--name=exp-svc")
        svc = self.get_json("service", "exp-svc")
        self.assertEqual(svc["spec"]["selector"], {"app": "exp"})
        self.assertEqual(svc["metadata"]["labels"], {"app": "exp", "tier": "web"})
        self.assertEqual([(p["port"], p["targetPort"], p["protocol"]) for p in svc["spec"]["ports"]],
                         [(8080, 80, "TCP")])
        self.assertEqual(svc["spec"]["type"], "ClusterIP")
        self.assertTrue(svc["spec"]["clusterIP"])

    def test_create_save_config_then_apply(self):
        d = self.deployment("saved")
        path = self.write("saved.json", d)
        self.ok("create", "--save-config", "-f", path)
        before = self.get_json("deployment", "saved")
        last = json.loads(before["metadata"]["annotations"][
            "kubectl.kubernetes.io/last-applied-configuration"])
        self.assertEqual(last["spec"]["template"]["spec"]["containers"][0]["env"],
                         d["spec"]["template"]["spec"]["containers"][0]["env"])
        d["spec"]["template"]["spec"]["containers"][1]["image"] = "busybox:2"
        self.ok("apply", "-f", self.write("saved.json", d))
        after = self.get_json("deployment", "saved")
        side = ("spec", "template", "spec", "containers", "side", "image")
        self.assertOnlyChanged(before, after, side, (
            "metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"))

    def test_apply_prune_by_label(self):
        # kubectl apply --prune -l: objects with the label that the files no
        # longer name are deleted, the rest of them kept whole.
        def cm(name, extra=None):
            return {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": "default",
                                 "labels": {"set": "pruned"}},
                    "data": dict({"k": name}, **(extra or {}))}
        keep, drop = cm("prune-keep", {"a": "1"}), cm("prune-drop")
        other = dict(cm("prune-other"), metadata={"name": "prune-other", "namespace": "default"})
        self.ok("apply", "-f", self.write("prune-1.json", {
            "apiVersion": "v1", "kind": "List", "items": [keep, drop, other]}))
        before = self.get_json("cm", "prune-keep")
        keep["data"]["b"] = "2"
        out = self.ok("apply", "--prune", "-l", "set=pruned", "-f",
                      self.write("prune-2.json", {"apiVersion": "v1", "kind": "List",
                                                  "items": [keep]}))
        self.assertIn("configmap/prune-drop pruned", out)
        self.assertEqual(self.names("cm", "-l", "set=pruned"), ["configmap/prune-keep"])
        self.assertIn("configmap/prune-other", self.names("cm"))  # not labelled: kept
        after = self.get_json("cm", "prune-keep")
        self.assertOnlyChanged(before, after, ("data", "b"), (
            "metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"))

    def test_replace_keeps_what_the_file_says(self):
        before = self.make(self.deployment("rep"))
        edited = copy.deepcopy(before)
        edited["spec"]["template"]["spec"]["containers"][0]["env"].append(
            {"name": "C", "value": "3"})
        self.ok("replace", "-f", self.write("rep.json", edited))
        after = self.get_json("deployment", "rep")
        self.assertOnlyChanged(before, after,
                               ("spec", "template", "spec", "containers", "web", "env", "C"))

    def test_diff(self):
        d = self.deployment("dif")
        self.make(d)
        same = self.k("diff", "-f", self.write("dif-same.json", d))
        self.assertEqual((same.returncode, same.stdout), (0, ""), same.stderr)
        d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
        other = self.k("diff", "-f", self.write("dif-other.json", d))
        self.assertEqual(other.returncode, 1, other.stderr)
        lines = [l for l in other.stdout.splitlines() if l[:1] in "+-" and l[:3] not in
                 ("---", "+++")]
        self.assertTrue(any("nginx:1.26" in l for l in lines if l.startswith("-")), other.stdout)
        self.assertTrue(any("nginx:1.27" in l for l in lines if l.startswith("+")), other.stdout)
        for l in lines:  # only the image and the generation move
            self.assertTrue("image:" in l or "generation:" in l, other.stdout)
        self.assertEqual(self.get_json("deployment", "dif")["spec"]["template"]["spec"][
            "containers"][0]["image"], "nginx:1.26")

    def test_edit_with_a_scripted_editor(self):
        before = self.make(self.deployment("ed"))
        editor = self.write("editor.sh", "#!/bin/sh\nsed -i 's/nginx:1.26/nginx:1.28/' \"$1\"\n")
        os.chmod(editor, 0o755)
        old = os.environ.get("KUBE_EDITOR")
        os.environ["KUBE_EDITOR"] = editor
        try:
            out = self.ok("edit", "deployment/ed")
        finally:
            if old is None:
                del os.environ["KUBE_EDITOR"]
            else:
                os.environ["KUBE_EDITOR"] = old
        self.assertIn("deployment.apps/ed edited", out)
        after = self.get_json("deployment", "ed")
        self.assertOnlyChanged(before, after,
                               ("spec", "template", "spec", "containers", "web", "image"))


if __name__ == "__main__":
    unittest.main()
