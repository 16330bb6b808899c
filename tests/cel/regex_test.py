#!/usr/bin/env python3
"""The regular expressions of the CEL evaluator (src/cel/regex.c, through
matches() and kube's findAll()) against Go's regexp package, which cel-go
and kube-apiserver use: a fixed list of patterns that reach each corner of
the syntax (classes, flags, repetition, anchors, Unicode, what RE2
refuses) and some thousands of generated ones, each over generated text.
For every case Go's FindAllString and MatchString (or its compile error)
must equal ours, word for word.

Go is a test dependency (scripts/deps.sh test installs golang-go); the Go
side is a few lines written to a temporary directory and built with the
standard library alone. Go before 1.22 refuses (?<name>...), which kube
1.32's Go accepts (and so do we): no pattern here spells it.

usage: tests/cel/regex_test.py [CEL_EVAL_BINARY [CASES]]   (default build/cel_eval 3000)
Prints each difference and a "cel regex: N cases, D differ" line; exits 1
on any difference.
"""

import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

GO = r"""
package main

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var c [2]string
		json.Unmarshal(in.Bytes(), &c)
		re, err := regexp.Compile(c[0])
		if err != nil {
			out.Encode(map[string]string{"error": err.Error()})
			continue
		}
		all := re.FindAllString(c[1], -1)
		if all == nil {
			all = []string{}
		}
		out.Encode(map[string]interface{}{"all": all, "match": re.MatchString(c[1])})
	}
}
"""

FIXED = [
    ("a+", "baaab"), ("(a*)*b", "aaaa"), ("(a*)*b", "aaab"), ("a*?", "aaa"), ("a+?", "aaa"),
    ("(a|ab)(c|bcd)", "abcd"), ("^abc$", "abc\n"), ("(?m)^b$", "a\nb\nc"),
    ("\\bfoo\\b", "a foo b"), ("\\Bo", "foo"), ("[[:alpha:]]+", "12abc3"),
    ("[[:^alpha:]]+", "ab12c"), ("\\d+", "abc123"), ("\\w+", "  h\u00e9llo_1 "),
    ("\\s+", "a \t\nb"), ("(?i)hello", "HeLLo"), ("(?i)[^a]", "Ab"), ("(?i)k", "\u212a"),
    ("\\pL+", "12h\u00e9llo"), ("\\p{Greek}+", "abc \u03b1\u03b2\u03b3"), ("\\PL+", "ab12c"),
    ("\\p{^L}+", "ab12c"), ("a{2,3}", "aaaa"), ("a{,2}", "a{,2}"), ("a{2,3}?", "aaaa"),
    ("x{0}", "x"), ("(?=a)", "a"), ("(?!a)", "a"), ("(a)\\1", "aa"), ("a**", "a"),
    ("*a", "a"), ("(abc", "a"), ("abc)", "a"), ("[abc", "a"), ("[z-a]", "a"), ("\\q", "q"),
    ("a{1001}", "a"), ("(a{1000}){1000}", "a"), ("(?P<name>a)", "a"), ("(?P<>a)", "a"),
    ("(?i:A)b", "aB"), ("(?s).", "\n"), (".", "\n"), ("\\Qa.b\\E+", "a.bbb"),
    ("\\x41\\x{42}\\101", "ABA"), ("[\\d\\s]+", "a1 2b"), ("[]a]", "]"), ("[^]a]", "b"),
    ("[a-]", "-"), ("(?U)a+", "aaa"), ("", "abc"), ("|a", "a"), ("a|", "b"),
    (".+", "\u65e5\u672c\u8a9e"), ("\\z", "ab"), ("$", "a\n"), ("(?m)$", "a\nb"),
    ("[[:foo:]]", "a"), ("\\p{Foo}", "a"), ("\\C", "a"), ("\\Z", "a"), ("(?i)\u03c3", "\u03a3"),
    ("(?i)\u01c5", "\u01c6"), ("(?i)\u00b5", "\u039c"), ("a{2}{3}", "aaaaaa"), ("^*", "a"),
    ("\\8", "8"), ("\\_", "_"), ("a\\", "a"), ("((.)*?)*", "a1c"), ("(?i)\u0131", "I"),
    ("[\\p{Greek}\\d]+", "1\u03b12"), ("(?-i)a", "A"), ("(?)", "a"), ("x*", "\u00e9x\u00e9"),
    # a named class negated under (?i) is the complement of its case closure
    ("(?i)\\W", "\u017f"), ("(?i)\\W", "\u212a"), ("(?i)[\\W]", "\u017f"), ("(?i)[^\\w]", "\u017f"),
    ("(?i)[[:^lower:]]", "k"), ("(?i)\\P{Lu}", "a"), ("(?i)[\\P{Lu}]", "A"),
    ("(?i)[[:^upper:]]", "A"), ("(?i)\\PL", "a"), ("(?i)\\D", "x"),
]

