import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` with the process time zone set to `zone` (a TZ value such as "UTC" or
/// "Europe/Berlin"), then restores it. All test targets run in one process and suites run in
/// parallel, so every test whose result depends on local time goes through this one lock.
public func withTimeZone<T>(_ zone: String, _ body: () throws -> T) rethrows -> T {
    try timeZoneLock.withLock { _ in
        let previous = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", zone, 1)
        tzset()
        defer {
            if let previous { setenv("TZ", previous, 1) } else { unsetenv("TZ") }
            tzset()
        }
        return try body()
    }
}

private let timeZoneLock = Mutex(())

/// Wall-clock seconds of a local civil time in the current zone (call inside `withTimeZone`).
public func localTime(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Double {
    var t = tm()
    t.tm_year = Int32(year - 1900)
    t.tm_mon = Int32(month - 1)
    t.tm_mday = Int32(day)
    t.tm_hour = Int32(hour)
    t.tm_min = Int32(minute)
    t.tm_sec = Int32(second)
    t.tm_isdst = -1
    return Double(mktime(&t))
}

/// A fresh private directory under `TestRun.temporaryBase`, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ prefix: String = "diligence-test") {
        path = TestRun.makeDirectory(in: TestRun.temporaryBase, prefix: prefix)
    }

    /// A directory made elsewhere, to be removed the same way.
    public init(adopting path: String) {
        self.path = path
    }

    public func remove() {
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/rm"), strdup("-rf"), strdup(path), nil]
        defer { argv.forEach { free($0) } }
        if posix_spawn(&pid, "/bin/rm", nil, nil, &argv, environ) == 0 {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }
}
