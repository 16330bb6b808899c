#!/usr/bin/env python3
"""Generates src/kube/gen/gnostic_v2.h: the wire contract of GET /openapi/v2 in
protobuf (what client-go's DiscoveryClient.OpenAPISchema() proto-unmarshals
into gnostic's openapi_v2.Document), as a C table read by src/kube/openapi_pb.c.

Inputs, both from github.com/google/gnostic-models (a git dir, read with
`git show REV:PATH`; nothing of them is committed but this output):
  openapiv2/OpenAPIv2.proto  messages, field names, numbers, types, repeated,
                             oneofs: the wire facts.
  openapiv2/OpenAPIv2.go     gnostic's compiler (NewDocument, NewSchema, ...):
                             which JSON key fills each field ("$ref" -> _ref,
                             "x-..." -> vendor_extension, map patterns), and what
                             makes a value match a message (required keys,
                             allowed keys and patterns, enum values): a oneof
                             takes the LAST alternative that matches, as gnostic
                             tries them in order and keeps overwriting.

Usage (the command that made the committed file):
  python3 scripts/gen_gnostic_v2.py --git /work/.mirror/google+gnostic-models/repo \
      --rev HEAD > src/kube/gen/gnostic_v2.h
"""

import argparse
import re
import subprocess
import sys

SCALARS = {"string": "s", "bool": "b", "int64": "i", "double": "d"}
# Map-key patterns gnostic's compiler uses (its pattern0..2), by our ids.
PATTERN_IDS = {None: 0, "^x-": 1, "^/": 2, "^([0-9]{3})$|^(default)$": 3}
ANY_KEY = 4  # a MAP with no pattern: every key


