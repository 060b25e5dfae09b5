import DiligenceTestSupport
import Foundation
import Testing

/// Two rules of the sources, checked by reading them (docs/architecture.md, "Syscalls"):
/// 1. the daemon makes every syscall through `Sys` (`Sys`, System/Syscalls.swift);
///    no other file of it calls one directly;
/// 2. no pointer leaves the `with…` closure that made it, anywhere in Sources: such a closure
///    neither returns its pointer nor stores it (`append`, an assignment to something outside).
/// Each rule is a scanner tested on the mistakes it exists for, then run over Sources.
@Suite struct SourceRulesTests {
    static let root = URL(fileURLWithPath: PackageFiles.root)

    static func swiftFiles(under directory: String) -> [(path: String, text: String)] {
        let base = root.appendingPathComponent(directory).path
        let names = FileManager.default.enumerator(atPath: base)?.compactMap { $0 as? String } ?? []
        return names.filter { $0.hasSuffix(".swift") }.sorted().compactMap { name in
            (try? String(contentsOfFile: base + "/" + name, encoding: .utf8)).map { (directory + "/" + name, $0) }
        }
    }

    @Test func theSyscallScannerFindsRawCalls() {
        let bad = """
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            _ = Glibc.write(2, p, 3)
            let fd = accept(listenFD, nil, nil)
            if access(path, F_OK) == 0 { unlink(path) }
            let t = clinux_clock_jump_timer()
            close(fd)
            """
        #expect(
            SourceRules.rawSyscalls(in: bad).map(\.name) == [
                "read", "write", "accept", "access", "unlink", "clinux_clock_jump_timer", "close",
            ])
        let good = """
            // read(fd, buffer, count) in a comment, and "unlink(path)" in a string
            func send(_ text: String) { output.append(text) }
            connection.send(Response.error(error, id: nil))
            close()
            Log.write(.error, m)
            try Sys.read(fd, into: &buffer)
            notifier.close(id: entry.id)
            """
        #expect(SourceRules.rawSyscalls(in: good).isEmpty)
    }

    @Test func theDaemonMakesEverySyscallThroughSys() {
        var found: [String] = []
        for file in Self.swiftFiles(under: "Sources/DiligenceDaemon") where !file.path.hasSuffix("/Syscalls.swift") {
            found += SourceRules.rawSyscalls(in: file.text).map { "\(file.path):\($0.line): \($0.name)(" }
        }
        #expect(found.isEmpty, "raw syscalls outside Syscalls.swift (add what is missing to Sys):\n\(found.joined(separator: "\n"))")
    }

    @Test func thePointerScannerFindsEscapes() {
        let escapes = [
            // Log.swift before issue 19: iovecs kept past the closure that lent the pointer.
            "storage[i].withUnsafeMutableBytes { vectors.append(iovec(iov_base: $0.baseAddress, iov_len: $0.count)) }",
            "let p = bytes.withUnsafeBytes { $0.baseAddress }",
            "let p = array.withUnsafeMutableBufferPointer { buffer in\n    return buffer.baseAddress!\n}",
            "name.withCString { saved = $0 }",
            "withUnsafeMutablePointer(to: &value) { raw in self.pointer = raw }",
        ]
        for text in escapes { #expect(SourceRules.pointerEscapes(in: text).count == 1, "\(text)") }
        let fine = [
            "let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }",
            "bytes.withUnsafeMutableBytes { buffer in\n    body(ranges.map { iovec(iov_base: buffer.baseAddress.map { $0 + 1 }, iov_len: 2) })\n}",
            "let count = tokens.withUnsafeMutableBufferPointer { t in\n    let n = wait(t.baseAddress)\n    return n\n}",
            "withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }",
        ]
        for text in fine { #expect(SourceRules.pointerEscapes(in: text).isEmpty, "\(text)") }
    }

    @Test func noPointerLeavesAWithScopeInSources() {
        var found: [String] = []
        for file in Self.swiftFiles(under: "Sources") {
            found += SourceRules.pointerEscapes(in: file.text).map { "\(file.path):\($0)" }
        }
        #expect(found.isEmpty, "pointers kept past the closure that lent them:\n\(found.joined(separator: "\n"))")
    }
}

/// The scanners (text in, findings out).
enum SourceRules {
    /// Calls that enter the kernel, by their libc names. `read`, `write`, `send` and `close` are
    /// also method names here: they count when qualified `Glibc.` or called like the syscall
    /// (a descriptor, then a comma; `close` with one unlabelled argument).
    static let syscalls = [
        "accept", "accept4", "socket", "socketpair", "bind", "listen", "connect", "getsockopt", "setsockopt", "recv", "recvmsg",
        "sendmsg", "sendto", "open", "openat", "creat", "unlink", "unlinkat", "rename", "renameat", "mkdir", "rmdir", "chmod",
        "fchmod", "chown", "stat", "lstat", "fstat", "access", "fsync", "fdatasync", "ftruncate", "truncate", "pread", "pwrite",
        "flock", "fcntl", "ioctl", "dup", "dup2", "pipe", "pipe2", "poll", "select", "epoll_create1", "epoll_ctl", "epoll_wait",
        "eventfd", "signalfd", "timerfd_create", "timerfd_settime", "inotify_init1", "inotify_add_watch", "kill", "waitpid",
        "waitid", "fork", "execve", "execvp", "posix_spawn", "posix_spawnp", "getrlimit", "setrlimit", "clock_gettime",
        "nanosleep", "usleep", "pthread_create", "pthread_sigmask", "sigprocmask", "signal", "sigaction", "getuid", "geteuid",
        "getpid", "prctl", "fopen", "opendir", "readlink", "mmap", "madvise", "umask",
    ]
    static let overloaded = ["read", "write", "send", "close"]
    /// The C shims' allocator tuning (mallopt, malloc_trim) is not a syscall.
    static let allowedShims: Set<String> = ["clinux_single_malloc_arena", "clinux_malloc_trim"]

    /// Source text with comments and string literals (multi-line ones too) blanked, line
    /// structure kept; `keepingStrings` keeps one-line string literals (a manifest's names).
    static func code(_ text: String, keepingStrings: Bool = false) -> [String] {
        var inMultiline = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { raw in
            var line = String(raw)
            if line.contains("\"\"\"") {
                inMultiline.toggle()
                return ""
            }
            if inMultiline { return "" }
            if keepingStrings {
                if let comment = line.range(of: #"^\s*//"#, options: .regularExpression) { line = String(line[..<comment.lowerBound]) }
                return line
            }
            line = line.replacingOccurrences(of: #""(?:[^"\\]|\\.)*""#, with: "\"\"", options: .regularExpression)
            if let comment = line.range(of: "//") { line = String(line[..<comment.lowerBound]) }
            return line
        }
    }

    static func rawSyscalls(in text: String) -> [(line: Int, name: String)] {
        let plain = "(?<![\\w.])(" + syscalls.joined(separator: "|") + "|clinux_\\w+)\\s*\\("
        let qualified = "Glibc\\.(\\w+)\\s*\\("
        let overloadedCall = "(?<![\\w.])(" + overloaded.joined(separator: "|") + ")\\((?:[A-Za-z_][\\w.]*|\\d+)\\s*[,)]"
        var found: [(Int, String)] = []
        for (index, line) in code(text).enumerated() {
            var hits: [(String.Index, String)] = []
            for pattern in [plain, qualified, overloadedCall] {
                let regex = try! NSRegularExpression(pattern: pattern)
                for match in regex.matches(in: line, range: NSRange(line.startIndex..., in: line)) {
                    guard let range = Range(match.range(at: 1), in: line) else { continue }
                    let before = line[..<range.lowerBound]
                    if before.hasSuffix("func ") || allowedShims.contains(String(line[range])) { continue }
                    hits.append((range.lowerBound, String(line[range])))
                }
            }
            var seen = Set<String.Index>()
            for hit in hits.sorted(by: { $0.0 < $1.0 }) where seen.insert(hit.0).inserted { found.append((index + 1, hit.1)) }
        }
        return found
    }

    /// `with…` closures that return or store the pointer they were lent: "line N: what".
    static func pointerEscapes(in text: String) -> [String] {
        let source = code(text).joined(separator: "\n")
        let opener = try! NSRegularExpression(pattern: #"\.?(withUnsafe\w*|withMemoryRebound|withCString)\b[^{\n]*\{"#)
        var found: [String] = []
        for match in opener.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            guard let range = Range(match.range, in: source),
                let body = closureBody(source, openingAt: source.index(before: range.upperBound))
            else { continue }
            let line = source[..<range.lowerBound].filter { $0 == "\n" }.count + 1
            if let problem = escape(in: body) { found.append("line \(line): \(problem)") }
        }
        return found
    }

    /// The text between the brace at `open` and its match.
    static func closureBody(_ source: String, openingAt open: String.Index) -> Substring? {
        var depth = 0
        var index = open
        while index < source.endIndex {
            if source[index] == "{" { depth += 1 }
            if source[index] == "}" {
                depth -= 1
                if depth == 0 { return source[source.index(after: open)..<index] }
            }
            index = source.index(after: index)
        }
        return nil
    }

    /// Why `body` lets its pointer out, if it does.
    static func escape(in body: Substring) -> String? {
        var text = body.trimmingCharacters(in: .whitespacesAndNewlines)
        var names = ["$0"]
        if let inKeyword = text.range(of: #"^\(?\s*\w+(\s*,\s*\w+)*\s*\)?\s+in\b"#, options: .regularExpression) {
            names = text[inKeyword].replacingOccurrences(of: "in", with: "").components(separatedBy: CharacterSet(charactersIn: "(), "))
                .filter { !$0.isEmpty }
            text = String(text[inKeyword.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        for name in names {
            let pointer = NSRegularExpression.escapedPattern(for: name) + #"(\.baseAddress)?!?"#
            let checks = [
                ("returns the pointer", "^(return\\s+)?" + pointer + "$"),
                ("returns the pointer", "(^|\\n)\\s*return\\s+" + pointer + "\\s*($|\\n)"),
                ("appends the pointer to something outside", "\\.append\\([^\\n]*" + NSRegularExpression.escapedPattern(for: name)),
                ("stores the pointer outside", "(^|[\\n;{])\\s*(?!let\\b|var\\b)[\\w.\\[\\]]+\\s*=\\s*" + pointer + "\\s*($|[\\n;}])"),
            ]
            for (problem, pattern) in checks where text.range(of: pattern, options: .regularExpression) != nil {
                return "a with… closure \(problem)"
            }
        }
        return nil
    }
}