ATOMS = ["a", "b", "c", ".", "\\d", "\\w", "\\s", "[ab]", "[^a]", "(?i)A", "\\b", "\\B", "^", "$",
         "\u00e9", "[[:alpha:]]", "\\pL", "\\p{Greek}", "x", "\\.", "[a-c\u00e9]", "(?s:.)",
         "(?m:^)", "\u03b1", "\\W", "\\D", "\\P{Lu}", "[[:^lower:]]", "(?i)\\W", "[^\\S]",
         "\u017f"]
OPS = ["*", "+", "?", "*?", "+?", "??", "{2}", "{1,3}", "{0,}", "{2,}?", "{0,1}"]


def generate(rng, depth=0):
    r = rng.random()
    if depth > 3 or r < 0.3:
        return rng.choice(ATOMS)
    if r < 0.5:
        return generate(rng, depth + 1) + generate(rng, depth + 1)
    if r < 0.6:
        return "(" + generate(rng, depth + 1) + "|" + generate(rng, depth + 1) + ")"
    if r < 0.75:
        return "(?:" + generate(rng, depth + 1) + ")" + rng.choice(OPS)
    return "(" + generate(rng, depth + 1) + ")" + rng.choice(OPS)


def cases(n):
    rng = random.Random(41)
    out = list(FIXED)
    for _ in range(n):
        text = "".join(rng.choice("abcAxk\u00e9\u03b11 _\n.\u017f\u212a")
                       for _ in range(rng.randint(0, 14)))
        out.append((generate(rng), text))
    return out


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "cel_eval")
    todo = cases(int(sys.argv[2]) if len(sys.argv) > 2 else 3000)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "main.go"), "w") as f:
            f.write(GO)
        env = dict(os.environ, GO111MODULE="off", GOCACHE=os.path.join(tmp, "cache"))
        subprocess.run(["go", "build", "-o", os.path.join(tmp, "re"), os.path.join(tmp, "main.go")],
                       check=True, env=env, timeout=300)
        go = subprocess.run([os.path.join(tmp, "re")], check=True, timeout=120, capture_output=True,
                            input="".join(json.dumps(c) + "\n" for c in todo).encode())
    want = [json.loads(line) for line in go.stdout.decode().splitlines()]
    tests = [{"expr": "[s.findAll(p), s.matches(p)]",
              "bindings": {"s": ["string", s], "p": ["string", p]}, "disableMacros": False}
             for p, s in todo]
    ours = subprocess.run([binary], input=json.dumps(tests).encode(), capture_output=True,
                          timeout=300, check=True)
    differ = 0
    for (p, s), w, got in zip(todo, want, json.loads(ours.stdout)):
        if "error" in w:
            same = got.get("error") == "Illegal regex: " + w["error"]
        else:
            v = got.get("value")
            same = v is not None and v[1][0][1] == [["string", x] for x in w["all"]] and \
                v[1][1] == ["bool", w["match"]]
        if not same:
            differ += 1
            print("DIFF /%s/ on %s: Go %s, ours %s" % (p, json.dumps(s), json.dumps(w),
                                                       json.dumps(got)))
    print("cel regex: %d cases, %d differ (Go's regexp, %s)" % (
        len(todo), differ, subprocess.run(["go", "version"], capture_output=True).stdout.decode()
        .strip()))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
