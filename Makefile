# Imago — every entry point installs what it needs first (scripts/install-deps.sh), then builds and runs.
SWIFT ?= swift
JOBS ?= 2

.PHONY: all deps build test test-tsan demo bench fuzz format lint clean

all: build

deps:
	@bash scripts/install-deps.sh tmux:/usr/bin/tmux

build: deps
	$(SWIFT) build -j $(JOBS)

# The whole suite (Swift Testing + XCTest). Network tests use only loopback servers the tests start themselves.
test: deps
	$(SWIFT) build --build-tests -j $(JOBS)
	$(SWIFT) test --skip-build

# The suite under ThreadSanitizer, in its own build folder.
test-tsan: deps
	$(SWIFT) build --build-tests -j $(JOBS) --sanitize=thread --build-path .build-tsan
	$(SWIFT) test --skip-build --sanitize=thread --build-path .build-tsan

demo: deps
	$(SWIFT) build -j $(JOBS) --product imago
	$$($(SWIFT) build --show-bin-path)/imago demo

bench: deps
	bash scripts/bench.sh

fuzz: deps
	bash scripts/fuzz.sh

format:
	$(SWIFT) format --in-place --recursive --parallel Package.swift Sources Tests

lint:
	$(SWIFT) format lint --recursive Package.swift Sources Tests

clean:
	rm -rf .build .build-tsan .build-fuzz
