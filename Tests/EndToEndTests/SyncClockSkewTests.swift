import DiligenceJSON
import DiligenceProtocol
import DiligenceSync
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// A device whose wall clock is wrong (docs/sync.md, "Clocks that are wrong"): three real daemons,
// C's clock 30 h ahead under the fake-clock library (Tests/FakeClock), this test as the sync
// tool between their folders. An edit made after reading C's wins over C's on every device, C's
// session is taken once this device's clock reaches it, and the skew is said, naming C.

extension EndToEnd {
    @Suite("Sync: a device whose clock is 30 h ahead")
    struct SyncClockSkew {
        typealias Merge = SyncMerge

        struct Device {
            let d: DaemonUnderTest
            let clock: SimulatedClock
            let folder: String
            let id: String
            var pid: pid_t { d.process!.pid }
        }

        /// A daemon under a fake clock `ahead` seconds ahead of the real one, sync enabled as `name`.
        static func device(_ name: String, ahead: Double = 0) throws -> Device {
            let d = try DaemonUnderTest(launch: false)
            let clock = try SimulatedClock(directory: d.root)
            d.daemonEnvironment = try clock.environment
            try d.start()
            if ahead != 0 { try clock.stepWall(ahead, pid: d.process!.pid) }
            let folder = d.root + "/sync"
            let enable = try d.ctl("sync", "enable", folder, "--name", name)
            guard enable.exitCode == 0 else { throw HarnessError("sync enable: \(enable)") }
            let id = try #require(try d.call("sync_status")["device"]?["id"]?.stringValue)
            return Device(d: d, clock: clock, folder: folder, id: id)
        }

        /// Every device's journal delivered to every other device's folder.
        static func exchange(_ devices: [Device]) throws {
            for from in devices {
                _ = try from.d.status()
                let bytes = try SyncOwnJournal.bytes("\(from.folder)/\(from.id).jsonl")
                for to in devices where to.id != from.id { try Merge.deliver(bytes, to: "\(to.folder)/\(from.id).jsonl") }
            }
            for device in devices { _ = try device.d.status() }
        }

        static func description(_ d: DaemonUnderTest, _ task: String) throws -> String? {
            try d.call("task_list")["tasks"]?.arrayValue?.first { $0["name"]?.stringValue == task }?["description"]?.stringValue
        }

        /// `seconds` (wall clock) as `history add` takes a moment in UTC (the daemons' TZ).
        static func moment(_ seconds: Double) -> String {
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            return String(
                format: "%04d-%02d-%02d %02d:%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                Int(parts.tm_hour),
                Int(parts.tm_min))
        }

        @Test("an edit made after reading C's wins everywhere; C's session is taken once its time comes; the skew is said, naming C")
        func thirtyHoursAhead() throws {
            let a = try Self.device("alpha")
            let b = try Self.device("bravo")
            let c = try Self.device("charlie", ahead: 30 * 3600)
            let all = [a, b, c]
            try Self.exchange(all)

            // The edit ordering: C edits Daily, every device reads it, then A edits it and is told ok.
            try c.d.call("task_edit", [("task", .string("Daily")), ("description", .string("from C"))])
            try Self.exchange(all)
            for device in all { #expect(try Self.description(device.d, "Daily") == "from C", "\(device.id) has C's edit") }
            try a.d.call("task_edit", [("task", .string("Daily")), ("description", .string("from A, later"))])
            try Self.exchange(all)
            for device in all {
                #expect(
                    try Self.description(device.d, "Daily") == "from A, later",
                    "A's later, acknowledged edit wins on \(device.id) (A \(a.id), C \(c.id))\n\(device.d.diagnostics)")
            }
            try a.d.restart()
            #expect(try Self.description(a.d, "Daily") == "from A, later", "and after A restarts")

            // The skew is said on A and B, naming C: in sync status and in the log.
            for device in [a, b] {
                let devices = try #require(try device.d.call("sync_status")["devices"]?.arrayValue)
                let ofC = try #require(devices.first { $0["id"]?.stringValue == c.id })
                let ahead = try #require(ofC["clock_ahead_seconds"]?.intValue, "sync status says C is ahead: \(ofC.serialized)")
                #expect(abs(ahead - 30 * 3600) < 600, "about 30 h: \(ahead)")
                let text = try device.d.ctl("sync", "status")
                #expect(text.stdout.contains("charlie") && text.stdout.contains("ahead"), "\(text.stdout)")
                // Once per run (A has run twice).
                for path in device.d.stderrPaths {
                    let logged = readTextFile(path).split(separator: "\n").filter { $0.contains("sync_clock_ahead") }
                    #expect(logged.count == 1 && logged.first?.contains("charlie") == true, "logged once, naming C: \(logged)")
                }
            }
            let ofAOnC = try #require(try c.d.call("sync_status")["devices"]?.arrayValue?.first { $0["id"]?.stringValue == a.id })
            #expect(ofAOnC["clock_ahead_seconds"] == .null, "A's clock is not ahead of C's: \(ofAOnC.serialized)")

            // The late session: C records one ending 5 minutes before its own now, 30 h ahead of A's.
            let cNow = c.clock.daemonWall
            let session = try c.d.call(
                "history_add",
                [("task", .string("Study")), ("start", .string(Self.moment(cNow - 1800))), ("end", .string(Self.moment(cNow - 300)))])
            let uuid = try #require(session["uuid"]?.stringValue)
            try Self.exchange(all)
            func has(_ device: Device) throws -> Bool {
                (try device.d.call("history")["sessions"]?.arrayValue ?? []).contains { $0["uuid"]?.stringValue == uuid }
            }
            #expect(try !has(a), "A does not take a session ending 30 h from its now")
            // A restart keeps it waiting; 7 h later on A's clock (it ends less than a day ahead), A takes it.
            try a.d.restart()
            #expect(try !has(a))
            try a.clock.stepWall(7 * 3600, pid: a.pid)
            try Merge.eventually("A takes C's session once its time comes") { try has(a) }
            try b.clock.stepWall(7 * 3600, pid: b.pid)
            try Merge.eventually("B takes it too") { try has(b) }
            #expect(try has(c))
            // All three converge.
            let histories = try all.map { try Merge.history($0.d) }
            #expect(histories[0] == histories[1] && histories[1] == histories[2], "\(histories)")
            let tasks = try all.map { try Merge.taskNames($0.d) }
            #expect(tasks[0] == tasks[1] && tasks[1] == tasks[2], "\(tasks)")
        }
    }
}
