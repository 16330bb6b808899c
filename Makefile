# sqlkube: the two commands a user needs are `make serve` and `make test`.
# Both install missing dependencies first (scripts/deps.sh).
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps test-deps build build-asan serve test unit clean format

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

serve: build
	./$(BUILD)/sqlkube serve --listen 127.0.0.1:8080 --data-dir ./data

test: test-deps build build-asan
	@tests/run.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')
