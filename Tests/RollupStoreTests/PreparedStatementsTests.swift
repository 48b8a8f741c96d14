import Foundation
import TestSupport
import Testing

@testable import RollupStore

/// A PostgreSQL connection prepares a statement it runs again and again (the sink's bulk statements) and runs it
/// prepared, with the same answers; NULLs, other parameter types and statements without parameters stay unprepared.
@Suite struct PreparedStatementsTests {
    @Test func aTextIsPreparedAfterItsThresholdAndOnlyWithKnownTypes() {
        var statements = PreparedStatements()
        let sql = "SELECT $1 + $2"
        #expect(statements.decision(sql, types: [20, 20], after: 2) == .unprepared)
        // A NULL parameter's type would be the server's guess: not prepared on that run, nor counted.
        #expect(statements.decision(sql, types: [20, 0], after: 2) == .unprepared)
        #expect(statements.decision(sql, types: [20, 20], after: 2) == .unprepared)
        guard case .prepare(let name) = statements.decision(sql, types: [20, 20], after: 2) else {
            Issue.record("the third run with known types should prepare")
            return
        }
        statements.add(sql, name: name, types: [20, 20])
        #expect(statements.decision(sql, types: [20, 20], after: 2) == .prepared(name))
        #expect(statements.decision(sql, types: [0, 20], after: 2) == .prepared(name))
        #expect(statements.decision(sql, types: [25, 20], after: 2) == .unprepared)
        for _ in 0..<5 { #expect(statements.decision("COMMIT", types: [], after: 2) == .unprepared) }
    }

    @Test func preparedStatementsGiveTheSameAnswers() throws {
        let url = try PostgresServer.shared().makeDatabase(prefix: "prepared")
        let connection = try PostgresConnection(url: url)
        try connection.executeScript("CREATE TABLE t (id BIGINT PRIMARY KEY, note TEXT, data BYTEA)")
        let insert = "INSERT INTO t (id, note, data) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING id"
        var returned: [Int64] = []
        for id in Int64(1)...6 {
            let note: SQLValue = id == 5 ? .null : .text("n\(id)")
            try connection.query(insert, [.integer(id), note, .blob([UInt8(id), 0])]) {
                returned.append(try $0.int64(0))
            }
        }
        // A conflict returns no row, prepared or not.
        try connection.query(insert, [.integer(3), .text("again"), .blob([])]) { returned.append(try $0.int64(0)) }
        #expect(returned == [1, 2, 3, 4, 5, 6])
        var names: [String] = []
        try connection.query("SELECT name FROM pg_prepared_statements", []) { names.append(try $0.text(0)) }
        #expect(names.count == 1)
        var rows: [String] = []
        try connection.query("SELECT id, note, data FROM t WHERE id >= $1 ORDER BY id", [.integer(4)]) { row in
            let note = row.isNull(1) ? "nil" : try row.text(1)
            rows.append("\(try row.int64(0)) \(note) \(try row.blob(2))")
        }
        #expect(rows == ["4 n4 [4, 0]", "5 nil [5, 0]", "6 n6 [6, 0]"])
    }
}
