/// Median and median absolute deviation: a centre and spread that a few outliers cannot drag.
enum RobustStatistics {
    /// The scale that makes the MAD estimate the standard deviation of normally distributed data.
    static let madToStandardDeviation = 1.4826

    /// The median of `values`; nil when there are none.
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The median and the MAD scaled to a standard deviation; nil when there are no values.
    static func medianAndSpread(_ values: [Double]) -> (median: Double, spread: Double)? {
        guard let centre = median(values) else { return nil }
        let deviations = values.map { abs($0 - centre) }
        return (centre, (median(deviations) ?? 0) * madToStandardDeviation)
    }
}
