import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Watches the entries of one directory with inotify, by name: the system's time zone, the
/// database's file, the sync folder and this device's journal in it. The watch is on the
/// directory, so an entry renamed over or removed and made again is seen; it costs nothing while
/// the directory is quiet.
final class DirectoryWatch {
    private let fd: Int32
    private let matches: (ArraySlice<UInt8>) -> Bool
    private let changed: () -> Void
    private let source: DispatchSourceRead

    /// Watches the system's time zone, `/etc/localtime`: `timedatectl set-timezone` replaces the
    /// symlink (a new link renamed over it), other tools rewrite or copy the file; each calls
    /// `changed` on the queue. Only when TZ is unset: a TZ in the environment names the zone for
    /// good (glibc never looks at /etc/localtime then). A zone file updated behind the link (a
    /// new tzdata) is not seen. Nil (logged) when inotify cannot watch it.
    static func timeZone(
        directory: String = "/etc", name: String = "localtime", queue: DispatchQueue, changed: @escaping () -> Void
    ) -> DirectoryWatch? {
        let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE)
        let name = Array(name.utf8)
        do {
            return try DirectoryWatch(
                directory: directory, mask: mask, queue: queue, matching: { $0.elementsEqual(name) }, changed: changed)
        } catch {
            Log.warning("Cannot watch \(directory) for a new time zone (\(error)); a new zone applies after a restart.")
            return nil
        }
    }

    /// Watches the entries of `directory` that `matches` accepts (by name) for the events of
    /// `mask`; throws when inotify cannot watch it.
    init(
        directory: String, mask: UInt32, queue: DispatchQueue, matching matches: @escaping (ArraySlice<UInt8>) -> Bool,
        changed: @escaping () -> Void
    ) throws(Errno) {
        let fd = try Sys.inotifyWatch(directory, mask: mask)
        self.fd = fd
        self.matches = matches
        self.changed = changed
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [unowned self] in
            dispatchPrecondition(condition: .onQueue(queue))
            self.check()
        }
        source.setCancelHandler { Sys.close(fd) }
        source.activate()
    }

    /// Reads what inotify has (never blocks) and calls `changed` once when a watched entry
    /// changed (the read source's handler; tests call it to look at once).
    func check() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var entryChanged = false
        while case .done(let n)? = try? Sys.read(fd, into: &buffer), n > 0 {
            var offset = 0
            // struct inotify_event: wd, mask, cookie, len (4 bytes each), then `len` bytes of name.
            while offset + 16 <= n {
                let field = { (at: Int) in buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + at, as: UInt32.self) } }
                let mask = field(4)
                let length = Int(field(12))
                let nameBytes = buffer[(offset + 16)..<min(n, offset + 16 + length)].prefix { $0 != 0 }
                if mask & UInt32(IN_Q_OVERFLOW) != 0 || matches(nameBytes) { entryChanged = true }
                offset += 16 + length
            }
        }
        if entryChanged { changed() }
    }

    /// Stops watching (the descriptor closes once the source has let go of it).
    func close() {
        source.cancel()
    }
}
