import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's side of the systemd service protocol (sd_notify(3), sd_listen_fds(3),
/// sd_watchdog_enabled(3)). Without systemd every call is a cheap no-op.
enum Systemd {
    /// Sends `state` (newline-separated `KEY=value` pairs) to `$NOTIFY_SOCKET`, if any.
    static func notify(_ state: String) {
        _ = sd_notify(0, state)
    }

    /// The listening socket systemd passed in (socket activation), if exactly one.
    static func listenFD() -> Int32? {
        // unset_environment = 1: children (hooks) must not think the socket is theirs.
        let n = sd_listen_fds(1)
        return n >= 1 ? SD_LISTEN_FDS_START : nil
    }

    /// The watchdog interval in seconds when systemd asked for pings.
    static func watchdogInterval() -> Double? {
        var usec: UInt64 = 0
        return sd_watchdog_enabled(0, &usec) > 0 && usec > 0 ? Double(usec) / 1e6 : nil
    }
}
