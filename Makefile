# diligence — build, run, test, install. See README.md.

# Install layout: every directory `install-files` and `uninstall` use, decided here once.
# PREFIX as zsh and fish pass it (`PREFIX=~/.local` keeps its ~) and with trailing slashes is
# normalized; anything else that is not an absolute path is refused (check-prefix).
PREFIX ?= /usr/local
DESTDIR ?=
PREFIX_GIVEN := $(PREFIX)
override PREFIX := $(shell printf '%s\n' '$(PREFIX_GIVEN)' | sed -e 's|^~$$|$(HOME)|' -e 's|^~/|$(HOME)/|' -e 's|//*$$||')
BINDIR = $(PREFIX)/bin
# systemd --user finds the units of a /usr or /usr/local install in PREFIX/lib/systemd/user, and
# those of a home install (PREFIX=~/.local) in $XDG_DATA_HOME/systemd/user
# (~/.local/share/systemd/user); it does not look in other prefixes (install-files says so).
USERUNITDIR = $(PREFIX)/lib/systemd/user
ifeq ($(PREFIX),$(HOME)/.local)
USERUNITDIR = $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/systemd/user
endif
DOCDIR = $(PREFIX)/share/doc/diligence
# README.md and docs/ keep their places under DOCDIR, so that their links between them hold.
DOCS = $(wildcard docs/*.md) docs/report-page.png
# Configurations to copy from (status bars, presence lines, the settings), under DOCDIR/examples.
EXAMPLEDIR = $(DOCDIR)/examples
EXAMPLES = diligenced.conf.example waybar/config.jsonc waybar/style.css polybar/config.ini i3blocks/config \
	i3status-rust/config.toml tmux/diligence.tmux.conf swayidle/config taskwarrior/on-modify.diligence
MANDIR = $(PREFIX)/share/man
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR = $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR = $(PREFIX)/share/fish/vendor_completions.d
APPDIR = $(PREFIX)/share/applications
# The icon the desktop file and the notifications name (Icon=diligence), and the AppStream record.
ICONDIR = $(PREFIX)/share/icons/hicolor/scalable/apps
METAINFODIR = $(PREFIX)/share/metainfo
METAINFO = example.a_seed_6a7d5431.diligence.metainfo.xml
# Debug info of the stripped programs, by build id, as Debian keeps it (/usr/lib/debug/.build-id/).
DEBUGDIR = $(PREFIX)/lib/debug
# STRIP_PROGRAMS=no installs the program as built: debian/rules leaves stripping to dh_strip.
STRIP_PROGRAMS ?= yes
# Installed, diligencectl is a link to diligenced (one program, two names): the Swift runtime both
# link statically ships once.
INSTALLED_PROGRAM = diligenced
UNITS = diligenced.service diligenced.socket
# Directories a real install (no DESTDIR) made, for `make uninstall` to remove when empty.
MADE_DIRS = $(DOCDIR)/installed-directories
# The client's catalogs (docs/translating.md): po/<lang>.po, compiled by `make mo` into
# .build/locale/<lang>/LC_MESSAGES/diligence.mo (where a build tree's client finds them),
# installed under LOCALEDIR, where the installed client looks (PREFIX/share/locale).
LOCALEDIR = $(PREFIX)/share/locale
LANGUAGES = $(sort $(basename $(notdir $(wildcard po/*.po))))
MO_FILES = $(foreach lang,$(LANGUAGES),.build/locale/$(lang)/LC_MESSAGES/diligence.mo)
# The files whose tr(), trPlural() and trNoop() texts `make pot` extracts.
MESSAGE_SOURCES = $(sort $(wildcard Sources/DiligenceClient/*.swift Sources/DiligenceProtocol/*.swift Sources/DiligenceDaemon/*.swift Sources/DiligenceDaemon/*/*.swift))
# Man pages, written in scdoc (docs/*.scd), built into .build/man/.
MANPAGES = .build/man/diligencectl.1 .build/man/diligenced.1 .build/man/diligenced.conf.5 .build/man/diligence-lock.1

