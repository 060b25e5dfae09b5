import DiligenceTestSupport
import Foundation
import Testing

/// The logging path under AddressSanitizer: Syscalls.swift and Log.swift compiled alone with
/// `swiftc -sanitize=address` and a small driver (Tests/LogSanitizer/main.swift), not a second
/// build of the package. The driver's `escape` run is the control: a pointer kept past its
/// `with…` scope while the array moves must be reported, or the check proves nothing.
@Suite struct LogSanitizerTests {
    static let root = PackageFiles.root

    /// The toolchain's swiftc, when it ships the AddressSanitizer runtime.
    static let swiftc: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/swiftc"
            let runtime = "\(dir)/../lib/swift/clang/lib/linux/libclang_rt.asan-x86_64.a"
            if FileManager.default.isExecutableFile(atPath: candidate) {
                return FileManager.default.fileExists(atPath: runtime) ? candidate : nil
            }
        }
        return nil
    }()

    /// Runs `executable` to its end; exit status and what it wrote to stdout and stderr.
    static func run(_ executable: String, _ arguments: [String], in dir: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = dir + "/output-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: out, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        try handle.close()
        return (process.terminationStatus, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }

    @Test(.enabled(if: swiftc != nil, "the toolchain has no swiftc with the AddressSanitizer runtime (libclang_rt.asan)"))
    func theLoggingPathIsCleanUnderAddressSanitizer() throws {
        let dir = TemporaryDirectory("diligence-asan")
        defer { dir.remove() }
        let sources = Self.root + "/Sources"
        let driver = dir.path + "/driver"
        let compile = try Self.run(
            try #require(Self.swiftc),
            [
                "-sanitize=address", "-Onone", "-module-name", "LogDriver", "-suppress-warnings",
                "-module-cache-path", Self.root + "/.build/asan-module-cache", "-I", sources + "/CLinux", "-I", sources + "/CSystemd",
                sources + "/DiligenceDaemon/System/Syscalls.swift", sources + "/DiligenceDaemon/System/Log.swift",
                Self.root + "/Tests/LogSanitizer/main.swift", "-o", driver,
            ], in: dir.path)
        try #require(compile.status == 0, "swiftc -sanitize=address failed:\n\(compile.output)")

        let log = try Self.run(driver, ["log"], in: dir.path)
        #expect(log.status == 0 && log.output.contains("log path ok"), "\(log.output.suffix(4000))")
        #expect(!log.output.contains("AddressSanitizer"), "\(log.output.suffix(4000))")

        let escape = try Self.run(driver, ["escape"], in: dir.path)
        #expect(
            escape.status != 0 && escape.output.contains("AddressSanitizer: heap-use-after-free"),
            "the sanitizer did not catch an escaped pointer: \(escape.output.suffix(2000))")
    }
}
