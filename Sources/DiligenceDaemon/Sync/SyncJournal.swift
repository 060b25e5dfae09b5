import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import DiligenceSync
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// This device's journal in the sync folder (docs/sync.md): `DIR/<device id>.jsonl`, which only
/// this daemon writes. The database notes every change in the transaction that makes it
/// (by triggers, so no command, timer phase or import can skip it); after each
/// commit this writer turns the notes into lines, appends and flushes them, and only then drops
/// the notes. A journal that cannot be written loses nothing: the database has the change and
/// keeps its note; the failure is logged once and the write tried again after the next commit.
///
/// The folder is `[sync] directory` when the config file sets it, else the one `sync enable`
/// kept in the database. The first time a folder is used its journal starts with the whole
/// history (every task, session and plan), so the other devices learn what came before.
///
/// Only this daemon writes the file, so before each append it checks that the file ends where
/// its last write left it (docs/sync.md, "Another hand in this device's journal"): an older
/// version put back, or the file gone, is written again whole from the database; a file holding
/// lines this device did not write (a database copied to another machine, which writes under
/// the same id) is left alone, the changes wait in the database, until `sync enable
/// --new-device` gives this database an id of its own.
final class SyncJournal {
    private let store: Store
    private let clocks: Clocks
    private let queue: DispatchQueue
    /// This device's id (the database's; `sync enable --new-device` makes a new one).
    private(set) var device: String
    /// `[sync] directory` from the config file, as written; nil when the file does not set it.
    var configured: String?
    /// `[sync] name` from the config file; nil when the file does not set it.
    var configuredName: String?
    /// The database's settings, read once: only this daemon writes them (one daemon per
    /// database), so a commit with sync off costs no query. `sync enable`'s folder:
    private var enabledDirectory: String?
    /// The folder whose journal is up to date but for the notes (`SyncSetting.journal`).
    private var journaled: String?
    /// The name `sync enable --name` gave (`SyncSetting.deviceName`); nil: the host name.
    private var givenName: String?
    /// The name the journal last said (`SyncSetting.journalName`).
    private var writtenName: String?
    /// The clock that stamps this device's lines.
    private(set) var clock: HybridClock
    /// The reason the last write failed, until one succeeds (logged once).
    private(set) var problem: String?
    /// Where this daemon's last write left the journal (`SyncSetting.journalEnd`); nil: not
    /// known (a journal written before it was kept), the file is taken as it is.
    private var written: JournalCursor?
    /// Why the journal holds lines this device did not write; nil while it holds only its own.
    private(set) var shared: String?
    /// The removals the merged history holds (SyncMerge's): a journal's start repeats them with
    /// this device's own (`Store.keptRemovals`), as the database keeps no row of a removed thing.
    private var mergedRemovals: (() -> [JournalChange])?
    /// The journal watched (inotify on its folder, for its name): another version put there, or
    /// its removal, is checked at once, not at the next change. Nil while none is kept.
    private var watch: (path: String, watch: DirectoryWatch)?
    /// A write is scheduled on the queue after a commit.
    private var scheduled = false
    /// Writing now: the write's own commit schedules nothing more.
    private var writing = false

    /// The most notes one write turns into lines.
    static let batch = 10_000

    init(store: Store, clocks: Clocks, queue: DispatchQueue) throws(DiligenceError) {
        self.store = store
        self.clocks = clocks
        self.queue = queue
        device = try store.deviceID()
        clock = HybridClock(last: try store.journalClock())
        enabledDirectory = try store.syncSetting(.directory)
        journaled = try store.syncSetting(.journal)
        givenName = try store.syncSetting(.deviceName)
        writtenName = try store.syncSetting(.journalName)
        written = try store.syncSetting(.journalEnd).flatMap(JournalCursor.init(text:))
    }

    /// Wires in the merge's removals, once, before the first write: the merge is built with
    /// this journal, so they cannot come through `init`.
    func connect(removals: @escaping () -> [JournalChange]) {
        precondition(mergedRemovals == nil, "SyncJournal was connected twice")
        mergedRemovals = removals
    }

    var isConnected: Bool { mergedRemovals != nil }

    private func removals() -> [JournalChange] {
        guard let mergedRemovals else { preconditionFailure("SyncJournal.connect(removals:) was never called") }
        return mergedRemovals()
    }

    // MARK: Where