SWIFT ?= swift
SWIFT_FLAGS ?=
# Release builds are reproducible: the same sources give the same programs wherever they are
# checked out (`make deb`). The debug info names files relative to the checkout (prefix maps); it
# leaves out the links to the build's clang module cache, whose directory name hashes the build's
# paths (breadcrumbs: of no use outside the build anyway); and the per-object hash that only
# serves incremental LLVM builds, which covers the object's absolute path, is left zero.
RELEASE_FLAGS = --static-swift-stdlib -Xswiftc -file-prefix-map -Xswiftc $(CURDIR)=. -Xcc -ffile-prefix-map=$(CURDIR)=. \
	-Xswiftc -Xfrontend -Xswiftc -no-clang-module-breadcrumbs -Xswiftc -Xfrontend -Xswiftc -disable-incremental-llvm-codegen
# Debian's hardening (dpkg-buildflags with hardening=+all: fortify, stack protector, relro, bind
# now) in every release build, so that `make test` tests what `make deb` packs: the C flags go to
# clang, which compiles the C modules' headers (-Xcc), the linker's -Wl,a,b as -Xlinker a -Xlinker b.
comma := ,
BUILDFLAGS = DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get
HARDENING_FLAGS = $(foreach flag,$(shell $(BUILDFLAGS) CPPFLAGS) $(shell $(BUILDFLAGS) CFLAGS),-Xcc $(flag)) \
	$(foreach flag,$(subst $(comma), ,$(patsubst -Wl$(comma)%,%,$(filter -Wl$(comma)%,$(shell $(BUILDFLAGS) LDFLAGS)))),-Xlinker $(flag))
RELEASE_FLAGS += $(HARDENING_FLAGS)
# Where `make deb` writes the packages.
DEB_DIR ?= .build/deb
# Debian packages the build needs (headers found through pkg-config).
BUILD_PACKAGES = libsystemd-dev libsqlite3-dev pkg-config scdoc
# gettext: msgfmt compiles the catalogs (make mo), msgcmp checks them complete (make check-po).
BUILD_PACKAGES += gettext
# Debian packages the tests use (systemd: the private `systemd --user` of the service tests;
# dbus: the private session bus of the notification tests).
TEST_PACKAGES = sqlite3 tzdata systemd dbus
# python3 runs .ci/function-length in `make lint`, and the other user's fake server in ClientTrustTests.
TEST_PACKAGES += python3
# Status bars and completions (Tests/EndToEndTests/StatusBarTests.swift, ShellCompletionTests.swift):
# a real tmux, the shells that check the completions (bash with and without bash-completion),
# man, groff and mandoc to render and lint the man pages.
TEST_PACKAGES += tmux bash bash-completion zsh fish man-db groff-base mandoc
# The simulated-suspend tests build an LD_PRELOAD library with the system's cc (Tests/FakeClock).
TEST_PACKAGES += gcc libc6-dev
# dunst, a real notification server, on a display of its own (NotificationTests.swift).
TEST_PACKAGES += dunst xvfb
# The focus guard's servers (FocusServers.swift): mako and swaync under a headless sway, swaync's
# and GNOME's settings in a real dconf read back with gsettings.
TEST_PACKAGES += sway mako-notifier sway-notification-center dconf-service dconf-cli gsettings-desktop-schemas libglib2.0-bin
# The report page in a real browser, and its HTML and SVG checked as XML (ReportPageTests.swift).
TEST_PACKAGES += chromium libxml2-utils
# The package test (Tests/EndToEndTests/PackageTests.swift) builds the package with debhelper,
# checks it with Debian's lintian, validates its AppStream file with appstream's appstreamcli,
# installs it into a clean bookworm root that mmdebstrap makes, and runs piuparts on it.
TEST_PACKAGES += lintian debhelper appstream mmdebstrap piuparts
# git lists the files the package test copies into checkouts of their own (PackageTests.swift).
TEST_PACKAGES += git
# Two real Syncthing instances sync a folder of journals in a private network namespace, whose
# loopback iproute2's `ip` brings up (Tests/EndToEndTests/SyncthingTests.swift).
TEST_PACKAGES += syncthing iproute2
# locales: localedef makes the zh_CN.UTF-8 and de_DE.UTF-8 locales the translated golden tests
# run in (Tests/EndToEndTests/TranslationTests.swift); test-deps generates them.
TEST_PACKAGES += locales
TEST_LOCALES = zh_CN de_DE
# The Timewarrior mirror drives Debian's real timew in a private TIMEWARRIORDB (TimewarriorTests.swift).
TEST_PACKAGES += timewarrior
# Debian's Taskwarrior in a private data directory: start by ID, task start/stop/annotate, and
# the contrib on-modify hook (Tests/EndToEndTests/TaskwarriorTests.swift).
TEST_PACKAGES += taskwarrior
# Debian packages `make deb` uses: dpkg-buildpackage and debhelper (debian/rules); readelf,
# objcopy and strip (also `make install`).
DEB_PACKAGES = dpkg-dev debhelper binutils
# Debian packages `make bench` uses (the references and the runner).
BENCH_PACKAGES = hyperfine socat sqlite3 python3 gcc libc6-dev

