import FlowmeterModels
import Foundation

/// Reads a `Retry-After` value (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date in any of the three formats a
/// recipient must accept (IMF-fixdate, RFC 850, asctime).
enum RetryAfter {
    /// Seconds to wait from `now`; nil when the value is neither form. A date in the past gives 0.
    static func seconds(_ value: String, now: Date) -> TimeInterval? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.count <= 12, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            return TimeInterval(text)
        }
        guard let date = httpDate(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Parses `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT` or `Sun Nov  6 08:49:37 1994`.
    static func httpDate(_ text: String) -> Date? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "-" }).map(String.init)
        var day: Int?
        var month: Int?
        var year: Int?
        var time: [Int]?
        if text.contains(","), parts.count == 6 || parts.count == 5 {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT; RFC 850: Sunday, 06-Nov-94 08:49:37 GMT.
            guard parts.last == "GMT" else { return nil }
            day = Int(parts[1])
            month = monthNumber(parts[2])
            year = Int(parts[3]).map { value in
                guard parts[3].count == 2 else { return value }
                // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
                return value + (value < 70 ? 2000 : 1900)
            }
            time = clock(parts[4])
        } else if parts.count == 5 {
            // asctime: Sun Nov  6 08:49:37 1994
            month = monthNumber(parts[1])
            day = Int(parts[2])
            time = clock(parts[3])
            year = Int(parts[4])
        }
        guard let day, let month, let year, let time, (1...31).contains(day), (1000...9999).contains(year) else {
            return nil
        }
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let stamp = "\(year)-\(two(month))-\(two(day))T\(two(time[0])):\(two(time[1])):\(two(time[2]))Z"
        return Timestamp(rfc3339: stamp)?.date
    }

    private static func monthNumber(_ name: String) -> Int? {
        months.firstIndex(of: name.lowercased()).map { $0 + 1 }
    }

    private static func clock(_ text: String) -> [Int]? {
        let fields = text.split(separator: ":").compactMap { Int($0) }
        guard fields.count == 3, fields[0] < 24, fields[1] < 60, fields[2] < 61 else { return nil }
        return [fields[0], fields[1], min(fields[2], 59)]
    }
}
