"""The cel-spec npm package's test data (@bufbuild/cel-spec, installed into
tests/node by scripts/deps.sh test), read through node: the one loader the
parse and evaluation suites share."""

import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE_DIR = os.path.join(ROOT, "tests", "node")


def load(script):
    """What the node script prints on stdout, parsed as JSON; the script
    requires the package from tests/node."""
    dump = subprocess.run(["node", "-e", script], cwd=NODE_DIR, capture_output=True, timeout=120)
    if dump.returncode != 0:
        raise SystemExit("cannot load @bufbuild/cel-spec from %s (scripts/deps.sh test installs "
                         "it): %s" % (NODE_DIR, dump.stderr.decode()))
    return json.loads(dump.stdout)
