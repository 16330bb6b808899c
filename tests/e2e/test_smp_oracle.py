"""Strategic merge patch, judged against kube's own implementation.

The oracle is `kubectl patch --local --type strategic`: apimachinery's
strategicpatch run on the Go types compiled into kubectl 1.32, no server
involved. Cases are not written here: they come from the generated schema
(src/kube/gen/api.json). For every built-in kind the server stores, every
field with x-kubernetes-patch-strategy reachable from the kind's root (bar
status) gets cases: a list of maps is added to, changed, deleted from
($patch: delete), reordered ($setElementOrder), replaced ($patch: replace)
and, with retainKeys, trimmed ($retainKeys); a list of primitives is added
to, deleted from ($deleteFromPrimitiveList) and reordered; a retainKeys map
is trimmed and replaced. Each case's result at its field, and each patched
object whole, must equal the oracle's result put through the server's own
defaulting (a PUT with dryRun=All), server-managed metadata aside.

Objects: the sample of each kind from test_builtin_kinds, with each list
given two more elements generated from the schema's element type (required
fields, schema-typed values; if the server refuses that, also one optional
struct field). A list whose elements the server never accepts is left out
and counted. One object per kind is created; every patch is a dryRun on it.
All lists of a kind take the same operation in one patch (nested lists in a
separate round), so kubectl runs once per kind, operation and depth, and
once for all kinds that share a patch.

Why: issue "strategic merge drops list elements": sqlkube merged 4 lists by
key and replaced every other, so kubectl apply / set image / patch lost
containers' ports, env and volumeMounts.

The second class checks the everyday kubectl workflows that lost data.
"""

import copy
import json
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, HERE)

from server import KUBECTL, ServerTestCase, wait_until  # noqa: E402
import test_builtin_kinds as kinds  # noqa: E402  (a module: its tests do not run here)
from test_kubectl import KubectlMixin  # noqa: E402

API_JSON = os.path.join(HERE, "..", "..", "src", "kube", "gen", "api.json")
SMP = {"Content-Type": "application/strategic-merge-patch+json"}
MAX_DEPTH = 12  # struct nesting followed from a kind's root

# What the server manages itself: not part of a patch's result.
SERVER_META = ("resourceVersion", "managedFields", "generation", "creationTimestamp", "uid")

MAP_OPS = ("add", "change", "delete", "reorder", "replace")
PRIM_OPS = ("add", "delete", "reorder")
RETAIN_MAP_OPS = ("retain", "mapreplace")


def ref_name(prop):
    r = prop.get("$ref")
    return r.rsplit("/", 1)[-1] if r else None


class Schema:
    """The generated API description and the patch-strategy fields in it."""

    def __init__(self):
        with open(API_JSON) as f:
            api = json.load(f)
        self.defs = api["definitions"]
        self.roots = {(r["group"], r["version"], r["resource"]): r["schema"]
                      for r in api["resources"]}

    def fields(self, root):
        """Every field with a patch strategy under root: dicts with path
        (a list of names and ("[]", merge key) steps), shape ("map", "prim"
        or "retainmap"), strategy, merge key and element definition."""
        out = []
        self._walk(root, [], {root}, out)
        return out

    def _walk(self, dname, path, seen, out):
        d = self.defs.get(dname) or {}
        if len(path) > MAX_DEPTH:
            return
        for name, p in sorted((d.get("properties") or {}).items()):
            if not path and name == "status":
                continue  # the main resource keeps status as it is
            strategy = p.get("x-kubernetes-patch-strategy", "")
            key = p.get("x-kubernetes-patch-merge-key")
            here = path + [name]
            elem = ref_name(p.get("items") or {}) if p.get("type") == "array" else None
            if p.get("type") == "array" and strategy:
                out.append({"path": here, "shape": "map" if elem else "prim",
                            "strategy": strategy, "key": key, "elem": elem,
                            "item": (p.get("items") or {}).get("type")})
            elif ref_name(p) and "retainKeys" in strategy:
                out.append({"path": here, "shape": "retainmap", "strategy": strategy,
                            "key": None, "elem": ref_name(p)})
            if ref_name(p) and ref_name(p) not in seen:
                self._walk(ref_name(p), here, seen | {ref_name(p)}, out)
            if elem and "merge" in strategy and key and elem not in seen:
                self._walk(elem, path + [name, ("[]", key)], seen | {elem}, out)

    def value(self, prop, tag):
        """A schema-typed value for a property, tag making strings and
        numbers distinct."""
        r = ref_name(prop)
        if r:
            d = self.defs.get(r, {})
            if d.get("type") == "string" and d.get("format") == "int-or-string":
                return 7000 + tag
            if d.get("type") == "string" or r.endswith(("Quantity", "Time", "MicroTime")):
                return {"io.k8s.apimachinery.pkg.apis.meta.v1.Time": "2026-01-01T00:00:00Z",
                        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime":
                            "2026-01-01T00:00:00.000000Z"}.get(r, "1")
            return self.element(r, tag)
        t = prop.get("type")
        if t == "integer":
            return 7000 + tag
        if t == "number":
            return 1.5
        if t == "boolean":
            return True
        if t == "array":
            return []
        if t == "object":
            return {}
        return "smp-%d" % tag

    def element(self, dname, tag, extra=None):
        """An element of definition dname: its required fields, plus the
        optional field extra."""
        d = self.defs.get(dname, {})
        props = d.get("properties") or {}
        obj = {}
        for f in list(d.get("required") or []) + ([extra] if extra else []):
            if f in props:
                obj[f] = self.value(props[f], tag)
        return obj

    def optional_structs(self, dname):
        d = self.defs.get(dname, {})
        req = set(d.get("required") or [])
        return [f for f, p in sorted((d.get("properties") or {}).items())
                if f not in req and ref_name(p) and
                (self.defs.get(ref_name(p)) or {}).get("properties")]


