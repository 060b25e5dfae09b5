import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTime

// `sync enable DIR`, `sync status`, `sync disable`: this device's journal in a sync folder
// (docs/sync.md), and what a person reads of the daemon's sync status.

extension Command {
    static let syncCommands: [Command] = [
        Command(
            words: ["sync", "enable"],
            arguments: [Argument("DIR", key: "directory")],
            options: [
                Option("name", key: "name", "NAME"),
                Option(
                    "new-device", key: "new_device", sends: "on",
                    help: "make this database a new device (a new random id) whose journal starts with the whole history"),
                json,
            ],
            wire: "sync_enable", output: .report,
            summary: trNoop("keep this device's journal in DIR, a folder a sync tool shares between machines"),
            notes: """
                The first enable writes the whole history to DIR/<device id>.jsonl; every change follows as a
                line. DIR is an absolute path or ~/... and is made when missing. --name names this device
                (default: the host name). [sync] directory in the config file overrides this.
                --new-device is the way out when sync status says another machine writes this device's journal
                (a database copied from one machine to another): this database gets a new random id, and its
                journal under it starts with the whole history; the former id's journal stays the other machine's.
                """,
            example: "sync enable ~/Sync/diligence --name laptop"),
        Command(
            words: ["sync", "status"],
            options: [json, Option("names", .none, "", "print only the known devices' names, one a line (what --device takes)")],
            wire: "sync_status", output: .report, exclusive: [["json", "names"]],
            summary: trNoop("show the sync folder, this device and its journal, and the devices known here"),
            notes: """
                The devices are this one and every device whose sessions or journal lines are here: each
                with its id's first digits, its name, its sessions here and when its latest line was written.
                """),
        Command(
            words: ["sync", "disable"], options: [json], wire: "sync_disable", output: .report,
            summary: trNoop("stop writing the journal (the folder and its files stay)")),
        Command(
            words: ["timewarrior", "sync"],
            options: [
                Option("dry-run", key: "dry_run", sends: "on", help: "change nothing in Timewarrior; print what would change"), json,
            ],
            wire: "timewarrior_sync", output: .report,
            summary: trNoop("make Timewarrior hold exactly the history's focus segments ([timewarrior] in diligenced.conf)"),
            notes: """
                Reads timew export, compares its intervals tagged diligence:<uuid> with every session's focus
                segments, deletes and tracks the difference, and prints it; a second run changes nothing.
                Intervals without a diligence: tag are never touched.
                """),
    ]
}

/// What `timewarrior sync` changed (or, dry, would change), one interval a line.
func timewarriorReport(_ r: JSON) -> String {
    let dry = r["dry_run"]?.boolValue == true
    func lines(_ key: String, _ verb: String) -> [String] {
        (r[key]?.arrayValue ?? []).map { i in
            let tags = (i["tags"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: " ")
            return "\(verb) \(i["start"]?.stringValue ?? "?") – \(i["end"]?.stringValue ?? "?")  \(tags)"
        }
    }
    let changes = lines("deleted", dry ? "would delete" : "deleted") + lines("tracked", dry ? "would track" : "tracked")
    let unchanged = Int(r["unchanged"]?.intValue ?? 0)
    let summary = changes.isEmpty ? "Timewarrior holds the history already" : "\(changes.count) change(s)\(dry ? " (dry run)" : "")"
    return (changes + ["\(summary); \(plural(unchanged, "interval")) unchanged."]).joined(separator: "\n") + "\n"
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
    if r["shared_device"]?.boolValue == true {
        lines.append(
            "Shared:      this device's journal holds lines it did not write (a database copied to another machine, or restored "
                + "from an older copy); nothing is written until "
                + "`diligencectl sync enable \(directory) --new-device` gives this database a device id of its own")
    }
    return lines.joined(separator: "\n") + "\n" + devicesTable(r["devices"]?.arrayValue ?? [])
}

/// The devices known here, one a row: id's first digits, name, sessions, latest line, a clock ahead.
private func devicesTable(_ devices: [JSON]) -> String {
    guard !devices.isEmpty else { return "" }
    let rows = devices.map { d -> [String] in
        let id = String((d["id"]?.stringValue ?? "?").prefix(8)) + (d["this"]?.boolValue == true ? " (this)" : "")
        let sessions = plural(Int(d["sessions"]?.intValue ?? 0), "session")
        let last: String = d["last_line"]?.stringValue.map { "last line " + RFC3339.dateText($0) + " " + RFC3339.clockText($0) } ?? ""
        // Minutes are enough to tell how wrong a clock is.
        let ahead: String =
            d["clock_ahead_seconds"]?.intValue.map { "clock \(DurationText.format(max(60, Int($0) / 60 * 60))) ahead" } ?? ""
        return [id, d["name"]?.stringValue ?? "–", sessions, last, ahead]
    }
    return "Devices:\n" + columns(rows)
}

/// `sync status --names`: the known devices' names, one a line (the shell completions' source).
func deviceNames(_ r: JSON) -> String {
    (r["devices"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }.map { $0 + "\n" }.joined()
}
