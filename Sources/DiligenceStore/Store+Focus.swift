import DiligenceCore

/// The focus guard's record (what it changed on the notification server and the value it
/// found), kept beside the saved timer: written and committed before the server is changed,
/// so a daemon killed mid-work finds it at its next start.
extension Store {
    static let focusRecordName = "focus_guard"

    public func focusRecord() throws(DiligenceError) -> String? {
        try info(Self.focusRecordName)
    }

    /// Saves `record`, or forgets it (nil) once the server is put back.
    public func setFocusRecord(_ record: String?) throws(DiligenceError) {
        try setInfo(Self.focusRecordName, record)
    }
}