def walk_to(obj, path, create=False):
    """The dict holding the last step of path in obj (None if not there):
    names are keys, ("[]", key) the first element of a list."""
    cur = obj
    for step in path[:-1]:
        if isinstance(step, tuple):
            if not isinstance(cur, list) or not cur or not isinstance(cur[0], dict) or \
                    step[1] not in cur[0]:
                return None
            cur = cur[0]
            continue
        if not isinstance(cur, dict):
            return None
        if step not in cur and create:
            nxt = path[path.index(step) + 1]
            cur[step] = [] if isinstance(nxt, tuple) else {}
        cur = cur.get(step)
    return cur if isinstance(cur, dict) else None


def value_at(obj, path):
    holder = walk_to(obj, path)
    return None if holder is None else holder.get(path[-1])


def patch_holder(patch, obj, path):
    """The patch dict for the last step of path, created on the way: a list
    step becomes the patch list's element keyed like obj's first element."""
    cur, src = patch, obj
    for step in path[:-1]:
        if isinstance(step, tuple):
            key = step[1]
            kv = src[0][key]
            for e in cur:
                if e.get(key) == kv:
                    cur = e
                    break
            else:
                cur.append({key: kv})
                cur = cur[-1]
            src = src[0]
            continue
        nxt = path[path.index(step) + 1]
        cur = cur.setdefault(step, [] if isinstance(nxt, tuple) else {})
        src = src[step]
    return cur


def depth(field):
    return sum(1 for s in field["path"] if isinstance(s, tuple))


def strip_meta(obj):
    obj = copy.deepcopy(obj)
    meta = obj.get("metadata", {}) if isinstance(obj, dict) else {}
    for k in SERVER_META:
        meta.pop(k, None)
    return obj


def oracle(items):
    """kubectl patch --local for [(object, patch)], one invocation per
    distinct patch: the result object, or an error string, per item."""
    groups = {}
    for i, (obj, patch) in enumerate(items):
        groups.setdefault(json.dumps(patch, sort_keys=True), []).append(i)
    results = [None] * len(items)
    for text, idx in groups.items():
        docs = run_kubectl([items[i][0] for i in idx], text)
        if isinstance(docs, str):  # one failed: find out which, one by one
            docs = []
            for i in idx:
                one = run_kubectl([items[i][0]], text)
                docs.append(one if isinstance(one, str) else one[0])
        for i, d in zip(idx, docs):
            results[i] = d
    return results


def run_kubectl(objs, patch_text):
    lst = {"apiVersion": "v1", "kind": "List", "items": objs}
    p = subprocess.run([KUBECTL, "patch", "--local", "-f", "-", "--type", "strategic",
                        "-p", patch_text, "-o", "json"],
                       input=json.dumps(lst), capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, KUBECONFIG="/dev/null"))
    if p.returncode != 0:
        return p.stderr.strip() or "kubectl failed"
    dec, pos, out = json.JSONDecoder(), 0, []
    text = p.stdout
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        doc, pos = dec.raw_decode(text, pos)
        out.append(doc)
    return out if len(out) == len(objs) else "kubectl printed %d objects for %d" % (
        len(out), len(objs))


