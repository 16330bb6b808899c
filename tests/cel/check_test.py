#!/usr/bin/env python3
"""The CEL type checker (src/cel/check.c) against the cel-spec package's
checking tests (@bufbuild/cel-spec getCheckingSuite: cel-go's checker
tests, each an expression, its declarations, and the type cel-go deduced
or the errors it printed).

Some tests' declarations are missing from the package's export (cel-go
declares them in its test harness): an identifier's is recovered from the
checked tree the test also carries ("ii~int^ii": ii is an int), a
function's cannot be, and such a test is skipped ("fg_s()~string^fg_s_0":
a function whose overload id is its name and an ordinal). Tests the
export checked with a parser option off (optional syntax, backquoted
names, a lower recursion limit) expect that parse error, and are skipped
too (those checked without two-variable comprehension macros, which say so
in an undeclared macro name, are run that way: it is how Kubernetes 1.32
checks a new expression); so are the sections of extension
libraries Kubernetes does not have (math, encoders, bindings, block).
The conformance sections are checked as cel-go's conformance runner
checks them, with cross-type numeric comparisons on.

A test runs when its declarations need only what the checker has
(primitives, lists, maps, dyn, type parameters, abstract types such as
optional_type, timestamps and durations): tests declaring protobuf
messages, wrappers, Any, functions of their own or a container are
skipped and counted under that reason; so are those whose expected
errors or types name protobuf messages. A run test passes when ours is
the same type, or the same errors, byte for byte (cel-go's display form,
with source line and caret). The suite's tests run with cel-go's default
environment, so cross-type numeric comparisons are off, as cel-go's
default has them.

usage: tests/cel/check_test.py [CEL_CHECK_BINARY]   (default build/cel_check)
Prints each failure and a "cel checking: P passed, F failed, S skipped
(reasons)" line; exits 1 on any failure.
"""

import json
import os
import re
import subprocess
import sys

from celspec import ROOT  # noqa: E402 (beside this file)
import celspec  # noqa: E402

DUMP = r"""
const t = require("@bufbuild/cel-spec/testdata/tests.js");
const prim = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"};
function ty(x) {
  const k = x.typeKind;
  switch (k.case) {
    case "primitive": return [prim[k.value]];
    case "listType": return ["list", ty(k.value.elemType)];
    case "mapType": return ["map", ty(k.value.keyType), ty(k.value.valueType)];
    case "dyn": return ["dyn"];
    case "null": return ["null_type"];
    case "typeParam": return ["param", k.value];
    case "type": return k.value ? ["type", ty(k.value)] : ["type"];
    case "abstractType": return ["opaque", k.value.name, ...k.value.parameterTypes.map(ty)];
    case "wellKnown":
      if (k.value === 2) return ["timestamp"];
      if (k.value === 3) return ["duration"];
      throw "well-known type Any";
    case "messageType": throw "protobuf message";
    case "wrapper": throw "wrapper type";
    default: throw "type kind " + k.case;
  }
}
function entry(x, section) {
  const o = x.original;
  const r = {section, expr: o.expr, type: x.type || null, error: x.error || null,
             checked: x.checkedAst, disableMacros: o.disableMacros};
  try {
    if (o.disableCheck) throw "unchecked in cel-go's run";
    if (o.container) throw "container";
    r.vars = o.typeEnv.map((d) => {
      if (d.declKind.case !== "ident") throw "function declarations";
      return [d.name, ty(d.declKind.value.type)];
    });
  } catch (why) { r.skip = String(why); }
  return r;
}
const out = [];
for (const x of t.getCheckingSuite().tests) out.push(entry(x, "checking"));
function walk(suite, section) {
  for (const x of suite.tests ?? []) out.push(entry(x, section));
  for (const s of suite.suites ?? []) walk(s, section);
}
for (const s of t.getConformanceSuite().suites) walk(s, s.name);
process.stdout.write(JSON.stringify(out));
"""


