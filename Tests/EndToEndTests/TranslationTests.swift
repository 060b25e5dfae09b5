import DiligenceJSON
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real client in zh_CN.UTF-8 and de_DE.UTF-8 (`make test-deps` generates both locales),
/// with the catalogs of po/ compiled by msgfmt for the test (DILIGENCE_LOCALEDIR), against the
/// golden files in Translations/; LC_ALL=C against the English the client printed before it
/// was translated (C-*.txt, written by that client). A running phase's clock reads `##:##`.
struct TranslatedClient {
    static let goldenDirectory = Binaries.packageRoot + "/Tests/EndToEndTests/Translations"
    static let languages = [("zh_CN", "zh_CN.UTF-8"), ("de", "de_DE.UTF-8")]
    let d: DaemonUnderTest
    let localeDirectory: String

    init(launch: Bool) throws {
        for (_, locale) in Self.languages {
            let listed = try runProgram(["/usr/bin/locale", "-a"], environment: [:], directory: "/")
            let name = locale.replacingOccurrences(of: "UTF-8", with: "utf8")
            guard listed.stdout.split(separator: "\n").contains(Substring(name)) else {
                throw HarnessError("the locale \(locale) is missing: `make test-deps` generates it (localedef)")
            }
        }
        d = try DaemonUnderTest(launch: launch, prefix: "dlg-i18n")
        localeDirectory = d.root + "/locale"
        for (language, _) in Self.languages {
            let directory = localeDirectory + "/\(language)/LC_MESSAGES"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let compiled = try runProgram(
                ["/usr/bin/msgfmt", "--check", "-o", directory + "/diligence.mo", Binaries.packageRoot + "/po/\(language).po"],
                environment: [:], directory: d.root)
            guard compiled.succeeded else { throw HarnessError("msgfmt \(language).po: \(compiled)") }
        }
    }

    /// The environment of a client in `locale` (LC_ALL=C for "C"); help's socket is a fixed one.
    func environment(_ locale: String, fixedSocket: Bool = false) -> [String: String] {
        var environment = d.environment
        environment["DILIGENCE_LOCALEDIR"] = localeDirectory
        environment["LANG"] = locale == "C" ? "C.UTF-8" : locale
        if locale == "C" { environment["LC_ALL"] = "C" }
        if fixedSocket { environment["XDG_RUNTIME_DIR"] = "/run/diligence-golden" }
        return environment
    }

    /// `diligencectl ARGS` in `locale`; `help`: without --socket, the socket help names fixed.
    func ctl(_ locale: String, _ arguments: [String], help: Bool = false) throws -> CtlResult {
        try d.ctl(arguments: arguments, socketFlag: !help, environment: environment(locale, fixedSocket: help))
    }

    /// DILIGENCE_UPDATE_GOLDEN=1 (never under CI) rewrites the zh_CN and de files: review the diff.
    static let updating =
        ProcessInfo.processInfo.environment["DILIGENCE_UPDATE_GOLDEN"] == "1"
        && ["", "0", "false"].contains(ProcessInfo.processInfo.environment["CI"] ?? "")

    /// `text` (its clocks masked for a running phase) against Translations/NAME.txt. The C files
    /// are the English of the client before translations, never rewritten.
    static func expectGolden(
        _ name: String, _ text: String, maskingClocks: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let masked = maskingClocks ? text.replacing(#/[0-9]{1,2}:[0-9]{2}/#, with: "##:##") : text
        if updating, !name.hasPrefix("C-") || !FileManager.default.fileExists(atPath: goldenDirectory + "/\(name).txt") {
            try? masked.write(toFile: goldenDirectory + "/\(name).txt", atomically: true, encoding: .utf8)
            return
        }
        let expected = try? String(contentsOfFile: goldenDirectory + "/\(name).txt", encoding: .utf8)
        #expect(expected == masked, "Translations/\(name).txt differs; got:\n\(masked)", sourceLocation: sourceLocation)
    }
}

extension EndToEnd {
    @Suite("Translations: the client in Chinese and German, English in C, machine output the same")
    struct Translations {
        @Test("the --help of the program, start, stop and status in zh_CN, de, and C as before")
        func help() throws {
            let t = try TranslatedClient(launch: false)
            for command in ["program", "start", "stop", "status"] {
                let arguments = (command == "program" ? [] : [command]) + ["--help"]
                for (language, locale) in TranslatedClient.languages + [("C", "C")] {
                    let r = try t.ctl(locale, arguments, help: true)
                    #expect(r.exitCode == 0, "\(r)")
                    #expect(r.stdout.utf8.count > 100, "\(r)")
                    TranslatedClient.expectGolden("\(language)-help-\(command)", r.stdout)
                }
            }
        }

