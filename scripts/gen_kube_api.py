#!/usr/bin/env python3
"""Generates src/kube/gen/api.json: the facts of the Kubernetes 1.32 API that
sqlkube serves, from Kubernetes' own public API definitions.

Inputs (fetched snapshots; nothing from them is committed but this output):
  --swagger FILE     kube 1.32's OpenAPI v2 document: kubernetes/swagger.json.unprocessed
                     at tag v32.0.1 of kubernetes-client/python. Resources (paths,
                     scopes, verbs, subresources) and schemas (types, formats, refs,
                     required, x-kubernetes-* list/map/patch semantics, GVKs).
  --go-types DIR...  Go API packages whose struct tags give each field's protobuf
                     number, whether its JSON tag has omitempty and whether it is a
                     pointer (what a protobuf decoder must know to reproduce JSON):
                     kubernetes/api, kubernetes/apimachinery, kubernetes/kube-aggregator
                     and kubernetes/apiextensions-apiserver, each at release-1.32
                     (a git directory and the branch: DIR@BRANCH).
  --overlay FILE     scripts/kube-api-overlay.json: what no definition file states:
                     short names and categories (as kube-apiserver 1.32's discovery
                     documents list them), field selectors (kube's field label
                     conversions), the group/versions a 1.32 server enables by
                     default ("served") and the order discovery lists their groups in
                     (kube-aggregator's group priorities, "groupOrder"), subresources
                     behind disabled feature gates
                     ("notServed"), each group's preferred version when it serves
                     several, and resources kept in another's storage
                     ("sharedStorage": served g/v/r -> the g/v/r whose form is stored),
                     and "deleteReturnsObject" for a resource whose REST wrapper
                     returns the deleted object although its DELETE is documented
                     as returning a Status (namespaces).

A resource's "deleteReturnsObject" is true when its DELETE answers the object
rather than a Status Success (the OpenAPI 200 response of its DELETE, which kube
derives from the store's ReturnDeletedObject), or when the overlay says so.

Output: one JSON document, {"kubernetes", "resources": [...], "definitions": {...},
"preferredVersions", "queryParameters", "sharedStorage"}, with no prose: descriptions are dropped.
Resources are in discovery order: groups by priority, the preferred version
first, then other versions and resources by name. Definitions keep the OpenAPI v2 keys sqlkube
uses (type, format, $ref, items, additionalProperties, required, enum and the
x-kubernetes-* extensions) and gain, per property:
  x-sk-pb         its protobuf field number
  x-sk-pb-via     for fields of a struct embedded inline (json:",inline"), the
                  protobuf numbers of the embedding fields, outermost first:
                  JSON flattens them, protobuf nests them as messages
  x-sk-omitempty  its JSON tag has omitempty (a zero value is not written)
  x-sk-ptr        it is a pointer in Go (on the protobuf wire only when set)
  x-sk-default    its `+default=` value in the Go types, when a literal (what
                  server-side apply gives a list-map key an item omits)
and per definition x-sk-go, the Go type name encoding/json errors use.

usage: scripts/gen_kube_api.py --swagger F --go-types D@B [D@B...] --overlay F > api.json
"""

import argparse
import json
import re
import subprocess
import sys

# Definition name prefixes -> (Go types source index, package dir prefix).
DEF_PREFIXES = [
    ("io.k8s.api.", "api", ""),
    ("io.k8s.apimachinery.", "apimachinery", ""),
    ("io.k8s.kube-aggregator.", "kube-aggregator", ""),
    ("io.k8s.apiextensions-apiserver.", "apiextensions-apiserver", ""),
]

# Swagger definitions whose JSON form is not their Go struct's: a string, a
# number or free JSON; the transcoder treats each specially (x-sk-wire).
WIRE_TYPES = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "microtime",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intorstring",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "rawextension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "fieldsv1",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Duration": "duration",
    # apiextensions' free JSON: v1.JSON is {raw bytes = 1} on the protobuf wire,
    # as RawExtension. The three "X or Y" unions marshal themselves in JSON; their
    # protobuf messages (schema/allows, schema/schemas, schema/property) are not
    # RawExtension's, so a CRD's protobuf form carries them as JSON bytes.
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": "rawextension",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray":
        "rawextension",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool":
        "rawextension",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray":
        "rawextension",
}

