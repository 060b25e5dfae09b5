// The Debian package, as a user gets it: built by the Makefile's rule from the release programs
// (twice: the bytes must not change), checked by Debian's lintian, installed with `dpkg -i`, its
// socket unit enabled and used under a real `systemd --user`, then purged.
//
// dpkg runs inside the private mount namespace of `UserManager`, where /usr and dpkg's state
// (/var/lib/dpkg, /var/log, /var/cache, /var/lib/man-db) are covered with a throwaway layer: the install is real
// for dpkg, systemd, man and the shells in there, and cannot outlive the test, failing or not.
// The release programs come from `make test`, which builds them before `swift test` (that holds
// the build directory) and names them in DILIGENCE_RELEASE_BIN_DIR.

import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Where `make test` put the release programs (built with the static Swift runtime).
private let releaseBinDir = ProcessInfo.processInfo.environment["DILIGENCE_RELEASE_BIN_DIR"] ?? ""

/// The release: the project's VERSION file, which the programs embed and the package is named after.
private var projectVersion: String { readTextFile(Binaries.packageRoot + "/VERSION").trimmingWhitespace() }

/// What the package must hold, where Debian and systemd look (besides more docs in /usr/share/doc/diligence/).
private let packagedFiles = [
    "/usr/bin/diligenced", "/usr/bin/diligencectl", "/usr/bin/diligence-lock",
    "/usr/lib/systemd/user/diligenced.service", "/usr/lib/systemd/user/diligenced.socket",
    "/usr/share/man/man1/diligencectl.1.gz", "/usr/share/man/man1/diligenced.1.gz", "/usr/share/man/man1/diligence-lock.1.gz",
    "/usr/share/man/man5/diligenced.conf.5.gz",
    "/usr/share/bash-completion/completions/diligencectl", "/usr/share/zsh/vendor-completions/_diligencectl",
    "/usr/share/fish/vendor_completions.d/diligencectl.fish",
    "/usr/share/applications/diligence.desktop", "/usr/share/icons/hicolor/scalable/apps/diligence.svg",
    "/usr/share/metainfo/example.a_seed_6a7d5431.diligence.metainfo.xml",
    "/usr/share/locale/de/LC_MESSAGES/diligence.mo", "/usr/share/locale/zh_CN/LC_MESSAGES/diligence.mo",
    "/usr/share/doc/diligence/copyright", "/usr/share/doc/diligence/changelog.gz", "/usr/share/doc/diligence/README.Debian",
    "/usr/share/doc/diligence/README.md", "/usr/share/doc/diligence/docs/presence.md", "/usr/share/doc/diligence/docs/systemd.md",
    "/usr/share/doc/diligence/examples/diligenced.conf.example",
]

/// Why the package test cannot run here, or nil.
private let packageTestUnavailable: String? = {
    if getuid() != 0 { return "needs root: dpkg -i (in a private mount namespace) and a private systemd --user (CI runs as root)" }
    if let reason = UserManager.unavailable { return reason }
    if releaseBinDir.isEmpty || access(releaseBinDir + "/diligenced", X_OK) != 0 {
        return "no release programs: make test builds them and sets DILIGENCE_RELEASE_BIN_DIR (as root)"
    }
    for program in ["/usr/bin/lintian", "/usr/bin/dpkg-buildpackage", "/usr/bin/dh", "/usr/bin/git"] where access(program, X_OK) != 0 {
        return "\(program) is missing: make test-deps installs it"
    }
    let installed = try? runProgram(
        ["/usr/bin/dpkg-query", "-W", "-f", "${Status}", "diligence"], environment: [:],
        directory: TestRun.temporaryBase)
    if installed?.output.hasSuffix(" installed") == true {
        return "diligence is installed on this machine: the test's install and purge checks assume it is not"
    }
    return nil
}()

extension EndToEnd {
    @Suite(
        "Debian package: make deb, lintian, dpkg -i, the socket unit under systemd --user, dpkg --purge",
        .enabled(if: packageTestUnavailable == nil, "\(packageTestUnavailable ?? "")"))
    struct DebianPackage {
        /// dpkg's name of this machine's architecture (amd64).
        static func architecture() throws -> String {
            try runProgram(["/usr/bin/dpkg", "--print-architecture"], environment: [:], directory: TestRun.temporaryBase).output
        }