PROTO_EXPR = re.compile(r"google\.protobuf\.(?!(Timestamp|Duration)\b)|TestAllTypes"
                        r"|NestedTestAllTypes|\bcel\.expr\b|\.proto|GlobalEnum")


def skip_reason(t):
    """Why t cannot run here, or None; t's vars completed from its tree."""
    why = t.get("skip")
    expected = (t["type"] or "") + (t["error"] or "")
    if why:
        return why
    if not expected:
        return "no checked result in the export"
    declared = {v[0] for v in t["vars"]}
    for name, typ in re.findall(r"\b([A-Za-z_]\w*)~(\w+)\^\1\b", t.get("checked") or ""):
        if name not in declared and typ in PRIMS:
            t["vars"].append([name, ["null_type" if typ == "null" else typ]])
            declared.add(name)
    if re.search(r"\b(\w+)\([^()]*\)~[\w()]+\^\1_\d+\b", t.get("checked") or ""):
        return "functions declared outside the export"
    if t["section"] in SECTION_SKIPS:
        return SECTION_SKIPS[t["section"]]
    if "unsupported syntax" in expected or "recursion limit" in expected:
        return "syntax off or other limits in the export's parser"
    if "google." in expected or PROTO_EXPR.search(t["expr"]):
        return "protobuf messages"
    return None


# Extension libraries Kubernetes' environment does not have.
SECTION_SKIPS = {"math_ext": "extension library", "encoders_ext": "extension library",
                 "bindings_ext": "extension library", "block_ext": "extension library"}
# The export checked these without two-variable comprehensions, as
# Kubernetes 1.32 checks a new expression (its environment for new
# expressions is 1.31's): run them so.
TWO_VAR_MACROS = re.compile(r"undeclared reference to '(all|exists|existsOne|"
                            r"transformList|transformMap|transformMapEntry)'")

PRIMS = {"bool", "int", "uint", "double", "string", "bytes", "null", "dyn"}


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "cel_check")
    tests = celspec.load(DUMP)
    sections = {}
    run = []
    for t in tests:
        sec = sections.setdefault(t["section"], {"passed": 0, "failed": 0, "skips": {}})
        why = skip_reason(t)
        if why:
            sec["skips"][why] = sec["skips"].get(why, 0) + 1
        else:
            run.append(t)
    # cel-go's checking tests run its default environment (no cross-type
    # numeric comparisons); the conformance runner enables them
    res = subprocess.run([binary], input=json.dumps(
        [{"expr": t["expr"], "vars": t["vars"], "cross": t["section"] != "checking",
          "disableMacros": t["disableMacros"],
          "twoVar": not TWO_VAR_MACROS.search(t["error"] or "")} for t in run]).encode(),
        capture_output=True, timeout=120)
    if res.returncode != 0:
        raise SystemExit("%s failed: %s" % (binary, res.stderr.decode()))
    got = json.loads(res.stdout)
    for t, g in zip(run, got):
        sec = sections[t["section"]]
        if t["type"] is not None:
            ok = g.get("type") == t["type"]
            want = t["type"]
        else:
            ok = g.get("error") == t["error"]
            want = t["error"]
        if ok:
            sec["passed"] += 1
        else:
            sec["failed"] += 1
            print("FAIL %s %r\n  want: %s\n  got:  %s" % (t["section"], t["expr"], want,
                                                         json.dumps(g)))
    failed = 0
    total = {"passed": 0, "failed": 0, "skipped": 0}
    for name, sec in sections.items():
        reasons = ", ".join("%d %s" % (n, why) for why, n in sorted(sec["skips"].items()))
        skipped = sum(sec["skips"].values())
        print("cel check %s: %d passed, %d failed, %d skipped%s" %
              (name, sec["passed"], sec["failed"], skipped, " (%s)" % reasons if reasons else ""))
        failed += sec["failed"]
        total["passed"] += sec["passed"]
        total["failed"] += sec["failed"]
        total["skipped"] += skipped
    print("cel check: %(passed)d passed, %(failed)d failed, %(skipped)d skipped" % total)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
