import Foundation

/// Counts the runs of a benchmark matrix and prefixes each result line with how far along it is and how long the
/// rest will take at the pace so far.
struct RunProgress {
    let total: Int
    let started: Date
    private(set) var done = 0

    init(total: Int, started: Date) {
        self.total = total
        self.started = started
    }

    /// Marks one run done; returns `[  3/32  1m12s, ~9m left] `.
    mutating func advance() -> String {
        done += 1
        let elapsed = Date().timeIntervalSince(started)
        let left = done < total ? elapsed / Double(done) * Double(total - done) : 0
        let width = String(total).count
        let count = String(repeating: " ", count: max(0, width - String(done).count)) + String(done)
        return "[\(count)/\(total) \(Self.minutes(elapsed)), ~\(Self.minutes(left)) left] "
    }

    static func minutes(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return whole >= 60 ? "\(whole / 60)m\(String(format: "%02d", whole % 60))s" : "\(whole)s"
    }
}
