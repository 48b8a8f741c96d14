/// An app version that orders numerically by dot-separated components (`5.10.0` > `5.9.2`).
///
/// The leading run of digits and dots is what orders; anything after it (` (5210)`, `-beta`) is ignored for
/// ordering and equality of order, but `string` keeps the original spelling. Missing components count as zero, so
/// `5.2` orders equal to `5.2.0`. Equality (`==`) compares the original strings.
public struct AppVersion: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The version as the app sent it.
    public let string: String
    /// The numeric components that order it (a component too large for `Int` saturates).
    public let components: [Int]

    /// Wraps a version string; never fails, since any string has a (possibly empty) numeric prefix.
    public init(_ string: String) {
        self.string = string
        var components: [Int] = []
        var current = 0
        var inNumber = false
        for byte in string.utf8 {
            if byte >= 48 && byte <= 57 {
                let (times, overflowA) = current.multipliedReportingOverflow(by: 10)
                let (sum, overflowB) = times.addingReportingOverflow(Int(byte - 48))
                current = overflowA || overflowB ? Int.max : sum
                inNumber = true
            } else if byte == UInt8(ascii: ".") && inNumber {
                components.append(current)
                current = 0
                inNumber = false
            } else {
                break
            }
        }
        if inNumber { components.append(current) }
        self.components = components
    }

    /// A readable rendering for logs.
    public var description: String { string }

    /// Orders earlier (or lower) values first.
    public static func < (lhs: AppVersion, rhs: AppVersion) -> Bool {
        let length = max(lhs.components.count, rhs.components.count)
        for index in 0..<length {
            let left = index < lhs.components.count ? lhs.components[index] : 0
            let right = index < rhs.components.count ? rhs.components[index] : 0
            if left != right { return left < right }
        }
        return false
    }

    /// Whether two versions order the same (`5.2` and `5.2.0 (5210)` do).
    public func ordersEqual(to other: AppVersion) -> Bool {
        !(self < other) && !(other < self)
    }

    /// Decodes the plain version string.
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the original string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }
}
