import DiligenceCore
import DiligenceSync

#if canImport(Glibc)
    import Glibc
#endif

/// File-system helpers the daemon needs at start-up.
enum Files {
    /// The directory part of `path` ("." when none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `mkdir -p` with `mode` for each directory it creates.
    static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws(DiligenceError) {
        if let st = Sys.fileStatus(path) {
            guard Sys.isDirectory(st) else {
                throw DiligenceError(.notADirectory, "\(path) exists and is not a directory.")
            }
            return
        }
        let parent = directory(of: path)
        if parent != path && parent != "." && parent != "/" { try makeDirectories(parent, mode: mode) }
        do { try Sys.makeDirectory(path, mode: mode) } catch  where error.code != EEXIST {
            throw DiligenceError(.cannotCreateDirectory, "Cannot create \(path): \(error.reason).")
        } catch {}
    }

    /// `path` with the symbolic links of its existing part resolved, the rest (not made yet)
    /// kept as given: a folder reached through a link is then named by what it is.
    static func resolvingLinks(_ path: String) throws(DiligenceError) -> String {
        do { return try Sys.realPath(path) } catch  where error.code == ENOENT {
            let parent = directory(of: path)
            guard parent != path, parent != ".", Sys.fileStatus(path) == nil else { return path }
            let name = path.split(separator: "/").last.map(String.init) ?? ""
            let base = try resolvingLinks(parent)
            return (base == "/" ? "" : base) + "/" + name
        } catch {
            throw DiligenceError(.notADirectory, "Cannot resolve \(path): \(error.reason).")
        }
    }

    /// Appends `text` to `path` (created 0600) and waits until it is on disk.
    static func append(_ text: String, to path: String) throws(Errno) {
        try writeFile(text, to: path, flags: O_APPEND, synced: true)
    }

    /// Replaces `path` by a file holding `text` (0600; renamed into place, so a reader sees
    /// the old file or the new one, never half of one). `synced`: on disk before it takes the
    /// name, so a crash cannot leave half of one either (a copy that can be made again, such as
    /// the last good config, skips the wait).
    static func replace(_ path: String, with text: String, synced: Bool = true) throws(Errno) {
        let temporary = path + ".new"
        try writeFile(text, to: temporary, flags: O_TRUNC, synced: synced)
        try Sys.rename(temporary, to: path)
    }

    private static func writeFile(_ text: String, to path: String, flags: Int32, synced: Bool) throws(Errno) {
        let fd: Int32
        do { fd = try RegularFile.open(path, O_WRONLY | O_CREAT | flags, mode: 0o600) } catch {
            throw Errno(fileError: error, call: "open \(path)")
        }
        defer { Sys.close(fd) }
        try Sys.writeAll(fd, Array(text.utf8), call: "write \(path)")
        if synced { try Sys.fsync(fd, call: "fsync \(path)") }
    }

    /// The whole file as text, nil when it does not exist. `followingLinks`: the config file,
    /// which dotfile managers (stow, home-manager) link; the link's target must still be a
    /// regular file. A FIFO, a device or a directory is refused, never waited on.
    static func read(_ path: String, followingLinks: Bool = false) throws(DiligenceError) -> String? {
        let bytes: [UInt8]
        do {
            guard let contents = try RegularFile.read(path, limit: 1 << 20, followingLinks: followingLinks) else { return nil }
            bytes = contents
        } catch {
            switch error.problem {
            case .tooLarge: throw DiligenceError(.cannotRead, "\(path) is larger than 1 MiB; is it the right file?")
            case .notRegular: throw DiligenceError(.notARegularFile, "\(error.description); it is not read.")
            case .system: throw DiligenceError(.cannotRead, "Cannot read \(path): \(error.reason).")
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw DiligenceError(.invalidConfig, "\(path) is not UTF-8 text.")
        }
        return text
    }
}

// Here, not beside `Sys`: the sanitizer test compiles the syscall wrappers alone, without
// DiligenceProtocol.
extension Errno {
    /// A refused `RegularFile.open`: its errno, or EINVAL with what the file is.
    init(fileError: FileError, call: String) {
        switch fileError.problem {
        case .system(let code): self.init(code: code, call: call)
        case .notRegular, .tooLarge: self.init(code: EINVAL, call: call, detail: fileError.reason)
        }
    }
}
