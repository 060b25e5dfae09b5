import Testing
@testable import diligencectl

@Suite struct RequestTests {
    @Test(arguments: [
        (["start"], #"{"command":"start"}"#),
        (["start", "Deep work"], #"{"command":"start","task":"Deep work"}"#),
        (["pause"], #"{"command":"pause"}"#),
        (["resume"], #"{"command":"resume"}"#),
        (["toggle"], #"{"command":"toggle"}"#),
        (["stop"], #"{"command":"stop"}"#),
        (["skip"], #"{"command":"skip"}"#),
        (["extend"], #"{"command":"extend"}"#),
        (["extend", "90s"], #"{"command":"extend","duration":90}"#),
        (["extend", "10"], #"{"command":"extend","duration":600}"#),
        (["extend", "1h30m"], #"{"command":"extend","duration":5400}"#),
        (["status"], #"{"command":"status"}"#),
        (["status", "--json"], #"{"command":"status"}"#),
        (["status", "--format", "{task}"], #"{"command":"status"}"#),
        (["version"], #"{"command":"version"}"#),
        (["task", "list", "--json"], #"{"command":"task_list"}"#),
        (["task", "show", "work", "--json"], #"{"command":"task_show","task":"work"}"#),
        (["task", "add", "Read"], #"{"command":"task_add","name":"Read"}"#),
        (["task", "remove", "Read", "--yes"], #"{"command":"task_remove","task":"Read","confirm":true}"#),
        (["task", "edit", "Read", "--name", "Reading"], #"{"command":"task_edit","task":"Read","new_name":"Reading"}"#),
        (["task", "edit", "Read", "--reminder", "off", "--sound=off"],
         #"{"command":"task_edit","task":"Read","reminder":null,"sound":null}"#),
    ])
    func exactJSON(args: [String], json: String) throws {
        #expect(try requestLine(args) == json)
    }

    @Test func everyTaskFieldInTableOrder() throws {
        let args = [
            "--description", "Books \"and\" papers", "--goal=4", "--sound", "rain", "--reminder", "09:30",
            "--color", "green", "--focus-mode", "on", "--autostart", "breaks", "--breaks", "off",
            "--long-break-every", "0", "--long-break", "20m", "--short-break", "90s", "--work", "1h",
        ]
        let fields = #""work":3600,"short_break":90,"long_break":1200,"long_break_every":0,"breaks":false,"#
            + #""autostart":"breaks","focus_mode":true,"color":"green","goal":4,"reminder":"09:30","sound":"rain","#
            + #""description":"Books \"and\" papers""#
        #expect(try requestLine(["task", "add", "Read"] + args) == #"{"command":"task_add","name":"Read","# + fields + "}")
        #expect(try requestLine(["task", "edit", "Read"] + args + ["--name", "Study"])
            == #"{"command":"task_edit","task":"Read","# + fields + #","new_name":"Study"}"#)
    }

    @Test func requestIsOneLine() throws {
        let line = try parse(["task", "add", "X", "--description", "two\nlines"]).request.line
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(line.hasSuffix("\n"))
    }
}
