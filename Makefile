# sqlkube: the two commands a user needs are `make serve` and `make test`.
# Both install missing dependencies first (scripts/deps.sh).
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
RELEASE_BUILD ?= build-release
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps test-deps build build-asan asan build-fuzz build-release fuzz serve test unit clean format

all: build

deps:
	@scripts/deps.sh build

test-deps:
	@scripts/deps.sh test

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSK_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

# The server with the Release flags the container image uses (-O3 finds
# warnings -O2 does not), warnings as errors: make test builds it so every
# build type stays warning-free.
build-release: deps
	@cmake -S . -B $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release -DSK_WERROR=ON >/dev/null
	@cmake --build $(RELEASE_BUILD) -j $(JOBS) --target sqlkube

# The sanitizer build alone (make test builds and uses it too).
asan: build-asan

# libFuzzer targets (tests/fuzz) need clang; tests/run.sh runs each for a while.
build-fuzz: test-deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSK_SANITIZE=ON -DSK_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all

fuzz: build-fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh $(FUZZ_BUILD)

serve: build
	./$(BUILD)/sqlkube serve --listen 127.0.0.1:8080 --data-dir ./data

test: test-deps build build-asan build-fuzz build-release
	@tests/run.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(RELEASE_BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')
