import DiligenceCore
import Testing
import DiligenceTestSupport
@testable import DiligenceProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Everything that reads the process time zone; serialized because the tests change it.
@Suite("RFC 3339 dates", .serialized)
struct RFC3339Tests {
    @Test func formatInUTC() {
        withTimeZone("UTC0") {
            #expect(RFC3339.format(0) == "1970-01-01T00:00:00+00:00")
            #expect(RFC3339.format(1_780_000_000) == "2026-05-28T20:26:40+00:00")
            #expect(RFC3339.format(1_780_000_000.999) == "2026-05-28T20:26:40+00:00")
            #expect(RFC3339.format(-14_182_940) == "1969-07-20T20:17:40+00:00")
            #expect(RFC3339.format(1_709_208_000) == "2024-02-29T12:00:00+00:00")
        }
    }

    @Test func formatInFixedOffsetZones() {
        withTimeZone("IST-5:30") {
            #expect(RFC3339.format(0) == "1970-01-01T05:30:00+05:30")
            #expect(RFC3339.format(1_795_973_400) == "2026-11-29T23:00:00+05:30")
        }
        withTimeZone("EST5") {
            #expect(RFC3339.format(0) == "1969-12-31T19:00:00-05:00")
        }
        withTimeZone("NST3:30") {
            #expect(RFC3339.format(0) == "1969-12-31T20:30:00-03:30")
        }
    }

    @Test(arguments: ["UTC0", "IST-5:30", "EST5", "NST3:30", "CET-1CEST,M3.5.0,M10.5.0/3"])
    func roundTrip(_ zone: String) {
        withTimeZone(zone) {
            for wall in [0.0, 1_780_000_000, 1_795_973_400, 1_709_208_000, -14_182_940, 1_743_296_399, 1_743_296_400, 4_102_444_800] {
                let text = RFC3339.format(wall)
                #expect(RFC3339.parse(text) == wall, "\(zone) \(text)")
            }
            #expect(RFC3339.parse(RFC3339.format(1_780_000_000.75)) == 1_780_000_000)
        }
    }

    @Test func parseIsIndependentOfTheLocalZone() {
        withTimeZone("IST-5:30") {
            #expect(RFC3339.parse("2026-11-29T17:30:00Z") == 1_795_973_400)
            #expect(RFC3339.parse("2026-11-29T18:30:00+01:00") == 1_795_973_400)
            #expect(RFC3339.parse("2026-11-29T12:30:00-05:00") == 1_795_973_400)
            #expect(RFC3339.parse("2026-11-29t17:30:00z") == 1_795_973_400)
            #expect(RFC3339.parse("2026-11-29 17:30:00Z") == 1_795_973_400)
            #expect(RFC3339.parse("2026-11-29T17:30:00.5Z") == 1_795_973_400.5)
            #expect(RFC3339.parse("2024-02-29T12:00:00Z") == 1_709_208_000)
            #expect(RFC3339.parse("1969-07-20T20:17:40Z") == -14_182_940)
        }
    }

    @Test(arguments: [
        "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T25:00:00Z", "2026-01-01T24:00:00Z",
        "2026-01-01T00:60:00Z", "2026-01-01T00:00:61Z", "2026-01-01T00:00:00", "2026-01-01T00:00:00+0100",
        "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00+01:60", "2026-01-01T00:00:00Zjunk", "2026-01-01T00:00:00.Z",
        "2026-1-01T00:00:00Z", "2026-01-01X00:00:00Z", "", "not a date at all, no", "2026-01-01T00:00:00+01",
    ])
    func parseRejects(_ text: String) {
        #expect(RFC3339.parse(text) == nil)
    }

    @Test func runningStatusJSON() throws {
        try withTimeZone("IST-5:30") {
            var machine = TimerMachine()
            let now = Now(steady: 100, wall: 1_795_973_400)
            _ = try machine.start(TaskConfig(name: "Writing", color: .purple, goal: 8), at: now)
            let json = machine.status(at: now.adding(60.5)).json(todayCompleted: 3)
            guard case let .object(members) = json else { Issue.record("not an object"); return }
            #expect(members.map(\.0) == [
                "state", "phase", "task", "color", "round", "long_break_every", "duration_seconds",
                "remaining_seconds", "elapsed_seconds", "ends_at", "pauses", "focus_mode", "today_completed", "goal",
            ])
            #expect(json["state"] == .string("running"))
            #expect(json["phase"] == .string("work"))
            #expect(json["task"] == .string("Writing"))
            #expect(json["color"] == .string("purple"))
            #expect(json["remaining_seconds"] == .int(1440))
            #expect(json["elapsed_seconds"] == .int(60))
            #expect(json["ends_at"] == .string("2026-11-29T23:25:00+05:30"))
            #expect(json["goal"] == .int(8))
            #expect(json["today_completed"] == .int(3))
        }
    }

    @Test func sessionJSON() {
        withTimeZone("UTC0") {
            let session = WorkSession(
                id: 4, taskID: 1, taskName: "Writing", start: 1_795_973_400, end: 1_795_974_900,
                plannedSeconds: 1500, focusedSeconds: 1400, pauses: 2, outcome: .abandoned)
            #expect(session.json.serialized == #"{"id":4,"task":"Writing","start":"2026-11-29T17:30:00+00:00","end":"2026-11-29T17:55:00+00:00","planned_seconds":1500,"focused_seconds":1400,"pauses":2,"outcome":"abandoned"}"#)
        }
    }
}

@Suite("Socket path")
struct SocketPathTests {
    @Test func explicitSocketWins() {
        #expect(SocketPath.resolve(environment: ["DILIGENCE_SOCKET": "/x/s.sock", "XDG_RUNTIME_DIR": "/run/user/1000"]) == "/x/s.sock")
    }

    @Test func runtimeDirNext() {
        #expect(SocketPath.resolve(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/diligence/diligenced.sock")
        #expect(SocketPath.resolve(environment: ["DILIGENCE_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/diligence/diligenced.sock")
    }

    @Test(arguments: [[:], ["XDG_RUNTIME_DIR": ""], ["XDG_RUNTIME_DIR": "relative/dir"], ["DILIGENCE_SOCKET": ""]] as [[String: String]])
    func tmpLast(_ environment: [String: String]) {
        #expect(SocketPath.resolve(environment: environment) == "/tmp/diligence-\(getuid())/diligenced.sock")
    }

    @Test func processEnvironmentIsRead() {
        let env = ProcessEnvironment.current
        #expect(env["PATH"] != nil)
    }
}