SUDO = $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: all build release run test mutate lint format fuzz golden deps pot mo check-po test-deps deb-deps bench bench-helpers bench-compare bench-deps install install-files uninstall check-prefix verify-units deb package clean man

all: build

# Installs those of the Debian packages $(1) that are missing, and only those ($(2): what for).
define install-missing
	@missing=""; \
	for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing $(2) packages:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
endef

deps:
	$(call install-missing,$(BUILD_PACKAGES),build)

test-deps: deps deb-deps
	$(call install-missing,$(TEST_PACKAGES),test)
	@for locale in $(TEST_LOCALES); do \
		locale -a | grep -qx "$$locale.utf8" || { echo "localedef $$locale.UTF-8"; $(SUDO) localedef -i $$locale -f UTF-8 $$locale.UTF-8; } || exit 1; \
	done

deb-deps: deps
	$(call install-missing,$(DEB_PACKAGES),packaging)

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

# The Swift runtime is linked statically into release binaries: the installed programs then need
# no toolchain at run time, and each holds ~4 MiB less resident memory and starts ~1.5 ms
# sooner (measured by `make bench`, docs/performance.md).
release: deps
	$(SWIFT) build -c release $(RELEASE_FLAGS) $(SWIFT_FLAGS)

# Builds (release) and runs the daemon in the foreground with the default paths.
run: release
	exec $$($(SWIFT) build -c release --show-bin-path)/diligenced $(ARGS)

# Every test: unit tests of each module and end-to-end tests of the built binaries. The run has
# an id that every process it starts carries (DILIGENCE_TEST_RUN) and a temporary directory of
# its own; once `swift test` has ended, a second one checks that no process of the run is alive
# and nothing of it is left in /tmp, /var/lib or /dev/shm (Tests/EndToEndTests/LeftoverTests.swift).
# As root, the release programs are built first for the package test (PackageTests.swift: it
# installs the .deb, which needs root; `swift test` holds the build directory, so it cannot build).
# Skipped tests are listed after the run with their reasons, and the count of tests that ran
# (Swift Testing's own summary counts skipped tests as passed); under CI=true a skip fails the run
# (.ci/test-skips). The first pass leaves out Leftovers, which runs only in the second.
# DILIGENCE_UPDATE_GOLDEN is cleared: golden files are rewritten by `make golden` only.
# The tree's format is .swift-format's (the toolchain's swift-format); `make format` applies it.
SWIFT_SOURCES = Package.swift Sources Tests
# No function in Sources longer than 60 lines (.ci/function-length, tested on itself first); the
# side-by-side table's logic of `make bench-compare` (bench/run.py --self-test, no timing).
lint:
	$(SWIFT) format lint --strict --parallel -r $(SWIFT_SOURCES)
	python3 .ci/function-length --self-test
	python3 .ci/function-length Sources
	python3 .ci/empty-closure-slots --self-test
	python3 .ci/empty-closure-slots
	python3 .ci/extract-messages --self-test
	python3 bench/run.py --self-test

format:
	$(SWIFT) format format -i --parallel -r $(SWIFT_SOURCES)

