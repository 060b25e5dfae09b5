import Testing

/// The completions of the statistics commands (stats, week, plan, history, export, import), run
/// in the real shells with the real client on PATH: values, subcommands and task names from the daemon.
extension EndToEnd {
    @Suite("Shell completions: statistics commands complete their values")
    struct CommandCompletionTests {
        static let dir = Binaries.packageRoot + "/contrib/completions"

        /// What bash offers for `words`, the last one being the word under the cursor.
        static func bash(_ bar: BarHarness, _ words: String) throws -> [String] {
            let out = try bar.run(
                """
                bash -c 'source \(dir)/diligencectl.bash; COMP_WORDS=(\(words)); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); \
                _diligencectl; printf "%s\\n" "${COMPREPLY[@]}"'
                """)
            return out.split(separator: "\n").map(String.init).filter { !$0.isEmpty }.sorted()
        }

        /// What fish offers for `line` (descriptions dropped).
        static func fish(_ bar: BarHarness, _ line: String) throws -> [String] {
            let out = try bar.run("fish -c 'source \(dir)/diligencectl.fish; complete -C \"\(line)\"'")
            return out.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }.filter { !$0.isEmpty }.sorted()
        }

        @Test("bash completes periods, formats, days, task names and history subcommands")
        func bashValues() throws {
            let bar = BarHarness(d: try DaemonUnderTest())
            #expect(try Self.bash(bar, "diligencectl stats \"\"") == ["all", "day", "month", "today", "week", "year"])
            #expect(try Self.bash(bar, "diligencectl stats week fr") == ["friday"])
            #expect(try Self.bash(bar, "diligencectl report day ye") == ["yesterday"])
            #expect(try Self.bash(bar, "diligencectl stats week friday \"\"") == [])
            #expect(try Self.bash(bar, "diligencectl export --format \"\"") == ["csv", "ics", "jsonl"])
            #expect(try Self.bash(bar, "diligencectl status --format \"\"") == ["'{icon} {task} {remaining}'"])
            #expect(try Self.bash(bar, "diligencectl plan set --offset 1 fr") == ["friday"])
            #expect(try Self.bash(bar, "diligencectl plan set friday Ex") == ["Exercise"])
            #expect(try Self.bash(bar, "diligencectl plan clear friday \"\"") == [])
            #expect(try Self.bash(bar, "diligencectl history \"\"") == ["add", "edit", "remove"])
            #expect(try Self.bash(bar, "diligencectl history --task Me") == ["Meditate"])
            #expect(try Self.bash(bar, "diligencectl history --task Meditate \"\"") == [])
            #expect(try Self.bash(bar, "diligencectl history add Me") == ["Meditate"])
            #expect(try Self.bash(bar, "diligencectl history edit 3 --task Ex") == ["Exercise"])
            #expect(
                try Self.bash(bar, "diligencectl import \(Binaries.packageRoot)/Package.s") == [Binaries.packageRoot + "/Package.swift"])
        }

        @Test("fish completes periods, formats, days, task names and history subcommands")
        func fishValues() throws {
            let bar = BarHarness(d: try DaemonUnderTest())
            #expect(try Self.fish(bar, "diligencectl stats ") == ["all", "day", "month", "today", "week", "year"])
            #expect(try Self.fish(bar, "diligencectl stats week fr") == ["friday"])
            #expect(try Self.fish(bar, "diligencectl report day ye") == ["yesterday"])
            #expect(try Self.fish(bar, "diligencectl stats week friday ") == [])
            #expect(try Self.fish(bar, "diligencectl stats --task Me") == ["Meditate"])
            #expect(try Self.fish(bar, "diligencectl export --format ") == ["csv", "ics", "jsonl"])
            #expect(try Self.fish(bar, "diligencectl plan ") == ["clear", "set"])
            #expect(try Self.fish(bar, "diligencectl plan set --offset 1 fr") == ["friday"])
            #expect(try Self.fish(bar, "diligencectl plan set friday Ex") == ["Exercise"])
            #expect(try Self.fish(bar, "diligencectl history ") == ["add", "edit", "remove"])
            #expect(try Self.fish(bar, "diligencectl history --task Meditate ") == [])
            #expect(try Self.fish(bar, "diligencectl history add Me") == ["Meditate"])
            #expect(try Self.fish(bar, "diligencectl history edit 3 --task Ex") == ["Exercise"])
            #expect(
                try Self.fish(bar, "diligencectl import \(Binaries.packageRoot)/Package.s") == [Binaries.packageRoot + "/Package.swift"])
            // Every subcommand of task edit/remove, not just the first listed, completes task names.
            #expect(try Self.fish(bar, "diligencectl task edit Ex") == ["Exercise"])
            #expect(try Self.fish(bar, "diligencectl task remove Me") == ["Meditate"])
        }
        @Test("an archived task is offered by neither bash nor fish, but task unarchive offers it")
        func archivedTasks() throws {
            let bar = BarHarness(d: try DaemonUnderTest())
            _ = try bar.d.call("task_archive", [("task", .string("Meditate"))])
            #expect(try Self.bash(bar, "diligencectl start Me") == [])
            #expect(try Self.bash(bar, "diligencectl task unarchive Me") == ["Meditate"])
            #expect(try Self.bash(bar, "diligencectl task archive Me") == [])
            #expect(try Self.bash(bar, "diligencectl task \"\"").contains("unarchive"))
            #expect(try Self.fish(bar, "diligencectl start Me") == [])
            #expect(try Self.fish(bar, "diligencectl task unarchive Me") == ["Meditate"])
            #expect(try Self.fish(bar, "diligencectl task ").contains("archive"))
        }
    }
}