KEEP_KEYS = {"type", "format", "$ref", "items", "additionalProperties", "required", "enum",
             "properties", "x-kubernetes-group-version-kind", "x-kubernetes-list-type",
             "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
             "x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key",
             "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string",
             "x-kubernetes-embedded-resource", "x-kubernetes-unions"}

PATH_RE = re.compile(r"^/(?:api/(v1)|apis/([^/]+)/([^/]+))(/watch)?(/namespaces/\{namespace\})?"
                     r"/([a-z0-9]+)(/\{name\})?(?:/([a-z]+))?(?:/\{path\})?$")

ACTION_VERB = {"get": "get", "list": "list", "post": "create", "put": "update",
               "patch": "patch", "delete": "delete", "deletecollection": "deletecollection"}
CONNECT_VERB = {"get": "get", "post": "create", "put": "update", "patch": "patch",
                "delete": "delete"}


def die(msg):
    print("gen_kube_api: " + msg, file=sys.stderr)
    sys.exit(1)


# ---- Go types ---------------------------------------------------------------

FIELD_RE = re.compile(r'^\s*(?:(\w+)\s+)?([\w\.\*\[\]]+(?:\[[\w\.]+\][\w\.\*\[\]]+)?)\s+`([^`]*)`')
TAG_RE = re.compile(r'(\w+):"([^"]*)"')


def git_files(gitdir, branch, prefix):
    cmd = ["git", "--git-dir", gitdir, "ls-tree", "-r", "--name-only", branch]
    if prefix:
        cmd.append(prefix)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [p for p in out.split() if p.endswith(".go") and not p.endswith("_test.go")
            and "zz_generated" not in p and not p.endswith(".pb.go")]


def git_show(gitdir, branch, path):
    return subprocess.run(["git", "--git-dir", gitdir, "show", "%s:%s" % (branch, path)],
                          capture_output=True, text=True, check=True).stdout


GO_BUILTIN = {"string", "bool", "int", "int8", "int16", "int32", "int64", "uint", "uint8",
              "uint16", "uint32", "uint64", "float32", "float64", "byte"}


class GoFile:
    """The package name and import names of one Go file, to spell a type as
    Go's reflect does ("v1.PodSpec", "[]v1.Container", "map[string]string")."""

    def __init__(self, text):
        m = re.search(r"^package (\w+)", text, re.M)
        self.package = m.group(1) if m else ""
        self.imports = {}
        for alias, path in re.findall(r'^\s*(\w+)?\s*"([\w\.\-/]+)"\s*$', text, re.M):
            self.imports[alias or path.split("/")[-1]] = path

    def spell(self, expr):
        if expr.startswith("*"):
            return self.spell(expr[1:])
        if expr.startswith("[]"):
            return "[]" + self.spell(expr[2:])
        if expr.startswith("map["):
            key, val = split_map(expr)
            return "map[%s]%s" % (self.spell(key), self.spell(val))
        if expr == "byte":
            return "uint8"
        if expr in GO_BUILTIN:
            return expr
        if "." in expr:
            alias, name = expr.split(".", 1)
            return self.imports.get(alias, alias).split("/")[-1] + "." + name
        return self.package + "." + expr

    def path_of(self, expr):
        """(import path or None for this package, type name) of a named type."""
        if "." in expr:
            alias, name = expr.split(".", 1)
            return self.imports.get(alias), name
        return None, expr


def split_map(expr):
    """map[K]V -> (K, V), with brackets inside K balanced."""
    depth, i = 0, 3
    while True:
        c = expr[i]
        depth += (c == "[") - (c == "]")
        if depth == 0:
            return expr[4:i], expr[i + 1:]
        i += 1


