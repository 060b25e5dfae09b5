import DiligenceJSON
import DiligenceProtocol

// `sync enable DIR`, `sync status`, `sync disable`: this device's journal in a sync folder
// (docs/sync.md), and what a person reads of the daemon's sync status.

extension Command {
    static let syncCommands: [Command] = [
        Command(
            words: ["sync", "enable"],
            arguments: [Argument("DIR", key: "directory")],
            options: [Option("name", key: "name", "NAME"), json],
            wire: "sync_enable", output: .report,
            summary: "keep this device's journal in DIR, a folder a sync tool shares between machines",
            notes: """
                The first enable writes the whole history to DIR/<device id>.jsonl; every change follows as a
                line. DIR is an absolute path or ~/... and is made when missing. --name names this device
                (default: the host name). [sync] directory in the config file overrides this.
                """),
        Command(
            words: ["sync", "status"], options: [json], wire: "sync_status", output: .report,
            summary: "show the sync folder, this device and its journal"),
        Command(
            words: ["sync", "disable"], options: [json], wire: "sync_disable", output: .report,
            summary: "stop writing the journal (the folder and its files stay)"),
    ]
}

/// The sync status as lines of text.
func syncReport(_ r: JSON) -> String {
    let device = r["device"] ?? .null
    let name = device["name"]?.stringValue ?? "?"
    let id = device["id"]?.stringValue ?? "?"
    guard r["enabled"]?.boolValue == true, let directory = r["directory"]?.stringValue else {
        return "Sync is off. This device: \(name) (\(id)).\n"
    }
    var lines = [
        "Sync folder: \(directory)\(r["configured"]?.boolValue == true ? " (set by [sync] directory)" : "")",
        "This device: \(name) (\(id))",
        "Journal:     \(r["journal"]?.stringValue ?? "?")",
    ]
    if let waiting = r["waiting"]?.intValue, waiting > 0 { lines.append("Waiting:     \(waiting) change(s) not written yet") }
    if let problem = r["problem"]?.stringValue { lines.append("Problem:     \(problem)") }
    return lines.joined(separator: "\n") + "\n"
}
