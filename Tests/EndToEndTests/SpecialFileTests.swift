import DiligenceJSON
import DiligenceProtocol
import DiligenceSync
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// Files that are not files (docs/reliability.md): a FIFO or a symbolic link under every name a
// journal or the config file can have. Before issue 26 a FIFO froze the daemon in open(2) (status
// never answered, SIGTERM ignored, a restart never ready) and a link to ~/.bashrc was appended to.

extension EndToEnd {
    @Suite("Special files under a journal's or the config's name")
    struct SpecialFiles {
        enum Special: String, CaseIterable, CustomStringConvertible {
            case fifo, symlink
            var description: String { rawValue }
            var words: String { self == .fifo ? "a FIFO" : "a symbolic link" }
        }

        /// Puts `kind` at `path`, renamed over what is there as a sync tool delivers: a FIFO, or
        /// a link to `target`.
        static func make(_ kind: Special, at path: String, linkingTo target: String) throws {
            let temporary = path + ".special"
            let made = kind == .fifo ? mkfifo(temporary, 0o600) : symlink(target, temporary)
            try #require(made == 0, "cannot make \(kind) at \(temporary): \(String(cString: strerror(errno)))")
            try #require(rename(temporary, path) == 0)
        }

        static func events(_ d: DaemonUnderTest, _ event: String) -> [Substring] {
            d.stderr.split(separator: "\n").filter { $0.contains("event=\(event)") }
        }

        /// The daemon answers, stops on SIGTERM (exit 0, within 10 s) and starts again to READY
        /// with the special file still there.
        static func expectResponsiveStopsAndRestarts(_ d: DaemonUnderTest) throws {
            #expect(try d.status()["state"]?.stringValue == "idle", "status answers\n\(d.diagnostics)")
            d.signal(SIGTERM)
            #expect(try d.waitExit(timeout: 10) == .exited(0), "SIGTERM stops it\n\(d.diagnostics)")
            try d.restart()
            #expect(try d.status()["state"]?.stringValue == "idle", "status answers after the restart\n\(d.diagnostics)")
        }

        /// A file outside the sync folder holding another device's journal line (a task named
        /// Secret): what a link in the folder points to.
        static func outsideJournal(_ d: DaemonUnderTest) throws -> (path: String, bytes: [UInt8]) {
            let path = d.root + "/outside.jsonl"
            let text = SyncFuzz.line(1_764_569_662_123, .taskAdded(SyncFuzz.task(7, "Secret")))
            try text.write(toFile: path, atomically: false, encoding: .utf8)
            return (path, Array(text.utf8))
        }

        @Test(
            "another device's journal name held by a FIFO or a link: skipped, logged once naming it, never waited on nor read through",
            arguments: Special.allCases)
        func anotherDevicesJournal(kind: Special) throws {
            let (d, folder, _) = try SyncMerge.device("laptop")
            let outside = try Self.outsideJournal(d)
            let path = "\(folder)/\(SyncFuzz.other).jsonl"
            try Self.make(kind, at: path, linkingTo: outside.path)
            _ = try d.addTask("After")
            try SyncMerge.eventually("the skip logged") { !Self.events(d, "sync_file_skipped").isEmpty }
            _ = try d.addTask("AfterThat")
            #expect(try d.status()["state"]?.stringValue == "idle")
            let skipped = Self.events(d, "sync_file_skipped")
            #expect(skipped.count == 1, "logged once: \(skipped)\n\(d.diagnostics)")
            #expect(
                skipped.first?.contains("\(path): it is \(kind.words), not a regular file") == true
                    && skipped.first?.contains("code=not_a_regular_file") == true, "\(skipped)")
            #expect(!(try SyncMerge.taskNames(d)).contains("Secret"), "nothing read through the link")
            #expect(try Data(contentsOf: URL(fileURLWithPath: outside.path)) == Data(outside.bytes))
            try Self.expectResponsiveStopsAndRestarts(d)
        }

