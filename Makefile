# a11yd: the two commands a new user needs are `make run` and `make test`.
SWIFT ?= swift
PREFIX ?= $(HOME)/.local
CONFIGURATION ?= release
BIN = .build/$(CONFIGURATION)
RUN_DIR ?= $(or $(XDG_RUNTIME_DIR),/tmp/a11yd-run-$(shell id -u))
SAY ?= bonjour tout le monde

.PHONY: all deps build run test bench bench-pronunciation clean

all: build

deps:
	scripts/install-deps.sh

build: deps
	$(SWIFT) build -c $(CONFIGURATION)

# Installs what is missing, builds, makes sure a sound server is reachable (starting a private
# PulseAudio with a null sink if none is), starts a11yd in the background and speaks.
run: build
	@eval "$$(scripts/private-pulse.sh)"; \
	export XDG_RUNTIME_DIR="$(RUN_DIR)"; mkdir -p "$$XDG_RUNTIME_DIR"; chmod 700 "$$XDG_RUNTIME_DIR"; \
	if ! $(BIN)/a11ysay --status >/dev/null 2>&1; then \
		nohup $(BIN)/a11yd >"$$XDG_RUNTIME_DIR/a11yd.log" 2>&1 & \
		for i in $$(seq 1 100); do $(BIN)/a11ysay --status >/dev/null 2>&1 && break; sleep 0.05; done; \
		echo "a11yd started (log: $$XDG_RUNTIME_DIR/a11yd.log; stop it with: pkill -x a11yd)"; \
	fi; \
	$(BIN)/a11ysay --wait "$(SAY)" && echo "spoken: $(SAY)"

# Every test: unit tests of the core with fakes, then the engine, the audio output and the
# daemon against the real libespeak-ng and private PulseAudio servers the tests start themselves.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench:
	scripts/install-deps.sh --bench
	$(SWIFT) build -c release
	bench/run.sh

# IPA accuracy per language against independent lexicons (BENCHMARKS.md, "Pronunciation").
bench-pronunciation: deps
	$(SWIFT) build --product a11y-pronounce-bench
	.build/debug/a11y-pronounce-bench bench/pronunciation/data

clean:
	rm -rf .build
