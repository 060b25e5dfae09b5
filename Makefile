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
MANDIR = $(PREFIX)/share/man
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR = $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR = $(PREFIX)/share/fish/vendor_completions.d
# Man pages, written in scdoc (docs/*.scd), built into .build/man/.
MANPAGES = .build/man/diligencectl.1 .build/man/diligenced.8 .build/man/diligenced.conf.5

SWIFT ?= swift
SWIFT_FLAGS ?=
# Debian packages the build needs (headers found through pkg-config).
BUILD_PACKAGES = libsystemd-dev libsqlite3-dev pkg-config scdoc
# Debian packages the tests use (systemd: the private `systemd --user` of the service tests;
# dbus: the private session bus of the notification tests).
TEST_PACKAGES = sqlite3 tzdata systemd dbus
# Status bars and completions (Tests/EndToEndTests/StatusBarTests.swift, ShellCompletionTests.swift):
# a real tmux, the shells that check the completions (bash with and without bash-completion),
# man to render the man pages.
TEST_PACKAGES += tmux bash bash-completion zsh fish man-db
# Debian packages `make bench` uses (the references and the runner).
BENCH_PACKAGES = hyperfine socat sqlite3 python3 gcc libc6-dev

SUDO = $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: all build release run test fuzz deps test-deps bench bench-deps install install-files uninstall verify-units clean man

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

# Every test: unit tests of each module and end-to-end tests of the built binaries. The run has
# an id that every process it starts carries (DILIGENCE_TEST_RUN) and a temporary directory of
# its own; once `swift test` has ended, a second one checks that no process of the run is alive
# and nothing of it is left in /tmp, /var/lib or /dev/shm (Tests/EndToEndTests/LeftoverTests.swift).
test: test-deps
	$(MAKE) -s verify-units
	$(SWIFT) build $(SWIFT_FLAGS)
	@run=$$$$-$$(date +%s); tmp=/tmp/diligence-test-$$run; mkdir -m 755 $$tmp || exit 1; \
	export DILIGENCE_BIN_DIR=$$($(SWIFT) build --show-bin-path) DILIGENCE_TEST_TMP=$$tmp; \
	echo "$(SWIFT) test (run $$run)"; \
	DILIGENCE_TEST_RUN=$$run $(SWIFT) test $(SWIFT_FLAGS); status=$$?; \
	echo "Checking what the run left behind"; \
	DILIGENCE_CHECK_LEFTOVERS_OF=$$run $(SWIFT) test $(SWIFT_FLAGS) --skip-build --filter Leftovers || status=1; \
	rm -rf $$tmp; exit $$status

man: $(MANPAGES)

.build/man/%: docs/%.scd
	@mkdir -p .build/man
	scdoc < $< > $@

# 100 000 random and mutated requests against a daemon (docs/reliability.md); `make test` runs
# 5 000 at the same fixed seed. FUZZ_SEED=<n> tries another seed.
FUZZ_COUNT ?= 100000
fuzz: test-deps
	DILIGENCE_FUZZ_COUNT=$(FUZZ_COUNT) $(if $(FUZZ_SEED),DILIGENCE_FUZZ_SEED=$(FUZZ_SEED)) $(SWIFT) test $(SWIFT_FLAGS) --filter FuzzTests

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
	$(MAKE) install-files BIN_DIR="$$($(SWIFT) build -c release --show-bin-path)"

# Copies what `install` built, without building: BIN_DIR holds diligenced and diligencectl.
# The systemd end-to-end test installs the debug build this way (`swift test` holds the build
# directory, so it cannot run `swift build` itself, and a release build would take minutes).
install-files: man
	@test -x "$(BIN_DIR)/diligenced" -a -x "$(BIN_DIR)/diligencectl" || \
		{ echo "install-files: BIN_DIR=$(BIN_DIR) holds no diligenced and diligencectl"; exit 2; }
	install -Dm755 $(BIN_DIR)/diligenced $(DESTDIR)$(BINDIR)/diligenced
	install -Dm755 $(BIN_DIR)/diligencectl $(DESTDIR)$(BINDIR)/diligencectl
	install -d $(DESTDIR)$(USERUNITDIR)
	for unit in diligenced.service diligenced.socket; do \
		sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' systemd/$$unit > $(DESTDIR)$(USERUNITDIR)/$$unit; \
		chmod 644 $(DESTDIR)$(USERUNITDIR)/$$unit; \
	done
	install -Dm644 contrib/diligenced.conf.example $(DESTDIR)$(DOCDIR)/diligenced.conf.example
	install -Dm644 docs/protocol.md $(DESTDIR)$(DOCDIR)/protocol.md
	install -Dm644 docs/systemd.md $(DESTDIR)$(DOCDIR)/systemd.md
	install -Dm644 .build/man/diligencectl.1 $(DESTDIR)$(MANDIR)/man1/diligencectl.1
	install -Dm644 .build/man/diligenced.8 $(DESTDIR)$(MANDIR)/man8/diligenced.8
	install -Dm644 .build/man/diligenced.conf.5 $(DESTDIR)$(MANDIR)/man5/diligenced.conf.5
	install -Dm644 contrib/completions/diligencectl.bash $(DESTDIR)$(BASHCOMPDIR)/diligencectl
	install -Dm644 contrib/completions/_diligencectl $(DESTDIR)$(ZSHCOMPDIR)/_diligencectl
	install -Dm644 contrib/completions/diligencectl.fish $(DESTDIR)$(FISHCOMPDIR)/diligencectl.fish
	install -Dm644 docs/status-bars.md $(DESTDIR)$(DOCDIR)/status-bars.md
	cp -r contrib/waybar contrib/polybar contrib/i3blocks contrib/i3status-rust contrib/tmux $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/diligenced $(DESTDIR)$(BINDIR)/diligencectl
	rm -f $(DESTDIR)$(USERUNITDIR)/diligenced.service $(DESTDIR)$(USERUNITDIR)/diligenced.socket
	rm -rf $(DESTDIR)$(DOCDIR)
	rm -f $(DESTDIR)$(MANDIR)/man1/diligencectl.1 $(DESTDIR)$(MANDIR)/man8/diligenced.8 $(DESTDIR)$(MANDIR)/man5/diligenced.conf.5
	rm -f $(DESTDIR)$(BASHCOMPDIR)/diligencectl $(DESTDIR)$(ZSHCOMPDIR)/_diligencectl $(DESTDIR)$(FISHCOMPDIR)/diligencectl.fish

# Checks the unit files as systemd reads them (after the same rewriting as install-files);
# systemd-analyze only warns about unknown keys, so any output fails.
verify-units:
	@dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; \
	for unit in diligenced.service diligenced.socket; do \
		sed -e "s|@BINDIR@|$$dir|g" -e 's|@DOCDIR@|/usr/share/doc/diligence|g' systemd/$$unit > $$dir/$$unit; \
	done; \
	cp /bin/true $$dir/diligenced; cp /bin/true $$dir/diligencectl; \
	out=$$(XDG_RUNTIME_DIR=$${XDG_RUNTIME_DIR:-$$dir} systemd-analyze --user verify --man=no \
		$$dir/diligenced.socket $$dir/diligenced.service 2>&1); rc=$$?; \
	if [ $$rc -ne 0 ] || [ -n "$$out" ]; then echo "$$out"; echo "verify-units: systemd-analyze verify complained"; exit 1; fi; \
	echo "verify-units: both units pass systemd-analyze verify"

clean:
	$(SWIFT) package clean