        /// The source package (`dpkg-source --build`) of the files git knows, in `directory`: its .dsc.
        static func sourcePackage(into directory: String) throws -> String {
            let tree = directory + "/diligence-\(projectVersion)"
            let run = try runProgram(
                [
                    "/bin/sh", "-c",
                    """
                    mkdir -p '\(tree)' && cd '\(Binaries.packageRoot)' \
                    && git -c safe.directory='*' ls-files -z --cached --others --exclude-standard | xargs -0 cp -d --parents -t '\(tree)' \
                    && cd '\(directory)' && dpkg-source --build 'diligence-\(projectVersion)'
                    """,
                ], environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"], directory: TestRun.temporaryBase, timeout: 120)
            guard run.succeeded else { throw HarnessError("dpkg-source --build: \(run)") }
            return directory + "/diligence_\(projectVersion).dsc"
        }

        /// The packages in `directory`: the .deb first, then the -dbgsym .deb.
        static func packages(in directory: String) -> [String] {
            let arch = (try? architecture()) ?? "?"
            return ["diligence_\(projectVersion)_\(arch).deb", "diligence-dbgsym_\(projectVersion)_\(arch).deb"]
                .map { directory + "/" + $0 }
        }

        /// `make package` (dpkg-buildpackage -b -us -uc -d, packing the release `make test` built) in a
        /// checkout of its own under `directory` (the files git knows, copied), the packages left in
        /// `directory`; `shell` prefixes the command (a umask), `environment` varies the build's surroundings.
        static func makePackage(into directory: String, shell prefix: String, environment: [String: String], log: String) throws
            -> ChildProcess
        {
            let checkout = directory + "/checkout/diligence"
            let command = """
                \(prefix) mkdir -p '\(checkout)' && cd '\(Binaries.packageRoot)' \
                && git -c safe.directory='*' ls-files -z --cached --others --exclude-standard | xargs -0 cp -d --parents -t '\(checkout)' \
                && exec make -s -C '\(checkout)' package BIN_DIR='\(releaseBinDir)' DEB_DIR='\(directory)'
                """
            return try ChildProcess(
                executable: "/bin/sh", arguments: ["-c", command],
                environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 },
                stdoutPath: log, stderrPath: log)
        }

        /// `dpkg-query -W` of `package` inside the namespace: "install ok installed 0.2.0", or what it says.
        static func packageStatus(_ m: UserManager, _ package: String) throws -> String {
            let query = try m.inNamespace(["/usr/bin/dpkg-query", "-W", "-f", "${Status} ${Version}", package])
            return query.succeeded ? query.output : "not known to dpkg (\(query.stderr.trimmingWhitespace()))"
        }

        @Test(
            "make deb twice gives the same bytes; lintian has nothing to say; dpkg -i puts every file where Debian, systemd, man and the shells look; the socket unit runs a phase; dpkg --purge leaves nothing"
        )
        func buildInstallRunPurge() throws {
            let work = TemporaryDirectory("diligence-deb")
            defer { work.remove() }

            // Two builds of the same release programs, the second under another umask and time
            // zone, started while lintian reads the first: the same bytes.
            let first = work.path + "/first"
            let second = work.path + "/second"
            let firstBuild = try Self.makePackage(into: first, shell: "", environment: ["TZ": "UTC"], log: work.path + "/first.log")
            guard let firstStatus = firstBuild.wait(timeout: 300), firstStatus == .exited(0) else {
                firstBuild.killAndReap()
                throw HarnessError("make package failed:\n\(tail(readTextFile(work.path + "/first.log")))")
            }
            let secondBuild = try Self.makePackage(
                into: second, shell: "umask 077;",
                environment: ["TZ": "Pacific/Kiritimati"],
                log: work.path + "/second.log")
            let packages = Self.packages(in: first)
            for package in packages {
                #expect(
                    fileStatus(package) != nil,
                    "make package made no \(package): \(try? FileManager.default.contentsOfDirectory(atPath: first))")
            }

