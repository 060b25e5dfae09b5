// The task colours as the pictures draw them: one RGB value per colour, shared by the terminal
// (ANSI, 256-colour or 24-bit, as the screen allows) and the report page (docs/statistics.md).

/// A 24-bit colour.
struct RGB: Equatable, Sendable {
    var r: Int
    var g: Int
    var b: Int

    /// `#rrggbb`.
    var hex: String {
        let digits = Array("0123456789abcdef")
        return "#" + [r, g, b].map { String([digits[$0 / 16], digits[$0 % 16]]) }.joined()
    }

    /// `fraction` of the way from `self` to `other`.
    func mixed(with other: RGB, _ fraction: Double) -> RGB {
        func mix(_ a: Int, _ b: Int) -> Int { Int((Double(a) + (Double(b) - Double(a)) * fraction).rounded()) }
        return RGB(r: mix(r, other.r), g: mix(g, other.g), b: mix(b, other.b))
    }

    /// The nearest entry of the 256-colour palette's 6×6×6 cube.
    var palette256: Int {
        func step(_ v: Int) -> Int { (v * 5 + 127) / 255 }
        return 16 + 36 * step(r) + 6 * step(g) + step(b)
    }
}

enum Palette {
    /// Each task colour (`TaskColor`); these hold 3:1 contrast against both page backgrounds.
    static let tasks: [String: RGB] = [
        "red": RGB(r: 0xd7, g: 0x3a, b: 0x49), "orange": RGB(r: 0xe0, g: 0x6c, b: 0x1f),
        "yellow": RGB(r: 0xa6, g: 0x7c, b: 0x00), "green": RGB(r: 0x2d, g: 0xa4, b: 0x4e),
        "cyan": RGB(r: 0x10, g: 0x9a, b: 0xad), "blue": RGB(r: 0x2f, g: 0x81, b: 0xf7),
        "purple": RGB(r: 0x89, g: 0x57, b: 0xe5),
    ]
    /// The 8-colour ANSI code of each task colour.
    static let ansi = [
        "red": "31", "orange": "38;5;208", "yellow": "33", "green": "32", "cyan": "36", "blue": "34", "purple": "35",
    ]
    /// The colour of pictures of all tasks together (a heat-map without `--task`).
    static let allTasks = "green"
    /// The report page's backgrounds, light and dark, and its text on each.
    static let pageLight = (
        background: RGB(r: 0xff, g: 0xff, b: 0xff), text: RGB(r: 0x1f, g: 0x23, b: 0x28), muted: RGB(r: 0x57, g: 0x60, b: 0x6a)
    )
    static let pageDark = (
        background: RGB(r: 0x0d, g: 0x11, b: 0x17), text: RGB(r: 0xe6, g: 0xed, b: 0xf3), muted: RGB(r: 0x9d, g: 0xa7, b: 0xb3)
    )
    /// What an empty cell fades from on a terminal (most are dark).
    static let terminalBase = RGB(r: 0x30, g: 0x36, b: 0x3d)
    /// The heat-map's levels 1 to 4 in each task colour on a 256-colour screen, chosen from the
    /// xterm palette: the nearest entries to the 24-bit shades fell on ~2 (issue 32). Neighbours
    /// differ by CIEDE2000 ≥ 12, each level by ≥ 20 from white, black and `terminalBase`.
    static let heat256: [String: [Int]] = [
        "red": [95, 161, 131, 197], "orange": [52, 124, 166, 208], "yellow": [58, 94, 100, 136],
        "green": [22, 28, 29, 35], "cyan": [23, 30, 37, 38], "blue": [60, 26, 33, 105], "purple": [60, 96, 62, 135],
    ]

    static func rgb(_ name: String?) -> RGB { tasks[name ?? allTasks] ?? tasks[allTasks]! }
}

/// Colours text for the screen, or leaves it plain when it shows none.
struct Paint {
    var colors: ColorSupport

    init(_ colors: ColorSupport) { self.colors = colors }

    var enabled: Bool { colors > .none }

    /// `text` in the task colour `color` (nil or unknown: as it is).
    func callAsFunction(_ text: String, _ color: String?) -> String {
        guard enabled, let color, let rgb = Palette.tasks[color] else { return text }
        if colors == .basic { return escaped(text, Palette.ansi[color] ?? "0") }
        return self.rgb(text, rgb)
    }

    /// `text` in any colour, as near as the screen shows it (8 colours: bold).
    func rgb(_ text: String, _ rgb: RGB) -> String {
        switch colors {
        case .none: return text
        case .basic: return escaped(text, "1")
        case .palette256: return escaped(text, "38;5;\(rgb.palette256)")
        case .truecolor: return escaped(text, "38;2;\(rgb.r);\(rgb.g);\(rgb.b)")
        }
    }

    /// `text` in entry `index` of the 256-colour palette.
    func palette(_ text: String, _ index: Int) -> String { escaped(text, "38;5;\(index)") }

    func bold(_ text: String) -> String { enabled ? escaped(text, "1") : text }
    func dim(_ text: String) -> String { enabled ? escaped(text, "2") : text }
    func inverse(_ text: String) -> String { enabled ? escaped(text, "7") : text }

    private func escaped(_ text: String, _ code: String) -> String { "\u{1B}[\(code)m\(text)\u{1B}[0m" }
}