def parse_go_types(text, pkg):
    """({TypeName: {json name: field}}, {TypeName: (GoFile, underlying expr)})
    of one Go file; a field is {pb, omitempty, ptr, go, expr, file} and
    default, the literal value of a `// +default=` marker above it (kube's
    OpenAPI models carry it; the v2 document does not)."""
    types, named = {}, {}
    gofile = GoFile(text)
    cur = None
    default = None
    for line in text.splitlines():
        m = re.match(r"^\s*// \+default=(.*)$", line)
        if m:
            try:
                default = json.loads(m.group(1))
            except ValueError:  # ref(...): a Go constant, not a literal
                default = None
            continue
        if not line.strip().startswith("//") and not FIELD_RE.match(line):
            default = None
        m = re.match(r"^type (\w+) struct ?\{(\})?", line)
        if m:
            types.setdefault(m.group(1), {})
            # "struct{}" on one line has no body to read.
            cur = None if m.group(2) else types[m.group(1)]
            continue
        m = re.match(r"^type (\w+) ([\w\.\*\[\]]+)\s*(//.*)?$", line)
        if m:
            named[m.group(1)] = (gofile, m.group(2))
            continue
        if cur is None:
            continue
        if line.startswith("}"):
            cur = None
            continue
        m = FIELD_RE.match(line)
        if not m:
            continue
        name, gotype, tags = m.group(1), m.group(2), dict(TAG_RE.findall(m.group(3)))
        jtag = tags.get("json")
        if jtag is None:
            continue
        jparts = jtag.split(",")
        jname = jparts[0]
        if jname == "" and "inline" in jparts:
            pb = tags.get("protobuf")
            cur["\0" + gotype] = {"inline": gotype.split(".")[-1],
                                  "pb": int(pb.split(",")[1]) if pb else None}
            continue
        if jname == "-":
            continue
        pb = tags.get("protobuf")
        num = None
        if pb:
            pparts = pb.split(",")
            num = int(pparts[1])
        cur[jname] = {"pb": num, "omitempty": "omitempty" in jparts[1:],
                      "ptr": gotype.startswith("*"), "go": gofile.spell(gotype),
                      "expr": gotype.lstrip("*"), "file": gofile}
        if default is not None:
            cur[jname]["default"] = default
        default = None
    return types, named


def load_go_types(specs):
    """({source name: {package dir: {type: fields}}}, {import path: {type: named}})."""
    sources, named = {}, {}
    for spec in specs:
        gitdir, _, branch = spec.partition("@")
        name = gitdir.rstrip("/").split("/")[-2].split("+")[-1]  # .mirror/kubernetes+api/repo
        module = {"api": "k8s.io/api", "apimachinery": "k8s.io/apimachinery",
                  "kube-aggregator": "k8s.io/kube-aggregator/pkg",
                  "apiextensions-apiserver": "k8s.io/apiextensions-apiserver/pkg"}[name]
        pkgs = {}
        for path in git_files(gitdir, branch, ""):
            pkg = path.rsplit("/", 1)[0] if "/" in path else ""
            t, n = parse_go_types(git_show(gitdir, branch, path), pkg)
            pkgs.setdefault(pkg, {}).update(t)
            ipath = module + "/" + (pkg[4:] if name != "api" and pkg.startswith("pkg/") else pkg)
            named.setdefault(ipath, {}).update(n)
        sources[name] = pkgs
    return sources, named


def elem_go(named, gofile, expr):
    """How reflect spells the element type of a slice or map type expr (a
    named type is followed to its definition), or None for other types."""
    if expr.startswith("[]"):
        return gofile.spell(expr[2:]) if expr != "[]byte" else None
    if expr.startswith("map["):
        return gofile.spell(split_map(expr)[1])
    path, name = gofile.path_of(expr)
    if path is None:
        pkg_named = None
        for p, types in named.items():
            if types.get(name, (None,))[0] is gofile:
                pkg_named = types
        entry = pkg_named.get(name) if pkg_named else None
    else:
        entry = named.get(path, {}).get(name)
    if entry is None:
        return None
    return elem_go(named, entry[0], entry[1])