def git_show(gitdir, rev, path):
    return subprocess.run(["git", "-C", gitdir, "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def parse_proto(text):
    text = re.sub(r"//[^\n]*", "", text)
    msgs = {}
    for m in re.finditer(r"message\s+(\w+)\s*\{", text):
        name, i, depth = m.group(1), m.end(), 1
        j = i
        while depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        body = text[i:j - 1]
        fields = []
        oneof = "oneof" in body
        for f in re.finditer(r"(repeated\s+)?([\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;", body):
            fields.append({"repeated": bool(f.group(1)), "type": f.group(2),
                           "name": f.group(3), "number": int(f.group(4))})
        msgs[name] = {"fields": fields, "oneof": oneof}
    return msgs


def parse_compiler(text):
    """Per message: required/allowed keys, allowed patterns, and per field its
    JSON key, map pattern and enum values, from the New<Message> functions."""
    patterns = dict(re.findall(r'(pattern\d+) = regexp.MustCompile\("((?:[^"\\]|\\.)*)"\)', text))
    out = {}
    funcs = re.split(r"\nfunc New", text)
    for fn in funcs[1:]:
        name = fn.split("(", 1)[0]
        info = {"required": [], "allowed": [], "patterns": [], "fields": {}}
        m = re.search(r"requiredKeys := \[\]string\{([^}]*)\}", fn)
        if m:
            info["required"] = re.findall(r'"([^"]*)"', m.group(1))
        m = re.search(r"allowedKeys := \[\]string\{([^}]*)\}", fn)
        if m:
            info["allowed"] = re.findall(r'"([^"]*)"', m.group(1))
            info["checks_keys"] = True
        m = re.search(r"allowedPatterns := \[\]\*regexp.Regexp\{([^}]*)\}", fn)
        if m:
            info["patterns"] = [PATTERN_IDS[patterns[p.strip()]]
                                for p in m.group(1).split(",") if p.strip()]
        # Field comments "// [repeated ]Type name = N;" start each field's code.
        parts = re.split(r"\n\s*// (?:repeated )?[\w.]+ (\w+) = (\d+);\n", fn)
        for k in range(1, len(parts), 3):
            fname, code = parts[k], parts[k + 2]
            f = {}
            km = re.search(r'MapValueForKey\(m, "([^"]*)"\)', code)
            mm = re.match(r"\s*// MAP: \w+(?: (\S+))?", code)
            if mm:
                f["map"] = PATTERN_IDS[mm.group(1)] if mm.group(1) else ANY_KEY
            elif km:
                f["key"] = km.group(1)
            em = re.search(r"StringArrayContainsValue\(\[\]string\{([^}]*)\}", code)
            if em:
                f["enum"] = re.findall(r'"([^"]*)"', em.group(1))
            info["fields"][fname] = f
        out[name] = info
    return out


def c_str(s):
    if s is None:
        return "NULL"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--git", required=True)
    ap.add_argument("--rev", default="HEAD")
    a = ap.parse_args()
    rev = subprocess.run(["git", "-C", a.git, "rev-parse", a.rev], check=True,
                         capture_output=True, text=True).stdout.strip()
    msgs = parse_proto(git_show(a.git, rev, "openapiv2/OpenAPIv2.proto"))
    comp = parse_compiler(git_show(a.git, rev, "openapiv2/OpenAPIv2.go"))
    names = sorted(msgs)
    index = {n: i for i, n in enumerate(names)}
    w = sys.stdout.write
    w("/*\n * gnostic_v2.h - GENERATED by scripts/gen_gnostic_v2.py; do not edit.\n"
      " * Regenerate: python3 scripts/gen_gnostic_v2.py --git <gnostic-models git dir> \\\n"
      " *     --rev <rev> > src/kube/gen/gnostic_v2.h\n"
      f" * Source: github.com/google/gnostic-models @ {rev}\n"
      " *   openapiv2/OpenAPIv2.proto (numbers, types) and openapiv2/OpenAPIv2.go\n"
      " *   (gnostic's compiler: JSON keys, map patterns, match rules).\n"
      " * Included once, by src/kube/openapi_pb.c, which defines the two structs.\n */\n\n")
    w("/* clang-format off */\n")  # generated rows stay one per line
    w(f"#define SK_GV2_N_MSGS {len(names)}\n")
    fields_out, msgs_out = [], []
    for n in names:
        m, c = msgs[n], comp.get(n, {"fields": {}})
        first = len(fields_out)
        for f in sorted(m["fields"], key=lambda f: f["number"]):
            cf = c["fields"].get(f["name"], {})
            t = SCALARS.get(f["type"])
            sub = -1
            if t is None:
                if f["type"] == "google.protobuf.Any":
                    t = "x"  # never filled by gnostic's compiler
                else:
                    t, sub = "m", index[f["type"]]
            key = cf.get("key")
            mp = cf.get("map", 0)
            enum = "|".join(cf["enum"]) if "enum" in cf else None
            fields_out.append(f'    {{{f["number"]}, {c_str(f["name"])}, {c_str(key)}, {mp}, '
                              f"'{t}', {sub}, {int(f['repeated'])}, {c_str(enum)}}},")
        req = "|".join(c.get("required", [])) if c.get("required") else None
        allowed = "|".join(c.get("allowed", [])) if c.get("checks_keys") else None
        pats = sum(1 << p for p in c.get("patterns", []))
        msgs_out.append(f"    {{{c_str(n)}, {first}, {len(fields_out) - first}, {int(m['oneof'])}, "
                        f"{c_str(req)}, {c_str(allowed)}, {pats}}},")
    w("\n/* {number, proto name, JSON key, map pattern (0 none, 1 ^x-, 2 ^/,\n"
      " * 3 ^([0-9]{3})$|^(default)$, 4 any key), type (s string, b bool, i int64,\n"
      " * d double, m message, x google.protobuf.Any), message index, repeated,\n"
      " * enum values joined by '|'} in field-number order per message. */\n")
    w("static const sk_gv2_field sk_gv2_fields[] = {\n" + "\n".join(fields_out) + "\n};\n\n")
    w("/* {name, first field, field count, is a oneof, required keys, allowed keys\n"
      " * (NULL: not checked), allowed key patterns (bit per pattern id)}, by name. */\n")
    w("static const sk_gv2_msg sk_gv2_msgs[] = {\n" + "\n".join(msgs_out) + "\n};\n")
    w("/* clang-format on */\n")


if __name__ == "__main__":
    main()
