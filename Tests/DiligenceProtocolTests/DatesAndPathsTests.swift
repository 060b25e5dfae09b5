import DiligenceCore
import DiligenceJSON
import DiligenceTestSupport
import Testing

@testable import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Dates in the protocol's JSON (local time with its offset); serialized because the tests change the zone.
@Suite("Dates in JSON", .serialized)
struct DatesInJSONTests {
    @Test func runningStatusJSON() throws {
        try withTimeZone("IST-5:30") {
            var machine = TimerMachine()
            let now = Now(steady: 100, wall: 1_795_973_400)
            _ = try machine.start(TaskConfig(name: "Writing", color: .purple, goal: 8), at: now)
            let json = machine.status(at: now.adding(60.5)).json(todayCompleted: 3)
            guard case .object(let members) = json else {
                Issue.record("not an object")
                return
            }
            #expect(
                members.map(\.0) == [
                    "state", "phase", "task", "color", "round", "long_break_every", "duration_seconds",
                    "remaining_seconds", "elapsed_seconds", "ends_at", "pauses", "focus_mode", "today_completed", "goal",
                    "note", "presence", "away_since", "away_offered", "interruptions",
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
                plannedSeconds: 1500, focusedSeconds: 1400, pauses: 2, outcome: .abandoned, uuid: "0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012")
            #expect(
                session.json.serialized
                    == #"{"id":4,"uuid":"0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012","task":"Writing","start":"2026-11-29T17:30:00+00:00","end":"2026-11-29T17:55:00+00:00","planned_seconds":1500,"focused_seconds":1400,"pauses":2,"outcome":"abandoned","note":null,"away_seconds":0,"reason":null,"device":null,"interruptions":[],"segments":[{"start":"2026-11-29T17:30:00+00:00","end":"2026-11-29T17:53:20+00:00","seconds":1400}]}"#
            )
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
        #expect(
            SocketPath.resolve(environment: ["DILIGENCE_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/1000"])
                == "/run/user/1000/diligence/diligenced.sock")
    }

    @Test(arguments: [[:], ["XDG_RUNTIME_DIR": ""], ["XDG_RUNTIME_DIR": "relative/dir"], ["DILIGENCE_SOCKET": ""]] as [[String: String]])
    func tmpLast(_ environment: [String: String]) {
        #expect(SocketPath.resolve(environment: environment) == "/tmp/diligence-\(getuid())/diligenced.sock")
    }

    @Test func processEnvironmentIsRead() {
        // A variable of this test's own, with "=" in its value: read as the process has it now.
        let name = "DILIGENCE_TEST_ENVIRONMENT_\(getpid())"
        setenv(name, "a=b c", 1)
        defer { unsetenv(name) }
        let env = ProcessEnvironment.current
        #expect(env[name] == "a=b c")
        #expect(env["PATH"] == getenv("PATH").map { String(cString: $0) })
        var count = 0
        while environ[count] != nil { count += 1 }
        #expect(env.count == count, "\(env.count) variables read, the process has \(count)")
    }
}
