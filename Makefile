# diligence — build, run, test, install. See README.md.

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
# systemd looks for user units of a /usr/local or /usr prefix here; for PREFIX=~/.local,
# ~/.local/share/systemd/user is in its search path too.
USERUNITDIR = $(PREFIX)/lib/systemd/user
ifeq ($(PREFIX),$(HOME)/.local)
USERUNITDIR = $(PREFIX)/share/systemd/user
endif
DOCDIR = $(PREFIX)/share/doc/diligence

SWIFT ?= swift
SWIFT_FLAGS ?=
# Debian packages the build needs (headers found through pkg-config).
BUILD_PACKAGES = libsystemd-dev libsqlite3-dev pkg-config
# Debian packages the tests use.
TEST_PACKAGES = sqlite3 tzdata
# Debian packages `make bench` uses (the references and the runner).
BENCH_PACKAGES = hyperfine socat sqlite3 python3 gcc libc6-dev

SUDO = $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: all build release run test deps test-deps bench bench-deps install uninstall clean

all: build

# Installs the build packages that are missing, and only those.
deps:
	@missing=""; \
	for p in $(BUILD_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing build packages:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

test-deps: deps
	@missing=""; \
	for p in $(TEST_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing test packages:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

# The Swift runtime is linked statically into release binaries: the installed programs then need
# no toolchain at run time, and each holds ~4 MiB less resident memory and starts ~1.5 ms
# sooner (measured by `make bench`, docs/performance.md).
release: deps
	$(SWIFT) build -c release --static-swift-stdlib $(SWIFT_FLAGS)

# Builds (release) and runs the daemon in the foreground with the default paths.
run: release
	exec $$($(SWIFT) build -c release --show-bin-path)/diligenced $(ARGS)

# Every test: unit tests of each module and end-to-end tests of the built binaries.
test: test-deps
	$(SWIFT) build $(SWIFT_FLAGS)
	DILIGENCE_BIN_DIR=$$($(SWIFT) build --show-bin-path) $(SWIFT) test $(SWIFT_FLAGS)

bench-deps: deps
	@missing=""; \
	for p in $(BENCH_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing bench packages:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# Benchmarks (docs/performance.md): release build, the C references, one table on stdout and
# bench/results/latest.json. QUICK=1 shortens the 60 s windows to 10 s for a look while working.
BENCH_HELPERS = .build/bench
bench: bench-deps release
	mkdir -p $(BENCH_HELPERS)
	cc -O2 -Wall -Wextra -o $(BENCH_HELPERS)/ref-server bench/ref-server.c
	cc -O2 -Wall -Wextra -pthread -o $(BENCH_HELPERS)/client bench/client.c -lm
	python3 bench/run.py --bin-dir $$($(SWIFT) build -c release --show-bin-path) --helpers $(BENCH_HELPERS) \
		$(if $(QUICK),--quick)

install: release
	bin=$$($(SWIFT) build -c release --show-bin-path); \
	install -Dm755 $$bin/diligenced $(DESTDIR)$(BINDIR)/diligenced; \
	install -Dm755 $$bin/diligencectl $(DESTDIR)$(BINDIR)/diligencectl
	install -d $(DESTDIR)$(USERUNITDIR)
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/diligenced.service > $(DESTDIR)$(USERUNITDIR)/diligenced.service
	install -m644 systemd/diligenced.socket $(DESTDIR)$(USERUNITDIR)/diligenced.socket
	install -Dm644 contrib/diligenced.conf.example $(DESTDIR)$(DOCDIR)/diligenced.conf.example
	install -Dm644 docs/protocol.md $(DESTDIR)$(DOCDIR)/protocol.md

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/diligenced $(DESTDIR)$(BINDIR)/diligencectl
	rm -f $(DESTDIR)$(USERUNITDIR)/diligenced.service $(DESTDIR)$(USERUNITDIR)/diligenced.socket
	rm -rf $(DESTDIR)$(DOCDIR)

clean:
	$(SWIFT) package clean
