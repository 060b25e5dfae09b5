import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import DiligenceTestSupport
import Dispatch
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Storage faults (issue item 5) done for real: garbage bytes, a second process's lock, a full
/// tmpfs, a read-only mount. The daemon keeps timing and loses nothing it recorded.
@Suite(.serialized) struct StorageFaultTests {
    /// Waits up to `timeout` seconds for `condition` (the retry timer runs on the daemon's queue).
    private func eventually(_ timeout: Double = 10, _ condition: () -> Bool) -> Bool {
        for _ in 0..<Int(timeout * 20) {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    @Test func aCorruptDatabaseIsKeptAsideAndNamedAndANewOneStarts() throws {
        let garbage = (0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        let d = try InProcessDaemon { paths in
            let fd = open(paths.database, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            _ = garbage.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        defer { d.stop() }
        let aside = try #require(d.daemon.records.keptAside)
        #expect(aside.hasPrefix(d.daemon.paths.database + ".corrupt-"))
        // The damaged bytes are still there, unmodified, under the new name.
        let fd = open(aside, O_RDONLY)
        var kept = [UInt8](repeating: 0, count: garbage.count + 16)
        let n = kept.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        close(fd)
        #expect(Array(kept[..<max(0, n)]) == garbage)
        // And the daemon works on a fresh database.
        let tasks = try d.request("{\"command\":\"task_list\"}")
        #expect(tasks["result"]?["tasks"]?.arrayValue?.count == 7)
    }

    @Test func aLockedDatabaseNeitherDelaysThePhaseEndNorLosesItsSession() throws {
        let clock = FakeClock()
        let d = try InProcessDaemon(clocks: clock.clocks)
        defer { d.stop() }
        _ = try d.request("{\"command\":\"start\",\"task\":\"Work\"}")
        // Another process's connection takes the write lock, and lets go 1 s from now; the
        // store alone would wait 2 s for it.
        let other = try SQLite(location: .path(d.daemon.paths.database), busyTimeoutMilliseconds: 100)
        try other.exec("BEGIN EXCLUSIVE")
        let released = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let holder = other // used by that one block alone from here on
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) {
            try? holder.exec("COMMIT")
            released.signal()
        }
        clock.advance(1500)
        // The daemon goes on timing and answering while it cannot write: the work phase ends
        // in this status request, which does not wait for the lock.
        let status = try d.status()
        #expect(released.wait(timeout: .now()) == .timedOut, "the phase end waited for the other process's lock")
        #expect(status["state"] == .string("pending"))
        #expect(d.sessions().isEmpty)
        #expect(d.daemon.queue.sync { d.daemon.records.recorder.unsaved.count } == 1)
        // The retry timer writes it once the lock is gone, exactly once, with the timer state.
        #expect(released.wait(timeout: .now() + 10) == .success)
        #expect(eventually { d.sessions().count == 1 })
        #expect(d.sessions().map(\.outcome) == [.completed])
        #expect(d.daemon.queue.sync { d.daemon.records.recorder.unsaved.isEmpty })
        let saved = try Store(location: .path(d.daemon.paths.database)).loadTimer()
        #expect(saved?.saved.state == .pending)
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a small tmpfs needs root"))
    func aFullDiskDelaysTheSessionUntilSpaceReturns() throws {
        let clock = FakeClock()
        let (d, dataDir, filler) = try workRunningOnAFullDisk(clock)
        defer {
            d.daemon.queue.sync { d.daemon.stop() }
            umount2(dataDir, Int32(MNT_DETACH))
            d.directory.remove()
        }
        clock.advance(1500)
        #expect(try d.status()["state"] == .string("pending"))
        #expect(d.daemon.queue.sync { d.daemon.records.recorder.unsaved.count } == 1)
        // A second phase completes while the disk is still full: both wait, in order.
        _ = try d.request("{\"command\":\"skip\"}")
        _ = try d.request("{\"command\":\"start\"}")
        clock.advance(1500)
        #expect(try d.status()["state"] == .string("pending"))
        #expect(d.daemon.queue.sync { d.daemon.records.recorder.unsaved.count } == 2)
        #expect(d.sessions().isEmpty)
        unlink(filler)
        #expect(eventually { d.sessions().count == 2 })
        #expect(d.sessions().map(\.outcome) == [.completed, .completed])
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a small tmpfs needs root"))
    func sessionsStillUnsavedAtExitAreRecordedByTheNextStartOnce() throws {
        let clock = FakeClock()
        let (d, dataDir, filler) = try workRunningOnAFullDisk(clock)
        defer {
            umount2(dataDir, Int32(MNT_DETACH))
            d.directory.remove()
        }
        clock.advance(1500)
        #expect(try d.status()["state"] == .string("pending"))
        // The daemon exits with the disk still full: the session goes to the spill file.
        d.daemon.queue.sync { d.daemon.stop() }
        let spill = d.daemon.records.recorder.spillPath
        #expect(access(spill, F_OK) == 0)
        let spilledCopy = try #require(try Files.read(spill))
        unlink(filler)
        // The next daemon takes it back and writes it.
        let next = try Daemon(paths: d.daemon.paths, clocks: clock.clocks)
        try next.queue.sync { Result { () throws(DiligenceError) in try next.start() } }.get()
        #expect(next.queue.sync { (try? next.store.sessions())?.map(\.outcome) } == [.completed])
        #expect(access(spill, F_OK) != 0)
        next.queue.sync { next.stop() }
        // A spill file whose sessions are stored already (a crash before it was removed) doubles nothing.
        let out = open(spill, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = spilledCopy.withCString { write(out, $0, strlen($0)) }
        close(out)
        let third = try Daemon(paths: d.daemon.paths, clocks: clock.clocks)
        try third.queue.sync { Result { () throws(DiligenceError) in try third.start() } }.get()
        #expect(third.queue.sync { (try? third.store.sessions())?.count } == 1)
        third.queue.sync { third.stop() }
    }

    @Test(.enabled(if: geteuid() == 0, "a read-only bind mount needs root"))
    func aReadOnlyDataDirectoryIsAClearErrorAtStart() throws {
        var dataDir = ""
        #expect {
            _ = try InProcessDaemon { paths in
                dataDir = Files.directory(of: paths.database)
                try #require(mount(dataDir, dataDir, nil, UInt(MS_BIND), nil) == 0)
                try #require(mount(nil, dataDir, nil, UInt(MS_REMOUNT | MS_BIND | MS_RDONLY), nil) == 0)
            }
        } throws: { error in
            let e = error as? DiligenceError
            return e?.code.rawValue == "storage_error" && e?.message.contains(dataDir) == true
        }
        umount2(dataDir, Int32(MNT_DETACH))
        // The refused daemon's directory could not be removed while the mount stood.
        TemporaryDirectory(adopting: Files.directory(of: dataDir)).remove()
    }
}

/// Config errors at start and on reload, through the daemon: a bad file never stops it.
@Suite struct BadConfigStartTests {
    /// The problems as `status` reports them.
    static func problems(_ d: InProcessDaemon) throws -> [String] {
        let status = try d.request("{\"command\":\"status\"}")["result"]
        return status?["config_problems"]?.arrayValue?.compactMap(\.stringValue) ?? ["(no config_problems in status)"]
    }

    @Test func aRefusedFileAtStartRunsOnTheDefaultsAndSaysWhy() throws {
        let d = try InProcessDaemon(config: "[timer]\nsuspend = sometimes\n")
        defer { d.stop() }
        #expect(d.daemon.config == DaemonConfig())
        let problems = try Self.problems(d)
        #expect(problems.count == 1 && problems[0].contains("line 2") && problems[0].contains("the default settings"), "\(problems)")
        #expect(d.daemon.queue.sync { d.daemon.statusLine(at: d.daemon.clocks.now) }.contains("line 2"))
        #expect(try d.request("{\"command\":\"start\",\"task\":\"Work\"}")["ok"] == .bool(true))
    }

    @Test func aRefusedFileAtStartRunsOnTheLastGoodOne() throws {
        // A first daemon accepts a file and keeps it beside its database.
        let first = try InProcessDaemon(config: "[timer]\nsuspend = abandon\n")
        let lastGood = Files.directory(of: first.daemon.paths.database) + "/diligenced.conf.last-good"
        #expect(try Files.read(lastGood) == "[timer]\nsuspend = abandon\n")
        first.daemon.queue.sync { first.daemon.stop() }
        // The file goes bad; the next daemon on the same directory runs on what was accepted.
        writeTextFile("[timer]\nsuspend = sometimes\n", to: first.daemon.paths.config)
        let next = try Daemon(paths: first.daemon.paths)
        try next.queue.sync { Result { () throws(DiligenceError) in try next.start() } }.get()
        #expect(next.config.suspend == .abandon)
        #expect(next.problems.config.count == 1 && next.problems.config[0].contains(lastGood), "\(next.problems.config)")
        next.queue.sync { next.stop() }
        first.directory.remove()
    }

    @Test func aRefusedReloadKeepsTheSettingsAndReportsUntilAGoodOne() throws {
        let d = try InProcessDaemon(config: "[timer]\nsuspend = continue\n")
        defer { d.stop() }
        #expect(try Self.problems(d) == [])
        writeTextFile("[timer]\n\nsuspend = sometimes\n", to: d.daemon.paths.config)
        let refused = try d.request("{\"command\":\"reload\"}")
        #expect(refused["ok"] == .bool(false))
        #expect(d.daemon.config.suspend == .continue)
        let problems = try Self.problems(d)
        #expect(problems.count == 1 && problems[0].contains("line 3"), "\(problems)")
        writeTextFile("[timer]\nsuspend = abandon\n", to: d.daemon.paths.config)
        #expect(try d.request("{\"command\":\"reload\"}")["ok"] == .bool(true))
        #expect(try Self.problems(d) == [])
        #expect(d.daemon.config.suspend == .abandon)
    }

    @Test func onBadConfigDefaultsStartsWithTheDefaultValue() throws {
        let d = try InProcessDaemon(config: "[daemon]\non_bad_config = defaults\n[timer]\nsuspend = sometimes\n")
        defer { d.stop() }
        #expect(d.daemon.config.suspend == .pause)
        #expect(d.daemon.config.problems.count == 1)
        #expect(try d.request("{\"command\":\"status\"}")["ok"] == .bool(true))
    }
}

/// A daemon whose data directory is a 512 KiB tmpfs (the caller unmounts `dataDir`), with a
/// work phase of `Work` running and that file system then filled (unlink `filler` to free it).
private func workRunningOnAFullDisk(_ clock: FakeClock) throws -> (d: InProcessDaemon, dataDir: String, filler: String) {
    var dataDir = ""
    let d = try InProcessDaemon(clocks: clock.clocks) { paths in
        dataDir = Files.directory(of: paths.database)
        try #require(mount("tmpfs", dataDir, "tmpfs", 0, "size=512k,mode=0700") == 0, "mount: \(String(cString: strerror(errno)))")
    }
    _ = try d.request("{\"command\":\"start\",\"task\":\"Work\"}")
    return (d, dataDir, fillFileSystem(dataDir))
}

/// Fills the file system holding `directory` to its last byte; returns the filler's path
/// (unlink it to give the space back).
private func fillFileSystem(_ directory: String) -> String {
    let filler = directory + "/filler"
    let fd = open(filler, O_WRONLY | O_CREAT, 0o600)
    let block = [UInt8](repeating: 0xAB, count: 4096)
    while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    #expect(errno == ENOSPC)
    close(fd)
    return filler
}
