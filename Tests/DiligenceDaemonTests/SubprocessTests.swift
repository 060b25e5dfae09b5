import DiligenceCore
import Dispatch
import Synchronization
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Child processes (hooks, sound players) get ordinary blocking stdin and stdout, and their
/// stdin holds the event from the moment they start.
@Suite struct SubprocessTests {
    /// Runs `script` under /bin/sh with `input` on its stdin; returns its output lines.
    private func run(_ script: String, input: String) throws -> [String] {
        let queue = DispatchQueue(label: "subprocess-test")
        let lines = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        var child: Subprocess?
        try queue.sync {
            child = try Subprocess(
                argv: ["/bin/sh", "-c", script], input: Array(input.utf8), queue: queue,
                onLine: { line in lines.withLock { $0.append(line) } },
                onExit: { _, _ in done.signal() })
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        // Output read after the exit is still delivered on the queue.
        usleep(100_000)
        queue.sync {}
        withExtendedLifetime(child) {}
        return lines.withLock { $0 }
    }

    @Test func stdinAndStdoutBlockAsProgramsExpect() throws {
        // /proc/self/fdinfo shows the open flags of cat's stdin and stdout; O_NONBLOCK is 04000.
        let lines = try run("cat /proc/self/fdinfo/0 /proc/self/fdinfo/1 | grep '^flags'", input: "")
        #expect(lines.count == 2)
        for line in lines {
            let octal = line.split(separator: "\t").last.map(String.init) ?? ""
            let flags = Int(octal.trimmingWhitespace(), radix: 8) ?? -1
            #expect(flags >= 0 && flags & 0o4000 == 0, "\(line)")
        }
    }

    @Test func aChildThatReadsAtOnceGetsTheWholeEvent() throws {
        for _ in 0..<20 {
            #expect(try run("cat", input: "{\"event\":\"phase_completed\"}\n") == ["{\"event\":\"phase_completed\"}"])
        }
    }
}
