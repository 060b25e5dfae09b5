import DiligenceCore
import DiligenceTestSupport
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Which way log lines go: the journal only when stderr is the stream systemd named in
/// JOURNAL_STREAM, else `<N>`-prefixed lines.
@Suite struct LogTests {
    /// "device:inode" of `fd`, as systemd writes JOURNAL_STREAM.
    func identity(of fd: Int32) -> String {
        var st = stat()
        #expect(fstat(fd, &st) == 0)
        return "\(st.st_dev):\(st.st_ino)"
    }

    @Test func journalStreamMatchesOnlyTheNamedDescriptor() throws {
        let dir = TemporaryDirectory("diligence-log")
        defer { dir.remove() }
        let stream = open(dir.path + "/stream", O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        let other = open(dir.path + "/other", O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        try #require(stream >= 0 && other >= 0)
        defer {
            close(stream)
            close(other)
        }

        #expect(Log.isJournalStream(identity(of: stream), fd: stream))
        // Inherited by a process whose stderr went elsewhere: plain lines.
        #expect(!Log.isJournalStream(identity(of: stream), fd: other))
        #expect(!Log.isJournalStream(nil, fd: stream))
        #expect(!Log.isJournalStream("", fd: stream))
        #expect(!Log.isJournalStream(identity(of: stream), fd: -1))
    }

    @Test func stderrLinesCarryThePriorityAndTheFields() {
        #expect(
            Log.stderrLine(.info, "Started work of Study.", fields: [("EVENT", "phase_started"), ("TASK", "Study"), ("PHASE", "work")])
                == "<6>Started work of Study. (event=phase_started task=Study phase=work)\n")
        #expect(Log.stderrLine(.error, "Configuration not reloaded.", fields: []) == "<3>Configuration not reloaded.\n")
        #expect(Log.stderrLine(.debug, "x", fields: []).hasPrefix("<7>"))
        #expect(Log.stderrLine(.warning, "x", fields: []).hasPrefix("<4>"))
    }

    @Test func configSummaryNamesEverySetting() throws {
        let config = try DaemonConfig.parse("[timer]\nsuspend = abandon\n[stats]\nday_starts_at = 04:30\n[daemon]\nallow_root = yes\n")
        #expect(config.summary == "suspend=abandon day_starts_at=04:30 allow_root=true")
        #expect(DaemonConfig().summary == "suspend=pause day_starts_at=00:00 allow_root=false")
    }
}
