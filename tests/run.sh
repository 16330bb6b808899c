#!/usr/bin/env bash
# Runs every test suite: the layer check (scripts/check_layers.py), cmocka
# unit tests (release and ASan+UBSan builds), the CEL parser against
# cel-go's trees, the CEL evaluator against the cel-spec conformance tests,
# the libFuzzer targets for a bounded time,
# the shared store suite and the schema check on SQLite and on a real
# PostgreSQL started in a temp dir, the end-to-end tests that drive the
# ASan+UBSan server with the real kubectl and the Python client on both
# backends (and some of them against the release build), and the
# hostile-input suite against the sanitizer build. Ends with
# "N passed, N failed" (suites) and a non-zero exit if any suite failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
ASAN_BUILD=${ASAN_BUILD:-build-asan}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1

passed=0
failed=0
failed_names=()
suite() {
    local name=$1
    shift
    echo "=== $name"
    if "$@"; then
        passed=$((passed + 1))
        echo "--- $name: ok"
    else
        failed=$((failed + 1))
        failed_names+=("$name")
        echo "--- $name: FAILED"
    fi
}

source tests/support/pg.sh
cleanup() { pg_stop >/dev/null 2>&1 || true; }
trap cleanup EXIT

suite "layer check (src/ includes follow the layer order)" \
    sh -c 'python3 scripts/check_layers.py --self-test && python3 scripts/check_layers.py'
suite "unit (release)" ctest --test-dir "$BUILD" --output-on-failure
suite "unit (asan+ubsan)" ctest --test-dir "$ASAN_BUILD" --output-on-failure
# cel-go's parser against ours over the cel-spec npm package's parsing,
# conformance and comprehension tests: every tree byte for byte, every refusal
# at cel-go's position (tests/cel/parse_test.py).
suite "cel parse (cel-go's trees, asan+ubsan)" \
    python3 tests/cel/parse_test.py "$ASAN_BUILD/cel_parse"
# The evaluator over the cel-spec conformance tests whose values it has
# (pass/skip counts per section, skips by reason; tests/cel/eval_test.py).
suite "cel eval (cel-spec conformance, asan+ubsan)" \
    python3 tests/cel/eval_test.py "$ASAN_BUILD/cel_eval"
# The type checker against cel-go's deduced types and error texts over the
# package's checking and conformance tests (tests/cel/check_test.py).
suite "cel check (cel-go's types and errors, asan+ubsan)" \
    python3 tests/cel/check_test.py "$ASAN_BUILD/cel_check"
# matches() and findAll() against Go's regexp over fixed and generated
# patterns (tests/cel/regex_test.py).
suite "cel regex (Go's regexp, asan+ubsan)" \
    python3 tests/cel/regex_test.py "$ASAN_BUILD/cel_eval"

suite "fuzz (libFuzzer, ${FUZZ_SECONDS:-60}s per target)" tests/fuzz/run.sh "${FUZZ_BUILD:-build-fuzz}"

if ! pg_start; then
    echo "cannot start PostgreSQL for the tests" >&2
    exit 1
fi

suite "store suite sqlite (asan+ubsan)" env SK_TEST_DB= "$ASAN_BUILD/store_suite"
suite "store suite postgres (asan+ubsan)" env SK_TEST_DB="$SK_PG_URL" "$ASAN_BUILD/store_suite"
suite "schema check sqlite" tests/support/schema_check.sh "$BUILD/sqlkube"
suite "schema check postgres" tests/support/schema_check.sh "$BUILD/sqlkube" "$SK_PG_URL"

# The server under end-to-end test is the sanitizer build: any memory error
# aborts it and fails the run. Leak checking is off for the server process
# only (it is killed by signal in the durability tests).
suite "e2e sqlite+postgres (kubectl, python client, http)" \
    env SQLKUBE_BIN="$ROOT/$ASAN_BUILD/sqlkube" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
    SK_PG_URL="$SK_PG_URL" tests/e2e/run.sh both
# The release build is what users run, with its own allocator (jemalloc,
# which the sanitizer build cannot link): the write, watch, crash-recovery,
# kubectl and lifecycle modules run against it too.
suite "e2e sqlite+postgres, release build (jemalloc): writes, watch, watch transport, durability, kubectl, lifecycle" \
    env SQLKUBE_BIN="$ROOT/$BUILD/sqlkube" SK_PG_URL="$SK_PG_URL" tests/e2e/run.sh both \
    test_group_commit test_watch test_watch_transport test_durability test_kubectl test_lifecycle
# Hostile input (tests/hostile): crashes, poison, amplification, exhaustion,
# against the same sanitizer build on both backends.
suite "hostile sqlite+postgres (asan+ubsan)" \
    env SQLKUBE_BIN="$ROOT/$ASAN_BUILD/sqlkube" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
    SK_PG_URL="$SK_PG_URL" tests/e2e/run.sh both --dir tests/hostile

echo
if [[ $failed -gt 0 ]]; then
    printf 'failed suite: %s\n' "${failed_names[@]}"
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
