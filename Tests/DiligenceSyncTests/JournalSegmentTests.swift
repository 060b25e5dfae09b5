import DiligenceCore
import DiligenceJSON
import DiligenceSync
import Testing

@Suite("Journal lines: focus segments") struct JournalSegmentTests {
    /// 25 minutes of focus in two stretches around a pause, over a 30-minute span.
    static func paused() -> SyncedSession {
        var s = session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_569_000.375, minutes: 30)
        s.focusedSeconds = 1500
        s.pauses = 1
        s.segments = [FocusSegment(start: s.start, seconds: 600), FocusSegment(start: s.start + 900.5, seconds: 900)]
        return s
    }

    static func line(_ s: SyncedSession) -> String {
        JournalEntry(device: deviceA, hlc: HLC(millis: 1, counter: 0), change: .sessionRecorded(s)).line
    }

    static func read(_ line: String) throws -> SyncedSession? {
        guard case .sessionRecorded(let s) = try JournalEntry.parse(Array(line.utf8)).change else { return nil }
        return s
    }

    @Test("a session's segments travel with it, exactly; one segment from its start is not written, as older lines")
    func roundTrip() throws {
        let line = Self.line(Self.paused())
        #expect(line.contains(#""segments":[[1764569000.375,600],[1764569900.875,900]]"#), "\(line)")
        #expect(try Self.read(line) == Self.paused())
        let whole = session(uuid(2), task: uuid(9), device: deviceA, start: 1_764_569_000)
        #expect(!Self.line(whole).contains("segments"), "a line as an older diligence writes it")
        #expect(try Self.read(Self.line(whole))?.segments == [FocusSegment(start: 1_764_569_000, seconds: 1500)])
    }

    @Test("a line without segments (an older diligence) has one from its start; bad ones are refused, ill-fitting ones fitted")
    func olderBadOrFitted() throws {
        let line = Self.line(Self.paused())
        let without = line.replacing(/,"segments":\[\[[^"]*\]\]/, with: "")
        #expect(!without.contains("segments"))
        #expect(try Self.read(without)?.segments == [FocusSegment(start: 1_764_569_000.375, seconds: 1500)])
        for bad in [#""segments":7"#, #""segments":[[1764569000,"600"]]"#, #""segments":[[1764569000]]"#, #""segments":{}"#] {
            let refused = without.replacing(#""outcome":"completed""#, with: #""outcome":"completed","# + bad)
            #expect(throws: JournalLineError.self, "\(bad)") { try JournalEntry.parse(Array(refused.utf8)) }
        }
        // Longer than the focus, and outside the span: fitted, the same on every device.
        let long = without.replacing(
            #""outcome":"completed""#, with: #""outcome":"completed","segments":[[1764560000,600],[1764569900.875,1200]]"#)
        let fitted = try #require(try Self.read(long)?.segments)
        #expect(fitted.reduce(0) { $0 + $1.seconds } == 1500, "\(fitted)")
        #expect(fitted.allSatisfy { $0.start >= 1_764_569_000.375 && $0.end <= 1_764_569_000.375 + 1800 + 1 }, "\(fitted)")
    }
}
