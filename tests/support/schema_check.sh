#!/usr/bin/env bash
# schema_check.sh - proves schema/*.sql documents exactly what the migrations
# build: migrating an empty database must give the same schema as loading the
# documented file into another empty database.
#
#   tests/support/schema_check.sh SQLKUBE_BINARY               # SQLite
#   tests/support/schema_check.sh SQLKUBE_BINARY POSTGRES_URL  # PostgreSQL
#
# POSTGRES_URL is a postgres:// URI of a server where we may create databases
# (e.g. $SK_PG_URL from pg.sh); the check runs in two throwaway databases
# that are dropped afterwards. Exits non-zero and prints the diff on any
# mismatch.
#
# Schemas are compared as normalized DDL text (sqlite3 .schema, pg_dump
# --schema-only): comments dropped, whitespace collapsed, one statement per
# line, sorted. So the documented files may be laid out and commented freely,
# while any difference in what the statements say still fails.

set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 SQLKUBE_BINARY [POSTGRES_URL]" >&2; exit 2; }
sqlkube=$1
pg_base=${2:-}
[ -x "$sqlkube" ] || { echo "schema_check: $sqlkube is not an executable" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/sk-schema.XXXXXX")
pg_dbs=()
cleanup() {
    local db
    for db in "${pg_dbs[@]}"; do
        psql -X -q "$pg_base" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 </dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

normalize() {
    sed -e 's/--.*$//' | tr '\n' ' ' |
        sed -e 's/[[:space:]]\+/ /g' -e 's/ *; */;\n/g' -e 's/( /(/g' -e 's/ )/)/g' \
            -e 's/ *, */, /g' |
        sed -e 's/^ //' -e '/^$/d' | LC_ALL=C sort
}

# compare NAME DOCUMENTED MIGRATED: both already normalized.
compare() {
    if ! diff -u --label "schema/$1.sql" --label "sqlkube migrate ($1)" "$2" "$3"; then
        echo "schema_check: $1: schema/$1.sql differs from what the migrations build" >&2
        exit 1
    fi
    echo "schema_check: $1: ok"
}

check_sqlite() {
    sqlite3 -bail "$work/documented.db" <"$root/schema/sqlite.sql"
    "$sqlkube" migrate --db "sqlite:$work/migrated.db" >/dev/null
    sqlite3 "$work/documented.db" .schema | normalize >"$work/sqlite.documented"
    sqlite3 "$work/migrated.db" .schema | normalize >"$work/sqlite.migrated"
    compare sqlite "$work/sqlite.documented" "$work/sqlite.migrated"
}

# The URL of database $2 on the server of URI $1 (same user, host, params).
pg_url_for() {
    local base=$1 query=""
    case $base in *\?*) query="?${base#*\?}" base=${base%%\?*} ;; esac
    case $base in *://*/*) base=${base%/*} ;; esac
    echo "$base/$2$query"
}

# pg_dump >= 15.14 brackets its output with psql meta-commands carrying a
# random key (\restrict KEY ... \unrestrict KEY); they are not schema.
pg_schema() {
    pg_dump --schema-only --no-owner "$1" | sed -e '/^\\/d' | normalize
}

check_postgres() {
    local which db
    for which in documented migrated; do
        db="sk_schema_${which}_$$"
        psql -X -q -v ON_ERROR_STOP=1 "$pg_base" -c "CREATE DATABASE $db" >/dev/null </dev/null
        pg_dbs+=("$db")
    done
    local documented migrated
    documented=$(pg_url_for "$pg_base" "sk_schema_documented_$$")
    migrated=$(pg_url_for "$pg_base" "sk_schema_migrated_$$")
    psql -X -q -v ON_ERROR_STOP=1 "$documented" -f "$root/schema/postgres.sql" >/dev/null </dev/null
    "$sqlkube" migrate --db "$migrated" >/dev/null
    pg_schema "$documented" >"$work/postgres.documented"
    pg_schema "$migrated" >"$work/postgres.migrated"
    compare postgres "$work/postgres.documented" "$work/postgres.migrated"
}

if [ -n "$pg_base" ]; then
    check_postgres
else
    check_sqlite
fi
