#!/usr/bin/env bash
# run_fanout.sh - write-to-event latency at many watchers and a high write
# rate, optionally while waves of concurrent LISTs hit the same server.
#
#   bench/run_fanout.sh [--burst] [DB_URL]
#
# Starts a fresh `sqlkube serve` on 127.0.0.1 (SQLite in a temp dir, or the
# PostgreSQL database DB_URL), then runs `watchbench latency`: WATCHERS plain
# watches, EVENTS creates at RATE a second spread over WRITERS connections.
# With --burst it first loads 1,000 x 1 KiB ConfigMaps into namespace `bulk`
# and, for the whole latency run, sends waves of 200 concurrent LISTs of it
# (curl), to see whether request bursts delay watch events. Prints watchbench's
# JSON line with two figures of the server's during the run added: CPU seconds
# (user + system) and seconds its threads were runnable but waiting for a CPU
# (run queue delay from /proc/PID/task/*/schedstat: on a shared machine, the
# time other work took from it);
# everything it started is stopped on exit.
#
# Environment: SQLKUBE_BIN (build/sqlkube), WATCHBENCH_BIN (build/watchbench),
# WATCHERS (1000), EVENTS (1000), RATE (500), WRITERS (16).
set -euo pipefail
cd "$(dirname "$0")/.."

SQLKUBE_BIN=${SQLKUBE_BIN:-build/sqlkube}
WATCHBENCH_BIN=${WATCHBENCH_BIN:-build/watchbench}
burst=
if [ "${1:-}" = --burst ]; then
    burst=1
    shift
fi
db=${1:-}
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sk-fanout.XXXXXX")
SERVER_PID=
BURST_PID=
cleanup() {
    touch "$WORK/stop"
    [ -n "$BURST_PID" ] && wait "$BURST_PID" 2>/dev/null
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
# A port below the ephemeral range (the 1,000 watchers' own sockets and other
# clients' take ports there, and a taken port failed a run now and then),
# another one if the server exits at once anyway.
for _ in 1 2 3 4 5; do
    PORT=$((20000 + RANDOM % 12000))
    "$SQLKUBE_BIN" serve --plain-http --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" \
        ${db:+--db "$db"} >"$WORK/server.log" 2>&1 </dev/null &
    SERVER_PID=$!
    for _ in $(seq 1 100); do
        curl -fsS -o /dev/null "http://127.0.0.1:$PORT/readyz" 2>/dev/null && break
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$SERVER_PID" 2>/dev/null && break
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
done
[ -n "$SERVER_PID" ] || { cat "$WORK/server.log" >&2; exit 1; }
URL=http://127.0.0.1:$PORT
if [ -n "$burst" ]; then
    "$WATCHBENCH_BIN" load --url "$URL" --namespace bulk --count 1000 --size 1024 --clients 4 >/dev/null
    (
        n=0
        while [ ! -e "$WORK/stop" ]; do
            seq 200 | xargs -P 200 -I{} curl -s -o /dev/null "$URL/api/v1/namespaces/bulk/configmaps"
            n=$((n + 200))
        done
        echo "run_fanout.sh: $n LISTs during the run" >&2
    ) &
    BURST_PID=$!
fi
# runq_ns: the server's threads' total run queue delay so far, in ns.
runq_ns() {
    cat /proc/"$SERVER_PID"/task/*/schedstat 2>/dev/null | awk '{ s += $2 } END { printf "%.0f", s }'
}
c0=$(awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat")
q0=$(runq_ns)
out=$("$WATCHBENCH_BIN" latency --url "$URL" --namespace lat --clients "${WATCHERS:-1000}" \
    --events "${EVENTS:-1000}" --rate "${RATE:-500}" --writers "${WRITERS:-16}")
cpu=$(awk -v a="$c0" -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15 - a) / t }' \
    "/proc/$SERVER_PID/stat")
runq=$(awk -v a="$q0" -v b="$(runq_ns)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
echo "${out%\}},\"server_cpu_s\":$cpu,\"server_runq_wait_s\":$runq}"
