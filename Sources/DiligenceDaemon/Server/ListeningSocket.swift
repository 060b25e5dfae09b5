import DiligenceCore
import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The control socket: passed in by systemd (socket activation) or bound here.
struct ListeningSocket {
    let fd: Int32
    let path: String
    /// The device and inode of the socket file this process bound (nil for a socket systemd
    /// passed in, which belongs to systemd). The file is removed on exit only while the path
    /// still names that very file: after a socket unit took the path over, it is systemd's.
    let boundFile: (device: UInt64, inode: UInt64)?

    /// Takes systemd's socket when there is one, else binds `path` (single instance: a live
    /// daemon there is an error, a stale socket file is replaced).
    static func open(path: String) throws(DiligenceError) -> ListeningSocket {
        if let fd = Systemd.listenFD() {
            Sys.setCloseOnExec(fd)
            do { try Sys.setNonBlocking(fd) } catch {
                throw DiligenceError(.socketError, "Cannot use the socket systemd passed: \(error.reason).")
            }
            return ListeningSocket(fd: fd, path: path, boundFile: nil)
        }
        guard let address = Sys.unixAddress(path) else {
            throw DiligenceError(
                .socketPathTooLong,
                "The socket path \(path) is longer than \(SocketPath.maxLength) bytes; choose a shorter one with --socket or DILIGENCE_SOCKET."
            )
        }
        try prepareDirectory(Files.directory(of: path))
        try removeStale(path, address: address)

        let fd: Int32
        do { fd = try Sys.unixSocket(nonBlocking: true) } catch {
            throw DiligenceError(.socketError, "Cannot create a socket: \(error.reason).")
        }
        do { try Sys.bind(fd, to: address) } catch {
            Sys.close(fd)
            if error.code == EADDRINUSE {
                throw DiligenceError(.alreadyRunning, "Another diligenced is already running on \(path).")
            }
            throw DiligenceError(.socketError, "Cannot bind \(path): \(error.reason).")
        }
        // The socket file is 0600 whatever the umask. Not by setting the umask around bind: it
        // is the process's, and another thread creating a file or starting a child meanwhile
        // (in-process test daemons, the tests' own processes) would get 0177 too. Until this
        // chmod nobody else can reach the socket anyway: its directory is ours and 0700.
        do {
            try Sys.chmod(path, 0o600)
            // The kernel's limit, as systemd's socket units ask: a burst of non-blocking
            // connects (asyncio, Node) past a short backlog fails at once with EAGAIN.
            try Sys.listen(fd, backlog: SOMAXCONN)
        } catch {
            Sys.close(fd)
            Sys.unlink(path)
            let what = error.call.hasPrefix("chmod") ? "make \(path) private (chmod 0600)" : "listen on \(path)"
            throw DiligenceError(.socketError, "Cannot \(what): \(error.reason).")
        }
        let file = Sys.fileStatus(path).map { (device: UInt64($0.st_dev), inode: UInt64($0.st_ino)) }
        return ListeningSocket(fd: fd, path: path, boundFile: file)
    }

    /// Creates the socket's directory 0700, or checks an existing one: it must be ours and
    /// writable by nobody else, or another user could replace the socket.
    private static func prepareDirectory(_ directory: String) throws(DiligenceError) {
        if Sys.fileStatus(directory) == nil {
            try Files.makeDirectories(directory, mode: 0o700)
            return
        }
        guard let st = Sys.fileStatus(directory), Sys.isDirectory(st) else {
            throw DiligenceError(.notADirectory, "\(directory) is not a directory.")
        }
        // A sticky world-writable directory such as /tmp is fine: others cannot remove our files.
        let sticky = st.st_mode & S_ISVTX != 0
        if st.st_uid != Sys.userID && !sticky {
            throw DiligenceError(
                .unsafeDirectory,
                "\(directory) belongs to uid \(st.st_uid), not to you (uid \(Sys.userID)); use a directory of your own for the socket.")
        }
        if st.st_mode & (S_IWGRP | S_IWOTH) != 0 && !sticky {
            throw DiligenceError(
                .unsafeDirectory, "\(directory) is writable by other users; run `chmod 700 \(directory)` or choose another socket path.")
        }
    }

    /// Removes a socket file nobody answers on; refuses when a daemon answers or the file is not a socket.
    private static func removeStale(_ path: String, address: sockaddr_un) throws(DiligenceError) {
        guard let st = Sys.fileStatus(path) else { return }
        guard Sys.isSocket(st) else {
            throw DiligenceError(.notASocket, "\(path) exists and is not a socket; remove it or choose another path with --socket.")
        }
        guard let probe = try? Sys.unixSocket(nonBlocking: false) else { return }
        defer { Sys.close(probe) }
        do { try Sys.connect(probe, to: address) } catch  where error.code == ECONNREFUSED {
            Log.info("Replacing the stale socket \(path) left by an earlier daemon.")
            Sys.unlink(path)
            return
        } catch {
            return
        }
        throw DiligenceError(
            .alreadyRunning, "Another diligenced is already running on \(path). Stop it first (diligencectl status shows it).")
    }

    func close() {
        Sys.close(fd)
        guard let boundFile else { return }
        if let now = Sys.fileStatus(path), UInt64(now.st_dev) == boundFile.device, UInt64(now.st_ino) == boundFile.inode {
            Sys.unlink(path)
        } else {
            Log.info(
                "Leaving \(path) alone: it is no longer the socket this daemon bound (another daemon or systemd's socket unit has it).")
        }
    }
}
