import DiligenceTestSupport
import Dispatch
import Synchronization
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The time-zone watch on a directory of the test's own, changed the ways tools change
/// /etc/localtime.
@Suite struct DirectoryWatchTests {
    @Test func aReplacedOrRewrittenZoneIsSeenAndOtherFilesAreNot() throws {
        let dir = TemporaryDirectory("diligence-zone")
        defer { dir.remove() }
        let link = dir.path + "/localtime"
        #expect(symlink("/usr/share/zoneinfo/Europe/Berlin", link) == 0)
        let queue = DispatchQueue(label: "zone-watch-test")
        let changes = Mutex(0)
        let watch = try #require(DirectoryWatch.timeZone(directory: dir.path, queue: queue) { changes.withLock { $0 += 1 } })
        defer { queue.sync { watch.close() } }

        // Another file of the directory, written: not the zone.
        let other = open(dir.path + "/hostname", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        close(other)
        queue.sync { watch.check() }
        #expect(changes.withLock { $0 } == 0)

        // timedatectl: a new link renamed over the old one (seen by check() or the read source, once).
        #expect(symlink("/usr/share/zoneinfo/Asia/Tokyo", dir.path + "/.localtime.new") == 0)
        #expect(rename(dir.path + "/.localtime.new", link) == 0)
        queue.sync { watch.check() }
        #expect(changes.withLock { $0 } == 1)

        // A copied zone file written in place (cp): seen by the read source on its own.
        #expect(unlink(link) == 0)
        queue.sync { watch.check() }
        let before = changes.withLock { $0 }
        let fd = open(link, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        close(fd)
        var waited = 0
        while changes.withLock({ $0 }) == before && waited < 500 {
            usleep(10_000)
            waited += 1
        }
        #expect(changes.withLock { $0 } > before, "the read source did not report the rewritten file")
    }
}
