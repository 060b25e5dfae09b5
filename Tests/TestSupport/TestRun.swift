#if canImport(Glibc)
    import Glibc
#endif

/// What one run of the tests shares: an id that every process it starts carries in its
/// environment, and the directory its temporary files go under. `make test` sets both, then
/// checks after `swift test` that no process of the run is alive and the directory is empty
/// (Tests/EndToEndTests/LeftoverTests.swift).
public enum TestRun {
    /// The environment variable that marks the run's processes.
    public static let variable = "DILIGENCE_TEST_RUN"

    /// `$DILIGENCE_TEST_RUN` when set (make test), else an id of this process's own.
    public static let id: String = {
        if let value = getenv(variable).map({ String(cString: $0) }), !value.isEmpty { return value }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return "\(getpid())-\(ts.tv_sec)"
    }()

    /// `$DILIGENCE_TEST_TMP` when set (make test: a fresh directory per run), else /tmp.
    public static let temporaryBase: String = {
        if let value = getenv("DILIGENCE_TEST_TMP").map({ String(cString: $0) }), value.hasPrefix("/") { return value }
        return "/tmp"
    }()

    /// The prefix of directories the run makes under /var/lib (the systemd tests: their
    /// service has a private /tmp): `/var/lib/diligence-test-<id>-`.
    public static var persistentPrefix: String { "/var/lib/diligence-test-\(id)-" }

    /// `mkdtemp` of `<base>/<prefix>-XXXXXX`; traps when it fails (no test can run without it).
    public static func makeDirectory(in base: String, prefix: String) -> String {
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp \(base)/\(prefix)-XXXXXX failed: \(String(cString: strerror(errno)))")
        return String(cString: made!)
    }

    /// A live process of a test run: its pid and command line.
    public struct Process: CustomStringConvertible, Sendable {
        public var pid: pid_t
        public var command: String
        public var description: String { "\(pid) \(command)" }
    }

    /// Every live process (zombies excluded) whose environment has `DILIGENCE_TEST_RUN=<id>`,
    /// but for this process and its ancestors (`swift test` itself carries the variable under
    /// make test). Needs to read /proc/PID/environ: processes of other users are seen only by root.
    public static func processes(of id: String = TestRun.id) -> [Process] {
        let marker = Array("\(variable)=\(id)".utf8)
        var ancestors: Set<pid_t> = []
        var next = getpid()
        while next > 1, ancestors.insert(next).inserted { next = parent(of: next) }
        guard let dir = opendir("/proc") else { return [] }
        defer { closedir(dir) }
        var found: [Process] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = pid_t(name), !ancestors.contains(pid) else { continue }
            let environment = readProcFile("/proc/\(pid)/environ")
            // Zombies have an empty environment and are not running anyway.
            guard environment.split(separator: 0).contains(where: { $0.elementsEqual(marker) }) else { continue }
            let command = readProcFile("/proc/\(pid)/cmdline").split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            found.append(Process(pid: pid, command: command.joined(separator: " ")))
        }
        return found
    }

    /// The parent of `pid` (from /proc/PID/stat), 0 when unknown.
    private static func parent(of pid: pid_t) -> pid_t {
        let stat = String(decoding: readProcFile("/proc/\(pid)/stat"), as: UTF8.self)
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ")" ends it.
        guard let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) ?? 0 : 0
    }

    private static func readProcFile(_ path: String) -> [UInt8] { readFileBytes(path) }
}

/// The bytes of the file at `path` (empty when it cannot be read).
public func readFileBytes(_ path: String) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { return bytes }
        bytes += chunk[..<n]
    }
}

/// Writes `text` to `path` (created or truncated, 0600); traps when it cannot.
public func writeTextFile(_ text: String, to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    precondition(fd >= 0, "cannot write \(path): \(String(cString: strerror(errno)))")
    defer { close(fd) }
    let bytes = Array(text.utf8)
    precondition(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count, "short write to \(path)")
}

/// The package's own files, for tests that hold the sources, docs and contrib files against
/// the code: found from this file's place, `<package>/Tests/TestSupport/TestRun.swift`.
public enum PackageFiles {
    public static let root: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()

    /// `root/relative`.
    public static func path(_ relative: String) -> String { root + "/" + relative }

    /// The text of `root/relative` (empty when it cannot be read).
    public static func read(_ relative: String) -> String { String(decoding: readFileBytes(path(relative)), as: UTF8.self) }
}
