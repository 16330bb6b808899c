#!/usr/bin/env bash
# run_watch.sh - watch-list memory and watch event latency of `sqlkube serve`.
#
#   bench/run_watch.sh [--postgres]
#
# For each backend (SQLite in a temp data dir; with --postgres also a
# throwaway PostgreSQL from tests/support/pg.sh) it starts a fresh server on
# 127.0.0.1 and a random port, then:
#   1. loads WATCH_OBJECTS ConfigMaps of WATCH_SIZE bytes of data each into
#      namespace "bench" (bench/watchbench load, 4 connections);
#   2. runs WATCH_ROUNDS rounds of watch-list (sendInitialEvents=true) with
#      WATCH_CLIENTS concurrent clients, each reading every object and the
#      initial-events-end bookmark (bench/watchbench watchlist);
#   3. opens LAT_WATCHERS plain watches on namespace "bench-lat" and creates
#      LAT_EVENTS ConfigMaps there, one every LAT_INTERVAL_MS ms, measuring
#      write-to-watcher latency (bench/watchbench latency).
# It samples the server's memory from /proc/PID/status: VmRSS of the fresh
# server, VmRSS after the load (before any client), and the peak (VmHWM) of
# each step: the peak is reset before a step by writing 5 to
# /proc/PID/clear_refs; a 20 ms VmRSS sampler runs alongside as a cross-check.
# Prints markdown tables. Every step is bounded by STEP_TIMEOUT seconds;
# everything it started is stopped on exit.
#
# Environment: SQLKUBE_BIN (default build/sqlkube), WATCHBENCH_BIN (default
# build/watchbench), WATCH_OBJECTS (400), WATCH_SIZE (1048576),
# WATCH_CLIENTS (64), WATCH_ROUNDS (2), LAT_WATCHERS (1000), LAT_EVENTS (200),
# LAT_INTERVAL_MS (10), STEP_TIMEOUT (600), KEEP_LOGS (empty: the temp dir
# with server logs is removed at exit).
set -euo pipefail
cd "$(dirname "$0")/.."

SQLKUBE_BIN=${SQLKUBE_BIN:-build/sqlkube}
WATCHBENCH_BIN=${WATCHBENCH_BIN:-build/watchbench}
WATCH_OBJECTS=${WATCH_OBJECTS:-400}
WATCH_SIZE=${WATCH_SIZE:-1048576}
WATCH_CLIENTS=${WATCH_CLIENTS:-64}
WATCH_ROUNDS=${WATCH_ROUNDS:-2}
LAT_WATCHERS=${LAT_WATCHERS:-1000}
LAT_EVENTS=${LAT_EVENTS:-200}
LAT_INTERVAL_MS=${LAT_INTERVAL_MS:-10}
STEP_TIMEOUT=${STEP_TIMEOUT:-600}

backends=(sqlite)
case "${1:-}" in
"") ;;
--postgres) backends+=(postgres) ;;
*)
    echo "usage: $0 [--postgres]" >&2
    exit 2
    ;;
esac
for bin in "$SQLKUBE_BIN" "$WATCHBENCH_BIN"; do
    [ -x "$bin" ] || { echo "run_watch.sh: $bin not built" >&2; exit 1; }
done

# 1000 watchers need 1000+ descriptors in the server and in the client.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((LAT_WATCHERS + 200)) ]; then
    echo "run_watch.sh: RLIMIT_NOFILE $(ulimit -n) is too low for $LAT_WATCHERS watchers" >&2
    exit 1
fi

# shellcheck source=tests/support/pg.sh
source tests/support/pg.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sk-watchbench.XXXXXX")
SERVER_PID=
SAMPLER_PID=
PORT=
status=0

stop_sampler() {
    if [ -n "$SAMPLER_PID" ]; then
        kill "$SAMPLER_PID" 2>/dev/null || true
        wait "$SAMPLER_PID" 2>/dev/null || true
        SAMPLER_PID=
    fi
}
stop_server() {
    stop_sampler
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
}
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
    stop_server
    pg_stop >/dev/null 2>&1 || true
    if [ -n "${KEEP_LOGS:-}" ]; then
        echo "run_watch.sh: logs kept in $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server DATA_DIR [DB_URL]: serves on a random port, retrying on a port clash.
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
    echo "run_watch.sh: server did not become ready:" >&2
    tail -n 20 "$dir/server.log" >&2 || true
    exit 1
}

# mem FIELD: the server's VmRSS/VmHWM in MiB.
mem() {
    awk -v f="$1:" '$1 == f { printf "%.0f", $2 / 1024 }' "/proc/$SERVER_PID/status"
}
# cpu: the server's CPU time so far (user + system), in clock ticks.
cpu() {
    awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat"
}
TICKS=$(getconf CLK_TCK)
# cpu_since T0: seconds of server CPU since the tick count T0.
cpu_since() {
    awk -v a="$1" -v b="$(cpu)" -v t="$TICKS" 'BEGIN { printf "%.1f", (b - a) / t }'
}
# reset_peak: VmHWM := VmRSS (Linux >= 4.0) and restarts the sampler's maximum.
reset_peak() {
    echo 5 >"/proc/$SERVER_PID/clear_refs"
    stop_sampler
    : >"$WORK/rss.max"
    (
        max=0
        while kill -0 "$SERVER_PID" 2>/dev/null; do
            kb=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$SERVER_PID/status" 2>/dev/null || echo 0)
            if [ "${kb:-0}" -gt "$max" ]; then
                max=$kb
                echo "$max" >"$WORK/rss.max"
            fi
            sleep 0.02
        done
    ) &
    SAMPLER_PID=$!
}
sampled_peak() {
    stop_sampler
    awk '{ printf "%.0f", $1 / 1024 }' "$WORK/rss.max"
}