            // lintian --pedantic on what dpkg-buildpackage made (the .changes names the two
            // packages) and on the source package of the same files.
            let changes = first + "/diligence_\(projectVersion)_\(try Self.architecture()).changes"
            let source = try Self.sourcePackage(into: work.path + "/source")
            let lintian = try runProgram(
                [
                    "/usr/bin/lintian", "--allow-root", "--fail-on", "error,warning", "--display-level", ">=pedantic",
                    "--pedantic", "--show-overrides", changes, source,
                ],
                // TMPDIR: lintian's own scratch files (mldbm-*) go with the test's directory.
                environment: ["PATH": "/usr/bin:/bin", "HOME": work.path, "TMPDIR": work.path, "LANG": "C.UTF-8"], directory: work.path,
                timeout: 300)
            let complaints = lintian.stdout.split(separator: "\n").filter { $0.hasPrefix("E: ") || $0.hasPrefix("W: ") }
            #expect(lintian.succeeded && complaints.isEmpty, "lintian: \(lintian)")
            // dpkg-buildflags' hardening reached the link (bind now) and the C parts.
            for tag in ["hardening-no-bindnow", "hardening-no-relro", "hardening-no-pie"] {
                #expect(!lintian.stdout.contains(tag), "lintian: \(tag)\n\(lintian.stdout)")
            }
            // Every override (debian/diligence.lintian-overrides, none today) is still needed.
            #expect(!lintian.stdout.contains("unused-override") && !lintian.stdout.contains("mismatched-override"), "\(lintian.stdout)")
            // The maintainer scripts enable nothing (dh_installsystemduser --no-enable): each user
            // turns the units on; removal turns them off in the running managers.
            let control = try runProgram(
                ["/bin/sh", "-c", "dpkg-deb --ctrl-tarfile '\(packages[0])' | tar -t | sort"],
                environment: ["PATH": "/usr/bin:/bin"], directory: work.path)
            #expect(
                control.stdout == "./\n./control\n./md5sums\n./postinst\n./postrm\n./prerm\n", "control members: \(control)")
            let postinst = try runProgram(
                ["/usr/bin/dpkg-deb", "--info", packages[0], "postinst"], environment: ["PATH": "/usr/bin:/bin"], directory: work.path)
            #expect(
                !postinst.stdout.contains("deb-systemd-helper --user enable 'diligenced.socket' >/dev/null || true\n\t\telse")
                    && postinst.stdout.contains("debian-installed"),
                "postinst enables the units for every user: \(postinst.stdout)")
            // One program under two names: the Swift runtime, linked statically, ships once (it
            // was 18.4 MiB with two programs; 11.2 MiB with flow, interruptions and segments).
            let size = try runProgram(["/usr/bin/dpkg-deb", "-f", packages[0], "Installed-Size"], environment: [:], directory: work.path)
            let kib = try #require(Int(size.output), "Installed-Size: \(size)")
            #expect(kib <= 12 * 1024, "Installed-Size \(kib) KiB, more than 12 MiB")

            guard let secondStatus = secondBuild.wait(timeout: 300), secondStatus == .exited(0) else {
                secondBuild.killAndReap()
                throw HarnessError("the second make package failed:\n\(tail(readTextFile(work.path + "/second.log")))")
            }
            for (a, b) in zip(packages, Self.packages(in: second)) {
                let cmp = try runProgram(["/usr/bin/cmp", a, b], environment: [:], directory: work.path)
                #expect(cmp.succeeded, "two builds differ: \(cmp.stdout)\(cmp.stderr)")
            }

            // The package's contents, from the archive itself.
            let entries = try packageEntries(packages[0], directory: work.path)
            let everyPath = try entries.map(\.path) + packageEntries(packages[1], directory: work.path).map(\.path)
            let files = Set(entries.filter { !$0.mode.hasPrefix("d") }.map(\.path))
            for path in packagedFiles { #expect(files.contains(path), "the package has no \(path)") }
            let unexpected = files.subtracting(packagedFiles)
                .filter { !$0.hasPrefix("/usr/share/doc/diligence/") && $0 != "/usr/share/lintian/overrides/diligence" }
            #expect(unexpected.isEmpty, "files where they were not expected: \(unexpected.sorted())")

            // Installed (in the namespace): dpkg, then systemd, man and each shell find them.
            let m = try UserManager(systemWide: false, throwaway: ["/usr", "/var/lib/dpkg", "/var/log", "/var/cache", "/var/lib/man-db"])
            // Without man-db's auto-update flag its dpkg trigger does not rebuild the whole index
            // (16 s per dpkg run here), as in Debian's container images; `man -w` does not need it.
            #expect(try m.inNamespace(["/bin/rm", "-f", "/var/lib/man-db/auto-update"], asRoot: true).succeeded)
            #expect(try Self.packageStatus(m, "diligence").hasPrefix("not known"), "diligence is installed before the test installed it")
            let existedBefore = try existing(everyPath, in: m)
            var installed = false
            defer {
                // A failed test must not leave the package either (the namespace goes too, and its layer).
                if installed {
                    _ = try? m.inNamespace(["/usr/bin/dpkg", "--purge", "diligence-dbgsym", "diligence"], asRoot: true, timeout: 120)
                }
            }
            installed = true
            let install = try m.inNamespace(["/usr/bin/dpkg", "-i"] + packages, asRoot: true, timeout: 180)
            #expect(install.succeeded, "dpkg -i: \(install)")
            #expect(try Self.packageStatus(m, "diligence") == "install ok installed \(projectVersion)")
            #expect(try Self.packageStatus(m, "diligence-dbgsym") == "install ok installed \(projectVersion)")
            #expect(readTextFile("/usr/bin/diligencectl").isEmpty, "the install reached the machine outside the namespace")

            let listed = try m.inNamespace(["/usr/bin/dpkg", "-L", "diligence"]).stdout.split(separator: "\n").map(String.init)
            for path in packagedFiles { #expect(listed.contains(path), "dpkg -L diligence lists no \(path)") }

            // systemd --user looks for packaged user units in /usr/lib/systemd/user.
            let unitPaths = try m.inNamespace(["/usr/bin/systemd-analyze", "--user", "unit-paths"]).stdout
            #expect(
                unitPaths.split(separator: "\n").contains("/usr/lib/systemd/user"),
                "systemd --user does not look in /usr/lib/systemd/user: \(unitPaths)")
            // man finds each page; each shell finds the completion in its vendor directory.
            for (section, page) in [("1", "diligencectl"), ("5", "diligenced.conf"), ("1", "diligenced")] {
                let manPath = try m.inNamespace(["/usr/bin/man", "-w", section, page])
                #expect(manPath.output == "/usr/share/man/man\(section)/\(page).\(section).gz", "man -w \(section) \(page): \(manPath)")
            }
            let bash = try m.inNamespace([
                "/bin/bash", "-c",
                ". /usr/share/bash-completion/bash_completion; __load_completion diligencectl && complete -p diligencectl",
            ])
            #expect(bash.succeeded && bash.output.contains("diligencectl"), "bash-completion does not load it: \(bash)")
            let zsh = try m.inNamespace([
                "/usr/bin/zsh", "-f", "-c",
                "autoload -Uz compinit; compinit -u -d \(m.daemon.root)/zcompdump; print -r -- ${_comps[diligencectl]}",
            ])
            #expect(zsh.output == "_diligencectl", "zsh's compinit does not find it: \(zsh)")
            let fish = try m.inNamespace(["/usr/bin/fish", "-c", "complete -C 'diligencectl sta'"])
            #expect(fish.stdout.split(separator: "\n").contains { $0.hasPrefix("start") }, "fish does not find it: \(fish)")
            // One program under two names; its debug info found by its build id (gdb, coredumpctl).
            let link = try m.inNamespace(["/usr/bin/readlink", "/usr/bin/diligencectl"])
            #expect(link.output == "diligenced", "/usr/bin/diligencectl should be a link to diligenced: \(link)")
            for program in ["diligenced"] {
                let notes = try m.inNamespace(["/usr/bin/readelf", "-n", "/usr/bin/" + program]).stdout
                let id = try #require(
                    notes.split(separator: "\n").first { $0.contains("Build ID:") }?.split(separator: " ").last.map(String.init))
                let debug = "/usr/lib/debug/.build-id/\(id.prefix(2))/\(id.dropFirst(2)).debug"
                let sections = try m.inNamespace(["/usr/bin/readelf", "-S", "-W", debug])
                #expect(
                    sections.succeeded && sections.stdout.contains(".debug_info"),
                    "no debug info for /usr/bin/\(program) at \(debug): \(sections)")
            }

            // What README.Debian tells a user to run, then a short phase through the installed client.
            try m.mustSystemctl("enable", "--now", "diligenced.socket")
            #expect(try m.property("FragmentPath", of: "diligenced.socket") == "/usr/lib/systemd/user/diligenced.socket")
            let ctl = { (arguments: [String]) in try m.inNamespace(["/usr/bin/diligencectl"] + arguments) }
            let version = try ctl(["version"])
            #expect(
                version.stdout == "diligencectl \(projectVersion) (protocol 1)\ndiligenced \(projectVersion) (protocol 1)\n",
                "\(version)\n\(m.diagnostics)")
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(try m.mainPID())/exe")) ?? "?"
            #expect(exe == "/usr/bin/diligenced", "the service runs \(exe)")
            #expect(try ctl(["task", "add", "Packaged", "--work", "1s"]).succeeded)
            let start = try ctl(["start", "Packaged"])
            #expect(start.succeeded, "\(start)\n\(m.diagnostics)")
            try waitUntil("the 1 s work phase completed", timeout: 10, diagnostics: m.diagnostics) {
                try ctl(["status", "--json"]).stdout.contains("\"pending\"")
            }
            let history = try ctl(["history", "--task", "Packaged", "--json"])
            #expect(history.succeeded && history.stdout.contains("\"completed\""), "the session was not recorded: \(history)")

            // Purged while the daemon runs: the package's prerm finds the user's manager by its
            // socket in /run/user/UID (no logind here to list the users), stops and disables the
            // units there, and says so. /run/user of the namespace is a tmpfs of its own.
            let uid = m.user.uid
            let runUser = try m.inNamespace(
                [
                    "/bin/sh", "-c",
                    "mount -t tmpfs tmpfs /run/user && mkdir -m 700 /run/user/\(uid) && mount --bind '\(m.daemon.runtimeDir)' /run/user/\(uid)",
                ], asRoot: true)
            try #require(runUser.succeeded, "/run/user/\(uid) for the manager: \(runUser)")
            let daemonPID = try m.mainPID()
            #expect(daemonPID > 0)
            let purge = try m.inNamespace(["/usr/bin/dpkg", "--purge", "diligence-dbgsym", "diligence"], asRoot: true, timeout: 120)
            installed = !purge.succeeded
            #expect(purge.succeeded, "dpkg --purge: \(purge)")
            #expect(
                purge.stdout.contains("diligence: stopped and disabled diligenced.socket diligenced.service for uid \(uid)\n"),
                "the removal does not say it stopped the user's units: \(purge)")
            #expect(
                purge.stdout.contains("systemctl --user disable --now diligenced.socket diligenced.service"),
                "the removal does not print the command for other users: \(purge)")
            #expect(kill(daemonPID, 0) != 0, "the daemon (pid \(daemonPID)) still runs from the deleted program")
            let links = try m.inNamespace(["/bin/sh", "-c", "find '\(m.daemon.configHome)/systemd/user' -name 'diligenced.*' -type l"])
            #expect(links.succeeded && links.output.isEmpty, "links left in ~/.config/systemd/user: \(links)")
            #expect(try Self.packageStatus(m, "diligence").hasPrefix("not known"), "dpkg still knows diligence")
            let left = try existing(everyPath, in: m).subtracting(existedBefore)
            #expect(left.isEmpty, "left after dpkg --purge: \(left.sorted())")
            let info = try m.inNamespace(["/bin/sh", "-c", "ls /var/lib/dpkg/info/ | grep '^diligence' || true"])
            #expect(info.output.isEmpty, "dpkg's records left: \(info.output)")
            // The postrm's daemon-reload: the manager has forgotten the units without being asked.
            #expect(try m.property("LoadState", of: "diligenced.socket") == "not-found", "\(m.diagnostics)")
        }
    }
}

