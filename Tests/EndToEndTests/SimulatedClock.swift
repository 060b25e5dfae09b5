// A suspend for the real daemon binary: the LD_PRELOAD library of Tests/FakeClock/fakeclock.c,
// compiled here with the system's cc, moves the daemon's CLOCK_REALTIME and CLOCK_BOOTTIME (never
// CLOCK_MONOTONIC) and re-arms or cancels its timerfds as the kernel does at a resume or a clock
// step. A suspend of an hour takes milliseconds.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The compiled library: one build per test run, into `<package>/.build/test-helpers/`.
enum FakeClockLibrary {
    static let source = Binaries.packageRoot + "/Tests/FakeClock/fakeclock.c"

    static let path: Result<String, HarnessError> = {
        let directory = Binaries.packageRoot + "/.build/test-helpers"
        let library = directory + "/libdiligence-fakeclock.so"
        guard let cc = findProgram("/usr/bin/cc", "/usr/bin/gcc") else {
            return .failure(
                HarnessError("the simulated-suspend tests compile a C library: apt-get install -y gcc libc6-dev (make test-deps)"))
        }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Built under a name of this process's own, then renamed: a concurrent run never loads half a file.
        let temporary = library + ".\(getpid())"
        do {
            let run = try runProgram(
                [cc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o", temporary, source, "-ldl", "-pthread"],
                environment: ["PATH": "/usr/bin:/bin"], directory: directory)
            guard run.succeeded, rename(temporary, library) == 0 else {
                unlink(temporary)
                return .failure(HarnessError("compiling the fake-clock library failed: \(run)"))
            }
        } catch {
            return .failure(HarnessError("compiling the fake-clock library: \(error)"))
        }
        return .success(library)
    }()
}

/// The clocks of one daemon, moved as a suspend or a clock step would move them. Put
/// `environment` into the daemon's environment before it starts.
final class SimulatedClock {
    let control: String
    /// Nanoseconds added to CLOCK_REALTIME and CLOCK_BOOTTIME.
    private(set) var realtimeOffset: Int64 = 0
    private(set) var boottimeOffset: Int64 = 0
    private var generation = 0

    init(directory: String) throws {
        control = directory + "/fake-clock"
        try write()
    }

    /// LD_PRELOAD and the control file, for the daemon alone.
    var environment: [String: String] {
        get throws { ["LD_PRELOAD": try FakeClockLibrary.path.get(), "DILIGENCE_FAKE_CLOCK": control] }
    }

    /// The daemon's wall clock now: the test's own (not preloaded) plus the offset.
    var daemonWall: Double { Date().timeIntervalSince1970 + Double(realtimeOffset) / 1e9 }

    /// The machine sleeps `seconds`: CLOCK_REALTIME and CLOCK_BOOTTIME jump, CLOCK_MONOTONIC does
    /// not. Returns once process `pid` has applied it (its timers re-armed, the clock-jump timer
    /// cancelled).
    func suspend(_ seconds: Double, pid: pid_t) throws {
        realtimeOffset += Int64(seconds * 1e9)
        boottimeOffset += Int64(seconds * 1e9)
        try write()
        try waitApplied(pid: pid)
    }

    /// The wall clock is set forward (positive) or back by `seconds`; no time passes.
    func stepWall(_ seconds: Double, pid: pid_t) throws {
        realtimeOffset += Int64(seconds * 1e9)
        try write()
        try waitApplied(pid: pid)
    }

    private func write() throws {
        generation += 1
        let temporary = control + ".new"
        try "\(realtimeOffset) \(boottimeOffset) \(generation)\n".write(toFile: temporary, atomically: false, encoding: .utf8)
        guard rename(temporary, control) == 0 else { throw HarnessError("rename \(temporary): \(String(cString: strerror(errno)))") }
    }

    private func waitApplied(pid: pid_t) throws {
        let ack = control + ".ack.\(pid)"
        try waitUntil("process \(pid) applying the clock change \(generation)", timeout: 5) {
            readTextFile(ack).trimmingWhitespace() == String(generation)
        }
    }
}