# json_field NAME: the value of a top-level scalar field in the JSON on stdin.
json_field() {
    sed -n "s/.*\"$1\":\"\{0,1\}\([^,}\"]*\).*/\1/p"
}

# run STEP ARGS...: runs watchbench with a time bound; its JSON line in $out.
run() {
    local step=$1
    shift
    echo "run_watch.sh: $step" >&2
    if ! out=$(timeout "$STEP_TIMEOUT" "$WATCHBENCH_BIN" "$@" --url "http://127.0.0.1:$PORT" \
        2>"$WORK/$step.err"); then
        status=1
        echo "run_watch.sh: $step FAILED (exit status, stderr follows)" >&2
        head -c 4000 "$WORK/$step.err" >&2
    fi
    echo "$out" >>"$WORK/results.jsonl"
    echo "run_watch.sh:   $out" >&2
}

mib_data=$(( WATCH_OBJECTS * WATCH_SIZE / 1048576 ))
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
wl_rows=()
lat_rows=()
for backend in "${backends[@]}"; do
    db=
    if [ "$backend" = postgres ]; then
        pg_start
        db=$SK_PG_URL
    fi
    start_server "$WORK/$backend" "$db"
    sleep 1
    base=$(mem VmRSS)

    run load load --namespace bench --count "$WATCH_OBJECTS" --size "$WATCH_SIZE" --clients 4
    load_s=$(json_field seconds <<<"$out")
    sleep 2
    loaded=$(mem VmRSS)
    load_peak=$(mem VmHWM)

    for round in $(seq 1 "$WATCH_ROUNDS"); do
        reset_peak
        before=$(mem VmRSS)
        c0=$(cpu)
        run "watchlist$round" watchlist --namespace bench --clients "$WATCH_CLIENTS" \
            --expect "$WATCH_OBJECTS"
        peak=$(mem VmHWM)
        speak=$(sampled_peak)
        scpu=$(cpu_since "$c0")
        sleep 1
        after=$(mem VmRSS)
        ok=$(json_field ok <<<"$out")
        goal=$(( base + mib_data + WATCH_CLIENTS / 4 ))
        wl_rows+=("| $backend | $round | $WATCH_CLIENTS | $(json_field wall_s <<<"$out") | $(json_field client_min_s <<<"$out") / $(json_field client_median_s <<<"$out") / $(json_field client_max_s <<<"$out") | $(json_field events_min <<<"$out")–$(json_field events_max <<<"$out") | $(json_field mib_per_s <<<"$out") | $scpu | $base | $loaded | $before | **$peak** ($speak) | $goal | $((peak - before)) | $after | $ok |")
    done

    reset_peak
    before=$(mem VmRSS)
    c0=$(cpu)
    run latency latency --namespace bench-lat --clients "$LAT_WATCHERS" --events "$LAT_EVENTS" \
        --interval-ms "$LAT_INTERVAL_MS"
    peak=$(mem VmHWM)
    speak=$(sampled_peak)
    scpu=$(cpu_since "$c0")
    sleep 2
    after=$(mem VmRSS)
    lat_rows+=("| $backend | $LAT_WATCHERS | $LAT_EVENTS every $LAT_INTERVAL_MS ms | $(json_field deliveries <<<"$out")/$(json_field expected <<<"$out") | **$(json_field p50_ms <<<"$out")** | $(json_field p90_ms <<<"$out") | **$(json_field p99_ms <<<"$out")** | $(json_field max_ms <<<"$out") | $(json_field after_ack_p50_ms <<<"$out") | $(json_field fanout_p50_ms <<<"$out") / $(json_field fanout_max_ms <<<"$out") | $(json_field create_p50_ms <<<"$out") / $(json_field create_max_ms <<<"$out") | $(json_field write_s <<<"$out") | $scpu | $(json_field all_in_order <<<"$out") | $before | $peak ($speak) | $after |")

    curl -fsS "http://127.0.0.1:$PORT/metrics" 2>/dev/null | grep -i watch >"$WORK/$backend.metrics" || true
    stop_server
    if [ "$backend" = postgres ]; then
        pg_stop
    fi
    echo "run_watch.sh: $backend: load of $WATCH_OBJECTS x $WATCH_SIZE B took ${load_s}s, peak RSS during load ${load_peak} MiB" >&2
done

echo "Watch-list: $WATCH_OBJECTS ConfigMaps x $WATCH_SIZE B ($mib_data MiB of data), $WATCH_CLIENTS concurrent clients. Memory in MiB of server RSS; goal = fresh + data once + 256 KiB per client."
echo
echo "| backend | round | clients | wall s | per client min / median / max s | ADDED per client | MiB/s total | server CPU s | RSS fresh | RSS loaded | RSS before | peak RSS (sampled) | goal | peak - before | RSS after | ok |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
printf '%s\n' "${wl_rows[@]}"
echo
echo "Latency: $LAT_WATCHERS plain watches, write (request sent) -> event received, over all watchers x events; 'after 201': event received - the writer got its 201; fan-out: last - first watcher per event. Memory in MiB."
echo
echo "| backend | watchers | events | deliveries | p50 ms | p90 ms | p99 ms | max ms | after 201 p50 ms | fan-out p50 / max ms | create p50 / max ms | write s | server CPU s | every watcher all events in order | RSS before | peak RSS (sampled) | RSS after |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"
printf '%s\n' "${lat_rows[@]}"
exit $status
