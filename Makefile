# Imago — every entry point installs what it needs first (scripts/install-deps.sh), then builds and runs.
SWIFT ?= swift
JOBS ?= 2

.PHONY: all deps build docs test test-tsan ci demo bench bench-serve bench-redis fuzz fuzz-replay asan-sweep hostile-rss crash-consistency soak format lint clean

all: build

deps:
	@bash scripts/install-deps.sh tmux:/usr/bin/tmux openssl:/usr/bin/openssl libjpeg-turbo-progs:/usr/bin/jpegtran nginx:/usr/sbin/nginx time:/usr/bin/time file:/usr/bin/file

build: deps
	$(SWIFT) build -j $(JOBS)

# The whole suite (Swift Testing + XCTest). Network tests use only loopback servers the tests start themselves.
# Tests run one at a time: in one process, FoundationNetworking's shared queues let a test that streams a large
# body stall every other test's URLSession for seconds, so parallel runs on 2 cores time out by chance. Serial is
# also faster here (the whole suite runs in about 4 minutes on 2 cores; 5 with both cores also busy).
test: deps
	$(SWIFT) build --build-tests -j $(JOBS)
	$(SWIFT) test --skip-build --no-parallel

# The suite under ThreadSanitizer, in its own build folder (serial, for the reason given above). About 7 min to
# build and 7 min to run on 2 cores. A race report fails it; a test failing without one is retried once
# (scripts/test-tsan.sh says why).
test-tsan: deps
	$(SWIFT) build --build-tests -j $(JOBS) --sanitize=thread --build-path .build-tsan
	bash scripts/test-tsan.sh

# What .ci/run does (RELIABILITY.md §7): the suite, the DocC catalog, every saved fuzz input replayed, then the
# suite under TSan.
ci: test docs fuzz-replay test-tsan

# The demo's table reports speed, so it runs a release build: a debug build decodes ~10x slower and its disk pass
# looks almost as slow as its network pass. The first release build takes a few minutes; later ones are quick.
demo: deps
	@echo "make demo: building imago in release mode (the first release build takes a few minutes)..."
	$(SWIFT) build -c release -j $(JOBS) --product imago
	$$($(SWIFT) build -c release --show-bin-path)/imago demo

bench: deps
	bash scripts/bench.sh

bench-serve: deps
	bash scripts/bench-serve.sh

bench-redis: deps
	bash scripts/bench-redis.sh

fuzz: deps
	bash scripts/fuzz.sh

# Every saved fuzz input (Tests/Fuzz/TARGET/*) through its target once, in the normal debug build (seconds).
fuzz-replay: deps
	$(SWIFT) build -j $(JOBS) --product imago-fuzz
	@for dir in Tests/Fuzz/*/; do t=$$(basename $$dir); \
	  $$($(SWIFT) build --show-bin-path)/imago-fuzz $$t $$dir* || exit 1; done

# Reliability runs (RELIABILITY.md): ASan sweep of ~4,200 corrupted corpus variants, peak RSS per decompression
# bomb, 60 SIGKILL rounds + 60 s two-process sharing of the disk cache, and the 50,000-request pipeline soak.
asan-sweep: deps
	bash scripts/asan-sweep.sh

hostile-rss: deps
	bash scripts/hostile-rss.sh

crash-consistency: deps
	bash scripts/crash-consistency.sh

soak: deps
	$(SWIFT) build -c release -j $(JOBS) --product imago-bench
	$$($(SWIFT) build -c release --show-bin-path)/imago-bench soak

format:
	$(SWIFT) format --in-place --recursive --parallel Package.swift Sources Tests

# Also: shared state is kept in ImagoCore's `Locked`, never the standard library's `Mutex`, whose contended
# hand-over ThreadSanitizer cannot see (RELIABILITY.md §13); only the benchmark's baseline may use it.
lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests
	@! grep -rnE '\bMutex *[<(]' Sources --include=*.swift | grep -v '^Sources/imago-bench/' \
		|| { echo "lint: Synchronization.Mutex above; use ImagoCore's Locked (RELIABILITY.md §13)" >&2; exit 1; }

clean:
	rm -rf .build .build-tsan .build-fuzz .build-asan

# The DocC catalog of ImagoCore (Sources/ImagoCore/ImagoCore.docc) with the toolchain's own docc and symbol graphs
# (no plugin). Fails on any warning. Output: .build/docs/ImagoCore.doccarchive.
docs: deps
	bash scripts/docs.sh