    /// The sync folder in force: the config file's, else the database's; nil: sync is off.
    func directory() -> String? {
        configured.map(Self.expand) ?? enabledDirectory
    }

    static func expand(_ text: String) -> String {
        SyncFolder.expand(text, home: getenv("HOME").map { String(cString: $0) } ?? "/")
    }

    /// The device's name: the config file's `[sync] name`, else the one `sync enable --name`
    /// gave, else the host name (under the rule of device names; "localhost" when it breaks it).
    func name() -> String {
        configuredName ?? givenName ?? Sys.hostName().flatMap { try? DeviceName.normalize($0) } ?? "localhost"
    }

    // MARK: Writing

    /// After a commit: schedules one write on the queue, after the work item that committed.
    func committed() {
        guard !writing, !scheduled, journaled != nil || directory() != nil else { return }
        scheduled = true
        let journal = QueueBound(self, on: queue)
        queue.async {
            let journal = journal.value
            journal.scheduled = false
            journal.write(now: journal.clocks.wall)
        }
    }

    /// Brings the journal up to the database: starts it in a folder it is not kept in yet,
    /// appends what was noted since, or stops noting when sync is off. Failures are logged
    /// once and tried again after the next commit.
    func write(now: Double) {
        writing = true
        defer { writing = false }
        do {
            guard let folder = directory() else {
                if journaled != nil { try stopJournal() }
                return
            }
            defer { if journaled == folder { watchOwn(JournalFolder(directory: folder, device: device)) } }
            if journaled != folder {
                try start(in: folder, now: now)
            } else if try ownJournalChecked(in: folder, now: now) {
                while let notes = try store.journalNotes(limit: Self.batch, device: device) {
                    let last = try append(notes.changes, in: folder, now: now)
                    try keepingEnd { () throws(DiligenceError) in
                        try store.journalWritten(through: notes.through, clock: last ?? clock.last)
                    }
                }
                try writeName(in: folder, now: now)
            }
            if problem != nil {
                Log.info("The sync journal in \(folder) is written again.", fields: [("EVENT", "sync_journal_written")])
                problem = nil
            }
        } catch {
            guard problem != error.message else { return }
            problem = error.message
            guard shared == nil else { return } // logged once when found
            Log.error(
                "The sync journal could not be written (\(error.message)); the changes are kept in the database and written after the next change.",
                fields: [("EVENT", "sync_journal_failed"), ("CODE", error.code.rawValue)])
        }
    }

    /// Before appending: the journal must end where this daemon's last write left it. An older
    /// version (or none) is written again whole, as a first start writes it (then false: nothing
    /// more to append); lines another machine wrote under this device's id stop the writing.
    private func ownJournalChecked(in folder: String, now: Double) throws(DiligenceError) -> Bool {
        guard let written else { return true }
        let place = JournalFolder(directory: folder, device: device)
        let issued = try store.journalClock()
        var state = place.ownState(written: written, issued: issued)
        if case .extended(let lines, let end) = state {
            if try isOwnUnrecorded(lines, after: issued) {
                // The end moves past them as the reader found it (not read again: a sync tool
                // may replace the file meanwhile).
                self.written = end
                state = .intact
            } else {
                state = .foreign("\(lines.count) line(s) after the last one this device wrote")
            }
        }
        return try act(on: state, place: place, now: now)
    }

    /// What `state` of the journal at `place` asks for: go on, write it again whole, or stop.
    private func act(on state: OwnJournalState, place: JournalFolder, now: Double) throws(DiligenceError) -> Bool {
        let folder = place.directory
        switch state {
        case .intact, .extended:
            shared = nil
            return true
        case .older:
            shared = nil
            Log.warning(
                "Sync: the journal \(place.ownPath) is gone or an older version than this device wrote (a sync tool, a backup or a checkout put it back); it is written again whole from the database.",
                fields: [("EVENT", "sync_journal_rewritten")])
            try start(in: folder, now: now)
            return false
        case .foreign(let why):
            let error = DiligenceError(
                .syncDeviceShared,
                "The journal \(place.ownPath) holds lines this device did not write (\(why)): another machine uses this device's id, as a database copied from one machine to another does, or this database was restored from an older copy. Nothing is written to it; the changes wait in the database. To make this database a device of its own (which merges that journal as another device's, the later changes of a restored database with it): diligencectl sync enable \(folder) --new-device"
            )
            // Logged once, however the other machine's lines grow meanwhile.
            if shared == nil { Log.error(error.message, fields: [("EVENT", "sync_device_shared"), ("CODE", error.code.rawValue)]) }
            shared = why
            throw error
        }
    }

