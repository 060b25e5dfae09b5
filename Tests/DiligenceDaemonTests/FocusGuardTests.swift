import DiligenceCore
import Dispatch
import Testing

@testable import DiligenceDaemon

/// The guard's order of things against a server stand-in: the previous state is saved before
/// the change, leave puts back exactly that, and a record left by a crash is undone or kept.
@Suite struct FocusGuardTests {
    /// A server whose do-not-disturb is a flag; every step is written to `log`.
    final class FakeServer: FocusBackendDriver {
        let backend: FocusSettings.Backend
        var on: Bool
        var log: [String] = []
        init(_ backend: FocusSettings.Backend = .dunst, on: Bool = false) {
            self.backend = backend
            self.on = on
        }
        func read(_ done: @escaping (Result<String, FocusFailure>) -> Void) {
            log.append("read")
            done(.success(on ? "true" : "false"))
        }
        func enter(previous: String, _ done: @escaping (Result<String, FocusFailure>) -> Void) {
            log.append("enter")
            on = true
            done(.success(previous))
        }
        /// Set: `leave` answers only when `pendingLeave` is called, as a program that takes its time.
        var holdLeave = false
        var pendingLeave: (() -> Void)?
        func leave(previous: String, _ done: @escaping (Result<Void, FocusFailure>) -> Void) {
            log.append("leave \(previous)")
            let answer = { [self] in
                on = previous == "true"
                done(.success(()))
            }
            if holdLeave { pendingLeave = answer } else { answer() }
        }
    }

    final class Saved {
        var records: [FocusRecord?] = []
    }

    func makeGuard(_ server: FakeServer, _ saved: Saved) -> FocusGuard {
        FocusGuard(
            queue: DispatchQueue(label: "focus-test"),
            persist: { record in
                saved.records.append(record)
                server.log.append(record == nil ? "cleared" : "saved")
            },
            makeDriver: { _, _ in server })
    }

    @Test func savesBeforeTheChangeAndPutsBackWhatItFound() {
        let server = FakeServer()
        let saved = Saved()
        let guardian = makeGuard(server, saved)
        guardian.enter(.dunst, settings: FocusSettings(), done: {})
        #expect(server.on)
        #expect(guardian.activeBackend == "dunst")
        guardian.leave(settings: FocusSettings(), done: {})
        #expect(!server.on)
        #expect(server.log == ["read", "saved", "enter", "leave false", "cleared"])
        #expect(saved.records.first??.previous == "false")
        #expect(guardian.activeBackend == nil)
    }

    @Test func doNotDisturbThatWasOnStaysOn() {
        let server = FakeServer(on: true)
        let guardian = makeGuard(server, Saved())
        guardian.enter(.dunst, settings: FocusSettings(), done: {})
        guardian.leave(settings: FocusSettings(), done: {})
        #expect(server.on)
    }

    @Test func aLeaveAskedWhileOneIsUnderWayWaitsForItAndPutsBackOnce() {
        let server = FakeServer()
        let guardian = makeGuard(server, Saved())
        guardian.enter(.dunst, settings: FocusSettings(), done: {})
        server.holdLeave = true
        var done = 0
        guardian.leave(settings: FocusSettings(), done: { done += 1 })
        guardian.leave(settings: FocusSettings(), done: { done += 1 })
        #expect(done == 0)
        server.pendingLeave?()
        #expect(done == 2)
        #expect(!server.on)
        #expect(server.log.filter { $0.hasPrefix("leave") } == ["leave false"])
    }

    @Test func aCrashRecordIsUndoneOrKept() {
        let server = FakeServer(on: true)
        let saved = Saved()
        let record = FocusRecord(backend: .dunst, previous: "false", commandsEntered: false)
        makeGuard(server, saved).recover(record, resuming: false, settings: FocusSettings(), done: {})
        #expect(!server.on)
        #expect(saved.records.last! == nil)

        let restarted = FakeServer(on: false) // the server restarted meanwhile: checked again
        let guardian = makeGuard(restarted, Saved())
        guardian.recover(record, resuming: true, settings: FocusSettings(), done: {})
        #expect(restarted.on)
        guardian.leave(settings: FocusSettings(), done: {})
        #expect(!restarted.on)
    }

    @Test func theRecordSurvivesItsOneLine() {
        for record in [
            FocusRecord(backend: .mako, previous: "default,my mode%", commandsEntered: true),
            FocusRecord(backend: .plasma, previous: "", commandsEntered: false),
        ] {
            #expect(FocusRecord(encoded: record.encoded) == record)
        }
        #expect(FocusRecord(encoded: "auto x 0") == nil)
        #expect(FocusRecord(encoded: "dunst %zz 0") == nil)
    }

    @Test func serverNamesChooseTheBackend() {
        #expect(focusBackend(forServer: "dunst") == .dunst)
        #expect(focusBackend(forServer: "SwayNotificationCenter") == .swaync)
        #expect(focusBackend(forServer: "gnome-shell") == .gnome)
        #expect(focusBackend(forServer: "Plasma") == .plasma)
        #expect(focusBackend(forServer: "xfce4-notifyd") == nil)
    }
}
