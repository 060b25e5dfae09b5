import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// The client tells no one but its own daemon anything (issue 26, item 6): without
// XDG_RUNTIME_DIR it looks in /tmp/diligence-<uid>, which another user can make first and put a
// socket of theirs in. Before, the other user's server got the victim's note text and answered
// a forged "Idle · 999 completed today" (exit 0).

extension EndToEnd {
    @Suite("The client talks only to a daemon of its own user")
    struct ClientTrust {
        /// A fake server of `attacker` listening at `socket` (mode 0777): it writes every byte
        /// it receives to `received` and answers a forged status; returns once it listens.
        static func fakeServer(as attacker: TestUser, socket: String, received: String) throws -> ChildProcess {
            let python = try requireProgram("python3", "/usr/bin/python3")
            let script = """
                import os, socket, sys
                path, received = sys.argv[1], sys.argv[2]
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.bind(path)
                os.chmod(path, 0o777)
                s.listen(8)
                open(received, "wb").close()
                os.chmod(received, 0o644)
                while True:
                    c, _ = s.accept()
                    c.settimeout(2)
                    try:
                        data = c.recv(65536)
                    except OSError:
                        data = b""
                    with open(received, "ab") as f:
                        f.write(data)
                    try:
                        c.sendall(b'{"ok":true,"result":{"state":"idle","completed_today":999}}\\n')
                    except OSError:
                        pass
                    c.close()
                """
            let server = try ChildProcess(
                executable: "/usr/bin/setpriv",
                arguments: [
                    "--reuid=\(attacker.uid)", "--regid=\(attacker.gid)", "--clear-groups", "--", python, "-c", script, socket, received,
                ],
                environment: ["PATH": "/usr/bin:/bin"], stdoutPath: "/dev/null", stderrPath: "/dev/null")
            let deadline = monotonicNow() + 10
            while access(received, F_OK) != 0 {
                if let status = server.poll() { throw HarnessError("the fake server exited (\(status))") }
                if monotonicNow() > deadline {
                    server.killAndReap()
                    throw HarnessError("the fake server did not listen within 10 s")
                }
                sleepFor(0.05)
            }
            return server
        }

        /// `diligencectl ARGS` as `user`, without XDG_RUNTIME_DIR (the fallback in /tmp).
        static func client(as user: TestUser, _ arguments: [String], environment: [String: String] = [:], in directory: String) throws
            -> ProgramRun
        {
            let command =
                ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--", try Binaries.client] + arguments
            return try runProgram(
                command, environment: ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8"].merging(environment) { $1 },
                directory: directory, timeout: 10)
        }

        static var canRun: Bool {
            let programs = ["/usr/sbin/useradd", "/usr/sbin/userdel", "/usr/bin/setpriv", "/usr/bin/python3"]
            return geteuid() == 0 && programs.allSatisfy { (path: String) in access(path, X_OK) == 0 }
        }

        @Test(
            "another user's /tmp/diligence-<uid> with a server in it: the client refuses, says why (exit 4), and sends nothing",
            .enabled(if: canRun, "needs root, useradd, setpriv and python3"))
        func anotherUsersFallbackDirectory() throws {
            let victim = try TestUser()
            defer { victim.remove() }
            let attacker = try TestUser()
            defer { attacker.remove() }
            let directory = "/tmp/diligence-\(victim.uid)"
            let work = TestRun.makeDirectory(in: TestRun.temporaryBase, prefix: "dlg-trust")
            defer {
                _ = try? runProgram(["/bin/rm", "-rf", directory, work], environment: [:], directory: "/")
            }
            // The attacker makes the victim's fallback directory first, open to the victim.
            try #require(mkdir(directory, 0o755) == 0 && chmod(directory, 0o755) == 0)
            try #require(chown(directory, attacker.uid, attacker.gid) == 0)
            let received = directory + "/received"
            let server = try Self.fakeServer(as: attacker, socket: directory + "/diligenced.sock", received: received)
            defer { server.killAndReap() }

            let note = try Self.client(as: victim, ["note", "the victim's secret words"], in: work)
            #expect(note.status == .exited(4), "\(note)")
            #expect(
                note.stderr.contains(
                    "refused to talk to \(directory)/diligenced.sock: \(directory) belongs to uid \(attacker.uid), not to you (uid \(victim.uid)); nothing was sent."
                ), "\(note)")
            let status = try Self.client(as: victim, ["status"], in: work)
            #expect(status.status == .exited(4) && !status.stdout.contains("999"), "\(status)")
            // The victim's own directory but open to others (0755): refused too, saying so.
            try #require(chown(directory, victim.uid, victim.gid) == 0)
            let open = try Self.client(as: victim, ["status"], in: work)
            #expect(open.status == .exited(4) && open.stderr.contains("\(directory) has mode 755, not 700"), "\(open)")
            #expect(readTextFile(received).isEmpty, "the fake server received: \(readTextFile(received))")
        }

        @Test(
            "a socket of another user's named by --socket: refused by SO_PEERCRED before a byte is sent (exit 4)",
            .enabled(if: canRun, "needs root, useradd, setpriv and python3"))
        func anotherUsersServer() throws {
            let victim = try TestUser()
            defer { victim.remove() }
            let attacker = try TestUser()
            defer { attacker.remove() }
            let directory = TestRun.makeDirectory(in: TestRun.temporaryBase, prefix: "dlg-trust")
            defer { _ = try? runProgram(["/bin/rm", "-rf", directory], environment: [:], directory: "/") }
            try #require(chmod(directory, 0o755) == 0 && chown(directory, attacker.uid, attacker.gid) == 0)
            let socket = directory + "/diligenced.sock"
            let received = directory + "/received"
            let server = try Self.fakeServer(as: attacker, socket: socket, received: received)
            defer { server.killAndReap() }

            for arguments in [["--socket", socket, "note", "the victim's secret words"], ["--socket", socket, "watch", "--json"]] {
                let run = try Self.client(as: victim, arguments, in: TestRun.temporaryBase)
                #expect(run.status == .exited(4), "\(run)")
                #expect(
                    run.stderr.contains("refused to talk to \(socket): the process listening there (pid ")
                        && run.stderr.contains(
                            "runs as uid \(attacker.uid), not as you (uid \(victim.uid)): it is not your daemon; nothing was sent."),
                    "\(run)")
            }
            #expect(readTextFile(received).isEmpty, "the fake server received: \(readTextFile(received))")
        }
    }
}