def with_inlined(types, fields):
    """fields plus those of the structs it embeds inline. TypeMeta's fields
    (apiVersion, kind) are not struct fields on the protobuf wire."""
    if fields is None:
        return None
    out = {}
    for k, v in fields.items():
        if not k.startswith("\0"):
            out[k] = v
        elif v["inline"] == "TypeMeta":
            out["kind"] = out["apiVersion"] = None
        else:
            inner = with_inlined(types, types.get(v["inline"]))
            if inner is None:
                die("inline struct %s not found in its package" % v["inline"])
            if v["pb"] is None:
                die("inline struct %s has no protobuf number" % v["inline"])
            for name, f in inner.items():
                out[name] = f and dict(f, via=[v["pb"]] + f.get("via", []))
    return out


def go_fields_of(sources, defname):
    for prefix, source, _ in DEF_PREFIXES:
        if defname.startswith(prefix):
            rest = defname[len(prefix):].split(".")
            typ, pkg = rest[-1], "/".join(rest[:-1])
            types = sources.get(source, {}).get(pkg, {})
            return with_inlined(types, types.get(typ)), rest[-2] + "." + typ
    return None, defname.split(".")[-1]


# ---- schemas ------------------------------------------------------------------

def strip(schema):
    """A schema with only the keys sqlkube uses; no prose."""
    out = {}
    for k, v in schema.items():
        if k not in KEEP_KEYS:
            continue
        if k == "properties":
            v = {pk: strip(pv) for pk, pv in v.items()}
        elif k in ("items", "additionalProperties") and isinstance(v, dict):
            v = strip(v)
        out[k] = v
    return out


def refs_of(schema, acc):
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        # JSONSchemaProps has a property named "$ref": only a string is a reference.
        if isinstance(ref, str):
            acc.add(ref.split("/")[-1])
        for v in schema.values():
            refs_of(v, acc)
    elif isinstance(schema, list):
        for v in schema:
            refs_of(v, acc)


def go_definition(go, name, gvks):
    """The schema of a Go type the OpenAPI document leaves out, built from
    its Go fields alone: each field a $ref to the definition of its named
    struct type, or an array of them; apiVersion and kind strings (TypeMeta).
    Only such fields: a scalar or map field would need its OpenAPI type,
    which only the document has, so meeting one is an error."""
    fields, _ = go_fields_of(go, name)
    if not fields:
        die("goDefinitions: %s is not a Go struct of the given sources" % name)
    pkg_prefix = name.rsplit(".", 1)[0]
    props = {}
    for jname, f in fields.items():
        if f is None:  # TypeMeta's apiVersion and kind
            props[jname] = {"type": "string"}
            continue
        expr = f["expr"]
        array = expr.startswith("[]")
        path, tname = f["file"].path_of(expr[2:] if array else expr)
        if tname in GO_BUILTIN or tname.startswith("map["):
            die("goDefinitions: %s.%s is not a struct type" % (name, jname))
        if path is None:
            ref = pkg_prefix + "." + tname
        elif path.startswith("k8s.io/"):
            ref = "io.k8s." + path[len("k8s.io/"):].replace("/", ".") + "." + tname
        else:
            die("goDefinitions: %s.%s: type from outside k8s.io" % (name, jname))
        ref = {"$ref": "#/definitions/" + ref}
        props[jname] = {"type": "array", "items": ref} if array else ref
    return {"type": "object", "properties": props, "x-kubernetes-group-version-kind": gvks}


def closure(defs, roots):
    seen, todo = set(), list(roots)
    while todo:
        d = todo.pop()
        if d in seen:
            continue
        if d not in defs:
            die("definition %s is referenced but missing" % d)
        seen.add(d)
        acc = set()
        refs_of(defs[d], acc)
        todo.extend(acc - seen)
    return seen


# ---- resources ----------------------------------------------------------------