class StrategicMergeOracle(ServerTestCase, unittest.TestCase):

    served = kinds.BuiltinKinds.served
    storable = kinds.BuiltinKinds.storable
    sample = kinds.BuiltinKinds.sample

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = cls.server.request("POST", "/api/v1/namespaces",
                               {"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": kinds.NS}})
        assert r.status == 201, r

    def url(self, gv, res, name=None):
        prefix = "/api/" if gv == "v1" else "/apis/"
        u = prefix + gv + ("/namespaces/" + kinds.NS if res["namespaced"] else "") + "/" + \
            res["name"]
        return u + ("/" + name if name else "")

    def status_written(self, url):
        """The object at url once a status controller has observed its generation."""
        def observed():
            obj = self.server.request("GET", url).json()
            return obj if "observedGeneration" in obj.get("status", {}) else None
        return wait_until(observed, timeout=10, what="%s's status" % url)

    def accepted(self, gv, res, obj):
        r = self.server.request("POST", self.url(gv, res) + "?dryRun=All", obj)
        return r.status == 201

    def candidates(self, schema, field, cur):
        """Ways to make two more elements of field's list (current
        elements cur), most likely accepted first: functions of (elements,
        tag) that add one element (and may name the others)."""
        if field["shape"] == "prim":
            if field["item"] == "integer":
                return [lambda els, tag: els.append(7000 + tag)]
            # finalizers want a domain-qualified name
            return [lambda els, tag: els.append("smp-%d" % tag),
                    lambda els, tag: els.append("smp.example.com/smp-%d" % tag)]
        key, elem = field["key"], field["elem"]
        props = schema.defs[elem].get("properties", {})

        def keyed(e, tag):
            if key:
                e[key] = schema.value(props.get(key, {}), tag)
            return e

        def like_first(els, tag, name_all=False):
            # a copy of an element the server already took, re-keyed; with
            # several, kube wants them named (Service ports)
            e = keyed(copy.deepcopy(els[0]), tag)
            if "name" in props and key != "name":
                e["name"] = "smp-%d" % tag
                if name_all:
                    for i, x in enumerate(els):
                        x.setdefault("name", "smp-x%d" % i)
            els.append(e)

        out = []
        if cur and isinstance(cur[0], dict):
            out += [like_first, lambda els, tag: like_first(els, tag, True)]
        elif field.get("sibling"):
            # an element of another list of the same type (initContainers
            # from containers)
            out.append(lambda els, tag: els.append(
                keyed(copy.deepcopy(field["sibling"]), tag)))
        for extra in [None] + schema.optional_structs(elem)[:4]:
            out.append(lambda els, tag, extra=extra: els.append(
                keyed(schema.element(elem, tag, extra), tag)))
        return out

    def populate(self, schema, gv, res, base, field):
        """base with field's list given two generated elements, if the
        server accepts one such; else None."""
        if field["shape"] == "retainmap":
            return base  # the server's defaulting fills it (a Deployment's strategy)
        holder = walk_to(copy.deepcopy(base), field["path"], create=True)
        if holder is None or not isinstance(holder.get(field["path"][-1], []), list):
            return None
        for make in self.candidates(schema, field, holder.get(field["path"][-1]) or []):
            obj = copy.deepcopy(base)
            holder = walk_to(obj, field["path"], create=True)
            els = holder.setdefault(field["path"][-1], [])
            for tag in (field["tag"] + 1, field["tag"] + 2):
                make(els, tag)
            if self.accepted(gv, res, obj):
                return obj
        return None

    def op_patch(self, schema, stored, fields, op):
        """One patch applying op to each of fields in stored; the fields
        it applies to."""
        patch, used = {}, []
        for f in fields:
            name, cur = f["path"][-1], value_at(stored, f["path"])
            ops = {"map": MAP_OPS, "prim": PRIM_OPS, "retainmap": RETAIN_MAP_OPS}[f["shape"]]
            ops = ops + (("retain",) if f["shape"] == "map" and "retainKeys" in f["strategy"]
                         else ())
            if op not in ops or not cur:
                continue
            if f["shape"] == "retainmap":
                if not isinstance(cur, dict):
                    continue
                k0 = sorted(cur)[0]
                p = patch_holder(patch, stored, f["path"])
                p[name] = ({"$retainKeys": [k0], k0: cur[k0]} if op == "retain"
                           else {"$patch": "replace", k0: cur[k0]})
                used.append(f)
                continue
            key = f["key"]
            if f["shape"] == "map" and not (key and all(isinstance(e, dict) and key in e
                                                         for e in cur)):
                continue
            p = patch_holder(patch, stored, f["path"])
            last = cur[-1]
            if f["shape"] == "prim":
                if op == "add":
                    p.setdefault(name, []).append(
                        7009 if isinstance(last, int) else "smp.example.com/smp-add")
                elif op == "delete":
                    p["$deleteFromPrimitiveList/" + name] = [last]
                else:
                    p["$setElementOrder/" + name] = list(reversed(cur))
            elif op == "add":
                e = copy.deepcopy(last)
                e[key] = (f["tag"] + 7009 if isinstance(last[key], int)
                          else "smp-%d" % (f["tag"] + 9))
                if key != "name" and "name" in e:
                    e["name"] = "smp-add%d" % f["tag"]
                p.setdefault(name, []).append(e)
            elif op == "change":
                e = {key: last[key]}
                props = schema.defs[f["elem"]].get("properties", {})
                scalar = [k for k, v in sorted(props.items())
                          if k != key and v.get("type") in ("string", "integer")]
                if scalar:
                    k = scalar[0]
                    e[k] = 7009 if props[k]["type"] == "integer" else "smp-changed"
                p.setdefault(name, []).append(e)
            elif op == "delete":
                p.setdefault(name, []).append({"$patch": "delete", key: last[key]})
            elif op == "reorder":
                p["$setElementOrder/" + name] = [{key: e[key]} for e in reversed(cur)]
            elif op == "replace":
                p[name] = [{"$patch": "replace"}] + [copy.deepcopy(e) for e in cur[:-1]]
            elif op == "retain":
                e = {key: last[key]}
                e["$retainKeys"] = sorted(k for k in last if k != key)[:1] + [key]
                p.setdefault(name, []).append(e)
            used.append(f)
        return patch, used

    def test_every_patch_strategy_field_matches_kube(self):
        started = time.monotonic()
        schema = Schema()
        plans, skipped = [], []
        storable = [(gv, r) for gv, r in self.storable()
                    if kinds.key_of(gv, r["name"]) in kinds.SAMPLES]
        self.assertGreaterEqual(len(storable), 50)
        for i, (gv, res) in enumerate(storable):
            group, _, version = gv.rpartition("/")
            root = schema.roots.get((group, version, res["name"]))
            self.assertIsNotNone(root, "%s/%s has no schema in api.json" % (gv, res["name"]))
            base = self.sample(gv, res, "smp-%d" % i)
            fields = schema.fields(root)
            for n, f in enumerate(fields):
                f["tag"] = 10 * (n + 1)  # values unique across lists (container names)
                f["sibling"] = next((value_at(base, g["path"])[0] for g in fields
                                     if g["shape"] == "map" and g["elem"] == f["elem"] and
                                     g is not f and value_at(base, g["path"])),
                                    None) if f["elem"] else None
            kept, left = [], fields
            # greedily, each list on top of those before it; twice, as one
            # may need another (volumeMounts name volumes)
            for _ in range(2):
                again = []
                for f in left:
                    got = self.populate(schema, gv, res, base, f)
                    if got is None:
                        again.append(f)
                    else:
                        kept.append(f)
                        base = got
                left = again
            skipped += ["%s %s" % (res["kind"], show(f["path"])) for f in left]
            r = self.server.request("POST", self.url(gv, res), base)
            self.assertEqual(r.status, 201, "%s: %s" % (res["kind"], r.body[:500]))
            stored = r.json()
            if res["kind"] == "ValidatingAdmissionPolicy":
                # its status controller writes once after the create: the
                # version the cases patch (and PUT with) is the one after it
                stored = self.status_written(self.url(gv, res, stored["metadata"]["name"]))
            kept = [f for f in kept if value_at(stored, f["path"])]
            plans.append((gv, res, stored, kept))

        items, meta = [], []
        for gv, res, stored, fields in plans:
            for op in MAP_OPS + ("retain", "mapreplace"):
                for d in sorted({depth(f) for f in fields}):
                    patch, used = self.op_patch(schema, stored, [f for f in fields
                                                                 if depth(f) == d], op)
                    if used:
                        items.append((stored, patch))
                        meta.append((gv, res, op, used))
        results = oracle(items)

        failures, cases, kinds_seen, unjudged, refused, why = [], 0, set(), set(), 0, {}
        for (stored, patch), (gv, res, op, used), want in zip(items, meta, results):
            url = self.url(gv, res, stored["metadata"]["name"]) + "?dryRun=All"
            got = self.server.request("PATCH", url, json.dumps(patch), headers=SMP)
            if isinstance(want, dict):
                want_r = self.server.request("PUT", url, want)
            kinds_seen.add(res["kind"])
            cases += len(used)
            where = "%s %s %s" % (res["kind"], op, json.dumps(patch)[:300])
            if isinstance(want, str) and "locally" in want:
                # kubectl has no Go types for this kind (CRDs, APIServices)
                unjudged.add(res["kind"])
                cases -= len(used)
                continue
            if not isinstance(want, dict):
                if got.status < 400:
                    failures.append("%s: kubectl refused (%s), server %d" %
                                    (where, want, got.status))
                continue
            if (got.status < 400) != (want_r.status < 400):
                failures.append("%s: server %d %s, oracle via PUT %d %s" %
                                (where, got.status, got.body[:300], want_r.status,
                                 want_r.body[:300]))
                continue
            if got.status >= 400:
                refused += len(used)  # both refused: nothing more to compare
                why[op] = why.get(op, 0) + len(used)
                continue
            g, w = strip_meta(got.json()), strip_meta(want_r.json())
            for f in used:
                if value_at(g, f["path"]) != value_at(w, f["path"]):
                    failures.append("%s at %s:\n  server %s\n  kube   %s" %
                                    (where, show(f["path"]),
                                     json.dumps(value_at(g, f["path"]))[:400],
                                     json.dumps(value_at(w, f["path"]))[:400]))
            if g != w:
                failures.append("%s: objects differ\n  server %s\n  kube   %s" %
                                (where, json.dumps(g, sort_keys=True)[:1500],
                                 json.dumps(w, sort_keys=True)[:1500]))
        took = time.monotonic() - started
        kinds_seen -= unjudged
        print("\n    strategic merge oracle: %d cases (%d refused by both) in %d patches over "
              "%d kinds, %d fields left out (no element the server accepts), kinds kubectl "
              "cannot judge: %s, %.1f s" % (cases, refused, len(items), len(kinds_seen),
                                            len(skipped), ", ".join(sorted(unjudged)) or "none",
                                            took))
        if os.environ.get("SMP_ORACLE_VERBOSE"):
            print("    left out: " + "; ".join(skipped))
            print("    kinds: " + ", ".join(sorted(kinds_seen)))
            print("    refused by both, by operation: %s" % why)
        self.assertEqual(sorted({r["kind"] for _, r in storable} - unjudged - kinds_seen), [],
                         "kinds without a case")
        self.assertGreaterEqual(cases, 500)
        if failures:
            self.fail("%d of %d cases differ from kube:\n%s" %
                      (len(failures), cases, "\n".join(failures[:30])))


