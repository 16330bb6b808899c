#!/usr/bin/python3
"""End-to-end test runner for sqlkube.

Runs every tests/e2e/test_*.py module (stdlib unittest) against a real
`sqlkube serve` process per test class, once per selected storage backend, so
the same kubectl / Python-client / HTTP behaviour is checked on SQLite and on
PostgreSQL. Ends with the line `N passed, N failed` and exits non-zero if any
test failed or errored.

Usage (must be /usr/bin/python3: it has the kubernetes client):
  tests/e2e/run.py [--backend sqlite|postgres|both] [--pg-url URL] [--dir DIR]
                   [--bin PATH] [-k SUBSTRING] [--keep] [--serial] [-v] [MODULE ...]

With both backends the two runs go side by side, each in its own process
(most of a test's time is spent waiting on a server, a client or a disk,
so two runs on two cores take little longer than one); their outputs are
printed one after the other when both are done. --serial runs them in turn.

For postgres, --pg-url (or SK_PG_URL) must point at a running server;
tests/e2e/run.sh starts one with tests/support/pg.sh and passes it in.
The binary is --bin, else $SQLKUBE_BIN, else build/sqlkube.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
sys.path.insert(0, HERE)

import server as harness  # noqa: E402


def _case_of(test):
    # Subtests report through a _SubTest wrapping the real case.
    return getattr(test, "test_case", test)


class Result(unittest.TextTestResult):
    def __init__(self, *a, backend="", **kw):
        super().__init__(*a, **kw)
        self.backend = backend
        self.run_ids = []
        self.failed_ids = []
        self.logs = []  # server log paths relevant to failures

    def startTest(self, test):
        super().startTest(test)
        self.run_ids.append(test.id())

    def _note(self, test):
        case = _case_of(test)
        tid = case.id()
        if tid not in self.failed_ids:
            self.failed_ids.append(tid)
        srv = getattr(case, "server", None)
        if not isinstance(srv, harness.Server):
            # setUpClass/module errors: blame the most recently started server.
            srv = harness.STARTED[-1] if harness.STARTED else None
        if srv is not None and srv not in self.logs:
            self.logs.append(srv)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._note(test)

    def addError(self, test, err):
        super().addError(test, err)
        self._note(test)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._note(test)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._note(test)


def load_suite(test_dir, modules, pattern):
    loader = unittest.TestLoader()
    if pattern:
        loader.testNamePatterns = ["*%s*" % pattern]
    if test_dir not in sys.path:
        sys.path.insert(0, test_dir)
    if modules:
        names = [m[:-3] if m.endswith(".py") else m for m in modules]
        names = [os.path.basename(n) for n in names]
        return loader.loadTestsFromNames(names)
    return loader.discover(test_dir, pattern="test_*.py", top_level_dir=test_dir)


def run_backend(backend, args):
    harness.CONFIG.backend = backend
    print("=" * 70)
    print("backend: %s   binary: %s" % (backend, harness.CONFIG.binary))
    if backend == "postgres":
        print("postgres: %s" % harness.CONFIG.pg_url)
    print("=" * 70, flush=True)
    suite = load_suite(os.path.abspath(args.dir), args.modules, args.k)
    runner = unittest.TextTestRunner(
        stream=sys.stdout, verbosity=2 if args.verbose else 1,
        resultclass=lambda *a, **kw: Result(*a, backend=backend, **kw))
    result = runner.run(suite)
    skipped = len(result.skipped)
    failed_run = [t for t in result.run_ids if t in result.failed_ids]
    passed = len(result.run_ids) - len(failed_run) - skipped
    for srv in result.logs:
        print("-" * 70)
        print("[%s] server log tail for %s (data dir %s):" % (backend, srv.name, srv.data_dir))
        print(srv.log_tail())
    return passed, list(result.failed_ids), skipped


def run_side_by_side(backends, argv):
    """Runs each backend in a child process of this script; returns the
    tallies as run_backend does, summed, with failures named per backend."""
    children = []
    for b in backends:
        out = tempfile.NamedTemporaryFile(prefix="sqlkube-e2e-%s-" % b, suffix=".log", delete=False)
        summary = out.name[:-4] + ".json"
        cmd = [sys.executable, os.path.abspath(__file__), "--backend", b, "--summary", summary] + argv
        children.append((b, out, summary, subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)))
    total_passed, failed, total_skipped = 0, [], 0
    for b, out, summary, proc in children:
        rc = proc.wait()
        out.close()
        with open(out.name, errors="replace") as f:
            sys.stdout.write(f.read())
        sys.stdout.flush()
        os.unlink(out.name)
        try:
            with open(summary) as f:
                tally = json.load(f)
            os.unlink(summary)
        except (OSError, ValueError):
            tally = {"passed": 0, "failed": ["(the %s run ended with status %d and no summary)" % (b, rc)],
                     "skipped": 0}
        total_passed += tally["passed"]
        total_skipped += tally["skipped"]
        failed += ["[%s] %s" % (b, t) for t in tally["failed"]]
    return total_passed, failed, total_skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="sqlite")
    ap.add_argument("--pg-url", default=os.environ.get("SK_PG_URL"))
    ap.add_argument("--bin", default=None, help="sqlkube binary")
    ap.add_argument("-k", default=None, help="only tests whose name contains this")
    ap.add_argument("--dir", default=HERE,
                    help="directory of test_*.py modules (default: tests/e2e; tests/hostile "
                         "holds the hostile-input suite)")
    ap.add_argument("--keep", action="store_true", help="keep data dirs and logs")
    ap.add_argument("--serial", action="store_true", help="with both backends, one after the other")
    ap.add_argument("--summary", default=None, help=argparse.SUPPRESS)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("modules", nargs="*", help="test modules (default: all test_*.py)")
    args = ap.parse_args()

    if args.bin:
        harness.CONFIG.binary = os.path.abspath(args.bin)
    elif not os.path.isabs(harness.CONFIG.binary):
        harness.CONFIG.binary = os.path.abspath(os.path.join(ROOT, harness.CONFIG.binary))
    harness.CONFIG.pg_url = args.pg_url
    harness.CONFIG.keep = args.keep
    work = harness.CONFIG.ensure_work_dir()

    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    total_passed, failed, total_skipped = 0, [], 0
    t0 = time.monotonic()
    if "postgres" in backends and not harness.CONFIG.pg_url:
        print("postgres backend needs --pg-url or SK_PG_URL (tests/e2e/run.sh postgres starts one)")
        failed.append("[postgres] (no PostgreSQL URL)")
        backends.remove("postgres")
    side_by_side = False
    if len(backends) > 1 and not args.serial:
        child_argv = sys.argv[1:]
        for i, a in enumerate(child_argv):
            if a == "--backend":
                child_argv = child_argv[:i] + child_argv[i + 2:]
                break
        child_argv = [a for a in child_argv if not a.startswith("--backend=")]
        p, f, s = run_side_by_side(backends, child_argv)
        total_passed, failed, total_skipped = p, failed + f, s
        side_by_side = True  # each run printed where it kept its own data dirs
    else:
        for b in backends:
            p, f, s = run_backend(b, args)
            total_passed += p
            total_skipped += s
            failed += ["[%s] %s" % (b, t) for t in f]
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump({"passed": total_passed, "skipped": total_skipped,
                       "failed": [t.split("] ", 1)[1] if t.startswith("[") else t for t in failed]}, f)

    print("=" * 70)
    if failed:
        print("FAILED tests:")
        for t in failed:
            print("  " + t)
    keep = args.keep or (bool(failed) and not side_by_side)
    if keep:
        print("data dirs and server logs kept in %s" % work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("e2e finished in %.1fs" % (time.monotonic() - t0))
    line = "%d passed, %d failed" % (total_passed, len(failed))
    if total_skipped:
        line += ", %d skipped" % total_skipped
    print(line, flush=True)
    return 1 if failed or total_passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
