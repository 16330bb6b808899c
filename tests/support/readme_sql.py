"""The SQL examples of README.md ("Inspecting state with SQL"), read from the
file, so the benchmark that times them (bench/views.py) and the test that
checks their plans (tests/e2e/test_etcd_views.py) cannot drift from what the
README tells people to run."""

import os
import re

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
SECTION = "### Inspecting state with SQL"
# sqlite3 FILE "SQL"  and  psql "$DB" -c "SQL"; SQL has \" for a double quote
LINE = re.compile(r'^(sqlite3 \S+|psql "\$DB" -c) "((?:[^"\\]|\\.)*)"')


def examples():
    """[(backend, sql)] in README order; backend is "sqlite" or "postgres"."""
    with open(README) as f:
        text = f.read()
    start = text.index(SECTION)
    end = text.find("\n### ", start + len(SECTION))
    out = []
    for line in text[start:end].splitlines():
        m = LINE.match(line)
        if m:
            out.append(("sqlite" if m.group(1).startswith("sqlite3") else "postgres",
                        m.group(2).replace('\\"', '"')))
    assert out, "no SQL examples found in README.md's %r" % SECTION
    return out
