# wattgraph: the two commands of a fresh machine are `make run` and
# `make test`. Both install missing Debian packages first (as root; otherwise
# they print what to install).
#
#   make run        build, then the main job on the bundled Monaco map
#   make test       build and run every CPU test, then the sanitizer build
#                   (ASan + UBSan, clang) with a short libFuzzer run per parser
#   make check      just the plain build's tests (quick, while developing)
#   make asan       just the sanitizer build and its tests
#   make fuzz       each fuzz target for FUZZ_SECONDS (default 600) seconds
#   make bench      the CPU benchmarks (see docs/benchmarks.md)
#   make clean

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
FUZZ_SECONDS ?= 600
CMAKE_FLAGS ?=
MAP        ?= data/monaco.osm.pbf

.PHONY: all deps build run test check asan fuzz bench clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWG_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) -- --no-print-directory

run: build
	$(BUILD)/wattgraph info $(MAP)
	@echo
	$(BUILD)/wattgraph sssp $(MAP) --algo selftune --verify

check: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -LE '^fuzz$$'

asan: deps
	@CC=clang cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DWG_USE_CUDA=OFF \
	  -DWG_SANITIZE=ON -DWG_FUZZ=ON -DWG_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS) -- --no-print-directory
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j$(JOBS)

test: check asan

fuzz: deps
	@CC=clang cmake -S . -B $(ASAN_BUILD) -DWG_USE_CUDA=OFF -DWG_SANITIZE=ON -DWG_FUZZ=ON \
	  -DWG_FUZZ_SECONDS=$(FUZZ_SECONDS) -DWG_FUZZ_SEED=0 $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS) -- --no-print-directory
	cd $(ASAN_BUILD) && ctest --output-on-failure -L '^fuzz$$'
	@CC=clang cmake -S . -B $(ASAN_BUILD) -DWG_FUZZ_SECONDS=15 -DWG_FUZZ_SEED=1 >/dev/null

bench: build
	scripts/bench-cpu.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
