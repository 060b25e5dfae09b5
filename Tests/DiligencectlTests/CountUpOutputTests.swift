import DiligenceJSON
import Testing

@testable import DiligenceClient

/// Work that counts up (flow, overtime) shows the time spent where a countdown shows the time left.
@Suite("Output: work that counts up")
struct CountUpOutputTests {
    func counting(_ kind: String, elapsed: Int, duration: Int = 0) -> JSON {
        guard
            case .object(var members) = status(
                state: "running", phase: "work", task: "Deep", round: 2, duration: duration, elapsed: elapsed)
        else { return .null }
        members.append(("counts_up", .string(kind)))
        return .object(members)
    }

    @Test func theStatusLineSaysElapsedAndWhy() {
        #expect(statusLine(counting("flow", elapsed: 1930)) == "Deep · flow · 32:10 elapsed · round 2/4")
        #expect(statusLine(counting("overtime", elapsed: 1930, duration: 1500)) == "Deep · overtime · 32:10 elapsed · round 2/4")
        // A countdown is as before.
        #expect(statusLine(status(state: "running", phase: "work", task: "W", remaining: 754)).hasSuffix("12:34 left · round 1/4"))
    }

    @Test func templatesAndBarsShowTheElapsedTime() throws {
        let flow = counting("flow", elapsed: 3000)
        #expect(try renderTemplate("{clock} {elapsed} {remaining} {counts_up}", status: flow) == "50:00 50:00 0:00 flow")
        let line = try JSON.parse(waybarLine(flow))
        #expect(line["text"]?.stringValue == "▶ 50:00")
        #expect(line["class"] == .array([.string("work"), .string("flow")]))
        #expect(line["alt"]?.stringValue == "work")
        let overtime = try JSON.parse(waybarLine(counting("overtime", elapsed: 1800, duration: 1500)))
        #expect(overtime["class"] == .array([.string("work"), .string("overtime")]) && overtime["percentage"] == .int(100))
    }

    @Test func aFlowTasksDetailsShowItsBreakRule() {
        let deep = JSON.object([
            ("name", .string("Deep")), ("mode", .string("flow")), ("break_ratio", .string("<25m=5m,else=15m")),
            ("min_break_seconds", .int(240)), ("max_break_seconds", .int(1200)), ("flow_nudge_seconds", .int(5400)),
            ("overtime", .bool(false)),
        ])
        #expect(
            taskDetails(deep).hasSuffix(
                "mode: flow\nbreak-ratio: <25m=5m,else=15m\nmin-break: 4m\nmax-break: 20m\nflow-nudge: 1h30m\n"))
    }

    @Test func taskOptionsReachTheWire() throws {
        let line = try requestLine([
            "task", "edit", "Deep", "--mode", "flow", "--break-ratio", "<25m=5m, else=15m", "--min-break", "4m",
            "--flow-nudge", "off", "--overtime", "yes",
        ])
        let request = try JSON.parse(Array(line.utf8))
        #expect(request["mode"] == .string("flow") && request["break_ratio"] == .string("<25m=5m,else=15m"))
        #expect(request["min_break"] == .int(240) && request["flow_nudge"] == .null && request["overtime"] == .bool(true))
        #expect(usageError(["task", "edit", "Deep", "--break-ratio", "1/0"]) != nil)
        #expect(usageError(["task", "edit", "Deep", "--mode", "stopwatch"]) != nil)
    }
}
