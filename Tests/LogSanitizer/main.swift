#if canImport(Glibc)
    import Glibc
#endif

// Drives the daemon's logging path under AddressSanitizer, compiled with Syscalls.swift and
// Log.swift alone by Tests/DiligenceDaemonTests/LogSanitizerTests.swift (not a package target).
// `log`: journal vectors and log lines of many sizes; `escape`: a pointer kept past its `with…`
// scope while the array moves, which the sanitizer must report (so the check can fail).
func logPath() {
    for size in [0, 1, 15, 16, 17, 255, 4096, 70_000] {
        let message = String(repeating: "é", count: size)
        let fields = (0..<(size % 7)).map { ("FIELD_\($0)", String(repeating: "x", count: $0 * size % 300)) }
        let entries = ["MESSAGE=\(message)", "PRIORITY=6"] + fields.map { "\($0.0)=\($0.1)" }
        let seen = Log.withJournalVectors(entries) { vectors -> [String] in
            vectors.map { String(decoding: UnsafeRawBufferPointer(start: $0.iov_base, count: $0.iov_len), as: UTF8.self) }
        }
        precondition(seen == entries, "the vectors do not hold the entries")
        Log.write(.info, message, fields: fields)
    }
    _ = Log.isJournalStream("1:2", fd: 2)
    _ = Log.journalReachable()
    print("log path ok")
}

final class Storage {
    var bytes = [UInt8](repeating: 7, count: 4096)
}

func escape() {
    let storage = Storage()
    var kept: UnsafeMutablePointer<UInt8>?
    storage.bytes.withUnsafeMutableBufferPointer { kept = $0.baseAddress }
    // The array grows: its old storage is freed, and `kept` points into it.
    storage.bytes += [UInt8](repeating: 1, count: 100_000)
    print(kept![0])
}

if CommandLine.arguments.dropFirst().first == "escape" { escape() } else { logPath() }
