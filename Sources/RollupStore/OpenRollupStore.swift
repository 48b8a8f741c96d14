/// Opens the store a URL names: a file path or `sqlite:PATH` for SQLite, `postgres://…` or `postgresql://…` for
/// PostgreSQL.
///
/// The database is created and migrated as needed. Throws ``RollupStoreError`` with `invalidURL` for anything else.
public func openRollupStore(url: String, options: RollupStoreOptions = RollupStoreOptions()) throws -> any RollupStore {
    if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
        return try SQLRollupStore(postgresURL: url, options: options)
    }
    var path = url
    if path.hasPrefix("sqlite://") {
        path.removeFirst("sqlite://".count)
    } else if path.hasPrefix("sqlite:") {
        path.removeFirst("sqlite:".count)
    }
    guard !path.isEmpty, !path.contains("://") else {
        throw RollupStoreError(
            .invalidURL, "Not a store URL: '\(redactedStoreURL(url))' (use a path, sqlite:PATH or postgres://…)")
    }
    return try SQLRollupStore(sqlitePath: path, options: options)
}