def collect_resources(swagger, served, not_served):
    res = {}
    for path, ops in swagger["paths"].items():
        m = PATH_RE.match(path)
        if not m:
            continue
        group = m.group(2) or ""
        version = m.group(1) or m.group(3)
        if (group + "/" + version) not in served:
            continue
        watch, namespaced, resource, sub = bool(m.group(4)), bool(m.group(5)), m.group(6), m.group(8)
        if path.endswith("/{path}"):
            continue  # proxy paths with a tail: the same subresource
        if sub and "%s/%s" % (resource + ("." + group if group else ""), sub) in not_served:
            continue
        e = res.setdefault((group, version, resource),
                           {"group": group, "version": version, "resource": resource,
                            "namespaced": False, "verbs": set(), "subresources": {}})
        for method, op in ops.items():
            if method == "parameters":
                continue
            action = op.get("x-kubernetes-action")
            gvk = op.get("x-kubernetes-group-version-kind")
            if watch:
                e["verbs"].add("watch")
            elif sub:
                s = e["subresources"].setdefault(sub, {"verbs": set()})
                verb = CONNECT_VERB.get(method) if action == "connect" else ACTION_VERB.get(action)
                if verb:
                    s["verbs"].add(verb)
                if gvk and "kind" not in s:
                    s.update({"group": gvk["group"], "version": gvk["version"],
                              "kind": gvk["kind"]})
            else:
                if action in ACTION_VERB:
                    e["verbs"].add(ACTION_VERB[action])
                if action == "delete":
                    ref = op["responses"]["200"]["schema"].get("$ref", "")
                    e["deleteReturnsObject"] = not ref.endswith(".meta.v1.Status")
                if gvk and "kind" not in e:
                    e["kind"] = gvk["kind"]
                if namespaced:
                    e["namespaced"] = True
    for e in res.values():
        e["verbs"] = sorted(e["verbs"])
        for s in e["subresources"].values():
            s["verbs"] = sorted(s["verbs"])
    return res


def query_parameters(swagger):
    """Each action's query parameters (name and type): those of the
    operation and of its path item (kube hoists the ones every operation of
    a path shares, so a path with one operation has them all there), as the
    paths of every served resource declare them. Subresource and watch paths
    are left out: their operations repeat the resource's, or are connect
    streams sqlkube does not describe. Every resource must agree, or the one
    list would misdescribe some."""
    defs = swagger.get("parameters", {})

    def params(ps):
        out = []
        for p in ps:
            if "$ref" in p:
                p = defs[p["$ref"].split("/")[-1]]
            if p["in"] == "query":
                out.append({"name": p["name"], "type": p["type"]})
        return out

    seen = {}
    for path, ops in swagger["paths"].items():
        m = PATH_RE.match(path)
        if not m or m.group(4) or m.group(8) or path.endswith("/{path}"):
            continue
        shared = params(ops.get("parameters", []))
        for method, op in ops.items():
            action = op.get("x-kubernetes-action") if method != "parameters" else None
            if not action:
                continue
            got = sorted(shared + params(op.get("parameters", [])), key=lambda x: x["name"])
            if seen.setdefault(action, got) != got:
                die("%s %s: query parameters differ from other resources'" % (path, action))
    return seen


