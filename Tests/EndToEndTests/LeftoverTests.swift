// The test suite owns every process it starts and every file it makes. ChildProcess puts each
// child in a process group of its own and kills the group; `make test` then runs this check in
// a second `swift test` after the first has ended (Swift Testing runs suites in parallel and in
// no fixed order, so no test inside the run can be sure it is the last).

import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Whether `pid` is a live process (not a zombie waiting for its parent).
func isAlive(_ pid: pid_t) -> Bool {
    let stat = readTextFile("/proc/\(pid)/stat")
    guard let close = stat.lastIndex(of: ")") else { return false }
    return !String(stat[stat.index(after: close)...]).trimmingWhitespace().hasPrefix("Z")
}

extension EndToEnd {
    @Suite("The harness owns what it starts")
    struct Ownership {
        @Test("killAndReap ends the child's whole process group, the processes it started in the background too")
        func wholeGroup() throws {
            let d = try DaemonUnderTest(launch: false)
            let child = try ChildProcess(
                executable: "/bin/sh", arguments: ["-c", "sleep 300 & echo $! > '\(d.root)/bg'; exec sleep 301"],
                environment: d.environment, stdoutPath: d.root + "/out", stderrPath: d.root + "/err")
            try waitUntil("the background sleep started", timeout: 5) { !readTextFile(d.root + "/bg").isEmpty }
            let background = try #require(pid_t(readTextFile(d.root + "/bg").trimmingWhitespace()))
            #expect(isAlive(background))
            #expect(TestRun.processes().contains { $0.pid == background }, "the background process does not carry DILIGENCE_TEST_RUN")
            child.killAndReap()
            try waitUntil("the background sleep ended", timeout: 5) { !isAlive(background) }
        }
    }
}

/// Runs only when `make test` asks, after the run it checks (DILIGENCE_CHECK_LEFTOVERS_OF: that
/// run's id; DILIGENCE_TEST_TMP: its temporary directory).
@Suite(
    "Nothing left behind by the test run",
    .enabled(
        if: ProcessInfo.processInfo.environment["DILIGENCE_CHECK_LEFTOVERS_OF"] != nil,
        "make test runs this after swift test"))
struct Leftovers {
    static let run = ProcessInfo.processInfo.environment["DILIGENCE_CHECK_LEFTOVERS_OF"] ?? ""

    @Test("no process of the run is alive")
    func noProcess() {
        let alive = TestRun.processes(of: Self.run)
        #expect(alive.isEmpty, "processes the test run \(Self.run) left running:\n\(alive.map(\.description).joined(separator: "\n"))")
        // Then end them: a failed check must not leave them running either.
        for process in alive { kill(process.pid, SIGKILL) }
    }

    @Test("no test user or cgroup of the run is left")
    func noUserOrCgroup() {
        let users = TestUser.users(of: Self.run)
        #expect(users.isEmpty, "test users left: \(users)")
        let cgroups = DelegatedCgroup.cgroups(of: Self.run)
        #expect(cgroups.isEmpty, "cgroups left: \(cgroups)")
    }

    @Test("its temporary directory is empty, and nothing of it is left in /var/lib or /dev/shm")
    func noFiles() throws {
        let tmp = try #require(ProcessInfo.processInfo.environment["DILIGENCE_TEST_TMP"])
        let inTmp = (try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? []
        #expect(inTmp.isEmpty, "left in \(tmp): \(inTmp.sorted())")
        let prefix = "diligence-test-\(Self.run)-"
        for directory in ["/var/lib", "/dev/shm"] {
            let left = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(prefix) }
            #expect(left.isEmpty, "left in \(directory): \(left.sorted())")
        }
    }
}
