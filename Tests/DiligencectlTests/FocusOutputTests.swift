import DiligenceJSON
import Testing

@testable import DiligenceClient

/// The focus guard as the bars show it: `{dnd}` and the waybar class `dnd`.
@Suite struct FocusOutputTests {
    func guarded(_ active: Bool) -> JSON {
        guard case .object(var members) = status(state: "running", phase: "work", task: "W", remaining: 60) else { return .null }
        let dnd: [(String, JSON)] = active ? [("active", .bool(true)), ("backend", .string("dunst"))] : [("active", .bool(false))]
        members.append(("do_not_disturb", .object(dnd)))
        return .object(members)
    }

    @Test func dndPlaceholder() throws {
        #expect(try renderTemplate("{icon}{dnd}", status: guarded(true)) == "▶🔕")
        #expect(try renderTemplate("{icon}{dnd}", status: guarded(false)) == "▶")
    }

    @Test func waybarClassDnd() throws {
        let on = try JSON.parse(waybarLine(guarded(true)))
        #expect(on["class"]?.arrayValue?.compactMap(\.stringValue) == ["work", "dnd"])
        #expect(on["alt"]?.stringValue == "work")
        let off = try JSON.parse(waybarLine(guarded(false)))
        #expect(off["class"]?.stringValue == "work")
    }
}
