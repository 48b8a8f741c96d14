/// Why the fast path's byte reader rejected its input, and where.
package struct JSONSyntaxError: Error {
    package let offset: Int
    package let reason: String
}