        @Test("status idle and running in zh_CN, de and C; --json the same bytes in every locale")
        func status() throws {
            let t = try TranslatedClient(launch: true)
            for state in ["idle", "running"] {
                if state == "running" { #expect(try t.ctl("C", ["start", "Work"]).exitCode == 0) }
                for (language, locale) in TranslatedClient.languages + [("C", "C")] {
                    let r = try t.ctl(locale, ["status"])
                    #expect(r.exitCode == 0 && r.stderr.isEmpty, "\(r)")
                    TranslatedClient.expectGolden("\(language)-status-\(state)", r.stdout, maskingClocks: true)
                }
            }
            // Paused, the status holds still: the answers compare byte for byte.
            #expect(try t.ctl("C", ["pause"]).exitCode == 0)
            let english = try t.ctl("C", ["status", "--json"])
            #expect(english.exitCode == 0 && english.stdout.contains("\"paused\""), "\(english)")
            for (_, locale) in TranslatedClient.languages {
                #expect(try t.ctl(locale, ["status", "--json"]).stdout == english.stdout)
            }
        }

        @Test("watch --json prints the same bytes in zh_CN as in C")
        func watchJSON() throws {
            let t = try TranslatedClient(launch: true)
            #expect(try t.ctl("C", ["start", "Work"]).exitCode == 0)
            #expect(try t.ctl("C", ["pause"]).exitCode == 0)
            var lines: [String] = []
            // Paused, no tick follows the first line: the watcher is ended once it printed it.
            for locale in ["C", "zh_CN.UTF-8"] {
                let out = t.d.root + "/watch-\(locale).out"
                let watcher = try ChildProcess(
                    executable: try Binaries.client, arguments: ["--socket", t.d.socketPath, "watch", "--json"],
                    environment: t.environment(locale), stdoutPath: out, stderrPath: t.d.root + "/watch.err")
                defer { watcher.killAndReap() }
                let deadline = monotonicNow() + 5
                while !readTextFile(out).contains("\n"), monotonicNow() < deadline { sleepFor(0.02) }
                let first = readTextFile(out).split(separator: "\n").first.map(String.init) ?? ""
                #expect(first.hasPrefix("{"), "watch --json in \(locale): \(readTextFile(out)) \(readTextFile(t.d.root + "/watch.err"))")
                lines.append(first)
            }
            #expect(lines[0] == lines[1], "watch --json differs between C and zh_CN:\n\(lines.joined(separator: "\n"))")
        }

        @Test("the client's errors in zh_CN and de: not running, unknown command, a usage mistake")
        func errors() throws {
            let t = try TranslatedClient(launch: false)
            let cases: [(name: String, arguments: [String], code: Int32)] = [
                ("unreachable", ["status"], 3), ("unknown-command", ["statsu"], 2), ("usage", ["status", "extra"], 2),
            ]
            for (name, arguments, code) in cases {
                for (language, locale) in TranslatedClient.languages + [("C", "C")] {
                    let r = try t.ctl(locale, arguments)
                    #expect(r.exitCode == code, "\(r)")
                    let bin = URL(fileURLWithPath: Binaries.directory).resolvingSymlinksInPath().path
                    let text = r.stderr.replacingOccurrences(of: t.d.root, with: "ROOT").replacingOccurrences(of: bin, with: "BIN")
                        .replacingOccurrences(of: Binaries.packageRoot, with: "PACKAGE")
                    TranslatedClient.expectGolden("\(language)-error-\(name)", text)
                }
            }
        }

        @Test("the daemon in zh_CN and de: a work end's notification, its buttons and STATUS=; C as before")
        func daemonTexts() throws {
            for (language, locale) in TranslatedClient.languages + [("C", "C")] {
                let text = try Self.withDaemon(locale) { d, server in try Self.workEndTranscript(d, server) }
                TranslatedClient.expectGolden("\(language)-daemon-work-end", text, maskingClocks: true)
            }
        }

        @Test("the daemon in zh_CN and de: overtime's notification and its paused STATUS=; C as before")
        func daemonOvertime() throws {
            for (language, locale) in TranslatedClient.languages + [("C", "C")] {
                let text = try Self.withDaemon(locale) { d, server in
                    try d.addTask("Writing", [("work", .string("1s")), ("overtime", .bool(true))])
                    try d.call("start", [("task", .string("Writing"))])
                    guard let call = server.waitForCall(1, timeout: 5) else {
                        throw HarnessError("no Notify call when overtime began in \(locale)\n\(d.diagnostics)")
                    }
                    let pausedAt = d.notify.count
                    try d.call("pause")
                    let paused = d.notify.waitFor(prefix: "STATUS=", after: pausedAt, timeout: 5)?.line ?? "no STATUS= after pause"
                    return ["summary: " + call.summary, "body: " + call.body, paused].joined(separator: "\n") + "\n"
                }
                TranslatedClient.expectGolden("\(language)-daemon-overtime", text, maskingClocks: true)
            }
        }

        /// `body` with a daemon in `locale` (LANG, LC_ALL=C for "C"), as the user manager's
        /// environment would start it, on a private bus with the recording notification server.
        static func withDaemon(_ locale: String, _ body: (DaemonUnderTest, NotificationServer) throws -> String) throws -> String {
            let t = try TranslatedClient(launch: false)
            let d = t.d
            for (name, value) in t.environment(locale) where ["LANG", "LC_ALL", "DILIGENCE_LOCALEDIR"].contains(name) {
                d.daemonEnvironment[name] = value
            }
            let bus = try SessionBus(directory: d.root)
            let server = try NotificationServer(busAddress: bus.address)
            defer {
                server.stop()
                withExtendedLifetime(bus) {}
            }
            d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            try d.start()
            return try body(d, server)
        }

        /// STATUS= idle, the work end's Notify call, STATUS= of the waiting break and the paused one.
        static func workEndTranscript(_ d: DaemonUnderTest, _ server: NotificationServer) throws -> String {
            let idle = d.notify.waitFor(prefix: "STATUS=", timeout: 5)?.line ?? "no STATUS="
            try d.addTask("Writing", [("work", .string("1s")), ("short_break", .string("5m"))])
            let started = d.notify.count
            try d.call("start", [("task", .string("Writing"))])
            guard let call = server.waitForCall(1, timeout: 5) else {
                throw HarnessError("no Notify call after the work phase ended\n\(d.diagnostics)")
            }
            // The waiting break's line has no clock; the running work's before it has one.
            let waiting =
                d.notify.waitFor(after: started, timeout: 5) { $0.hasPrefix("STATUS=") && !$0.contains(/[0-9]:[0-9]/) && $0 != idle }?
                .line ?? "no STATUS= for the waiting break: \(d.notify.statusLines)"
            try d.call("start")
            let pausedAt = d.notify.count
            try d.call("pause")
            let paused = d.notify.waitFor(prefix: "STATUS=", after: pausedAt, timeout: 5)?.line ?? "no STATUS= after pause"
            let actions = stride(from: 0, to: call.actions.count - 1, by: 2).map { "\(call.actions[$0]): \(call.actions[$0 + 1])" }
            let lines = ["summary: " + call.summary, "body: " + call.body] + actions.map { "action " + $0 } + [idle, waiting, paused]
            return lines.joined(separator: "\n") + "\n"
        }
    }
}