/// Why the clean-root test cannot run here, or nil: it needs what the package test needs, and
/// mmdebstrap, piuparts and Debian's mirror (as this machine's apt is configured).
private let cleanRootUnavailable: String? = {
    if let reason = packageTestUnavailable { return reason }
    for program in ["/usr/bin/mmdebstrap", "/usr/sbin/piuparts", "/usr/bin/unshare"] where access(program, X_OK) != 0 {
        return "\(program) is missing: make test-deps installs it"
    }
    return aptSources.isEmpty ? "no apt sources in /etc/apt/sources.list or /etc/apt/sources.list.d" : nil
}()

/// This machine's apt sources, which mmdebstrap gives the clean root.
private let aptSources: [String] = {
    let dir = "/etc/apt/sources.list.d"
    let parts = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
        .filter { $0.hasSuffix(".list") || $0.hasSuffix(".sources") }.map { dir + "/" + $0 }
    return (["/etc/apt/sources.list"] + parts).filter { (fileStatus($0)?.st_size ?? 0) > 0 }
}()

extension EndToEnd {
    @Suite("Debian package in a clean bookworm root: apt install, use, remove, purge; piuparts")
    struct CleanRoot {
        @Test(
            "a root mmdebstrap made (no Swift toolchain): apt installs the .deb, diligencectl version, man and completions work, remove and purge leave nothing; piuparts passes",
            .enabled(if: cleanRootUnavailable == nil, "\(cleanRootUnavailable ?? "")"))
        func installUseRemovePurge() throws {
            let work = TemporaryDirectory("diligence-clean-root")
            defer { work.remove() }
            let build = try EndToEnd.DebianPackage.makePackage(
                into: work.path + "/deb", shell: "", environment: [:], log: work.path + "/build.log")
            guard build.wait(timeout: 300) == .exited(0) else {
                build.killAndReap()
                throw HarnessError("make package failed:\n\(tail(readTextFile(work.path + "/build.log")))")
            }
            let deb = EndToEnd.DebianPackage.packages(in: work.path + "/deb")[0]

            // The heavy part, once: a minimal bookworm (apt and what is essential), as a tarball
            // piuparts takes too.
            let base = work.path + "/bookworm.tar.gz"
            let mmdebstrap = try runProgram(
                ["/usr/bin/mmdebstrap", "--variant=apt", "--mode=root", "--quiet", "bookworm", base] + aptSources,
                environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR": work.path], directory: work.path, timeout: 300)
            try #require(mmdebstrap.succeeded, "mmdebstrap: \(mmdebstrap)")

            let steps = work.path + "/steps"
            mkdir(steps, 0o700)
            let check = try runProgram(
                [
                    "/usr/bin/unshare", "--mount", "--propagation", "private", Binaries.packageRoot + "/.ci/clean-root-check", base, deb,
                    steps,
                ],
                environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"], directory: work.path, timeout: 300)
            #expect(check.succeeded, "\(check)")
            func step(_ name: String) -> (rc: Int?, out: String) {
                (Int(readTextFile("\(steps)/\(name).rc").trimmingWhitespace()), readTextFile("\(steps)/\(name).out"))
            }
            #expect(step("toolchain").out.contains("No such file"), "a Swift toolchain in the clean root: \(step("toolchain"))")
            #expect(step("recommends").rc == 0, "the Recommends cannot be installed: \(step("recommends"))")
            #expect(step("install").rc == 0, "apt install ./\(deb): \(step("install"))")
            // No daemon runs: the client's version, exit 3 and the hint for a package install.
            let version = step("version")
            #expect(version.rc == 3 && version.out.hasPrefix("diligencectl \(projectVersion) (protocol 1)\n"), "\(version)")
            #expect(version.out.contains("systemctl --user enable --now diligenced.socket"), "\(version)")
            let man = step("man")
            #expect(
                man.rc == 0
                    && man.out == """
                        /usr/share/man/man1/diligencectl.1.gz
                        /usr/share/man/man1/diligenced.1.gz
                        /usr/share/man/man5/diligenced.conf.5.gz
                        /usr/share/man/man1/diligence-lock.1.gz

                        """,
                "\(man)")
            #expect(step("manrender").out.contains("diligenced"), "\(step("manrender"))")
            #expect(step("bash").rc == 0 && step("bash").out.contains("diligencectl"), "\(step("bash"))")
            #expect(step("remove").rc == 0, "\(step("remove"))")
            let removed = step("removed").out
            #expect(removed.contains("No such file") && removed.contains("config-files"), "after remove: \(removed)")
            #expect(step("purge").rc == 0, "\(step("purge"))")
            let purged = step("purged").out
            #expect(!purged.contains("installed") && !purged.contains("config-files"), "after purge: \(purged)")
            #expect(purged.contains("No such file"), "/usr/share/doc/diligence is left: \(purged)")

            // Debian's own check of install, remove and purge in a root of the same base.
            let piuparts = try runProgram(
                [
                    "/usr/sbin/piuparts", "--basetgz=" + base, "--keep-sources-list", "--distribution=bookworm",
                    "--tmpdir=" + work.path, "--log-file=" + work.path + "/piuparts.log", deb,
                ],
                environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR": work.path], directory: work.path, timeout: 600)
            #expect(piuparts.succeeded, "piuparts: \(tail(readTextFile(work.path + "/piuparts.log")))")
        }
    }
}

/// The entries of a package (`dpkg-deb --contents`): mode and absolute path; every one owned by root.
private func packageEntries(_ package: String, directory: String) throws -> [(mode: String, path: String)] {
    let contents = try runProgram(["/usr/bin/dpkg-deb", "--contents", package], environment: [:], directory: directory)
    guard contents.succeeded else { throw HarnessError("\(contents)") }
    let lines = contents.stdout.split(separator: "\n")
    #expect(lines.allSatisfy { $0.contains(" root/root ") }, "an entry not owned by root:\n\(contents.stdout)")
    // "drwxr-xr-x root/root 0 2026-12-01 04:00 ./usr/bin/" and "lrwxrwxrwx ... ./a -> b"
    return lines.map { line in
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        var path = String(fields.count >= 6 ? fields[5] : "")
        if path.hasPrefix(".") { path.removeFirst() }
        if path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return (String(fields.first ?? ""), path)
    }
}

/// Those of `paths` that exist in the manager's mount namespace (the test's own view is the machine's).
private func existing(_ paths: [String], in m: UserManager) throws -> Set<String> {
    let run = try m.inNamespace(["/bin/sh", "-c", #"for p; do if [ -e "$p" ] || [ -L "$p" ]; then echo "$p"; fi; done"#, "sh"] + paths)
    guard run.succeeded else { throw HarnessError("\(run)") }
    return Set(run.stdout.split(separator: "\n").map(String.init))
}

extension EndToEnd {
    /// What the package's sources promise, checked without building it (no root, no release).
    @Suite("Debian source: licence, copyright")
    struct DebianSource {
        /// The paragraphs of a deb822 file (debian/copyright, debian/control), blank-line separated.
        static func paragraphs(_ text: String) -> [String] {
            text.components(separatedBy: "\n\n").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
        }

        @Test("LICENSE is the Apache License 2.0 word for word; debian/copyright is DEP-5 and says Apache-2.0; README names it")
        func licence() throws {
            let common = "/usr/share/common-licenses/Apache-2.0"
            let text = readFileBytes(common)
            try #require(!text.isEmpty, "\(common) is missing (base-files ships it)")
            #expect(readFileBytes(PackageFiles.path("LICENSE")) == text, "LICENSE is not the text of \(common)")

            let copyright = Self.paragraphs(PackageFiles.read("debian/copyright"))
            let header = try #require(copyright.first)
            #expect(
                header.hasPrefix("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"),
                "debian/copyright does not start with DEP-5's Format: line: \(header)")
            let files = try #require(copyright.first { $0.hasPrefix("Files: *\n") }, "no Files: * paragraph: \(copyright)")
            #expect(files.contains("\nCopyright: "), "\(files)")
            #expect(files.hasSuffix("\nLicense: Apache-2.0"), "Files: * is not under Apache-2.0: \(files)")
            let licence = try #require(
                copyright.first { $0.hasPrefix("License: Apache-2.0\n") }, "no stand-alone License: Apache-2.0 paragraph")
            #expect(licence.contains(common), "the License paragraph does not point at \(common): \(licence)")
            #expect(licence.contains("http://www.apache.org/licenses/LICENSE-2.0"), "\(licence)")
            #expect(!PackageFiles.read("debian/copyright").contains("passed on"), "the old no-licence paragraph is still there")

            let readme = PackageFiles.read("README.md")
            let section = try #require(readme.range(of: "\n## Licence\n"), "README.md has no Licence section")
            let body = readme[section.upperBound...].prefix { $0 != "#" }
            #expect(body.contains("Apache License 2.0") && body.contains("[LICENSE](LICENSE)"), "README's Licence section: \(body)")
        }

        /// The package names of one relation field of debian/control's binary paragraph, by alternative.
        static func relation(_ field: String) throws -> [[String]] {
            let binary = try #require(paragraphs(PackageFiles.read("debian/control")).first { $0.hasPrefix("Package: diligence\n") })
            let lines = binary.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
            let start = try #require(lines.firstIndex { $0.hasPrefix(field + ":") }, "debian/control has no \(field)")
            let value = ([String(lines[start].dropFirst(field.count + 1))] + lines[(start + 1)...].prefix { $0.hasPrefix(" ") })
                .joined(separator: " ")
            return value.split(separator: ",").map { $0.split(separator: "|").map { String($0).trimmingWhitespace() } }
        }

        @Test("the man pages are dated by the latest debian/changelog entry, however .build/man was made before")
        func manPageDates() throws {
            let work = TemporaryDirectory("diligence-man-date")
            defer { work.remove() }
            let environment = ["PATH": "/usr/bin:/bin", "HOME": work.path, "LC_ALL": "C.UTF-8"]
            let stamp = try runProgram(
                ["/usr/bin/dpkg-parsechangelog", "-l", PackageFiles.path("debian/changelog"), "-S", "Timestamp"],
                environment: environment, directory: work.path)
            let epoch = try #require(Int(stamp.output), "\(stamp)")
            let date = try runProgram(["/bin/date", "-u", "-d", "@\(epoch)", "+%Y-%m-%d"], environment: environment, directory: work.path)
            // Built as a developer's tree has them (no SOURCE_DATE_EPOCH), then as dpkg-buildpackage
            // asks for them (SOURCE_DATE_EPOCH set): the pages must say the changelog's date both times.
            for extra in [[:], ["SOURCE_DATE_EPOCH": String(epoch)]] {
                let man = try runProgram(
                    ["/usr/bin/make", "-s", "-C", Binaries.packageRoot, "man"], environment: environment.merging(extra) { $1 },
                    directory: work.path, timeout: 60)
                try #require(man.succeeded, "make man: \(man)")
                for page in ["diligencectl.1", "diligenced.1", "diligenced.conf.5", "diligence-lock.1"] {
                    let heading = readTextFile(PackageFiles.path(".build/man/" + page)).split(separator: "\n").first {
                        $0.hasPrefix(".TH ")
                    }
                    #expect(heading?.contains("\"\(date.output)\"") == true, "\(page): \(heading ?? "no .TH"), not dated \(date.output)")
                }
            }
        }

        /// The string literals of the program's sources (messages and log lines), comments left out.
        static var sourceStrings: [(file: String, text: String)] {
            let enumerator = FileManager.default.enumerator(atPath: PackageFiles.path("Sources"))
            var strings: [(String, String)] = []
            let literal = try! NSRegularExpression(pattern: #""(?:[^"\\]|\\.)*""#)
            while let file = enumerator?.nextObject() as? String {
                guard file.hasSuffix(".swift") else { continue }
                for line in PackageFiles.read("Sources/" + file).split(separator: "\n").map(String.init)
                where !line.trimmingWhitespace().hasPrefix("//") {
                    for match in literal.matches(in: line, range: NSRange(line.startIndex..., in: line)) {
                        strings.append((file, String(line[Range(match.range, in: line)!])))
                    }
                }
            }
            return strings
        }

        /// Matches of `pattern` in `text` (the whole match).
        static func matches(_ pattern: String, in text: String) -> [String] {
            let regex = try! NSRegularExpression(pattern: pattern)
            return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range, in: text)!]) }
        }

