/// An HTTP request method, such as `GET` or `POST`.
///
/// Methods compare by their exact, case-sensitive token, as HTTP defines them.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token as it appears on the request line.
    public let rawValue: String

    /// Makes a method from its token; any token is accepted, so unknown methods reach the router, which answers 405.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `PATCH`.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `OPTIONS`.
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `TRACE`.
    public static let trace = HTTPMethod(rawValue: "TRACE")

    /// The method token.
    public var description: String { rawValue }
}
