#!/usr/bin/env bash
# run_write.sh - create throughput of `sqlkube serve` at 1 and 32 clients.
#
#   bench/run_write.sh [--postgres]
#
# For each backend (SQLite; with --postgres also a throwaway PostgreSQL from
# tests/support/pg.sh) and each client count, starts a fresh server on an
# empty store (its own temp SQLite data dir, or its own PostgreSQL database),
# creates namespace "bench", runs bench/writebench, and prints one markdown
# table row. Fresh stores keep runs independent: no run inherits the table
# size or the order of the runs before it. Everything it started is stopped
# on exit.
#
# Environment: SQLKUBE_BIN (default build/sqlkube), WRITEBENCH_BIN (default
# build/writebench), BENCH_SECONDS (10), BENCH_CLIENTS ("1 32"), BENCH_SIZE
# (1024 bytes of data per ConfigMap).
set -euo pipefail
cd "$(dirname "$0")/.."

SQLKUBE_BIN=${SQLKUBE_BIN:-build/sqlkube}
WRITEBENCH_BIN=${WRITEBENCH_BIN:-build/writebench}
BENCH_SECONDS=${BENCH_SECONDS:-10}
BENCH_CLIENTS=${BENCH_CLIENTS:-1 32}
BENCH_SIZE=${BENCH_SIZE:-1024}

backends=(sqlite)
case "${1:-}" in
"") ;;
--postgres) backends+=(postgres) ;;
*)
    echo "usage: $0 [--postgres]" >&2
    exit 2
    ;;
esac
for bin in "$SQLKUBE_BIN" "$WRITEBENCH_BIN"; do
    [ -x "$bin" ] || { echo "run_write.sh: $bin not built" >&2; exit 1; }
done

# shellcheck source=tests/support/pg.sh
source tests/support/pg.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sk-wbench.XXXXXX")
SERVER_PID=
PORT=
status=0

stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
}
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
    stop_server
    pg_stop >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# start_server DATA_DIR [DB_URL]: serves on a random port, retrying on a port
# clash (a free port checked now may be taken by the time we bind it).
start_server() {
    local dir=$1 db=${2:-}
    mkdir -p "$dir"
    for _ in 1 2 3 4 5; do
        PORT=$((20000 + RANDOM % 40000))
        "$SQLKUBE_BIN" serve --plain-http --listen "127.0.0.1:$PORT" --data-dir "$dir" ${db:+--db "$db"} \
            >>"$dir/server.log" 2>&1 </dev/null &
        SERVER_PID=$!
        for _ in $(seq 1 100); do
            if curl -fsS -o /dev/null "http://127.0.0.1:$PORT/readyz" 2>/dev/null; then
                return 0
            fi
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        stop_server
    done
    echo "run_write.sh: server did not become ready:" >&2
    tail -n 20 "$dir/server.log" >&2
    return 1
}

# json_field NAME: the value of a top-level scalar field in the JSON on stdin.
json_field() {
    sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"
}

echo "| backend | clients | seconds | ok | failed | creates/s | p50 ms | p99 ms |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
run=0
for backend in "${backends[@]}"; do
    if [ "$backend" = postgres ]; then
        pg_start
    fi
    for clients in $BENCH_CLIENTS; do
        run=$((run + 1))
        db=
        if [ "$backend" = postgres ]; then
            db=$(pg_create_db "bench_$run")
        fi
        start_server "$WORK/run$run" "$db"
        curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' \
            -d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}}' \
            "http://127.0.0.1:$PORT/api/v1/namespaces"
        # A run where nothing succeeded still gets its row; the exit status says so.
        out=$("$WRITEBENCH_BIN" --url "http://127.0.0.1:$PORT" --namespace bench \
            --clients "$clients" --seconds "$BENCH_SECONDS" --size "$BENCH_SIZE") || status=1
        row="| $backend | $clients | $BENCH_SECONDS"
        for f in ok failed creates_per_s p50_ms p99_ms; do
            row+=" | $(json_field "$f" <<<"$out")"
        done
        echo "$row |"
        stop_server
    done
    if [ "$backend" = postgres ]; then
        pg_stop
    fi
done
exit $status
