import DiligenceCore
import Testing

@Suite("[taskwarrior]: the project map and its default")
struct TaskwarriorSettingsTests {
    @Test("a project takes its own entry, else its nearest parent's, else default")
    func mapping() throws {
        let config = try DaemonConfig.parse("[taskwarrior]\nmap = Home:Chores, Work.report:Writing\nmap = Work:Office\ndefault = Inbox\n")
        let tw = config.taskwarrior
        #expect(tw.task(forProject: "Home") == "Chores")
        #expect(tw.task(forProject: "Home.garden.roses") == "Chores")
        #expect(tw.task(forProject: "Work.report") == "Writing")
        #expect(tw.task(forProject: "Work.mail") == "Office")
        #expect(tw.task(forProject: "Homework") == "Inbox")
        #expect(tw.task(forProject: nil) == "Inbox")
        #expect(tw.enabled)
        #expect(try DaemonConfig.parse("[taskwarrior]\nmap = Home:Chores\n").taskwarrior.task(forProject: "Work") == nil)
        #expect(try !DaemonConfig.parse("[taskwarrior]\nenabled = no\n").taskwarrior.enabled)
    }

    @Test("a map entry without its colon or a side, and an empty default, are refused with their line")
    func badLines() {
        for text in ["map = Home", "map = :Chores", "map = Home:", "default = ", "mapp = Home:Chores"] {
            #expect(throws: DiligenceError.self) { try DaemonConfig.parse("[taskwarrior]\n\(text)\n") }
        }
    }
}
