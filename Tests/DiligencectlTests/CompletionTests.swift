import DiligenceTestSupport
import Foundation
import Testing

@testable import DiligenceClient

/// The shell completions in contrib/completions are written by hand: these checks keep them in
/// step with the command table, so a new command or option cannot silently go missing. Each shell
/// runs its file and is asked what it offers (bash: `_diligencectl` on COMP_WORDS; zsh: Tab on a
/// pseudo-terminal, every candidate `compadd` adds recorded; fish: `complete -C`); the word
/// appearing somewhere in the file, a comment included, proves nothing. A stand-in
/// `diligencectl` on PATH answers `task list --names` and logs how it was asked.
@Suite struct CompletionTests {
    enum Shell: String, CaseIterable, CustomTestStringConvertible {
        case bash, zsh, fish
        var testDescription: String { rawValue }
    }

    static let directory = PackageFiles.path("contrib/completions")
    static let taskNames = ["Alpha", "Beta Two"]

    /// A directory with the stand-in client, the shells' scratch files and its log.
    final class Scratch {
        let dir = TemporaryDirectory("diligence-completion")
        var log: String { dir.path + "/calls" }
        init() throws {
            let bin = dir.path + "/bin"
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            let client = """
                #!/bin/sh
                printf '%s\\n' "$*" >> '\(dir.path)/calls'
                case "$*" in *"task list --names"*) printf '%s\\n' \(taskNames.map { "'\($0)'" }.joined(separator: " ")) ;; esac
                """
            try client.write(toFile: bin + "/diligencectl", atomically: true, encoding: .utf8)
            chmod(bin + "/diligencectl", 0o755)
        }
        deinit { dir.remove() }

        /// Runs `arguments` with the stand-in first on PATH; its stdout (it must exit 0 within 60 s).
        func run(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: arguments[0])
            process.arguments = Array(arguments.dropFirst())
            process.environment = [
                "PATH": dir.path + "/bin:/usr/bin:/bin", "HOME": dir.path, "TERM": "xterm", "LANG": "C.UTF-8",
                "XDG_CONFIG_HOME": dir.path + "/config", "XDG_DATA_HOME": dir.path + "/data",
            ]
            process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
            let output = dir.path + "/out-\(UUID().uuidString)"
            FileManager.default.createFile(atPath: output, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardOutput = handle
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let deadline = Date(timeIntervalSinceNow: 60)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            try handle.close()
            defer { try? FileManager.default.removeItem(atPath: output) }
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            try #require(process.terminationStatus == 0, "\(arguments.prefix(2)) exited \(process.terminationStatus): \(text.suffix(2000))")
            return text
        }

        /// What `shell` offers for each line (the words typed, the last one being completed).
        func candidates(_ shell: Shell, _ lines: [[String]]) throws -> [[String]] {
            switch shell {
            case .bash: return try lines.map(bash)
            case .fish: return try lines.map(fish)
            case .zsh: return try zsh(lines)
            }
        }

