import DiligenceCore
import Testing

@testable import DiligenceStore

@Test func valuesRoundTripThroughBindsAndColumns() throws {
    let db = try SQLite(location: .memory)
    try db.exec("CREATE TABLE t (a, b, c, d)")
    let text = "nul\u{0}inside, ünïcode ✓"
    try db.run("INSERT INTO t VALUES (?, ?, ?, ?)", [.integer(Int64.min), .real(-0.125), .text(text), nil])
    try db.run("INSERT INTO t VALUES (?, ?, ?, ?)", [.integer(Int64.max), .real(1e300), .text(""), .text("x")])
    let rows = try db.query("SELECT a, b, c, d FROM t ORDER BY rowid")
    #expect(
        rows.map(\.values) == [
            [.integer(Int64.min), .real(-0.125), .text(text), .null],
            [.integer(Int64.max), .real(1e300), .text(""), .text("x")],
        ])
    #expect(rows[0].optionalString(3) == nil)
    #expect(rows[1].optionalString(3) == "x")
    #expect(db.lastInsertRowID == 2)
}

@Test func transactionRollsBackWhenItsBodyThrows() throws {
    let db = try SQLite(location: .memory)
    try db.exec("CREATE TABLE t (x)")
    let failure = error { () throws(DiligenceError) in
        try db.transaction { () throws(DiligenceError) in
            _ = try db.run("INSERT INTO t VALUES (1)")
            throw DiligenceError(.invalidValue, "stop")
        }
    }
    #expect(failure == DiligenceError(.invalidValue, "stop"))
    #expect(try db.query("SELECT count(*) FROM t").first?.int(0) == 0)
    try db.transaction { () throws(DiligenceError) in
        _ = try db.run("INSERT INTO t VALUES (2)")
    }
    #expect(try db.query("SELECT x FROM t").map(\.values) == [[.integer(2)]])
}

@Test func badSQLIsAStorageErrorWithSQLitesMessage() throws {
    let db = try SQLite(location: .memory)
    let failure = error { () throws(DiligenceError) in try db.prepare("SELEKT 1") }
    #expect(failure?.code.rawValue == "storage_error")
    #expect(failure?.message.contains(":memory:") == true)
    #expect(failure?.message.contains("syntax error") == true)
}

@Test func cachedStatementsAreReusedAndResetBetweenUses() throws {
    let db = try SQLite(location: .memory)
    let first = try db.cached("SELECT ? + 1")
    let again = try db.cached("SELECT ? + 1")
    #expect(first === again)
    #expect(try first.rows([.integer(1)]).first?.int(0) == 2)
    #expect(try again.rows([.integer(41)]).first?.int(0) == 42)
}

@Test func errorCodesMapToProtocolCodes() {
    #expect(SQLite.error(code: 5, detail: "database is locked", path: "/p").code.rawValue == "database_locked")
    #expect(SQLite.error(code: 6, detail: "locked", path: "/p").code.rawValue == "database_locked")
    #expect(SQLite.error(code: 5 | (3 << 8), detail: "busy timeout", path: "/p").code.rawValue == "database_locked")
    #expect(SQLite.error(code: 11, detail: "malformed", path: "/p").code.rawValue == "database_corrupt")
    #expect(SQLite.error(code: 26, detail: "file is not a database", path: "/p").code.rawValue == "database_corrupt")
    let generic = SQLite.error(code: 10, detail: "disk I/O error", path: "/p/db")
    #expect(generic.code.rawValue == "storage_error")
    #expect(generic.message.contains("/p/db") && generic.message.contains("disk I/O error"))
}
