import DiligenceCore

/// The focus guard's record (what it changed on the notification server and the value it
/// found), kept beside the saved timer: written and committed before the server is changed,
/// so a daemon killed mid-work finds it at its next start.
extension Store {
    static let focusRecordName = "focus_guard"

    public func focusRecord() throws(DiligenceError) -> String? {
        try connection.query("SELECT value FROM database_info WHERE name = ?", [.text(Self.focusRecordName)]).first?.string(0)
    }

    /// Saves `record`, or forgets it (nil) once the server is put back.
    public func setFocusRecord(_ record: String?) throws(DiligenceError) {
        if let record {
            try connection.run(
                "INSERT INTO database_info (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                [.text(Self.focusRecordName), .text(record)])
        } else {
            try connection.run("DELETE FROM database_info WHERE name = ?", [.text(Self.focusRecordName)])
        }
    }
}
