import CLibPQ

/// The prepared statements of one PostgreSQL connection, by SQL text, and how often each unprepared text ran.
///
/// Bounded: at most ``maxPrepared`` statements a session, and the run counts are forgotten once ``maxCounted``
/// texts were seen, so queries with ever-new text (a filter's list of kinds) never grow it without end.
struct PreparedStatements {
    static let maxPrepared = 256
    static let maxCounted = 4_096

    /// What to do with one run of a SQL text.
    enum Decision: Equatable {
        /// Send it unprepared.
        case unprepared
        /// Prepare it under this name, then run it.
        case prepare(String)
        /// Run the statement prepared under this name.
        case prepared(String)
    }

    private var statements: [String: (name: String, types: [Oid])] = [:]
    private var runs: [String: Int] = [:]
    /// What this connection's statement names start with: random, so that names never meet another connection's or
    /// an earlier session's on a server connection a pooler shares.
    private let prefix = "flowmeter_" + String(UInt64.random(in: 0...UInt64.max), radix: 36) + "_"
    private var prepares = 0

    /// Whether the run of `sql` with parameters of `types` (0 for NULL) should use a prepared statement; counts it.
    /// Statements without parameters (`BEGIN`, `COMMIT`, DDL) are never prepared.
    mutating func decision(_ sql: String, types: [Oid], after threshold: Int) -> Decision {
        if let statement = statements[sql] {
            // A NULL binds to any parameter; any other value must have the type the statement was prepared with.
            let matches = zip(types, statement.types).allSatisfy { $0 == 0 || $0 == $1 }
            return matches ? .prepared(statement.name) : .unprepared
        }
        guard statements.count < Self.maxPrepared, !types.isEmpty, !types.contains(0) else { return .unprepared }
        if runs.count >= Self.maxCounted { runs = [:] }
        let count = runs[sql, default: 0] + 1
        runs[sql] = count
        guard count > threshold else { return .unprepared }
        prepares += 1
        return .prepare(prefix + String(prepares))
    }

    /// Records that `sql` is prepared as `name` with parameters of `types`.
    mutating func add(_ sql: String, name: String, types: [Oid]) {
        statements[sql] = (name, types)
        runs[sql] = nil
    }
}
