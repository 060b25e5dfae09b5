import DiligenceCore

/// What the focus guard changed and the value it found before, saved with the timer before
/// the change is made: a daemon killed mid-work knows at its next start what to put back.
struct FocusRecord: Equatable {
    var backend: FocusSettings.Backend
    /// The server's state before the change, in the backend's own words: dunst's and swaync's
    /// `true`/`false`, mako's modes (comma-separated), GNOME's show-banners, Plasma's cookie.
    var previous: String
    /// Whether `on_enter` ran (or was about to), so that `on_leave` is owed.
    var commandsEntered: Bool

    /// One line, `backend previous commands` (`dunst false 0`); the previous value is
    /// percent-escaped so that mako's modes with spaces stay one word.
    var encoded: String {
        "\(backend.rawValue) \(Self.escape(previous)) \(commandsEntered ? 1 : 0)"
    }

    init(backend: FocusSettings.Backend, previous: String, commandsEntered: Bool) {
        self.backend = backend
        self.previous = previous
        self.commandsEntered = commandsEntered
    }

    init?(encoded: String) {
        let words = encoded.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 3, let backend = FocusSettings.Backend(rawValue: String(words[0])), backend != .auto,
            let previous = Self.unescape(String(words[1])), words[2] == "0" || words[2] == "1"
        else { return nil }
        self.init(backend: backend, previous: previous, commandsEntered: words[2] == "1")
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "%") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out.isEmpty ? "%" : out
    }

    private static func unescape(_ text: String) -> String? {
        if text == "%" { return "" }
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The notification server's name from GetServerInformation mapped to the backend that
/// speaks its do-not-disturb interface; nil for one without any (on_enter/on_leave only).
func focusBackend(forServer name: String) -> FocusSettings.Backend? {
    switch name.lowercased() {
    case "dunst": .dunst
    case "mako": .mako
    case "swaynotificationcenter", "swaync": .swaync
    case "gnome-shell", "gnome shell": .gnome
    case "plasma", "plasmashell", "kde plasma": .plasma
    default: nil
    }
}
