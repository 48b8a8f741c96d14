import Foundation

extension DecodingError {
    /// The problem and where, in one line.
    var summary: String {
        func path(_ context: Context) -> String {
            context.codingPath.map { $0.intValue.map { "Index \($0)" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch self {
        case .keyNotFound(let key, let context):
            let at = path(context)
            return "missing key '\(key.stringValue)'" + (at.isEmpty ? "" : " at \(at)")
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            let at = path(context)
            return context.debugDescription + (at.isEmpty ? "" : " at \(at)")
        @unknown default:
            return String(describing: self)
        }
    }
}
