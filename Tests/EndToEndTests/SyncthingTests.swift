import DiligenceCore
import DiligenceSync
import DiligenceTestSupport
import Foundation
import Testing

// Two real Syncthing instances (Debian's `syncthing`) keep two copies of a sync folder the same,
// inside a private network namespace (`unshare --net`: loopback only, so no packet can leave):
// static tcp://127.0.0.1 addresses, and global and local discovery, relays, NAT traversal
// (UPnP, STUN), usage and crash reporting and upgrades all off. Each side writes its own journal
// into its copy and merges what arrives of the other's.

/// Why this machine cannot give processes a private network namespace, or nil.
let networkNamespaceUnavailable: String? = {
    guard let unshare = findProgram("/usr/bin/unshare", "/bin/unshare") else { return "unshare(1) is missing" }
    let probe = try? runProgram(
        [unshare] + Syncthing.unshareFlags + ["/bin/sh", "-c", "ip link set lo up"], environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"],
        directory: TestRun.temporaryBase)
    guard let probe, probe.succeeded else {
        return "network namespaces are not allowed here (unshare --net failed: \(probe?.stderr.trimmingWhitespace() ?? "?"))"
    }
    return nil
}()

/// Two Syncthing instances sharing one folder between two directories, on loopback only.
final class Syncthing {
    /// Root makes the namespace itself; another user through a user namespace of its own.
    static let unshareFlags = getuid() == 0 ? ["--net"] : ["--net", "--map-root-user"]

    let base: String
    let folders: [String]
    private let processes: ChildProcess

    init(base: String) throws {
        self.base = base
        let syncthing = try requireProgram("syncthing", "/usr/bin/syncthing")
        let environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": base, "STNOUPGRADE": "1", "STNODEFAULTFOLDER": "1"]
        var ids: [String] = []
        for side in ["a", "b"] {
            let home = "\(base)/syncthing-\(side)"
            let generated = try runProgram(
                [syncthing, "generate", "--home=\(home)", "--no-default-folder", "--skip-port-probing"], environment: environment,
                directory: base)
            guard generated.succeeded else { throw HarnessError("syncthing generate failed: \(generated.stderr)") }
            let id = try runProgram([syncthing, "serve", "--home=\(home)", "--device-id"], environment: environment, directory: base)
            ids.append(id.stdout.trimmingWhitespace())
            // Syncthing shares a directory only with its folder marker in it.
            mkdir("\(base)/folder-\(side)", 0o755)
            mkdir("\(base)/folder-\(side)/.stfolder", 0o755)
        }
        folders = ["\(base)/folder-a", "\(base)/folder-b"]
        let ports = [22001, 22002]
        for (index, side) in ["a", "b"].enumerated() {
            let peer = 1 - index
            func device(_ n: Int) -> String {
                let address = n == index ? "dynamic" : "tcp://127.0.0.1:\(ports[n])"
                return "<device id=\"\(ids[n])\" name=\"\(["a", "b"][n])\"><address>\(address)</address></device>"
            }
            let config = """
                <configuration version="36">
                    <folder id="diligence" label="diligence" path="\(folders[index])" type="sendreceive" rescanIntervalS="3600" fsWatcherEnabled="true" fsWatcherDelayS="1">
                        <device id="\(ids[0])"></device>
                        <device id="\(ids[1])"></device>
                    </folder>
                    \(device(index))
                    \(device(peer))
                    <gui enabled="false"></gui>
                    <options>
                        <listenAddress>tcp://127.0.0.1:\(ports[index])</listenAddress>
                        <globalAnnounceEnabled>false</globalAnnounceEnabled>
                        <localAnnounceEnabled>false</localAnnounceEnabled>
                        <relaysEnabled>false</relaysEnabled>
                        <natEnabled>false</natEnabled>
                        <stunKeepaliveStartS>0</stunKeepaliveStartS>
                        <urAccepted>-1</urAccepted>
                        <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
                        <crashReportingEnabled>false</crashReportingEnabled>
                        <startBrowser>false</startBrowser>
                        <reconnectionIntervalS>1</reconnectionIntervalS>
                    </options>
                </configuration>
                """
            writeTextFile(config, to: "\(base)/syncthing-\(side)/config.xml")
        }
        // One namespace for both, so they reach each other on its loopback and nothing else.
        let script = """
            ip link set lo up || exit 1
            for side in a b; do
                \(syncthing) serve --home="\(base)/syncthing-$side" --no-browser --no-restart --logfile="\(base)/syncthing-$side.log" &
            done
            wait
            """
        processes = try ChildProcess(
            executable: "/usr/bin/unshare", arguments: Self.unshareFlags + ["/bin/sh", "-c", script], environment: environment,
            stdoutPath: "\(base)/syncthing.stdout", stderrPath: "\(base)/syncthing.stderr")
    }

    var logs: String {
        ["a", "b"].map { "--- syncthing \($0):\n" + readTextFile("\(base)/syncthing-\($0).log").suffix(3000) }.joined(separator: "\n")
    }

