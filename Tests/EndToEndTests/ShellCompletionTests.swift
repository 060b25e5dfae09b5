// Task names are data to the completions: whatever a name holds — a space, `$(...)`, quotes,
// a colon, non-ASCII — the real shell completes exactly that name, quoted for its command line,
// and nothing in it runs. bash is driven through COMP_WORDS (with and without bash-completion),
// zsh through a pseudo-terminal (zpty) as a person types, fish through `complete -C`.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("Shell completions: task names are data, quoted and never evaluated")
    struct TaskNamesAsData {
        /// The names, and a start of each that only it matches.
        static let names: [(name: String, typed: String)] = [
            ("Deep Work", "De"),
            ("Odd $(touch X)", "Od"),
            ("a'b\"c", "a"),
            ("日本語", "日"),
            ("Ratio 1:2", "Ra"),
        ]
        static let completions = Binaries.packageRoot + "/contrib/completions"

        /// A daemon with those tasks, an empty directory the shells run in (a `touch X` that ran
        /// would leave X there), and an environment whose default socket leads nowhere: the
        /// completions must ask the daemon named by the line's --socket.
        struct Setup {
            let d: DaemonUnderTest
            let work: String
            var environment: [String: String]

            /// `daemon`, else a new one with those tasks.
            init(_ daemon: DaemonUnderTest? = nil) throws {
                if let daemon {
                    d = daemon
                } else {
                    d = try DaemonUnderTest()
                    for (name, _) in TaskNamesAsData.names { try d.addTask(name) }
                }
                work = d.root + "/work"
                mkdir(work, 0o700)
                mkdir(d.root + "/elsewhere", 0o700)
                environment = d.environment
                environment["PATH"] = Binaries.directory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
                environment["XDG_RUNTIME_DIR"] = d.root + "/elsewhere"
                environment["TERM"] = "xterm-256color"
            }

            /// Runs `program arguments...` in `work`; returns its stdout.
            func run(_ program: String, _ arguments: [String], timeout: Double = 20) throws -> String {
                let run = try runProgram(
                    ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", work, program] + arguments,
                    environment: environment, directory: d.root, timeout: timeout)
                guard run.succeeded else { throw HarnessError("\(run)") }
                return run.stdout
            }

            /// What appeared in `work`: nothing, unless a name was evaluated.
            var litter: [String] { (try? FileManager.default.contentsOfDirectory(atPath: work)) ?? [] }
        }

        /// bash: the words of `diligencectl --socket S start TYPED` in COMP_WORDS (COMP_LINE,
        /// COMP_POINT too, for bash-completion's _init_completion); the one reply, put on the line
        /// after what was typed before it (an opening quote, which readline then closes), is the
        /// word bash reads back as the name.
        @Test("bash completes each name, quoted, and runs nothing in it", arguments: [false, true])
        func bash(withBashCompletion: Bool) throws {
            let library = "/usr/share/bash-completion/bash_completion"
            if withBashCompletion && access(library, R_OK) != 0 {
                Issue.record("\(library) is missing: apt-get install -y bash-completion (make test-deps)")
                return
            }
            let s = try Setup()
            let script = """
                \(withBashCompletion ? "source \(library)" : "")
                source '\(Self.completions)/diligencectl.bash'
                typed=$2
                COMP_WORDS=(diligencectl --socket "$1" start "$typed"); COMP_CWORD=4
                COMP_LINE="diligencectl --socket $1 start $typed"; COMP_POINT=${#COMP_LINE}
                _diligencectl
                quote=${typed:0:1}; [[ $quote == [\\'\\"] ]] || quote=""
                eval "set -- $quote${COMPREPLY[0]}$quote"
                printf '%s\\n%s\\0%s' "${#COMPREPLY[@]}" "$quote${COMPREPLY[0]}$quote" "$1"
                """
            var cases = Self.names
            // Begun with a backslash-escaped space, an opening single or double quote.
            cases += [
                ("Deep Work", "Deep\\ W"), ("Odd $(touch X)", "'Od"), ("a'b\"c", "'a"), ("a'b\"c", "\"a"),
                ("Odd $(touch X)", "\"Od"),
            ]
            for (name, typed) in cases {
                let out = try s.run("/bin/bash", ["-c", script, "bash", s.d.socketPath, typed])
                let parts = out.split(separator: "\0", omittingEmptySubsequences: false).map(String.init)
                #expect(
                    parts.count == 2 && parts[0].hasPrefix("1\n") && parts[1] == name,
                    "bash: `start \(typed)<Tab>` → \(parts.first.map { $0.replacingOccurrences(of: "\n", with: " line: ") } ?? "?") reads back as \(parts.last.map(\.debugDescription) ?? "?"), not \(name.debugDescription)"
                )
            }
            #expect(s.litter.isEmpty, "bash evaluated a task name: \(s.litter) appeared")
        }

        /// zsh: an interactive `zsh -f` on a pseudo-terminal (zpty) with compinit and our _diligencectl;
        /// the test types each line and a Tab, then a key bound to a widget that saves the line
        /// and its last word as zsh splits and unquotes it — (z) and (Q), which evaluate nothing.
        @Test("zsh completes each name, quoted, and runs nothing in it")
        func zsh() throws {
            let s = try Setup()
            let lines = Self.names.map { "diligencectl --socket \(s.d.socketPath) start \($0.typed)" }
            for (index, (name, typed)) in Self.names.enumerated() {
                let (line, word) = try Self.zshCompletes(lines, in: s)[index]
                #expect(
                    word == name + "\n",
                    "zsh: `start \(typed)<Tab>` → \(line.debugDescription), whose last word is \(word.debugDescription)")
            }
            #expect(s.litter.isEmpty, "zsh evaluated a task name: \(s.litter) appeared")
        }

        /// Each of `lines` typed into zsh with a Tab: the line it completed to and its last word.
        static func zshCompletes(_ lines: [String], in s: Setup) throws -> [(line: String, word: String)] {
            let out = s.d.root + "/zsh"
            mkdir(out, 0o700)
            let driver = s.d.root + "/drive.zsh"
            try """
            zmodload zsh/zpty || exit 2
            dir=$1 out=$2; shift 2
            zpty -b comp zsh -f -i
            zpty -w comp "PS1='' PROMPT_EOL_MARK=''; fpath=(${(q)dir} \\$fpath); autoload -Uz compinit; compinit -u -d ${(q)out}/zcompdump"
            zpty -w comp "typeset -i n=0; save() { n+=1; print -r -- \\"\\$BUFFER\\" > ${(q)out}/\\$n.line; print -r -- \\"\\${(Q)\\${(z)BUFFER}[-1]}\\" > ${(q)out}/\\$n.word; BUFFER=; }; zle -N save; bindkey '^X^P' save"
            typeset -i i=0
            for line in "$@"; do
                i+=1
                zpty -w -n comp "$line"$'\\t'$'\\x18\\x10'
                for t in {1..200}; do [[ -s $out/$i.word ]] && break; sleep 0.05; done
            done
            zpty -d comp

            """.write(toFile: driver, atomically: true, encoding: .utf8)
            _ = try s.run("/usr/bin/zsh", ["-f", driver, Self.completions, out] + lines, timeout: 60)
            defer { try? FileManager.default.removeItem(atPath: out) }
            return lines.indices.map { index in
                (readTextFile(out + "/\(index + 1).line").trimmingWhitespace(), readTextFile(out + "/\(index + 1).word"))
            }
        }

        @Test("fish completes each name (complete -C) and runs nothing in it")
        func fish() throws {
            let s = try Setup()
            for (name, typed) in Self.names {
                let out = try s.run(
                    "/usr/bin/fish",
                    [
                        "-c",
                        "source '\(Self.completions)/diligencectl.fish'; complete -C \"diligencectl --socket $argv[1] start $argv[2]\"",
                        s.d.socketPath, typed,
                    ])
                let candidates = out.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
                #expect(candidates == [name], "fish: `start \(typed)<Tab>` → \(candidates)")
            }
            #expect(s.litter.isEmpty, "fish evaluated a task name: \(s.litter) appeared")
        }

        /// `--device` completes `this` and the names of the devices known here (`sync status
        /// --names`): a daemon that merged the journal of a device named "Work desk".
        @Test("--device completes this and the other devices' names in bash, zsh and fish, quoted")
        func deviceNames() throws {
            let (a, folderA, _) = try EndToEnd.SyncMerge.device("laptop")
            let b = try EndToEnd.SyncMerge.device("Work desk")
            try EndToEnd.SyncMerge.copyJournal(of: b, to: folderA)
            try EndToEnd.SyncMerge.eventually("A knows B's name") { try a.ctl("sync", "status", "--names").stdout.contains("Work desk") }
            let s = try Setup(a)
            let socket = s.d.socketPath
            let bash = """
                source '\(Self.completions)/diligencectl.bash'
                COMP_WORDS=(diligencectl --socket "$1" "$2" --device "$3"); COMP_CWORD=5
                _diligencectl
                eval "set -- ${COMPREPLY[*]}"
                printf '%s\\n' "$@"
                """
            for (command, typed, expected) in [
                ("history", "Wo", ["Work desk"]), ("stats", "th", ["this"]), ("report", "", ["laptop", "this", "Work desk"]),
            ] {
                let words = try s.run("/bin/bash", ["-c", bash, "bash", socket, command, typed]).split(separator: "\n").map(String.init)
                #expect(words.sorted() == expected.sorted(), "bash: `\(command) --device \(typed)<Tab>` → \(words)")
            }
            let zsh = try Self.zshCompletes(
                ["diligencectl --socket \(socket) stats --device Wo", "diligencectl --socket \(socket) week --device th"], in: s)
            #expect(zsh.map(\.word) == ["Work desk\n", "this\n"], "zsh: \(zsh)")
            for (command, typed, expected) in [("export", "Wo", ["Work desk"]), ("report", "la", ["laptop"])] {
                let out = try s.run(
                    "/usr/bin/fish",
                    [
                        "-c",
                        "source '\(Self.completions)/diligencectl.fish'; complete -C \"diligencectl --socket $argv[1] $argv[2] --device $argv[3]\"",
                        socket, command, typed,
                    ])
                let candidates = out.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
                #expect(candidates == expected, "fish: `\(command) --device \(typed)<Tab>` → \(candidates)")
            }
        }
    }
}
