#!/usr/bin/env bash
# End-to-end suite wrapper: runs tests/e2e/run.py (kubectl, Python client and
# raw-HTTP checks against a real `sqlkube serve`) on SQLite, PostgreSQL or
# both. For postgres it uses the server named by $SK_PG_URL if set (as
# tests/run.sh does), else starts a throwaway one with tests/support/pg.sh and
# always stops it again (trap), so run.py itself needs no shell helpers.
#
# usage: tests/e2e/run.sh [sqlite|postgres|both] [run.py args...]
#   SQLKUBE_BIN=/path/to/sqlkube overrides the binary (default build/sqlkube).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
backend=${1:-both}
[ $# -gt 0 ] && shift

case "$backend" in
  sqlite)
    exec /usr/bin/python3 "$root/tests/e2e/run.py" --backend sqlite "$@"
    ;;
  postgres|both)
    if [ -n "${SK_PG_URL:-}" ]; then
      # A PostgreSQL is already running (e.g. tests/run.sh started it with
      # pg.sh and exported SK_PG_*): use it, and leave stopping it to its owner.
      echo "using PostgreSQL at $SK_PG_URL"
    else
      # shellcheck source=../support/pg.sh
      source "$root/tests/support/pg.sh" || { echo "cannot source tests/support/pg.sh"; echo "0 passed, 1 failed"; exit 1; }
      trap 'pg_stop >/dev/null 2>&1 || true' EXIT
      if ! pg_start; then
        echo "pg_start failed"
        echo "0 passed, 1 failed"
        exit 1
      fi
      export SK_PG_URL SK_PG_PORT SK_PG_DIR
    fi
    /usr/bin/python3 "$root/tests/e2e/run.py" --backend "$backend" --pg-url "$SK_PG_URL" "$@"
    exit $?
    ;;
  *)
    echo "usage: $0 [sqlite|postgres|both] [run.py args...]" >&2
    exit 2
    ;;
esac
