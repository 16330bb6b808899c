#!/usr/bin/env bash
# Runs every libFuzzer target in a fuzz build for FUZZ_SECONDS each (default
# 60), from a corpus in a temp dir seeded with tests/fuzz/corpus/<target>/
# when that exists (known repros and typical inputs). Targets run side by
# side, FUZZ_JOBS at a time (default: the CPU count): each is one process on
# one core, so every target still gets its full time on a core, and the
# stage takes a fraction of the wall time. A crash leaves its input in the
# temp dir (<target>-crash-<sha>) and fails the run; replay it with any
# build:
#   build/fuzz_btree <target>-crash-<sha>
# usage: tests/fuzz/run.sh BUILD_DIR
set -uo pipefail
build=$(cd "${1:?usage: tests/fuzz/run.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
seconds=${FUZZ_SECONDS:-60}
jobs_max=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
work=$(mktemp -d /tmp/sk-fuzz-XXXXXX)

# One target; its exit status goes to $work/<name>.rc.
fuzz_one() {
    local bin=$1 name
    name=$(basename "$bin")
    mkdir -p "$work/$name"
    local seeds="$here/corpus/$name"
    [ -d "$seeds" ] && cp "$seeds"/* "$work/$name"/ 2>/dev/null
    (cd "$work" && "$bin" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
        -artifact_prefix="$work/$name-" "$work/$name" 2>"$work/$name.log")
    echo $? >"$work/$name.rc"
}

names=()
for bin in "$build"/fuzz_*; do
    [ -x "$bin" ] || continue
    names+=("$(basename "$bin")")
    echo "fuzzing $(basename "$bin") for ${seconds}s"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
        wait -n
    done
    fuzz_one "$bin" &
done
wait

rc=0
for name in "${names[@]}"; do
    if [ "$(cat "$work/$name.rc" 2>/dev/null)" != 0 ]; then
        tail -40 "$work/$name.log"
        echo "$name: crashed; inputs kept in $work" >&2
        rc=1
        continue
    fi
    echo "$name:"
    grep -E "stat::number_of_executed_units|Done" "$work/$name.log" | tail -2
done
[ $rc -eq 0 ] && rm -rf "$work"
exit $rc