    func stop() { processes.killAndReap() }

    deinit { stop() }
}

@Suite("Two real Syncthing instances", .serialized) struct SyncthingTests {
    @Test(
        "sessions recorded on each side reach the other and a rename on B renames on A, through Syncthing on loopback only",
        .enabled(if: networkNamespaceUnavailable == nil, Comment(rawValue: networkNamespaceUnavailable ?? "")))
    func twoInstances() throws {
        let dir = TemporaryDirectory("diligence-syncthing")
        defer { dir.remove() }
        let syncthing = try Syncthing(base: dir.path)
        defer { syncthing.stop() }
        let a = SyncDevice(id: "0000000a-0000-4000-8000-00000000000a", directory: syncthing.folders[0], step: 1800)
        let b = SyncDevice(id: "0000000b-0000-4000-8000-00000000000b", directory: syncthing.folders[1], step: 1800)
        for (n, config) in TaskConfig.defaults.enumerated() {
            try a.change(.taskAdded(SyncedTask(id: String(format: "00000000-0000-4000-8000-%012x", 0x100 + n), config: config)))
            try b.change(.taskAdded(SyncedTask(id: String(format: "00000000-0000-4000-8000-%012x", 0x200 + n), config: config)))
        }
        for n in 0..<3 {
            try a.change(
                .sessionRecorded(
                    a.session(String(format: "00000000-0000-4000-8000-%012x", 0x300 + n), task: "00000000-0000-4000-8000-000000000100")))
            try b.change(
                .sessionRecorded(
                    b.session(String(format: "00000000-0000-4000-8000-%012x", 0x400 + n), task: "00000000-0000-4000-8000-000000000201")))
        }
        func converged() -> Bool {
            a.merge()
            b.merge()
            return a.history.canonicalDump == b.history.canonicalDump && a.sessions.count == 6
        }
        try waitUntil("both copies hold all six sessions", timeout: 60, diagnostics: syncthing.logs, converged)
        var renamed = TaskConfig.defaults[0]
        renamed.name = "Job"
        try b.change(.taskEdited(SyncedTask(id: "00000000-0000-4000-8000-000000000200", config: renamed)))
        try waitUntil("the rename on B reaches A", timeout: 30, diagnostics: syncthing.logs) {
            a.merge()
            return a.taskNames.contains("Job") && !a.taskNames.contains("Work")
        }
        #expect(a.problems.isEmpty && b.problems.isEmpty, "\(a.problems + b.problems)")
        #expect(!syncthing.logs.contains("sync-conflict"))
    }
}

@Suite("Two daemons through two real Syncthing instances", .serialized) struct SyncthingDaemonTests {
    /// The completed sessions `stats all` counts for `task`.
    static func completed(_ d: DaemonUnderTest, _ task: String) throws -> Int64 {
        let stats = try d.call("stats", [("period", .string("all"))])
        return stats["tasks"]?.arrayValue?.first { $0["task"]?.stringValue == task }?["completed"]?.intValue ?? 0
    }

    @Test(
        "a session recorded on A appears in B's stats and the reverse; a task renamed on B is renamed on A",
        .enabled(if: networkNamespaceUnavailable == nil, Comment(rawValue: networkNamespaceUnavailable ?? "")))
    func twoDaemons() throws {
        let dir = TemporaryDirectory("diligence-syncthing")
        defer { dir.remove() }
        let syncthing = try Syncthing(base: dir.path)
        defer { syncthing.stop() }
        let a = try DaemonUnderTest()
        let b = try DaemonUnderTest()
        for (d, folder, name) in [(a, syncthing.folders[0], "laptop"), (b, syncthing.folders[1], "desktop")] {
            let enable = try d.ctl("sync", "enable", folder, "--name", name)
            #expect(enable.exitCode == 0, "\(enable)")
        }
        try a.call(
            "history_add", [("task", .string("Study")), ("start", .string("2026-11-30 09:00")), ("end", .string("2026-11-30 09:25"))])
        try b.call(
            "history_add", [("task", .string("Work")), ("start", .string("2026-11-30 10:00")), ("end", .string("2026-11-30 10:30"))])
        func listing() -> String {
            syncthing.folders.map { "\($0): \((try? FileManager.default.contentsOfDirectory(atPath: $0)) ?? [])" }.joined(separator: "\n")
        }
        try waitUntil(
            "A's session in B's stats and B's in A's", timeout: 60, diagnostics: listing() + syncthing.logs + a.diagnostics + b.diagnostics
        ) {
            try Self.completed(b, "Study") == 1 && Self.completed(a, "Work") == 1
        }
        try b.call("task_edit", [("task", .string("Exercise")), ("new_name", .string("Running"))])
        try waitUntil("the rename on B reaches A", timeout: 60, diagnostics: syncthing.logs + a.diagnostics) {
            let names = (try a.call("task_list")["tasks"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
            return names.contains("Running") && !names.contains("Exercise")
        }
        #expect(!syncthing.logs.contains("sync-conflict"))
    }
}
