import FlowmeterModels
import Foundation

/// Short, fixed spellings for table cells: compact times, counts, shares and ratios.
enum CellFormat {
    /// `2026-11-30 08:47` (UTC, minutes): the year is kept so a long window stays unambiguous.
    static func time(_ timestamp: Timestamp) -> String {
        let text = timestamp.rfc3339String
        guard text.count >= 16 else { return text }
        return String(text.prefix(16)).replacingOccurrences(of: "T", with: " ")
    }

    /// `41.2%` with one decimal; `<0.1%` for a share above zero that would print as zero.
    static func percent(_ share: Double) -> String {
        if share > 0 && share < 0.0005 { return "<0.1%" }
        return String(format: "%.1f%%", share * 100)
    }

    /// `41%` rounded to a whole percent; `<1%` for a share above zero that would print as zero.
    /// `17,858`: a count with thousands separators, the same in every locale.
    static func count(_ value: Int64) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped += "," }
            grouped.append(digit)
        }
        return value < 0 ? "-" + grouped : grouped
    }

    static func wholePercent(_ share: Double) -> String {
        if share > 0 && share < 0.005 { return "<1%" }
        return String(format: "%.0f%%", share * 100)
    }

    /// `3.10` with two decimals.
    static func decimal(_ value: Double) -> String {
        String(format: "%.2f", value)
    }

    /// A signed change against a previous count: `+25%`, `-40%`, `new`, `gone`, or `=`.
    static func trend(current: Int64, previous: Int64) -> String {
        if previous == 0 { return current == 0 ? "=" : "new" }
        if current == 0 { return "gone" }
        let change = Double(current - previous) / Double(previous)
        if abs(change) < 0.005 { return "=" }
        return (change > 0 ? "+" : "") + String(format: "%.0f%%", change * 100)
    }
}