    /// Whether `lines`, past the end this device recorded, are its own append whose record a
    /// crash cut: each stamped after the last reading recorded, and each of a thing a note still
    /// waits for (or the name the journal is to say). Another machine's lines are of its own
    /// changes, which no note here waits for.
    private func isOwnUnrecorded(_ lines: [JournalEntry], after issued: HLC) throws(DiligenceError) -> Bool {
        for line in lines {
            guard issued < line.hlc else { return false }
            if case .deviceNamed(let said) = line.change, said == name(), said != writtenName { continue }
            guard try store.isNoted(line.change) else { return false }
        }
        return true
    }

    /// Watches the journal at `place` (once per file): a change of it — this daemon's own
    /// appends too, then checked as intact at the cost of two small reads — calls `write`.
    private func watchOwn(_ place: JournalFolder) {
        guard watch?.path != place.ownPath else { return }
        close()
        let name = Array("\(place.device).jsonl".utf8)
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE)
        do {
            let own = try DirectoryWatch(
                directory: place.directory, mask: mask, queue: queue, matching: { $0.elementsEqual(name) },
                changed: { [unowned self] in write(now: clocks.wall) })
            watch = (place.ownPath, own)
        } catch {
            Log.warning("Sync: cannot watch \(place.ownPath) (\(error)); another version put there is seen at the next change.")
        }
    }

    /// Stops watching the journal.
    func close() {
        watch?.watch.close()
        watch = nil
    }

    /// Runs `body` (the database's record of an append) in one transaction with the journal's end.
    private func keepingEnd(_ body: () throws(DiligenceError) -> Void) throws(DiligenceError) {
        try store.transaction { () throws(DiligenceError) in
            try body()
            try store.setSyncSetting(.journalEnd, written?.text)
        }
    }

    /// Starts the journal in `folder` with the device's name and the whole history, its
    /// removals included: an older line of this device's (in this folder's journal, or its former
    /// id's) must not bring a removed thing back.
    private func start(in folder: String, now: Double) throws(DiligenceError) {
        try Files.makeDirectories(folder, mode: 0o700)
        let name = name()
        var removed: Set<String> = []
        let removals = (try store.keptRemovals() + removals()).filter { change in
            guard case .sessionRemoved(let id) = change else {
                guard case .taskRemoved(let id) = change else { return true }
                return removed.insert("task \(id)").inserted
            }
            return removed.insert("session \(id)").inserted
        }
        let changes = [.deviceNamed(name: name)] + (try store.journalSnapshot(device: device)) + removals
        let last = try append(changes, in: folder, now: now)
        try keepingEnd { () throws(DiligenceError) in try store.startJournal(directory: folder, clock: last ?? clock.last, name: name) }
        journaled = folder
        writtenName = name
        Log.info(
            "Sync: the journal \(JournalFolder(directory: folder, device: device).ownPath) starts with \(changes.count) line(s) of history.",
            fields: [("EVENT", "sync_journal_started")])
    }

    /// Writes the device's name when it is not the one the journal last said: `sync enable
    /// --name` gave another, or the host was renamed while no name was given.
    private func writeName(in folder: String, now: Double) throws(DiligenceError) {
        let name = name()
        guard name != writtenName, let last = try append([.deviceNamed(name: name)], in: folder, now: now) else { return }
        try keepingEnd { () throws(DiligenceError) in try store.journalNamed(name, clock: last) }
        writtenName = name
    }

    /// Stamps `changes`, appends them to this device's journal in `folder`; the clock moves on
    /// only once they are on disk. Returns the last reading stamped.
    private func append(_ changes: [JournalChange], in folder: String, now: Double) throws(DiligenceError) -> HLC? {
        guard !changes.isEmpty else { return nil }
        var stamped = clock
        let entries = changes.map { JournalEntry(device: device, hlc: stamped.stamp(now: now), change: $0) }
        // What this daemon wrote, known at once (kept in the database with the append's record).
        do { written = try JournalFolder(directory: folder, device: device).append(entries) } catch {
            // A FIFO or a link in its place is not written to (nor through): said as such.
            if case .notRegular = error.problem { throw DiligenceError(.notARegularFile, "\(error)") }
            throw DiligenceError(.syncJournalUnwritable, "\(error)")
        }
        clock = stamped
        return clock.last
    }

    /// Takes in another device's clock reading: this device's next lines are stamped later.
    func observe(_ reading: HLC, now: Double) {
        clock.observe(reading, now: now)
    }

    // MARK: Commands

    /// `sync_enable`: checks `text` (absolute or ~/…), writes the journal's start there, and
    /// keeps the folder (and `name`) in the database only once that worked. `newDevice`: the
    /// database first becomes a new device (`Store.renewDeviceID`), whose journal starts anew;
    /// that is open in the config file's folder too (the folder stays the file's).
    func enable(_ text: String, name: String?, newDevice: Bool = false, now: Double) throws(DiligenceError) -> JSON {
        if configured != nil, !newDevice || Self.expand(text) != directory() { throw configuredError("enable") }
        if name != nil, let configuredName {
            throw DiligenceError(
                .syncConfigured,
                "The config file sets [sync] name = \(configuredName); it names this device. Change or remove that line and reload to name it here."
            )
        }
        if let problem = SyncFolder.problem(with: text) { throw DiligenceError(.invalidDirectory, "Refused: \(problem).") }
        // A link to a folder (~/Sync -> /data/Sync) is resolved once, here: the folder kept is
        // the one reached, and what is not a folder stays refused by `makeDirectories`.
        let folder: String
        do {
            folder = try Files.resolvingLinks(Self.expand(text))
            try Files.makeDirectories(folder, mode: 0o700)
        } catch {
            throw DiligenceError(.invalidDirectory, error.message)
        }
        if newDevice { try renewDevice() }
        let formerName = givenName
        givenName = name ?? givenName // the journal's start says the new name
        if journaled != folder {
            do { try start(in: folder, now: now) } catch {
                givenName = formerName
                throw DiligenceError(.invalidDirectory, "Cannot write the journal in \(folder): \(error.message)")
            }
        }
        do {
            try store.transaction { () throws(DiligenceError) in
                if let name { try store.setSyncSetting(.deviceName, name) }
                if configured == nil { try store.setSyncSetting(.directory, folder) }
            }
        } catch {
            givenName = formerName
            throw error
        }
        if configured == nil { enabledDirectory = folder }
        problem = nil
        write(now: now) // a new name of a journal kept already
        Log.info("Sync enabled in \(folder).", fields: [("EVENT", "sync_enabled")])
        return try status()
    }

    /// `sync_disable`: no journal is written from now on (the folder and its files stay).
    func disable() throws(DiligenceError) -> JSON {
        if configured != nil { throw configuredError("disable") }
        try store.transaction { () throws(DiligenceError) in
            try store.setSyncSetting(.directory, nil)
            try stopJournal()
        }
        enabledDirectory = nil
        problem = nil
        Log.info("Sync disabled.", fields: [("EVENT", "sync_disabled")])
        return try status()
    }

    private func stopJournal() throws(DiligenceError) {
        try store.stopJournal()
        journaled = nil
        written = nil
        shared = nil
        close()
    }

    /// A new random device id; the journal starts anew under it (the changes waiting for the
    /// former one are in the history its start writes).
    private func renewDevice() throws(DiligenceError) {
        let former = device
        device = try store.renewDeviceID()
        close()
        journaled = nil
        written = nil
        shared = nil
        problem = nil
        Log.info(
            "Sync: this database is a new device, \(device) (it was \(former), whose journal is now another device's).",
            fields: [("EVENT", "sync_device_renewed")])
    }

    private func configuredError(_ verb: String) -> DiligenceError {
        DiligenceError(
            .syncConfigured,
            "The config file sets [sync] directory = \(configured ?? ""); it decides where the journal is. Change or remove that line and reload to \(verb) sync here."
        )
    }

    /// `sync_status`.
    func status() throws(DiligenceError) -> JSON {
        let folder = directory()
        return .object([
            ("enabled", .bool(folder != nil)),
            ("directory", .string(folder)),
            ("configured", .bool(configured != nil)),
            ("journal", .string(folder.map { JournalFolder(directory: $0, device: device).ownPath })),
            ("device", .object([("id", .string(device)), ("name", .string(name()))])),
            ("waiting", .int(try store.journalBacklog())),
            ("problem", .string(problem)),
            ("shared_device", .bool(shared != nil)),
        ])
    }
}
