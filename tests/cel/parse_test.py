#!/usr/bin/env python3
"""The CEL parser (src/cel) against cel-go's parser, as the cel-spec npm
package @bufbuild/cel-spec (tests/node) records it: each test's expression
with cel-go's adorned debug string of its tree or, for an expression cel-go
refuses, its error text. Three suites: "parsing", cel-go's parser tests
(parser/parser_test.go, 194); "conformance", the expressions of the cel-spec
conformance tests (tests/simple/testdata); "comprehension", cel-go's
comprehension extension tests.

For every test: a tree must be ours byte for byte; a refusal must be ours
too, with cel-go's first error at the same line:column and, when the error
is cel-go's own (not ANTLR's "Syntax error: ..." wording, which we do not
copy), the same message. The one exception: when cel-go's first error is
the give-up of ANTLR's error recovery ("error recovery ... limit exceeded",
at no position), which has no counterpart in a parser that stops at the
first syntax error, only the refusal is checked. A conformance test with
neither tree nor error (none so far) is skipped and counted.

The parser options are those the expected trees were made with
(cel-es packages/cel-spec/scripts/gen_incremental_tests.go: cel-go's
parser with all macros, MaxRecursionDepth(32), no optional syntax, no
backquoted identifiers; a test's disableMacros turns macros off).

usage: tests/cel/parse_test.py [CEL_PARSE_BINARY]   (default build/cel_parse)
Prints each failure and one "cel parse tests, SUITE: N/M passed" line a
suite; exits 1 on any failure.
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
const out = [];
function walk(suite, name) {
  for (const x of suite.tests ?? []) {
    out.push({
      suite: name,
      expr: x.original.expr,
      ast: x.ast ?? null,
      error: x.error ?? null,
      disableMacros: x.original.disableMacros,
    });
  }
  for (const s of suite.suites ?? []) walk(s, name);
}
walk(t.getParsingSuite(), "parsing");
walk(t.getConformanceSuite(), "conformance");
walk(t.getComprehensionSuite(), "comprehension");
process.stdout.write(JSON.stringify(out));
"""

FIRST_ERROR = re.compile(r"^ERROR: [^:\n]*:(-?\d+):(-?\d+): (.*)$", re.M)
RECOVERY_LIMITS = ("error recovery token lookahead limit exceeded",
                   "error recovery attempt limit exceeded")


def expected_first_error(text):
    m = FIRST_ERROR.search(text)
    if not m:
        raise SystemExit("cannot read cel-go's error: %r" % text)
    return int(m.group(1)), int(m.group(2)), m.group(3)


def run_driver(binary, exprs, args):
    p = subprocess.run([binary] + args, input=json.dumps(exprs).encode(),
                       capture_output=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (binary, p.returncode, p.stderr.decode()))
    return json.loads(p.stdout)


def check(test, got):
    """None if got is right for test, else why not."""
    if test["ast"] is not None:
        if "ast" not in got:
            return "refused: %s" % json.dumps(got["errors"][:3])
        if got["ast"] != test["ast"]:
            return "tree differs:\n--- cel-go\n%s\n--- ours\n%s" % (test["ast"], got["ast"])
        return None
    if "ast" in got:
        return "accepted (cel-go: %s):\n%s" % (test["error"].splitlines()[0], got["ast"])
    line, col, message = expected_first_error(test["error"])
    if message.startswith(RECOVERY_LIMITS):
        return None
    ours = got["errors"][0]
    if (ours["line"], ours["col"]) != (line, col):
        return "first error at %d:%d (%s), cel-go's at %d:%d (%s)" % (
            ours["line"], ours["col"], ours["message"], line, col, message)
    if not message.startswith("Syntax error:") and ours["message"] != message:
        return "first error %r, cel-go's %r" % (ours["message"], message)
    return None


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "cel_parse")
    tests = celspec.load(DUMP)
    results = [None] * len(tests)
    for macros in (True, False):
        idx = [i for i, t in enumerate(tests) if t["disableMacros"] != macros]
        args = ["--max-depth", "32"] + ([] if macros else ["--no-macros"])
        got = run_driver(binary, [tests[i]["expr"] for i in idx], args)
        for i, g in zip(idx, got):
            results[i] = g
    counts = {}
    for i, (test, got) in enumerate(zip(tests, results)):
        count = counts.setdefault(test["suite"], [0, 0, 0])  # passed, run, skipped
        if test["ast"] is None and test["error"] is None:
            count[2] += 1
            continue
        count[1] += 1
        why = check(test, got)
        if why is None:
            count[0] += 1
        else:
            print("FAIL %s #%d %s: %s" % (test["suite"], i, json.dumps(test["expr"])[:200], why))
    for suite, (passed, run, skipped) in counts.items():
        print("cel parse tests, %s: %d/%d passed%s" % (
            suite, passed, run, ", %d without tree or error skipped" % skipped if skipped else ""))
    return 0 if all(c[0] == c[1] for c in counts.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
