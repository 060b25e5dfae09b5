// Presence from the desktop (docs/presence.md): a stand-in logind on a private system bus and a
// stand-in screen saver on a private session bus (FakeDesktop.swift), with the real diligenced.
// The test locks, unlocks and flips IdleHint as a desktop would, and checks each policy.

import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("Presence: logind's lock and idle hints, the screen saver")
    struct PresenceSources {
        /// A daemon with a fake logind (system bus), a fake screen saver and a recording
        /// notification server (session bus).
        final class Desk {
            let d: DaemonUnderTest
            let systemBus: SessionBus
            let sessionBus: SessionBus
            let logind: FakeLogind
            let screenSaver: FakeScreenSaver
            let notifications: NotificationServer

            init(_ presence: String, ownSession: Bool = false) throws {
                d = try DaemonUnderTest(launch: false)
                for dir in ["/system", "/session"] { mkdir(d.root + dir, 0o700) }
                systemBus = try SessionBus(directory: d.root + "/system")
                sessionBus = try SessionBus(directory: d.root + "/session")
                logind = try FakeLogind(busAddress: systemBus.address, ownSession: ownSession)
                screenSaver = try FakeScreenSaver(busAddress: sessionBus.address)
                notifications = try NotificationServer(busAddress: sessionBus.address)
                d.extraEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus.address
                d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = sessionBus.address
                try d.writeConfig("[timer]\nmin_session = 0\n[presence]\n\(presence)\n")
                try d.start()
                // Both sources are followed once their first answers came.
                try waitFor("the sources are followed") {
                    d.stderr.contains("source=logind") && d.stderr.contains("source=screensaver")
                }
            }

            deinit {
                notifications.stop()
                screenSaver.stop()
                logind.stop()
            }

            func status() throws -> JSON { try d.status() }
            func state() throws -> String { try status()["state"]?.stringValue ?? "?" }
            func remaining() throws -> Int64 { try status()["remaining_seconds"]?.intValue ?? -1 }

            /// Waits up to `timeout` seconds for `condition`; throws naming `what` otherwise.
            func waitFor(_ what: String, timeout: Double = 8, _ condition: () throws -> Bool) throws {
                let deadline = monotonicNow() + timeout
                while try !condition() {
                    if monotonicNow() > deadline { throw HarnessError("\(what): not within \(timeout) s\n\(d.diagnostics)") }
                    sleepFor(0.05)
                }
            }

            func presence() throws -> String { try status()["presence"]?.stringValue ?? "?" }
        }

        @Test("Lock pauses the work, Unlock resumes it with the exact time it had left")
        func lockPausesUnlockResumes() throws {
            let desk = try Desk("on_away = pause")
            #expect(try desk.presence() == "here", "the session's hints say here")
            try desk.d.addTask("Deep", [("work", .string("1h"))])
            try desk.d.call("start", [("task", .string("Deep"))])
            sleepFor(1.1)
            desk.logind.setLocked(true)
            try desk.waitFor("paused by the lock") { try desk.state() == "paused" }
            #expect(try desk.presence() == "away")
            let left = try desk.remaining()
            sleepFor(2.1)
            #expect(try desk.remaining() == left)
            desk.logind.setLocked(false)
            try desk.waitFor("resumed by the unlock") { try desk.state() == "running" }
            #expect(abs(try desk.remaining() - left) <= 1)
            #expect(try desk.presence() == "here")
            let calls = desk.logind.received
            #expect(calls.contains { $0.hasPrefix("org.freedesktop.login1.Manager.GetSessionByPID") }, "\(calls)")
            #expect(calls.contains { $0.hasPrefix("org.freedesktop.DBus.Properties.Get \(FakeLogind.userPath)") }, "\(calls)")
        }

        @Test("IdleHint: away idle_after from IdleSinceHint, not before; back when it clears")
        func idleHint() throws {
            let desk = try Desk("idle_after = 2s", ownSession: true)
            try desk.d.addTask("Deep", [("work", .string("1h"))])
            try desk.d.call("start", [("task", .string("Deep"))])
            let since = monotonicNow() - 1
            desk.logind.setIdle(true, since: since)
            sleepFor(0.4)
            #expect(try desk.presence() == "here", "away before idle_after")
            try desk.waitFor("away after idle_after") { try desk.presence() == "away" }
            #expect(monotonicNow() >= since + 2)
            #expect(try desk.state() == "paused")
            desk.logind.setIdle(false, since: 0)
            try desk.waitFor("back") { try desk.presence() == "here" }
            #expect(try desk.state() == "running")
        }

        @Test("continue: back offers Keep / Discard; the notification's Discard takes the time away out")
        func continueThenDiscardFromTheNotification() throws {
            let desk = try Desk("on_away = continue")
            try desk.d.addTask("Deep", [("work", .string("1h"))])
            try desk.d.call("start", [("task", .string("Deep"))])
            let before = try desk.remaining()
            desk.logind.setLocked(true)
            try desk.waitFor("away") { try desk.presence() == "away" }
            sleepFor(2.5)
            #expect(try desk.state() == "running")
            desk.logind.setLocked(false)
            try desk.waitFor("back") { try desk.presence() == "here" }
            #expect(before - (try desk.remaining()) >= 2, "the time away was not counted")
            var offer: NotificationServer.Call?
            try desk.waitFor("the Keep / Discard notification") {
                offer = desk.notifications.received.first { $0.actionKeys.contains("discard_away") }
                return offer != nil
            }
            #expect(offer?.actionKeys == ["keep_away", "discard_away"], "\(String(describing: offer))")
            desk.notifications.invoke("discard_away", on: offer!.id)
            try desk.waitFor("the time away discarded") { abs(try desk.remaining() - before) <= 1 }
            #expect(try desk.status()["away_offered"]?.boolValue == false)
        }

        @Test("continue: work that ended while away is trimmed to the moment of leaving when the time away is discarded")
        func discardTrimsTheSessionThatEndedWhileAway() throws {
            let desk = try Desk("on_away = continue")
            try desk.d.addTask("Short", [("work", .string("3s"))])
            try desk.d.call("start", [("task", .string("Short"))])
            sleepFor(1.1)
            desk.logind.setLocked(true)
            try desk.waitFor("away") { try desk.presence() == "away" }
            try desk.waitFor("the work completed while away") { try desk.state() == "pending" }
            let completed = try desk.d.sqlite("SELECT outcome, focused_seconds, away_seconds FROM sessions")
            #expect(completed.first?.first == "completed" && completed.first?[1] == "3", "\(completed)")
            desk.logind.setLocked(false)
            try desk.waitFor("back") { try desk.presence() == "here" }
            #expect(try desk.status()["away_offered"]?.boolValue == true)
            let discard = try desk.d.ctl("discard-away")
            #expect(discard.exitCode == 0, "\(discard)")
            let trimmed = try desk.d.sqlite("SELECT outcome, reason, focused_seconds, end - start < 2 FROM sessions")
            #expect(trimmed == [["abandoned", "left", "1", "1"]], "\(trimmed)")
        }

        @Test("abandon: the lock gives the work up, recorded as abandoned with reason left")
        func abandonOnLock() throws {
            let desk = try Desk("on_away = abandon")
            try desk.d.addTask("Deep", [("work", .string("1h"))])
            try desk.d.call("start", [("task", .string("Deep"))])
            sleepFor(1.1)
            desk.logind.setLocked(true)
            try desk.waitFor("given up") { try desk.state() == "idle" }
            #expect(try desk.d.sqlite("SELECT outcome, reason FROM sessions") == [["abandoned", "left"]])
            // Not strict focus: given up, not failed.
            try desk.waitFor("the notification") { desk.notifications.received.contains { $0.summary.hasPrefix("Focus session") } }
            #expect(desk.notifications.received.map(\.summary).contains("Focus session given up"), "\(desk.notifications.received)")
        }

        @Test("strict focus: locked past strict_grace fails the work, not before; a notification says so")
        func strictFailsAfterTheGrace() throws {
            let desk = try Desk("strict_grace = 2s")
            try desk.d.addTask("Deep", [("work", .string("1h")), ("focus_mode", .bool(true))])
            try desk.d.call("start", [("task", .string("Deep"))])
            sleepFor(1.1)
            desk.logind.setLocked(true)
            try desk.waitFor("away") { try desk.presence() == "away" }
            sleepFor(1.0)
            #expect(try desk.state() == "running", "failed before the grace")
            try desk.waitFor("failed after the grace") { try desk.state() == "idle" }
            #expect(try desk.d.sqlite("SELECT outcome, reason FROM sessions") == [["abandoned", "left"]])
            try desk.waitFor("the failure notification") {
                desk.notifications.received.contains { $0.summary == "Focus session failed" }
            }
        }

        @Test("a break runs on while locked; work that would start by itself waits for the unlock")
        func breakRunsOnAndWorkWaits() throws {
            let desk = try Desk("on_away = pause")
            try desk.d.addTask(
                "Chain", [("work", .string("1s")), ("short_break", .string("3s")), ("autostart", .string("all"))])
            try desk.d.call("start", [("task", .string("Chain"))])
            try desk.waitFor("the break") { try desk.status()["phase"]?.stringValue == "short_break" }
            desk.logind.setLocked(true)
            try desk.waitFor("away") { try desk.presence() == "away" }
            let during = try desk.remaining()
            sleepFor(1.2)
            #expect(try desk.state() == "running" && (try desk.remaining()) < during, "the break did not run on")
            try desk.waitFor("work pending") {
                let s = try desk.status()
                return s["state"]?.stringValue == "pending" && s["phase"]?.stringValue == "work"
            }
            sleepFor(0.5)
            #expect(try desk.state() == "pending", "work started at an empty desk")
            desk.logind.setLocked(false)
            try desk.waitFor("work started on return") { try desk.state() == "running" }
            #expect(try desk.status()["phase"]?.stringValue == "work")
        }

        @Test("the screen saver's ActiveChanged is away and back")
        func screenSaver() throws {
            let desk = try Desk("on_away = pause")
            try desk.d.addTask("Deep", [("work", .string("1h"))])
            try desk.d.call("start", [("task", .string("Deep"))])
            desk.screenSaver.setActive(true)
            try desk.waitFor("away") { try desk.presence() == "away" && desk.state() == "paused" }
            desk.screenSaver.setActive(false)
            try desk.waitFor("back") { try desk.presence() == "here" && desk.state() == "running" }
            #expect(desk.screenSaver.received.contains { $0.hasPrefix("org.freedesktop.ScreenSaver.GetActive") })
        }

        @Test("without a session or a screen saver each source says so once, and the commands still work")
        func unavailableSourcesAreLoggedOnce() throws {
            let d = try DaemonUnderTest(launch: false)
            mkdir(d.root + "/session", 0o700)
            let sessionBus = try SessionBus(directory: d.root + "/session")
            d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = sessionBus.address
            d.extraEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(d.root)/no-system-bus"
            try d.start()
            let deadline = monotonicNow() + 5
            while !d.stderr.contains("source=screensaver") && monotonicNow() < deadline { sleepFor(0.05) }
            try d.call("away")
            try d.call("back")
            try d.call("away")
            try d.call("back")
            // The daemon logs in order: once a refusal sent after those is in the log, anything
            // away and back logged is too. A second later, no source has been retried and logged.
            #expect(try d.failure("start", [("task", .string("No such task"))]).code == "unknown_task")
            let refusalDeadline = monotonicNow() + 5
            while !d.stderr.contains("event=refused") && monotonicNow() < refusalDeadline { sleepFor(0.05) }
            try #require(d.stderr.contains("event=refused"), "the refusal was never logged: \(d.stderr)")
            sleepFor(1)
            #expect(d.stderr.components(separatedBy: "(event=presence_unavailable source=screensaver)").count == 2, "\(d.stderr)")
            #expect(d.stderr.components(separatedBy: "event=logind_unavailable").count == 2, "\(d.stderr)")
            #expect(try d.status()["presence"]?.stringValue == "here")
        }
    }
}
