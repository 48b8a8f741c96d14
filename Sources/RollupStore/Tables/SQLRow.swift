/// One result row, read by column index (0-based) and type.
protocol SQLRow {
    func isNull(_ column: Int32) -> Bool
    func int64(_ column: Int32) throws -> Int64
    func text(_ column: Int32) throws -> String
    func blob(_ column: Int32) throws -> [UInt8]
}
