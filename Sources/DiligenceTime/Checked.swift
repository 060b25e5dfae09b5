#if canImport(Glibc)
    import Glibc
#endif

// Conversions of numbers that come from outside — a request, a file, a database written by
// another version or by hand — where Swift's plain `Int(x)` or `time_t(x)` would trap on NaN,
// an infinity or a value past the integer's range. Every such conversion goes through here.

extension Int {
    /// `value` rounded toward zero, clamped to `Int`'s range; NaN is 0.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 9_223_372_036_854_775_808.0 {
            self = .max
        } else if value < -9_223_372_036_854_775_808.0 {
            self = .min
        } else {
            self = Int(value)
        }
    }
}

/// Wall-clock seconds as a `time_t` for the C time functions (localtime_r, gmtime_r), rounded
/// down and clamped to the calendar, 0001-01-01 to 9999-12-31 UTC; NaN is 1970-01-01. (A local
/// date just past either end is taken as the end by `LocalDay.date`.)
func timeT(_ wall: Double) -> time_t {
    let first = Double(CalendarDay.earliestNumber) * 86400
    let last = Double(CalendarDay.latestNumber) * 86400 + 86399
    guard !wall.isNaN else { return 0 }
    return time_t(min(max(wall.rounded(.down), first), last))
}
