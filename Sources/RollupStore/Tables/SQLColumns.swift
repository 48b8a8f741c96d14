/// A table's column names, declared once, and the SQL fragments its statements are built from.
///
/// Parameters are numbered `$1`, `$2`, … in the order of the names, from `first`; the values bound must follow the
/// same order.
struct SQLColumns: ExpressibleByArrayLiteral, Sendable {
    let names: [String]

    init(_ names: [String]) { self.names = names }

    init(arrayLiteral names: String...) { self.names = names }

    var count: Int { names.count }

    /// `a, b, c`, or `m.a, m.b, m.c` with an alias.
    func list(alias: String? = nil) -> String {
        names.map { name in alias.map { "\($0).\(name)" } ?? name }.joined(separator: ", ")
    }

    /// `$first, $first+1, …`, one per column: the VALUES of an INSERT.
    func placeholders(from first: Int = 1) -> String {
        names.indices.map { "$\(first + $0)" }.joined(separator: ", ")
    }

    /// `a = $first, b = $first+1, …`: the SET of an UPDATE.
    func assignments(from first: Int) -> String {
        names.enumerated().map { "\($1) = $\(first + $0)" }.joined(separator: ", ")
    }

    /// `a = $first AND b = $first+1 AND …`: a WHERE that matches every column.
    func matches(from first: Int) -> String {
        names.enumerated().map { "\($1) = $\(first + $0)" }.joined(separator: " AND ")
    }

    /// `a = excluded.a, b = excluded.b, …`: the SET of an upsert that takes the incoming row's values.
    var fromExcluded: String {
        names.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
    }

    static func + (lhs: SQLColumns, rhs: SQLColumns) -> SQLColumns {
        SQLColumns(lhs.names + rhs.names)
    }
}
