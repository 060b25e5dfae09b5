/// The rules for a new task name (docs/protocol.md, "Task names"). A name is shown in status
/// bars, notifications and reports, and typed back to pick the task: two names that look the
/// same, or a name with nothing to see, would make a task impossible to tell apart or to name.
///
/// Names stored before these rules keep working: they are found by lookup and survive edits
/// of other fields; only a name being set (a new task, a rename) is checked.
public enum TaskName {
    /// Characters (as a person counts them: grapheme clusters) after normalization.
    public static let maxLength = 64

    /// `text` as it is stored: NFC (so one way of writing "é" is kept, whatever the keyboard
    /// sent), without white space at either end (the no-break space too). Throws `invalid_name`
    /// when that is empty, longer than `maxLength`, or holds a character that does not show:
    /// control, format (zero-width space, bidi overrides), private-use, line or paragraph separator.
    public static func normalize(_ text: String) throws(DiligenceError) -> String {
        try normalize(text, what: "A task name")
    }

    /// What two names that are one name share: normalized, case folded.
    public static func key(_ name: String) -> String {
        ((try? normalize(name)) ?? name).lowercased()
    }

    /// The rule of names a person reads and types back (a task's, a device's): `what` names
    /// the kind in the errors ("A task name").
    static func normalize(_ text: String, what: String) throws(DiligenceError) -> String {
        var name = String(decoding: text._nfcCodeUnits, as: UTF8.self)
        while let first = name.first, first.isWhitespace { name.removeFirst() }
        while let last = name.last, last.isWhitespace { name.removeLast() }
        if name.isEmpty {
            throw DiligenceError(.invalidName, "\(what) cannot be empty.")
        }
        if let hidden = hiddenScalar(in: name) {
            throw DiligenceError(
                .invalidName,
                "\(what) cannot contain \(describe(hidden)): it does not show, so two names could look the same. Remove it and try again."
            )
        }
        if name.count > maxLength {
            throw DiligenceError(.invalidName, "\(what) has at most \(maxLength) characters; this one has \(name.count).")
        }
        return name
    }

    /// The first scalar of `name` that would not show, or nil. The joiners are kept where they
    /// build a visible character — U+200D inside an emoji sequence (👩‍💻), U+200C between the
    /// letters of scripts that need it (Persian) — and emoji tag characters after a black flag.
    static func hiddenScalar(in name: String) -> Unicode.Scalar? {
        let scalars = Array(name.unicodeScalars)
        for (i, scalar) in scalars.enumerated() {
            switch scalar.properties.generalCategory {
            case .control, .privateUse, .surrogate, .lineSeparator, .paragraphSeparator:
                return scalar
            case .format:
                if isJoiner(scalar), joinsVisibleNeighbours(at: i, in: scalars) { continue }
                if isTag(scalar), followsFlag(at: i, in: scalars) { continue }
                return scalar
            default:
                continue
            }
        }
        return nil
    }

    private static func isJoiner(_ s: Unicode.Scalar) -> Bool { s.value == 0x200C || s.value == 0x200D }
    private static func isTag(_ s: Unicode.Scalar) -> Bool { (0xE0020...0xE007F).contains(s.value) }

    /// Variation selectors and emoji skin-tone modifiers belong to the character before them.
    private static func isModifier(_ s: Unicode.Scalar) -> Bool {
        (0xFE00...0xFE0F).contains(s.value) || (0x1F3FB...0x1F3FF).contains(s.value)
    }

    /// A joiner between two visible non-ASCII characters (a joiner between ASCII letters only
    /// ever makes a look-alike of a plain word).
    private static func joinsVisibleNeighbours(at i: Int, in scalars: [Unicode.Scalar]) -> Bool {
        var before = i - 1
        while before >= 0, isModifier(scalars[before]) { before -= 1 }
        let after = i + 1
        guard before >= 0, after < scalars.count else { return false }
        return [scalars[before], scalars[after]].allSatisfy { s in
            !s.isASCII && !s.properties.isWhitespace && s.properties.generalCategory != .format
                && s.properties.generalCategory != .control
        }
    }

    /// Tag characters spell a subdivision flag after U+1F3F4 (🏴󠁧󠁢󠁳󠁣󠁴󠁿).
    private static func followsFlag(at i: Int, in scalars: [Unicode.Scalar]) -> Bool {
        var before = i - 1
        while before >= 0, isTag(scalars[before]) { before -= 1 }
        return before >= 0 && scalars[before].value == 0x1F3F4
    }

    /// `U+200B (ZERO WIDTH SPACE)`.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        guard let name = scalar.properties.name ?? scalar.properties.nameAlias else { return code }
        return "\(code) (\(name))"
    }
}

/// The rules for a device's name (`sync enable --name`, the host name by default; docs/sync.md,
/// "Device names"): shown with its sessions on every device and typed back in `--device NAME`,
/// it follows the task-name rule, so two names that look the same are the same name.
public enum DeviceName {
    public static let maxLength = TaskName.maxLength

    /// `text` as it is kept and written to the journal (NFC, trimmed); throws `invalid_name`.
    public static func normalize(_ text: String) throws(DiligenceError) -> String {
        try TaskName.normalize(text, what: "A device name")
    }

    /// How two names are compared (`--device NAME`): as task names are.
    public static func key(_ name: String) -> String { TaskName.key(name) }
}
