#!/usr/bin/env python3
"""The CEL evaluator (src/cel/eval.c) against the cel-spec conformance
tests (tests/simple/testdata), as the npm package @bufbuild/cel-spec
(tests/node) ships them: each test's expression, its variables' values and
the value it must give, or that it must give an error.

A test runs when its section, its bindings and its expected value need only
what the evaluator has (null, bool, int, uint, double, string, bytes, list,
map, type, duration, timestamp, optional, regular expressions; no protobuf
messages, enums, extensions but strings, unknowns, containers, type
checker).
Every other test is skipped and counted under its reason, which the
section (SECTION_SKIPS), the values or the expression (EXPR_SKIPS) gives;
no test is skipped by name. The few tests whose expectation cel-go (which
Kubernetes runs, and which we follow) does not meet either, and which
cel-go's own conformance run skips by name, are run and listed in
CEL_GO_DIFFERS: their failures are printed and counted apart, with the
reason, and do not fail the run. A run test passes when ours is the expected
value with the same type (a NaN matching a NaN, maps in any order) or, when
an error is expected, is an error (the messages are cel-go's and not
compared).

usage: tests/cel/eval_test.py [CEL_EVAL_BINARY]   (default build/cel_eval)
Prints each failure, a "cel conformance SECTION: P passed, F failed, S
skipped (reasons)" line a section, and exits 1 on any failure.
"""

import json
import math
import os
import re
import subprocess
import sys

from celspec import ROOT  # noqa: E402 (beside this file)
import celspec  # noqa: E402

# Values as cel_eval tags them (see tests/cel/cel_eval.c); a kind it has no
# tag for becomes ["unsupported", kind].
DUMP = r"""
const t = require("@bufbuild/cel-spec/testdata/tests.js");
const hex = (b) => Buffer.from(b).toString("hex");
// google.protobuf.Duration and Timestamp: fields 1 (int64 seconds) and 2
// (int32 nanos), both varints.
function secondsNanos(b) {
  const f = {1: 0n, 2: 0n};
  for (let i = 0; i < b.length;) {
    const key = b[i++];
    let x = 0n, shift = 0n;
    for (;;) { const c = b[i++]; x |= BigInt(c & 0x7f) << shift; shift += 7n; if (c < 0x80) break; }
    f[key >> 3] = BigInt.asIntN(64, x);
  }
  return f;
}
function any(a) {
  const t = a.typeUrl.replace(/^.*\//, "");
  if (t === "google.protobuf.Duration") {
    const f = secondsNanos(a.value);
    return ["duration", (f[1] * 1000000000n + f[2]).toString()];
  }
  if (t === "google.protobuf.Timestamp") {
    const f = secondsNanos(a.value);
    return ["timestamp", f[1].toString(), Number(f[2])];
  }
  return ["unsupported", t];
}
function val(v) {
  const k = v.kind;
  switch (k.case) {
    case "nullValue": return ["null"];
    case "boolValue": return ["bool", k.value];
    case "int64Value": return ["int", k.value.toString()];
    case "uint64Value": return ["uint", k.value.toString()];
    case "doubleValue":
      return ["double", Object.is(k.value, -0) ? "-0" : String(k.value)];
    case "stringValue": return ["string", k.value];
    case "bytesValue": return ["bytes", hex(k.value)];
    case "listValue": return ["list", k.value.values.map(val)];
    case "mapValue": return ["map", k.value.entries.map((e) => [val(e.key), val(e.value)])];
    case "typeValue": return ["type", k.value];
    case "objectValue": return any(k.value);
    default: return ["unsupported", String(k.case)];
  }
}
const out = [];
function walk(suite, section) {
  for (const x of suite.tests ?? []) {
    const o = x.original, m = o.resultMatcher;
    const bindings = {};
    for (const [name, b] of Object.entries(o.bindings)) {
      bindings[name] = b.kind.case === "value" ? val(b.kind.value) : ["unsupported", b.kind.case];
    }
    out.push({
      section, group: suite.name, name: o.name, expr: o.expr,
      disableMacros: o.disableMacros, checkOnly: o.checkOnly,
      container: o.container, bindings,
      // No matcher: the test expects true (cel-spec's SimpleTest).
      matcher: m.case ?? "value",
      value: m.case === "value" ? val(m.value) : m.case === undefined ? ["bool", true] : null,
    });
  }
  for (const s of suite.suites ?? []) walk(s, section);
}
for (const s of t.getConformanceSuite().suites) walk(s, s.name);
process.stdout.write(JSON.stringify(out));
"""

