/// `applied_messages`: the ids of the rollup messages applied, recorded in the same transaction as their merge so a
/// replayed message never counts twice.
enum AppliedMessagesTable {
    static let name = "applied_messages"
    static let columns: SQLColumns = ["id", "applied_at"]

    /// Records `id` as applied at `now` (epoch seconds); false when it was applied before.
    static func claim(_ id: String, now: Int64, on connection: TableConnection) throws -> Bool {
        let inserted = try connection.database.update(
            "INSERT INTO \(name) (\(columns.list())) VALUES (\(columns.placeholders())) ON CONFLICT (id) DO NOTHING",
            [.text(id), .integer(now)])
        return inserted == 1
    }

    /// Forgets the ids applied before `cutoff` (epoch seconds).
    static func prune(before cutoff: Int64, on connection: TableConnection) throws {
        try connection.database.update("DELETE FROM \(name) WHERE applied_at < $1", [.integer(cutoff)])
    }
}
