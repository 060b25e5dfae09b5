import DiligenceTestSupport
import DiligenceTime
import Testing

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

    @Test func compactUTCIgnoresTheLocalZone() {
        withTimeZone("IST-5:30") {
            #expect(RFC3339.compactUTC(1_795_973_400) == "20261129T173000Z")
            #expect(RFC3339.compactUTC(0.999) == "19700101T000000Z")
        }
    }

    @Test func dateAndClockOfAText() {
        #expect(RFC3339.dateText("2026-11-29T23:05:00+05:30") == "2026-11-29")
        #expect(RFC3339.clockText("2026-11-29T23:05:00+05:30") == "23:05")
        #expect(RFC3339.clockText("junk") == "junk")
        #expect(RFC3339.clockText("2026-11-29T23:05") == "23:05")
        #expect(RFC3339.clockText("2026-11-29T23:0\u{301}5:00") == "23:0\u{301}5")
    }
}