        func bash(_ words: [String]) throws -> [String] {
            let script = """
                source '\(directory)/diligencectl.bash'
                COMP_WORDS=(diligencectl "$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
                COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
                _diligencectl
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            return try run(["/bin/bash", "-c", script, "bash"] + words).split(separator: "\n").map(String.init)
        }

        func fish(_ words: [String]) throws -> [String] {
            let out = try run(
                [
                    "/usr/bin/fish", "-c", "source '\(directory)/diligencectl.fish'; complete -C \"diligencectl $argv\"",
                ] + words)
            return out.split(separator: "\n").map { String($0.split(separator: "\t", omittingEmptySubsequences: false)[0]) }
        }

        /// An interactive `zsh -f` on a pseudo-terminal with compinit and _diligencectl: each line
        /// typed with a Tab, `compadd` wrapped to record what it adds, then a key whose widget
        /// marks the end of that line's candidates and clears it.
        func zsh(_ lines: [[String]]) throws -> [[String]] {
            let out = dir.path + "/zsh"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            let driver = dir.path + "/drive.zsh"
            try #"""
            zmodload zsh/zpty || exit 2
            dir=$1 out=$2; shift 2
            zpty -b comp zsh -f -i
            zpty -w comp "PS1='' PROMPT_EOL_MARK=''; unsetopt autolist automenu listambiguous; setopt nobeep; fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -d ${(q)out}/zcompdump"
            zpty -w comp "compadd() { if [[ \" \$* \" == *' -'[OAD]' '* ]]; then builtin compadd \"\$@\"; return; fi; local -a hits; builtin compadd -A hits \"\$@\"; (( \$#hits )) && print -rl -- \$hits >> ${(q)out}/hits; builtin compadd \"\$@\"; }"
            zpty -w comp "typeset -i n=0; mark() { n+=1; print -r -- '--end--' >> ${(q)out}/hits; print \$n > ${(q)out}/count; BUFFER=; }; zle -N mark; bindkey '^X^P' mark"
            zpty -w comp "print ready > ${(q)out}/ready"
            for t in {1..200}; do [[ -s $out/ready ]] && break; sleep 0.05; done
            typeset -i i=0
            for line in "$@"; do
                i+=1
                zpty -w -n comp "$line"$'\t'$'\x18\x10'
                for t in {1..200}; do [[ -s $out/count && $(<$out/count) == $i ]] && break; sleep 0.05; done
            done
            zpty -d comp
            """#.write(toFile: driver, atomically: true, encoding: .utf8)
            _ = try run(["/usr/bin/zsh", "-f", driver, directory, out] + lines.map { (["diligencectl"] + $0).joined(separator: " ") })
            let hits = (try? String(contentsOfFile: out + "/hits", encoding: .utf8)) ?? ""
            var groups = hits.components(separatedBy: "--end--\n").map { $0.split(separator: "\n").map(String.init) }
            try #require(groups.count == lines.count + 1, "zsh completed \(groups.count - 1) of \(lines.count) lines")
            groups.removeLast()
            return groups
        }
    }

    @Test("every command and subcommand of the table is completed by bash, zsh and fish", arguments: Shell.allCases)
    func commands(shell: Shell) throws {
        let scratch = try Scratch()
        let groups = Set(Command.all.compactMap { $0.words.count > 1 ? $0.words[0] : nil })
        let lines = [[""]] + groups.sorted().map { [$0, ""] }
        let offered = try scratch.candidates(shell, lines)
        let top = Set(offered[0])
        for word in Set(Command.all.map { $0.words[0] }).union(["help"]) {
            #expect(top.contains(word), "\(shell): `diligencectl <Tab>` does not offer '\(word)': \(top.sorted())")
        }
        for (group, candidates) in zip(groups.sorted(), offered.dropFirst()) {
            for sub in Command.subcommands(of: group).map({ $0.words[1] }) {
                #expect(candidates.contains(sub), "\(shell): `diligencectl \(group) <Tab>` does not offer '\(sub)': \(candidates)")
            }
        }
    }

    @Test("every option of every command is completed by bash, zsh and fish", arguments: Shell.allCases)
    func options(shell: Shell) throws {
        let scratch = try Scratch()
        let commands = Command.all.filter { !$0.options.isEmpty }
        let offered = try scratch.candidates(shell, commands.map { $0.words + ["--"] })
        for (command, candidates) in zip(commands, offered) {
            for option in command.options {
                #expect(
                    candidates.contains("--" + option.name),
                    "\(shell): `diligencectl \(command.name) --<Tab>` does not offer --\(option.name): \(candidates)")
            }
        }
    }

    @Test("task names come from the daemon through task list --names in every shell", arguments: Shell.allCases)
    func taskNames(shell: Shell) throws {
        let scratch = try Scratch()
        let offered = try scratch.candidates(shell, [["start", ""]])[0]
        // bash and zsh quote for the command line (`Beta\ Two`); fish offers the name itself.
        let expected = shell == .fish ? Self.taskNames : ["Alpha", "Beta\\ Two"]
        #expect(offered.sorted() == expected, "\(shell): `diligencectl start <Tab>` offers \(offered)")
        let calls = (try? String(contentsOfFile: scratch.log, encoding: .utf8)) ?? ""
        #expect(calls.split(separator: "\n").contains { $0.hasSuffix("task list --names") }, "\(shell) asked the client: \(calls)")
    }
}
