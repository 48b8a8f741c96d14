/// Why the fast path's byte reader rejected its input, and where.
struct JSONSyntaxError: Error {
    let offset: Int
    let reason: String
}