# Sections whose subject this slice does not have (issue 41 leaves proto2,
# proto3, enums, wrappers, dynamic and type_deductions out altogether).
SECTION_SKIPS = {
    "proto2": "protobuf messages", "proto2_ext": "protobuf messages",
    "proto3": "protobuf messages", "enums": "protobuf messages",
    "wrappers": "protobuf messages", "dynamic": "protobuf messages",
    "type_deductions": "type checker",
    "math_ext": "extension library", "encoders_ext": "extension library",
    "bindings_ext": "extension library", "block_ext": "extension library",
    "unknowns": "unknowns",
}

EXPR_SKIPS = [
    (re.compile(r"google\.protobuf\.(?!(Timestamp|Duration)\b)|TestAllTypes"
                r"|NestedTestAllTypes|\bcel\.expr\b|\.proto"),
     "protobuf messages"),
]

# section/group/name: why cel-go, hence Kubernetes, answers otherwise.
CEL_GO_DIFFERS = {
    "timestamps/duration_converters/get_milliseconds":
        "cel-go's getMilliseconds is the whole duration in ms (Go's d.Milliseconds())",
}


def skip_reason(t):
    if t["section"] in SECTION_SKIPS:
        return SECTION_SKIPS[t["section"]]
    if t["checkOnly"]:
        return "type checker"
    if t["matcher"] in ("unknown", "anyUnknowns"):
        return "unknowns"
    if t["matcher"] not in ("value", "evalError", "anyEvalErrors"):
        return "result matcher %s" % t["matcher"]
    vals = list(t["bindings"].values()) + ([t["value"]] if t["value"] else [])
    if any("unsupported" in json.dumps(v) for v in vals):
        return "protobuf messages"
    for pattern, reason in EXPR_SKIPS:
        if pattern.search(t["expr"]):
            return reason
    if t["container"]:
        return "containers"
    return None


def canon(v):
    """A comparable form: maps unordered, NaN a token, doubles as floats."""
    tag = v[0]
    if tag == "double":
        d = float(v[1])
        return ("double", "NaN" if math.isnan(d) else d)
    if tag == "list":
        return ("list", tuple(canon(x) for x in v[1]))
    if tag == "map":
        return ("map", tuple(sorted((repr(canon(k)), canon(x)) for k, x in v[1])))
    return tuple(v[:1]) + tuple(v[1:])


def check(t, got):
    if "parse_error" in got:
        return "parse error: %s" % got["parse_error"]
    if t["matcher"] == "value":
        if "error" in got:
            return "error %r, expected %s" % (got["error"], json.dumps(t["value"]))
        if canon(got["value"]) != canon(t["value"]):
            return "got %s, expected %s" % (json.dumps(got["value"]), json.dumps(t["value"]))
        return None
    if "error" not in got:
        return "got %s, expected an error" % json.dumps(got["value"])
    return None


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "cel_eval")
    tests = celspec.load(DUMP)
    run = [t for t in tests if skip_reason(t) is None]
    p = subprocess.run([binary], input=json.dumps(run).encode(), capture_output=True,
                       timeout=120)
    if p.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (binary, p.returncode, p.stderr.decode()))
    results = iter(json.loads(p.stdout))
    sections = {}
    failed = 0
    differs = 0
    for t in tests:
        s = sections.setdefault(t["section"], {"passed": 0, "run": 0, "differs": 0,
                                               "skipped": {}})
        reason = skip_reason(t)
        if reason is not None:
            s["skipped"][reason] = s["skipped"].get(reason, 0) + 1
            continue
        s["run"] += 1
        why = check(t, next(results))
        key = "%s/%s/%s" % (t["section"], t["group"], t["name"])
        if why is None:
            s["passed"] += 1
        elif key in CEL_GO_DIFFERS:
            s["differs"] += 1
            differs += 1
            print("AS CEL-GO %s %s: %s (%s)" % (key, json.dumps(t["expr"])[:200], why,
                                                CEL_GO_DIFFERS[key]))
        else:
            failed += 1
            print("FAIL %s/%s/%s %s: %s" % (t["section"], t["group"], t["name"],
                                            json.dumps(t["expr"])[:200], why))
    for name, s in sections.items():
        skipped = sum(s["skipped"].values())
        reasons = ", ".join("%s %d" % kv for kv in sorted(s["skipped"].items()))
        failures = s["run"] - s["passed"] - s["differs"]
        print("cel conformance %s: %d passed, %d failed%s, %d skipped%s" % (
            name, s["passed"], failures,
            " (+%d as cel-go answers)" % s["differs"] if s["differs"] else "", skipped,
            " (%s)" % reasons if reasons else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
