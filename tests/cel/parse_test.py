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
    # the display form (source line, caret): ANTLR's wording masked
    mask = message.startswith("Syntax error:")
    if first_block(got["display"], mask) != first_block(test["error"], mask):
        return "first error displayed as %r, cel-go's %r" % (
            first_block(got["display"], mask), first_block(test["error"], mask))
    return None


SOURCE_NAME = re.compile(r"^ERROR: [^:\n]*:", re.M)


def as_input(text):
    """cel-go's display text with its source named <input>, as kube's
    compiler names it (the package's tests name it after the test)."""
    return SOURCE_NAME.sub("ERROR: <input>:", text)


def first_block(text, mask):
    """The first error of a display text (its ERROR line, source line and
    caret), its message replaced when mask."""
    block = as_input(text).split("\nERROR: ")[0]
    return FIRST_ERROR.sub(lambda m: m.group(0)[:m.start(3) - m.start(0)] + "MSG", block,
                           count=1) if mask else block


UNDECLARED = re.compile(r"undeclared reference to '([^']*)'")


def only_undeclared(error, expr):
    """cel-go's checker error text names nothing but undeclared references,
    none of them a function's."""
    lines = [line for line in error.splitlines() if line.startswith("ERROR: ")]
    return all(UNDECLARED.search(line) and
               not re.search(r"\b%s\s*\(" % re.escape(UNDECLARED.search(line).group(1)), expr)
               for line in lines)


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
    return 0 if all(c[0] == c[1] for c in counts.values()) and check_references(binary, tests) \
        else 1


def check_references(binary, tests):
    """cel/check.h against cel-go's checker, which the package ran with
    nothing declared on the parsing suite's expressions (the conformance
    suites declare variables per test; tests/cel/check_test.py runs those):
    an expression it accepted must check; one it refused only for
    undeclared references must be refused with the same text, every error,
    source line and caret included. Refusals for types or function names
    are counted, not compared: the suite's checker had an older function
    set (existsOne was no macro there, so it is an undeclared function)."""
    idx = [i for i, t in enumerate(tests) if t["suite"] == "parsing" and t["ast"] is not None and
           (t["error"] is None or only_undeclared(t["error"], t["expr"]))]
    passed = skipped = 0
    failed = False
    for macros in (True, False):
        sel = [i for i in idx if tests[i]["disableMacros"] != macros]
        args = ["--max-depth", "32", "--check"] + ([] if macros else ["--no-macros"])
        for i, got in zip(sel, run_driver(binary, [tests[i]["expr"] for i in sel], args)):
            want = tests[i]["error"]
            if (want is None and "ast" in got) or (want is not None and got.get("display") == as_input(want)):
                passed += 1
            else:
                failed = True
                print("FAIL references #%d %s: ours %s, cel-go's %s" % (
                    i, json.dumps(tests[i]["expr"])[:200], json.dumps(got)[:400],
                    json.dumps(want)[:400]))
    skipped = sum(1 for t in tests if t["suite"] == "parsing" and t["ast"] is not None and
                  t["error"] is not None and not only_undeclared(t["error"], t["expr"]))
    print("cel reference check (parsing suite): %d/%d passed, %d refused by cel-go's checker "
          "for types or function names not compared" % (passed, len(idx), skipped))
    return not failed


if __name__ == "__main__":
    sys.exit(main())
