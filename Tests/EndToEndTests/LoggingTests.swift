// Where the daemon's log lines go: the journal when systemd connected stderr to it and the
// journal socket really answers, else stderr with `<N>` priority prefixes. Nothing is lost in
// between: sd_journal_sendv "succeeds" when the socket is missing.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("Logging: the journal when it is there, stderr otherwise")
    struct Logging {
        /// Starts diligenced with JOURNAL_STREAM naming its stderr (as systemd does), run by `wrapper`
        /// (argv before the daemon's); waits for READY=1.
        static func launch(_ d: DaemonUnderTest, wrapper: [String] = []) throws -> (ChildProcess, stderr: String) {
            let stderrPath = d.root + "/journal-stream.stderr"
            try "".write(toFile: stderrPath, atomically: false, encoding: .utf8)
            let st = try #require(fileStatus(stderrPath))
            var env = d.environment
            env["NOTIFY_SOCKET"] = d.notify.path
            env["JOURNAL_STREAM"] = "\(st.st_dev):\(st.st_ino)"
            let argv = wrapper + [try Binaries.daemon]
            let child = try ChildProcess(
                executable: argv[0], arguments: Array(argv.dropFirst()), environment: env,
                stdoutPath: d.root + "/journal-stream.stdout", stderrPath: stderrPath)
            guard d.notify.waitFor(prefix: "READY=1", timeout: 10) != nil else {
                throw HarnessError("no READY=1: \(readTextFile(stderrPath))")
            }
            return (child, stderrPath)
        }

        /// A mount namespace where /run/systemd/journal is `journal` (an empty directory: no
        /// journal; or one holding the test's socket), as `sh -c` argv to put before the daemon.
        static func namespace(journal: String) -> [String] {
            [
                "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mkdir -p /run/systemd && mount -t tmpfs tmpfs /run/systemd && mkdir /run/systemd/journal "
                    + "&& mount --bind \"$0\" /run/systemd/journal && exec \"$@\"", journal,
            ]
        }

        @Test("a recorded session's log line has the right article: an abandoned session")
        func sessionLineWording() throws {
            let d = try DaemonUnderTest(launch: false)
            try d.writeConfig("[timer]\nmin_session = 0\n")
            try d.start()
            try d.addTask("Deep", [("work", .string("1h"))])
            try d.call("start", [("task", .string("Deep"))])
            sleepFor(1.1)
            try d.call("stop", [])
            try waitUntil("the session's log line", timeout: 5, diagnostics: d.diagnostics) { d.stderr.contains(" session of Deep") }
            #expect(d.stderr.contains("Recorded an abandoned session of Deep: "), "\(d.diagnostics)")
            #expect(!d.stderr.contains("Recorded a abandoned"), "\(d.diagnostics)")
        }

        @Test(
            "no journal socket: every line goes to stderr with its <N> prefix",
            .enabled(
                if: geteuid() == 0 || access("/run/systemd/journal/socket", F_OK) != 0,
                "hiding the host's journal socket needs root (a mount namespace)"))
        func noJournalSocket() throws {
            let d = try DaemonUnderTest(launch: false)
            let empty = d.root + "/no-journal"
            mkdir(empty, 0o700)
            let (child, stderr) = try Self.launch(d, wrapper: geteuid() == 0 ? Self.namespace(journal: empty) : [])
            defer { child.killAndReap() }
            try waitUntil("the start-up line on stderr", timeout: 5, diagnostics: readTextFile(stderr)) {
                readTextFile(stderr).contains("<6>diligenced ") && readTextFile(stderr).contains(" listening on ")
            }
        }

        @Test(
            "a journal socket that answers gets the structured entries, not stderr",
            .enabled(if: geteuid() == 0, "a journal socket of the test's own needs a mount namespace (root)"))
        func journalSocket() throws {
            let d = try DaemonUnderTest(launch: false)
            let journalDir = d.root + "/journal"
            mkdir(journalDir, 0o755)
            let journal = try NotifyListener(path: journalDir + "/socket")
            let (child, stderr) = try Self.launch(d, wrapper: Self.namespace(journal: journalDir))
            defer { child.killAndReap() }
            let entry = journal.waitFor(timeout: 5) { $0.hasPrefix("MESSAGE=diligenced ") && $0.contains(" listening on ") }
            #expect(entry != nil, "no journal entry: \(journal.messages)")
            if let entry {
                #expect(
                    entry.message.lines.contains("SYSLOG_IDENTIFIER=diligenced") && entry.message.lines.contains("PRIORITY=6"),
                    "\(entry.message)")
            }
            #expect(!readTextFile(stderr).contains("listening on"), "sent to the journal and stderr both: \(readTextFile(stderr))")
        }
    }
}
