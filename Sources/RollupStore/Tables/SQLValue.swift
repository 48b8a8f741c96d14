/// A value bound to a statement parameter, the same for both databases.
enum SQLValue {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}
