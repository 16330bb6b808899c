#!/usr/bin/env bash
# Runs every libFuzzer target in a fuzz build for FUZZ_SECONDS each (default
# 60), from a corpus in a temp dir seeded with tests/fuzz/corpus/<target>/
# when that exists (known repros and typical inputs). A crash leaves its
# input in the temp dir and fails the run; replay it with any build:
#   build/fuzz_btree crash-<sha>
# usage: tests/fuzz/run.sh BUILD_DIR
set -uo pipefail
build=$(cd "${1:?usage: tests/fuzz/run.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
seconds=${FUZZ_SECONDS:-60}
work=$(mktemp -d /tmp/sk-fuzz-XXXXXX)
rc=0
for bin in "$build"/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    mkdir -p "$work/$name"
    seeds="$here/corpus/$name"
    [ -d "$seeds" ] && cp "$seeds"/* "$work/$name"/ 2>/dev/null
    echo "fuzzing $name for ${seconds}s"
    if ! (cd "$work" && "$bin" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
            "$work/$name" 2>"$work/$name.log"); then
        tail -40 "$work/$name.log"
        echo "$name: crashed; inputs kept in $work" >&2
        rc=1
        continue
    fi
    grep -E "stat::number_of_executed_units|Done" "$work/$name.log" | tail -2
done
[ $rc -eq 0 ] && rm -rf "$work"
exit $rc