        @Test(
            "this device's journal replaced by a FIFO or a link: not written to nor through, said once, written again once it is gone",
            arguments: Special.allCases)
        func ownJournal(kind: Special) throws {
            let (d, folder, id) = try SyncMerge.device("laptop")
            let outside = try Self.outsideJournal(d)
            let own = "\(folder)/\(id).jsonl"
            try Self.make(kind, at: own, linkingTo: outside.path)
            _ = try d.addTask("After")
            _ = try d.addTask("AfterThat")
            let status = try d.call("sync_status")
            #expect(status["problem"]?.stringValue == "\(own): it is \(kind.words), not a regular file", "\(status.serialized)")
            #expect(status["waiting"]?.intValue ?? 0 >= 2, "the changes wait in the database: \(status.serialized)")
            let failed = Self.events(d, "sync_journal_failed")
            #expect(failed.count == 1 && failed.first?.contains("code=not_a_regular_file") == true, "\(failed)\n\(d.diagnostics)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: outside.path)) == Data(outside.bytes), "the link's target unchanged")
            try Self.expectResponsiveStopsAndRestarts(d)
            // Removed: the next change writes the journal again, whole.
            unlink(own)
            _ = try d.addTask("Later")
            try SyncMerge.eventually("the journal written again") { (try? d.call("sync_status")["waiting"]?.intValue) == 0 }
            let lines = try SyncOwnJournal.lines(own, device: id)
            #expect(lines.contains { $0.hasSuffix(" After") } && lines.contains { $0.hasSuffix(" Later") }, "\(lines)")
        }

        @Test(
            "the config file a FIFO, or a link to one: refused at start, on reload and on SIGHUP, saying what it is; the daemon answers throughout",
            arguments: Special.allCases)
        func configFile(kind: Special) throws {
            let d = try DaemonUnderTest(launch: false)
            let config = d.configHome + "/diligence/diligenced.conf"
            let fifo = d.root + "/config-fifo"
            try #require(mkfifo(fifo, 0o600) == 0)
            mkdir(d.configHome + "/diligence", 0o700)
            // A link is followed (dotfile managers link the config): one to a FIFO is refused.
            try Self.make(kind, at: config, linkingTo: fifo)
            let words = "\(config): it is a FIFO, not a regular file; it is not read."
            try d.start()
            let problems = try d.ctlStatus()["config_problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(problems.count == 1 && problems.first?.hasSuffix(words) == true, "\(problems)")
            let reload = try d.ctl("reload")
            #expect(reload.exitCode == 1 && reload.stderr.contains(words), "\(reload)")
            d.signal(SIGHUP)
            try SyncMerge.eventually("SIGHUP's refusal logged") { Self.events(d, "config_refused").count == 3 }
            #expect(Self.events(d, "config_refused").allSatisfy { $0.contains("code=not_a_regular_file") }, "\(d.diagnostics)")
            try Self.expectResponsiveStopsAndRestarts(d)
        }

        @Test("the config file a link to a regular file (a dotfile manager's): read as the file")
        func configLinkedToAFile() throws {
            let d = try DaemonUnderTest(launch: false)
            mkdir(d.configHome + "/diligence", 0o700)
            let target = d.root + "/dotfiles-diligenced.conf"
            try "[timer]\nsuspend = continue\n".write(toFile: target, atomically: false, encoding: .utf8)
            #expect(symlink(target, d.configHome + "/diligence/diligenced.conf") == 0)
            try d.start()
            #expect(try d.ctlStatus()["config_problems"]?.arrayValue?.isEmpty == true, "\(d.diagnostics)")
        }

        @Test("under umask 022 the sync folder the daemon makes is 0700 and its journal 0600")
        func privateUnderUmask022() throws {
            let d = try DaemonUnderTest(launch: false)
            // The daemon's own umask, not the test process's (tests run in parallel).
            d.launcher = ["/bin/sh", "-c", "umask 022 && exec \"$0\" \"$@\""]
            try d.start()
            let folder = d.root + "/sync/inner"
            #expect(try d.ctl("sync", "enable", folder).exitCode == 0)
            let id = try d.call("sync_status")["device"]?["id"]?.stringValue ?? "?"
            var st = stat()
            #expect(stat(folder, &st) == 0 && st.st_mode & 0o7777 == 0o700, "folder \(String(st.st_mode & 0o7777, radix: 8))")
            #expect(stat(d.root + "/sync", &st) == 0 && st.st_mode & 0o7777 == 0o700, "parent \(String(st.st_mode & 0o7777, radix: 8))")
            #expect(
                stat("\(folder)/\(id).jsonl", &st) == 0 && st.st_mode & 0o7777 == 0o600, "journal \(String(st.st_mode & 0o7777, radix: 8))")
        }
    }
}