def show(path):
    return ".".join(s if isinstance(s, str) else "[]" for s in path)


class EverydayWorkflows(KubectlMixin, ServerTestCase, unittest.TestCase):
    """kubectl apply / set image / set env / patch on lists with merge keys."""

    DEPLOY = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                     "containers": [{"name": "web", "image": "nginx:1.26",
                                     "ports": [{"containerPort": 80, "name": "http"},
                                               {"containerPort": 443, "name": "https"}],
                                     "env": [{"name": "A", "value": "1"},
                                             {"name": "B", "value": "2"}],
                                     "volumeMounts": [{"name": "data", "mountPath": "/d"}]},
                                    {"name": "side", "image": "busybox:1"}],
                     "volumes": [{"name": "data", "emptyDir": {}}]}}}}

    def container(self, name, deploy="web"):
        d = self.get_json("deployment", deploy)
        for c in d["spec"]["template"]["spec"]["containers"]:
            if c["name"] == name:
                return c
        self.fail("no container %s in %s" % (name, d))

    def assert_kept(self, c):
        self.assertEqual([p["containerPort"] for p in c["ports"]], [80, 443])
        self.assertEqual(c["env"], [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
        self.assertEqual(c["volumeMounts"], [{"name": "data", "mountPath": "/d"}])

    def test_apply_v1_then_v2_changes_one_image(self):
        v1 = copy.deepcopy(self.DEPLOY)
        v1["metadata"]["name"] = "applied"
        self.ok("apply", "-f", self.write("v1.json", v1))
        v2 = copy.deepcopy(v1)
        v2["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
        self.ok("apply", "-f", self.write("v2.json", v2))
        c = self.container("web", "applied")
        self.assertEqual(c["image"], "nginx:1.27")
        self.assert_kept(c)
        self.assertEqual(self.container("side", "applied")["image"], "busybox:1")
        # v3 drops one env var and one port: apply removes just those
        v3 = copy.deepcopy(v2)
        c3 = v3["spec"]["template"]["spec"]["containers"][0]
        c3["env"] = c3["env"][:1]
        c3["ports"] = c3["ports"][1:]
        self.ok("apply", "-f", self.write("v3.json", v3))
        c = self.container("web", "applied")
        self.assertEqual(c["env"], [{"name": "A", "value": "1"}])
        self.assertEqual([p["containerPort"] for p in c["ports"]], [443])

    def test_set_image_and_set_env(self):
        d = copy.deepcopy(self.DEPLOY)
        d["metadata"]["name"] = "setters"
        self.ok("create", "-f", self.write("setters.json", d))
        self.ok("set", "image", "deployment/setters", "web=nginx:1.27")
        c = self.container("web", "setters")
        self.assertEqual(c["image"], "nginx:1.27")
        self.assert_kept(c)
        # was 422 "containers[0].image: Required value"
        self.ok("set", "env", "deployment/setters", "-c", "web", "C=3")
        c = self.container("web", "setters")
        self.assertEqual(c["env"][-1], {"name": "C", "value": "3"})
        self.assertEqual(c["image"], "nginx:1.27")
        self.assertEqual([p["containerPort"] for p in c["ports"]], [80, 443])

    def test_patch_service_adds_one_port(self):
        svc = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "svc", "namespace": "default"},
               "spec": {"selector": {"app": "web"},
                        "ports": [{"name": "http", "port": 80, "protocol": "TCP"},
                                  {"name": "https", "port": 443, "protocol": "TCP"}]}}
        self.ok("create", "-f", self.write("svc.json", svc))
        self.ok("patch", "svc", "svc", "--type", "strategic", "-p",
                json.dumps({"spec": {"ports": [{"name": "metrics", "port": 9090}]}}))
        ports = self.get_json("svc", "svc")["spec"]["ports"]
        self.assertEqual(sorted(p["port"] for p in ports), [80, 443, 9090])

    def test_node_taints_and_pod_tolerations(self):
        # Neither list has a patch strategy in kube: a patch replaces it.
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}}
        self.ok("create", "-f", self.write("node.json", node))
        self.ok("taint", "node", "n1", "b=1:NoExecute")
        taints = self.get_json("node", "n1")["spec"]["taints"]
        self.assertEqual(sorted(t["key"] for t in taints), ["a", "b"])
        self.ok("patch", "node", "n1", "--type", "strategic", "-p",
                json.dumps({"spec": {"taints": [{"key": "c", "effect": "NoSchedule"}]}}))
        self.assertEqual([t["key"] for t in self.get_json("node", "n1")["spec"]["taints"]],
                         ["c"])
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "tol", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "busybox:1"}],
                        "tolerations": [{"key": "a", "operator": "Exists"}]}}
        self.ok("create", "-f", self.write("pod.json", pod))
        self.ok("patch", "pod", "tol", "--type", "strategic", "-p",
                json.dumps({"spec": {"tolerations": [{"key": "b", "operator": "Exists"}],
                                     "containers": [{"name": "c", "image": "busybox:2"}]}}))
        spec = self.get_json("pod", "tol")["spec"]
        self.assertEqual([t["key"] for t in spec["tolerations"] if "key" in t], ["b"])
        self.assertEqual(spec["containers"][0]["image"], "busybox:2")

    def test_custom_resource_refuses_strategic_merge(self):
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "widgets.smp.example.com"},
               "spec": {"group": "smp.example.com", "scope": "Namespaced",
                        "names": {"plural": "widgets", "kind": "Widget"},
                        "versions": [{"name": "v1", "served": True, "storage": True,
                                      "schema": {"openAPIV3Schema": {
                                          "type": "object",
                                          "x-kubernetes-preserve-unknown-fields": True}}}]}}
        r = self.server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                crd)
        self.assertEqual(r.status, 201, r.body)
        base = "/apis/smp.example.com/v1/namespaces/default/widgets"
        for _ in range(100):
            r = self.server.request("POST", base, {"apiVersion": "smp.example.com/v1",
                                                   "kind": "Widget",
                                                   "metadata": {"name": "w"}, "spec": {"a": 1}})
            if r.status != 404:
                break
            time.sleep(0.1)
        self.assertEqual(r.status, 201, r.body)
        r = self.server.request("PATCH", base + "/w", json.dumps({"spec": {"a": 2}}), headers=SMP)
        self.assertEqual(r.status, 415, r.body)
        self.assertEqual(r.json()["reason"], "UnsupportedMediaType")
        self.assertEqual(r.json()["message"],
                         "the body of the request was in an unknown format - accepted media "
                         "types include: application/json-patch+json, "
                         "application/merge-patch+json, application/apply-patch+yaml")
        p = self.bad("patch", "widget", "w", "--type", "strategic", "-p", '{"spec":{"a":3}}')
        self.assertIn("unknown format", p.stderr)
        # merge patch still works
        r = self.server.request("PATCH", base + "/w", json.dumps({"spec": {"a": 2}}),
                                headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(r.status, 200, r.body)


    # Directives of the wrong shape, one error each (Go visits a map's keys
    # in random order: two errors would make the message a coin toss).
    MALFORMED = [
        {"$patch": "bogus"},
        {"$patch": 7},
        {"metadata": {"$patch": None}},
        {"metadata": {"$patch": {"a": [1, "b", True, None, 1.5, 1e21]}}},
        {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}},
        {"spec": {"template": {"spec": {"containers": [{"$patch": "delete"}]}}}},
        {"spec": {"template": {"spec": {"containers": [{"name": "c", "$patch": "merge"}]}}}},
        {"spec": {"template": {"spec": {"containers": [{"name": "c", "$patch": "frob"}]}}}},
        {"spec": {"template": {"spec": {"containers": ["c"]}}}},
        {"spec": {"template": {"spec": {"containers": [{"name": "c", "ports": [
            {"containerPort": 81}, {"containerPort": 80}],
            "$setElementOrder/ports": [{"containerPort": 80}, {"containerPort": 81}]}]}}}},
        {"spec": {"template": {"spec": {"$setElementOrder/containers": "c"}}}},
        {"spec": {"template": {"spec": {"$setElementOrder": []}}}},
        {"metadata": {"$deleteFromPrimitiveList": ["a"]}},
        {"metadata": {"finalizers": ["b", "a"], "$setElementOrder/finalizers": ["a", "b"]}},
        {"spec": {"$retainKeys": "replicas"}},
        {"spec": {"$retainKeys": ["replicas"], "paused": True}},
        {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}},
    ]

    def test_malformed_directives_answer_kubes_messages(self):
        d = copy.deepcopy(self.DEPLOY)
        d["metadata"]["name"] = "malformed"
        d["metadata"]["finalizers"] = ["example.com/a", "example.com/b"]
        d["spec"]["template"]["spec"]["containers"][0]["name"] = "c"
        r = self.server.request("POST", "/apis/apps/v1/namespaces/default/deployments", d)
        self.assertEqual(r.status, 201, r.body)
        stored = r.json()
        path = "/apis/apps/v1/namespaces/default/deployments/malformed"
        failures = []
        for patch in self.MALFORMED:
            text = json.dumps(patch)
            want = run_kubectl([stored], text)
            self.assertIsInstance(want, str, "kubectl took %s" % text)
            want = want.replace("error: ", "", 1)
            got = self.server.request("PATCH", path, text, headers=SMP)
            msg = got.json().get("message") if got.status >= 400 else None
            if not (400 <= got.status < 500) or (msg or "").rstrip("\n") != want:
                failures.append("%s: server %d %r, kube %r" % (text, got.status, msg, want))
        self.assertEqual(failures, [])

if __name__ == "__main__":
    unittest.main()
