import FlowmeterModels

/// Numbers, shares, changes and times as every report format writes them, so the formats agree to the digit.
enum ReportFormatting {
    /// `12,345`.
    static func count(_ value: Int64) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped += "," }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// `97.3%`; `–` for nil.
    static func percent(_ share: Double?, places: Int = 1) -> String {
        guard let share, share.isFinite else { return "–" }
        return fixed(share * 100, places: places) + "%"
    }

    /// The change of a count: `+1,134 (+1134%)`, `−12 (−8%)`, `+40 (new)`, `±0`.
    static func change(_ current: Int64, from previous: Int64) -> String {
        let difference = current - previous
        if difference == 0 { return "±0" }
        let sign = difference > 0 ? "+" : "−"
        let magnitude = count(Int64(difference.magnitude))
        guard previous != 0 else { return "\(sign)\(magnitude) (new)" }
        let relative = Double(difference.magnitude) / Double(previous) * 100
        return "\(sign)\(magnitude) (\(sign)\(fixed(relative, places: 0))%)"
    }

    /// The change of a rate in percentage points: `+1.2 pp`; `–` when either is nil.
    static func pointChange(_ current: Double?, from previous: Double?) -> String {
        guard let current, let previous else { return "–" }
        let points = (current - previous) * 100
        if abs(points) < 0.05 { return "±0 pp" }
        return (points > 0 ? "+" : "−") + fixed(abs(points), places: 1) + " pp"
    }

    /// `2026-11-23`.
    static func day(_ instant: Timestamp) -> String {
        String(instant.rfc3339String.prefix(10))
    }

    /// `Mon 23`: a chart's day label.
    static func shortDay(_ instant: Timestamp) -> String {
        let names = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let days =
            instant.secondsSinceEpoch >= 0
            ? instant.secondsSinceEpoch / 86_400 : (instant.secondsSinceEpoch - 86_399) / 86_400
        let weekday = names[Int(((days % 7) + 7) % 7)]
        return weekday + " " + String(day(instant).suffix(2))
    }

    /// `2026-11-30 08:44Z`.
    static func minute(_ instant: Timestamp) -> String {
        let text = instant.rfc3339String
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(5)) + "Z"
    }

    /// A rate rounded to four places for JSON.
    static func rounded(_ value: Double) -> Double {
        (value * 10_000).rounded() / 10_000
    }

    /// `value` with exactly `places` decimals, without Foundation's locale-dependent formatting.
    static func fixed(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 1e15 else { return String(value) }
        let whole = Int64(scaled) / Int64(scale)
        let fraction = Int64(scaled) % Int64(scale)
        var text = (value < 0 && scaled > 0 ? "-" : "") + String(whole)
        if places > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: places - digits.count) + digits
        }
        return text
    }

    /// At most `limit` characters, with `…` when cut: for chart labels, where a long hostile name must not overflow.
    static func truncated(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }
}