# Everything a run makes lives under one directory, removed at its end: the tests' own files
# (DILIGENCE_TEST_TMP, which the Leftovers check wants empty) and, through TMPDIR, the temporary
# files of the toolchain (swift-driver's TemporaryDirectory.*) and of the programs the tests run.
test: test-deps
	@run=$$$$-$$(date +%s); top=/tmp/diligence-test-$$run; tmp=$$top/files; \
	mkdir -m 755 $$top $$tmp $$top/scratch || exit 1; trap 'rm -rf '$$top EXIT; \
	export TMPDIR=$$top/scratch; unset DILIGENCE_UPDATE_GOLDEN; \
	python3 .ci/test-skips --self-test >/dev/null || exit 1; \
	$(MAKE) -s lint && $(MAKE) -s check-po && $(MAKE) -s verify-units && $(SWIFT) build $(SWIFT_FLAGS) \
		$(if $(filter 0,$(shell id -u)),&& $(SWIFT) build -c release $(RELEASE_FLAGS) $(SWIFT_FLAGS)) || exit 1; \
	export DILIGENCE_BIN_DIR=$$($(SWIFT) build --show-bin-path) DILIGENCE_TEST_TMP=$$tmp; \
	$(if $(filter 0,$(shell id -u)),export DILIGENCE_RELEASE_BIN_DIR=$$($(SWIFT) build -c release --show-bin-path);) \
	echo "$(SWIFT) test (run $$run)"; \
	{ DILIGENCE_TEST_RUN=$$run $(SWIFT) test $(SWIFT_FLAGS) --skip Leftovers 2>&1; echo $$? > $$top/status; } | tee $$top/test.log; \
	status=$$(cat $$top/status); python3 .ci/test-skips $$top/test.log || status=1; \
	echo "Checking what the run left behind"; \
	{ DILIGENCE_CHECK_LEFTOVERS_OF=$$run $(SWIFT) test $(SWIFT_FLAGS) --skip-build --filter Leftovers 2>&1; echo $$? > $$top/status; } \
		| tee $$top/leftovers.log; \
	[ "$$(cat $$top/status)" = 0 ] || status=1; python3 .ci/test-skips $$top/leftovers.log || status=1; \
	exit $$status

# Deliberate mutations of core rules (a session rule, the long break after N rounds, the start
# of a day, the merge's tie rule), each of which a test must kill; sources restored always
# (.ci/mutate, docs/e2e-tests.md). Not part of `make test`: a build per mutation.
mutate: deps
	SWIFT="$(SWIFT) $(SWIFT_FLAGS)" python3 .ci/mutate $(MUTATIONS)

man: $(MANPAGES)

# The template of the catalogs from the sources (xgettext reads no Swift: .ci/extract-messages).
# After it, `msgmerge --update po/<lang>.po po/diligence.pot` brings each catalog along.
pot:
	python3 .ci/extract-messages --pot po/diligence.pot $(MESSAGE_SOURCES)

# The catalogs, compiled; msgfmt --check refuses a broken one (a format, a header, a plural).
mo: $(MO_FILES)
.build/locale/%/LC_MESSAGES/diligence.mo: po/%.po
	@mkdir -p $(dir $@)
	msgfmt --check -o $@.new $< && mv $@.new $@

