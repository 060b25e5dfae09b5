#if canImport(Glibc)
    import Glibc
#endif

// Where the output goes: how wide it is and which colours it shows. Decided once per run from
// standard output and the environment (`Screen.detect`); every table and picture draws within
// `columns` and colours through `colors` (docs/diligencectl.md, "Output").

/// The colours a terminal shows, from none to 24-bit.
enum ColorSupport: Int, Comparable, Sendable {
    /// Plain text: not a terminal, `NO_COLOR`, `TERM=dumb`, or `--plain`.
    case none
    /// The 8 ANSI colours and bold.
    case basic
    /// The 256-colour palette (`TERM=*-256color`).
    case palette256
    /// 24-bit colour (`COLORTERM=truecolor` or `24bit`).
    case truecolor

    static func < (a: ColorSupport, b: ColorSupport) -> Bool { a.rawValue < b.rawValue }
}

struct Screen: Equatable, Sendable {
    /// Width in terminal columns.
    var columns: Int
    var colors: ColorSupport

    /// What a file or pipe gets: 80 columns, no colours.
    static let plain = Screen(columns: 80, colors: .none)

    /// Narrowest and widest `COLUMNS` taken; a value outside (or not a number) is ignored.
    static let columnRange = 20...1000

    /// The screen of standard output: `COLUMNS` when it holds a width in `columnRange`, else
    /// the terminal's width (`windowColumns`, from TIOCGWINSZ), else 80; colours only on a
    /// terminal, never with a non-empty `NO_COLOR` (no-color.org) or `TERM` unset or `dumb`;
    /// 24-bit with `COLORTERM=truecolor`/`24bit`, 256 with a `TERM` ending in `256color`.
    static func detect(environment: [String: String], isTerminal: Bool, windowColumns: Int?) -> Screen {
        var screen = Screen.plain
        if let text = environment["COLUMNS"], let n = Int(text), columnRange.contains(n) {
            screen.columns = n
        } else if let windowColumns, windowColumns > 0 {
            screen.columns = min(max(windowColumns, columnRange.lowerBound), columnRange.upperBound)
        }
        let term = environment["TERM"] ?? ""
        guard isTerminal, environment["NO_COLOR"].map(\.isEmpty) ?? true, !term.isEmpty, term != "dumb" else { return screen }
        let colorTerm = environment["COLORTERM"] ?? ""
        if colorTerm == "truecolor" || colorTerm == "24bit" {
            screen.colors = .truecolor
        } else if term.hasSuffix("256color") {
            screen.colors = .palette256
        } else {
            screen.colors = .basic
        }
        return screen
    }

    /// The width of the terminal on `fd`, nil when it is not one.
    static func windowRows(fd: Int32) -> Int? {
        guard isatty(fd) != 0 else { return nil }
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return nil }
        return Int(size.ws_row)
    }

    static func windowColumns(fd: Int32) -> Int? {
        guard isatty(fd) != 0 else { return nil }
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