def kind_definition(defs, group, version, kind):
    for name, d in defs.items():
        for g in d.get("x-kubernetes-group-version-kind", []):
            if (g["group"], g["version"], g["kind"]) == (group, version, kind):
                return name
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--swagger", required=True)
    ap.add_argument("--go-types", nargs="+", required=True)
    ap.add_argument("--overlay", required=True)
    args = ap.parse_args()
    swagger = json.load(open(args.swagger))
    overlay = json.load(open(args.overlay))
    served = set(overlay["served"])
    src_defs = swagger["definitions"]
    found = collect_resources(swagger, served, set(overlay.get("notServed", [])))

    order = overlay["groupOrder"]
    for group, _, _ in found:
        if group not in order:
            die("group %s is missing from groupOrder" % group)
    pref = overlay.get("preferredVersions", {})

    def discovery_order(item):
        group, version, resource = item[0]
        return (order.index(group), version != pref.get(group, version), version, resource)

    resources, roots = [], set()
    for (group, version, resource), e in sorted(found.items(), key=discovery_order):
        kind = e.get("kind")
        if not kind:
            die("no kind for %s/%s %s" % (group, version, resource))
        gr = resource + ("." + group if group else "")
        facts = overlay["resources"].get(gr, {})
        schema = kind_definition(src_defs, group, version, kind)
        lst = kind_definition(src_defs, group, version, kind + "List")
        r = {
            "group": group, "version": version, "resource": resource, "kind": kind,
            "singular": kind.lower(), "namespaced": e["namespaced"], "verbs": e["verbs"],
            "shortNames": facts.get("shortNames", []),
            "categories": facts.get("categories", []),
            "fieldSelectors": facts.get("fieldSelectors", []),
        }
        if e.get("deleteReturnsObject") or facts.get("deleteReturnsObject"):
            r["deleteReturnsObject"] = True
        if schema:
            r["schema"] = schema
            roots.add(schema)
        if lst:
            r["listKind"] = kind + "List"
            r["listSchema"] = lst
            roots.add(lst)
        subs = []
        for name, s in sorted(e["subresources"].items()):
            sub = {"name": name, "verbs": s["verbs"]}
            if s.get("kind") and (s["kind"], s.get("group"), s.get("version")) != \
                    (kind, group, version):
                sub.update({"group": s["group"], "version": s["version"], "kind": s["kind"]})
                d = kind_definition(src_defs, s["group"], s["version"], s["kind"])
                if d:
                    sub["schema"] = d
                    roots.add(d)
            subs.append(sub)
        if subs:
            r["subresources"] = subs
        resources.append(r)
    missing = set(overlay["resources"]) - {r["resource"] + ("." + r["group"] if r["group"] else "")
                                           for r in resources}
    if missing:
        die("overlay names resources the API does not serve: %s" % sorted(missing))
    for extra in overlay.get("definitions", []):
        roots.add(extra)

    go, named = load_go_types(args.go_types)
    for name, gvks in sorted(overlay.get("goDefinitions", {}).items()):
        if name in src_defs:
            die("goDefinitions: %s is in the OpenAPI document" % name)
        src_defs[name] = go_definition(go, name, gvks)
        roots.add(name)
    defs = {}
    for name in sorted(closure(src_defs, roots)):
        d = strip(src_defs[name])
        fields, go_name = go_fields_of(go, name)
        d["x-sk-go"] = go_name
        if fields and d.get("properties"):
            # Go declaration order: the order encoding/json writes fields in.
            d["x-sk-fields"] = [k for k in fields if k in d["properties"]]
            if set(d["x-sk-fields"]) != set(d["properties"]):
                die("%s: properties and Go fields differ" % name)
        if name in WIRE_TYPES:
            d["x-sk-wire"] = WIRE_TYPES[name]
        elif fields is not None and not fields and "properties" not in d:
            # An empty Go struct (CustomResourceSubresourceStatus): a struct with
            # no fields, not free JSON.
            d["properties"] = {}
        for pname, p in d.get("properties", {}).items():
            f = (fields or {}).get(pname)
            if f is None and pname in ("apiVersion", "kind"):
                continue
            if f is None:
                if pname not in ("apiVersion", "kind") and name not in WIRE_TYPES:
                    die("%s.%s: no Go field with that JSON name" % (name, pname))
                continue
            if f["pb"] is not None:
                p["x-sk-pb"] = f["pb"]
            if f.get("via"):
                p["x-sk-pb-via"] = f["via"]
            if f["omitempty"]:
                p["x-sk-omitempty"] = True
            if f["ptr"]:
                p["x-sk-ptr"] = True
            p["x-sk-gotype"] = f["go"]
            if "default" in f:
                p["x-sk-default"] = f["default"]
            elem = elem_go(named, f["file"], f["expr"])
            if elem and p.get("type") in ("array", "object"):
                p["x-sk-goelem"] = elem
        defs[name] = d
    gvrs = {"%s/%s/%s" % (r["group"], r["version"], r["resource"]) for r in resources}
    for src, dst in overlay.get("sharedStorage", {}).items():
        for gvr in (src, dst):
            if ("/" + gvr if gvr.count("/") == 1 else gvr) not in gvrs:
                die("sharedStorage names %s, which is not served" % gvr)
    json.dump({"kubernetes": "1.32", "resources": resources, "definitions": defs,
               "preferredVersions": overlay.get("preferredVersions", {}),
               "queryParameters": query_parameters(swagger),
               "sharedStorage": overlay.get("sharedStorage", {})},
              sys.stdout, sort_keys=True, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