        @Test(
            "every file a man page, unit, example or message of the program names is one the package installs; the desktop file's icon, the AppStream file, the locker, the examples"
        )
        func documentationPointers() throws {
            let work = TemporaryDirectory("diligence-layout")
            defer { work.remove() }
            // The package's layout, as debian/rules makes it (the debug programs stand in).
            let stage = work.path + "/root"
            let install = try runProgram(
                [
                    "/usr/bin/make", "-s", "-C", Binaries.packageRoot, "install-files", "DESTDIR=" + stage, "PREFIX=/usr",
                    "ZSHCOMPDIR=/usr/share/zsh/vendor-completions", "BIN_DIR=" + Binaries.directory, "STRIP_PROGRAMS=no",
                ], environment: ["PATH": "/usr/bin:/bin", "HOME": work.path], directory: work.path, timeout: 120)
            try #require(install.succeeded, "make install-files: \(install)")
            let shipped = ["/usr/share/man/man1", "/usr/share/man/man5", "/usr/lib/systemd/user", "/usr/share/doc/diligence/examples"]
                .flatMap { dir in
                    (FileManager.default.enumerator(atPath: stage + dir)?.allObjects as? [String] ?? [])
                        .map { dir + "/" + $0 }.filter { fileStatus(stage + $0).map { $0.st_mode & S_IFMT == S_IFREG } ?? false }
                }
            #expect(shipped.count >= 10, "\(shipped)")
            // The man pages as a reader sees them: roff's font changes and zero-width escapes out.
            var texts = shipped.map { path in
                let text = readTextFile(stage + path)
                guard path.hasPrefix("/usr/share/man/") else { return (path, text) }
                return (
                    path,
                    text.replacingOccurrences(of: "\\&", with: "")
                        .replacingOccurrences(of: #"\\f[BIRP]"#, with: "", options: .regularExpression)
                )
            }
            texts += Self.sourceStrings.map { ("Sources/" + $0.file, $0.text) }
            for (file, text) in texts {
                for path in Self.matches(#"/usr/share/doc/diligence/[A-Za-z0-9_./-]*[A-Za-z0-9_]"#, in: text) {
                    #expect(fileStatus(stage + path) != nil, "\(file) names \(path), which the package does not install")
                }
                // A pointer into the source tree ("docs/presence.md") that is not an installed path.
                for pointer in Self.matches(#"(?<![A-Za-z0-9_/.-])docs/[a-z-]+\.md"#, in: text) {
                    Issue.record("\(file) points at \(pointer), a file of the source tree")
                }
                for page in Self.matches(#"diligence[a-z.-]*\([158]\)"#, in: text) {
                    let name = page.prefix { $0 != "(" }
                    let section = page.dropFirst(name.count + 1).prefix(1)
                    #expect(
                        fileStatus(stage + "/usr/share/man/man\(section)/\(name).\(section)") != nil,
                        "\(file) names the man page \(page), which the package does not install")
                }
            }

            // Polish: the icon the desktop file names is shipped; the AppStream file passes Debian's
            // appstreamcli and names programs that are there; the xss-lock locker runs from PATH.
            let desktop = readTextFile(stage + "/usr/share/applications/diligence.desktop")
            let icon = try #require(desktop.split(separator: "\n").first { $0.hasPrefix("Icon=") }?.dropFirst(5))
            #expect(fileStatus(stage + "/usr/share/icons/hicolor/scalable/apps/\(icon).svg") != nil, "no icon \(icon) in the package")
            let metainfo = (try? FileManager.default.contentsOfDirectory(atPath: stage + "/usr/share/metainfo")) ?? []
            let record = try #require(metainfo.first { $0.hasSuffix(".metainfo.xml") }, "no AppStream file in /usr/share/metainfo")
            let validate = try runProgram(
                ["/usr/bin/appstreamcli", "validate", "--no-net", "--no-color", stage + "/usr/share/metainfo/" + record],
                environment: ["PATH": "/usr/bin:/bin", "HOME": work.path, "LANG": "C.UTF-8"], directory: work.path, timeout: 60)
            #expect(validate.succeeded, "appstreamcli validate: \(validate)")
            let xml = readTextFile(stage + "/usr/share/metainfo/" + record)
            #expect(xml.contains(#"<component type="console-application">"#), "\(xml)")
            for binary in Self.matches(#"(?<=<binary>)[a-z-]+(?=</binary>)"#, in: xml) {
                #expect(fileStatus(stage + "/usr/bin/" + binary) != nil, "the AppStream file names /usr/bin/\(binary), not in the package")
            }
            let locker = try #require(fileStatus(stage + "/usr/bin/diligence-lock"), "no /usr/bin/diligence-lock")
            #expect(locker.st_mode & 0o777 == 0o755)
            #expect(fileStatus(stage + "/usr/share/man/man1/diligence-lock.1") != nil)
            for example in ["diligenced.conf.example", "swayidle/config", "waybar/config.jsonc", "tmux/diligence.tmux.conf"] {
                #expect(fileStatus(stage + "/usr/share/doc/diligence/examples/" + example) != nil, "no example \(example)")
            }
        }

        @Test("Recommends holds what notifications and sound need, each package diligencectl doctor tells to install")
        func recommends() throws {
            let recommends = try Self.relation("Recommends")
            let doctor = PackageFiles.read("Sources/DiligenceDaemon/Doctor.swift")
            // Each group: one Recommends entry, whose alternatives are the packages doctor names.
            let needs = [
                ["dbus-user-session"], ["dunst", "mako-notifier", "xfce4-notifyd", "notification-daemon"],
                ["sound-theme-freedesktop"], ["pipewire-bin", "pulseaudio-utils", "alsa-utils"],
            ]
            for alternatives in needs {
                #expect(recommends.contains(alternatives), "Recommends has no \(alternatives.joined(separator: " | ")): \(recommends)")
                for package in alternatives where package != "notification-daemon" {
                    #expect(doctor.contains(package), "diligencectl doctor does not name \(package)")
                }
            }
            let suggests = try Self.relation("Suggests").flatMap { $0 }
            #expect(suggests.contains("syncthing"), "Suggests: \(suggests)")
        }
    }
}