# Every catalog complete for the template (msgcmp: no msgid of po/diligence.pot untranslated or
# fuzzy; msgfmt --statistics says so), each translation with its msgid's {placeholders}.
check-po: mo
	@python3 .ci/extract-messages --check-placeholders $(wildcard po/*.po)
	@for po in $(wildcard po/*.po); do \
		msgcmp $$po po/diligence.pot || { echo "check-po: $$po lacks translations of po/diligence.pot (make pot; msgmerge)"; exit 1; }; \
		stats=$$(LC_ALL=C msgfmt --check --statistics -o /dev/null $$po 2>&1) || { echo "$$stats"; exit 1; }; \
		case "$$stats" in *untranslated*|*fuzzy*) echo "check-po: $$po: $$stats"; exit 1 ;; esac; \
		echo "check-po: $$po: $$stats"; \
	done

# Rewrites the golden files of the terminal pictures (Tests/DiligencectlTests/Pictures/*.txt)
# from the code as it is; review the diff before committing it.
golden:
	DILIGENCE_UPDATE_GOLDEN=1 $(SWIFT) test $(SWIFT_FLAGS) --filter PictureTests

# scdoc writes a paragraph macro after each heading and before each heading, where no
# paragraph follows, and one at the end of each indented block: the first are dropped, the
# last becomes a blank line after the block, so that `mandoc -T lint` has nothing to say.
# Tests/EndToEndTests/StatusBarTests.swift renders each page with groff -ww and mandoc.
# A page's date is the latest debian/changelog entry's (scdoc takes SOURCE_DATE_EPOCH), not the
# day it was made: a tree whose pages were made earlier packs the same bytes as a fresh checkout.
# The pages depend on a stamp named after that date, so a new entry (or pages made before the
# date was fixed) makes them anew; up-to-date pages are not rewritten (a user may install from
# a tree only root can write).
MAN_DATE_EPOCH := $(or $(shell dpkg-parsechangelog -l debian/changelog -S Timestamp 2>/dev/null),unknown)
MAN_DATE_STAMP = .build/man/.date-$(MAN_DATE_EPOCH)
$(MAN_DATE_STAMP):
	@mkdir -p .build/man && rm -f .build/man/.date-* && touch $@
.build/man/%: docs/%.scd $(MAN_DATE_STAMP)
	@mkdir -p .build/man
	SOURCE_DATE_EPOCH=$(if $(filter unknown,$(MAN_DATE_EPOCH)),$$(date +%s),$(MAN_DATE_EPOCH)) scdoc < $< | awk '{ line[NR] = $$0 } END { \
		for (i = 1; i <= NR; i++) { \
			if (line[i] == ".P" && (last ~ /^\.(SH|SS|TH|P)( |$$)/ || line[i + 1] ~ /^\.(SH|SS)( |$$)/ || i == NR)) continue; \
			if (line[i] == ".P" && line[i + 1] ~ /^\.RE( |$$)/) { print line[i + 1]; line[i + 1] = ".sp" } \
			else print line[i]; \
			last = line[i] } }' > $@.new && mv $@.new $@

# 100 000 random and mutated requests against a daemon (docs/reliability.md); `make test` runs
# 5 000 at the same fixed seed. FUZZ_SEED=<n> tries another seed.
FUZZ_COUNT ?= 100000
fuzz: test-deps
	DILIGENCE_FUZZ_COUNT=$(FUZZ_COUNT) $(if $(FUZZ_SEED),DILIGENCE_FUZZ_SEED=$(FUZZ_SEED)) $(SWIFT) test $(SWIFT_FLAGS) --filter FuzzTests

bench-deps: deps
	$(call install-missing,$(BENCH_PACKAGES),bench)

# Benchmarks (docs/performance.md): release build and its package (whose sizes are reported), the
# C references, one table on stdout and bench/results/latest.json. QUICK=1 shortens the 60 s windows to 10 s for a look while working.
BENCH_HELPERS = .build/bench
bench: bench-deps deb bench-helpers
	python3 bench/run.py --bin-dir $$($(SWIFT) build -c release --show-bin-path) --helpers $(BENCH_HELPERS) \
		--deb-dir $(DEB_DIR) $(if $(QUICK),--quick)

bench-helpers: bench-deps
	mkdir -p $(BENCH_HELPERS)
	cc -O2 -Wall -Wextra -o $(BENCH_HELPERS)/ref-server bench/ref-server.c
	cc -O2 -Wall -Wextra -pthread -o $(BENCH_HELPERS)/client bench/client.c -lm

# Side by side (docs/performance.md): REF's release programs and this tree's, every figure of
# bench/run.py for both in one run, alternated REF, new, REF, new... (ROUNDS each, default 3, 1
# with QUICK=1), medians; prints `figure | REF | new | new/old` and writes
# bench/results/compare-<REF>.json. REF (default: the last tag reachable from HEAD) is checked out
# in a worktree of its own under .build/bench-ref/<commit> and built there with this Makefile's
# release flags; checkout and build stay there for the next run to reuse (`git worktree remove
# --force .build/bench-ref/<commit>` frees them; a run prunes the registration of a removed one). An old build's diligencectl is used as its build made it: an
# executable of its own, or, where its build made none, a link to diligenced (one program).
BENCH_REF_DIR = $(CURDIR)/.build/bench-ref
REF ?= $(shell git describe --tags --abbrev=0 2>/dev/null)
bench-compare: bench-deps release bench-helpers
	@test -n "$(REF)" || { echo "bench-compare: no tag to compare with: give REF=<commit>" >&2; exit 2; }
	@sha=$$(git rev-parse --verify --quiet "$(REF)^{commit}") || \
		{ echo "bench-compare: REF=$(REF) is not a commit of this repository" >&2; exit 2; }; \
	dir=$(BENCH_REF_DIR)/$$sha; git worktree prune; \
	if [ ! -e $$dir/.git ]; then rm -rf $$dir; git worktree add --detach $$dir $$sha || exit 1; fi; \
	(cd $$dir && $(SWIFT) build -c release $(subst $(CURDIR),$$dir,$(RELEASE_FLAGS)) $(SWIFT_FLAGS)) || exit 1; \
	old=$$(cd $$dir && $(SWIFT) build -c release --show-bin-path) || exit 1; \
	if [ ! -e $$old/diligencectl ]; then ln -s diligenced $$old/diligencectl; fi; \
	python3 bench/run.py --bin-dir $$($(SWIFT) build -c release --show-bin-path) --helpers $(BENCH_HELPERS) \
		--compare-bin-dir $$old --ref-name "$(REF)" --json bench/results/compare-$(REF).json \
		$(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(QUICK),--quick)

install: check-prefix release
	$(MAKE) install-files BIN_DIR="$$($(SWIFT) build -c release --show-bin-path)"

# Refuses a PREFIX that is still not an absolute path after the normalization above.
check-prefix:
	@case '$(PREFIX)' in \
		/*) ;; \
		'~'*) echo "PREFIX=$(PREFIX_GIVEN): ~user is not expanded here; give the directory itself (PREFIX=/home/NAME/.local)."; exit 2 ;; \
		*) echo "PREFIX=$(PREFIX_GIVEN) is not an absolute path; give one such as /usr/local or ~/.local."; exit 2 ;; \
	esac

# Copies what `install` built, without building: BIN_DIR holds diligenced and diligencectl.
# The systemd end-to-end tests install the debug build this way (`swift test` holds the build
# directory, so it cannot run `swift build` itself, and a release build would take minutes).
# Each program is stripped as Debian's dh_strip does, its debug info kept by build id in
# $(DEBUGDIR)/.build-id/xx/rest.debug with a debuglink to it (gdb finds it there for PREFIX=/usr;
# for another prefix: gdb -iex 'set debug-file-directory $(DEBUGDIR)').
install-files: check-prefix man mo
	@test -x "$(BIN_DIR)/diligenced" -a -x "$(BIN_DIR)/diligencectl" || \
		{ echo "install-files: BIN_DIR=$(BIN_DIR) holds no diligenced and diligencectl"; exit 2; }
	@made=""; for dir in $(BINDIR) $(DEBUGDIR)/.build-id $(USERUNITDIR) $(DOCDIR) $(MANDIR)/man1 $(MANDIR)/man5 \
		$(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR) $(APPDIR) $(ICONDIR) $(METAINFODIR) \
		$(foreach lang,$(LANGUAGES),$(LOCALEDIR)/$(lang)/LC_MESSAGES); do \
		while [ "$$dir" != / ] && [ ! -d "$(DESTDIR)$$dir" ]; do made="$$made $$dir"; dir=$$(dirname "$$dir"); done; \
	done; \
	for program in $(INSTALLED_PROGRAM); do \
		install -Dm755 $(BIN_DIR)/$$program $(DESTDIR)$(BINDIR)/$$program || exit 1; \
		[ "$(STRIP_PROGRAMS)" = yes ] || continue; \
		id=$$(readelf -n $(DESTDIR)$(BINDIR)/$$program | sed -n 's/^ *Build ID: *//p'); \
		[ -n "$$id" ] || { echo "install-files: $$program has no build id"; exit 2; }; \
		idprefix=$$(echo $$id | cut -c1-2); debug=$(DESTDIR)$(DEBUGDIR)/.build-id/$$idprefix/$$(echo $$id | cut -c3-).debug; \
		[ -d "$(DESTDIR)$(DEBUGDIR)/.build-id/$$idprefix" ] || made="$$made $(DEBUGDIR)/.build-id/$$idprefix"; \
		install -d $$(dirname $$debug) && \
		objcopy --only-keep-debug --compress-debug-sections $(DESTDIR)$(BINDIR)/$$program $$debug && chmod 644 $$debug && \
		strip --remove-section=.comment --remove-section=.note $(DESTDIR)$(BINDIR)/$$program && \
		objcopy --add-gnu-debuglink=$$debug $(DESTDIR)$(BINDIR)/$$program || exit 1; \
	done; \
	ln -sf $(INSTALLED_PROGRAM) $(DESTDIR)$(BINDIR)/diligencectl || exit 1; \
	install -d $(DESTDIR)$(USERUNITDIR) && \
	for unit in $(UNITS); do \
		sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' systemd/$$unit > $(DESTDIR)$(USERUNITDIR)/$$unit && \
		chmod 644 $(DESTDIR)$(USERUNITDIR)/$$unit || exit 1; \
	done; \
	install -Dm644 README.md $(DESTDIR)$(DOCDIR)/README.md && \
	for doc in $(DOCS); do install -Dm644 $$doc $(DESTDIR)$(DOCDIR)/$$doc || exit 1; done && \
	for example in $(EXAMPLES); do install -Dm644 contrib/$$example $(DESTDIR)$(EXAMPLEDIR)/$$example || exit 1; done && \
	install -Dm755 contrib/xss-lock/diligence-lock $(DESTDIR)$(BINDIR)/diligence-lock && \
	for page in $(MANPAGES); do \
		name=$$(basename $$page); section=$${name##*.}; install -d $(DESTDIR)$(MANDIR)/man$$section && \
		sed 's|@DOCDIR@|$(DOCDIR)|g' $$page > $(DESTDIR)$(MANDIR)/man$$section/$$name && \
		chmod 644 $(DESTDIR)$(MANDIR)/man$$section/$$name || exit 1; \
	done && \
	install -Dm644 contrib/completions/diligencectl.bash $(DESTDIR)$(BASHCOMPDIR)/diligencectl && \
	install -Dm644 contrib/completions/_diligencectl $(DESTDIR)$(ZSHCOMPDIR)/_diligencectl && \
	install -Dm644 contrib/completions/diligencectl.fish $(DESTDIR)$(FISHCOMPDIR)/diligencectl.fish && \
	install -Dm644 contrib/diligence.desktop $(DESTDIR)$(APPDIR)/diligence.desktop && \
	install -Dm644 contrib/icons/diligence.svg $(DESTDIR)$(ICONDIR)/diligence.svg && \
	install -Dm644 contrib/appstream/$(METAINFO) $(DESTDIR)$(METAINFODIR)/$(METAINFO) || exit 1; \
	for lang in $(LANGUAGES); do \
		install -Dm644 .build/locale/$$lang/LC_MESSAGES/diligence.mo $(DESTDIR)$(LOCALEDIR)/$$lang/LC_MESSAGES/diligence.mo || exit 1; \
	done; \
	if [ -z "$(DESTDIR)" ]; then \
		{ cat $(MADE_DIRS) 2>/dev/null; for dir in $$made; do echo $$dir; done; } | sort -u > $(MADE_DIRS).new && \
		mv $(MADE_DIRS).new $(MADE_DIRS); \
	fi; \
	case '$(USERUNITDIR)' in \
		/usr/lib/*|/usr/local/lib/*|$(or $(XDG_DATA_HOME),$(HOME)/.local/share)/*) ;; \
		*) echo "Note: systemd --user does not look in $(USERUNITDIR); link the units:"; \
		   echo "  systemctl --user link $(USERUNITDIR)/diligenced.service $(USERUNITDIR)/diligenced.socket" ;; \
	esac

# The Debian package, built as Debian builds it: `dpkg-buildpackage -b -us -uc -d` runs
# debian/rules (debhelper; -d: the Swift toolchain is no Debian package), which builds the
# release and lays it out with install-files. dpkg-buildpackage writes into the checkout's parent
# directory; the files are moved from there into $(DEB_DIR): diligence_<version>_<arch>.deb,
# diligence-dbgsym_<version>_<arch>.deb (the debug info), .buildinfo and .changes. The version
# is the file VERSION (debian/changelog needs an entry for it); SOURCE_DATE_EPOCH (dpkg takes
# the date of the latest debian/changelog entry) fixes every time stamp: two checkouts of the
# same sources give the same bytes.
DEB_ARCH = $(shell dpkg --print-architecture)
DEB_VERSION = $(shell cat VERSION)
DEB_FILES = diligence_$(DEB_VERSION)_$(DEB_ARCH).deb diligence-dbgsym_$(DEB_VERSION)_$(DEB_ARCH).deb \
	diligence_$(DEB_VERSION)_$(DEB_ARCH).buildinfo diligence_$(DEB_VERSION)_$(DEB_ARCH).changes
define build-deb
	$(1) dpkg-buildpackage -b -us -uc -d
	@mkdir -p $(DEB_DIR) && mv $(addprefix ../,$(DEB_FILES)) $(DEB_DIR)/ && \
		for file in $(DEB_FILES); do echo $(DEB_DIR)/$$file; done
endef

deb: deb-deps
	$(call build-deb,)

# Packs programs already built, without building (the package test: `swift test` holds the
# build directory): BIN_DIR holds diligenced and diligencectl.
package:
	@test -x "$(BIN_DIR)/diligenced" -a -x "$(BIN_DIR)/diligencectl" || \
		{ echo "package: BIN_DIR=$(BIN_DIR) holds no diligenced and diligencectl"; exit 2; }
	$(call build-deb,DILIGENCE_PREBUILT_BIN_DIR=$(BIN_DIR))

# Removes what install-files put there. A real install (no DESTDIR) first turns the user units
# off when this user's manager runs these very files (disable --now: the socket and the
# service, their symlinks in ~/.config/systemd/user), and says what to run otherwise; then
# removes the files, the debug info, and the directories the install made once they are empty.
uninstall: check-prefix
	@if [ -z "$(DESTDIR)" ]; then \
		if [ "$$(systemctl --user show -p FragmentPath --value diligenced.service 2>/dev/null)" = "$(USERUNITDIR)/diligenced.service" ]; then \
			echo "systemctl --user disable --now $(UNITS)"; \
			systemctl --user disable --now $(UNITS) || exit 1; \
		else \
			echo "Note: each user who enabled diligence should run: systemctl --user disable --now $(UNITS)"; \
		fi; \
	fi; \
	rm -f $(DESTDIR)$(BINDIR)/diligencectl $(DESTDIR)$(BINDIR)/diligence-lock; \
	for program in $(INSTALLED_PROGRAM); do \
		[ -f $(DESTDIR)$(BINDIR)/$$program ] || continue; \
		id=$$(readelf -n $(DESTDIR)$(BINDIR)/$$program | sed -n 's/^ *Build ID: *//p'); \
		[ -z "$$id" ] || rm -f $(DESTDIR)$(DEBUGDIR)/.build-id/$$(echo $$id | cut -c1-2)/$$(echo $$id | cut -c3-).debug; \
		rm -f $(DESTDIR)$(BINDIR)/$$program; \
	done; \
	for unit in $(UNITS); do rm -f $(DESTDIR)$(USERUNITDIR)/$$unit; done; \
	rm -f $(DESTDIR)$(MANDIR)/man1/diligencectl.1 $(DESTDIR)$(MANDIR)/man1/diligenced.1 $(DESTDIR)$(MANDIR)/man1/diligence-lock.1 \
		$(DESTDIR)$(MANDIR)/man5/diligenced.conf.5; \
	rm -f $(DESTDIR)$(BASHCOMPDIR)/diligencectl $(DESTDIR)$(ZSHCOMPDIR)/_diligencectl $(DESTDIR)$(FISHCOMPDIR)/diligencectl.fish; \
	rm -f $(DESTDIR)$(APPDIR)/diligence.desktop $(DESTDIR)$(ICONDIR)/diligence.svg $(DESTDIR)$(METAINFODIR)/$(METAINFO); \
	for lang in $(LANGUAGES); do rm -f $(DESTDIR)$(LOCALEDIR)/$$lang/LC_MESSAGES/diligence.mo; done; \
	made=$$(cat $(DESTDIR)$(MADE_DIRS) 2>/dev/null); \
	rm -rf $(DESTDIR)$(DOCDIR); \
	for dir in $$(printf '%s\n' $$made | sort -r); do rmdir "$(DESTDIR)$$dir" 2>/dev/null || true; done; \
	if [ -z "$(DESTDIR)" ] && systemctl --user show-environment >/dev/null 2>&1; then systemctl --user daemon-reload; fi

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
